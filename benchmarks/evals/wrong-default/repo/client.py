class Client:
    """A client of the service; ``timeout`` in seconds."""

    def __init__(self, host: str = "localhost", timeout: float = 0) -> None:
        self.host = host
        self.timeout = timeout
