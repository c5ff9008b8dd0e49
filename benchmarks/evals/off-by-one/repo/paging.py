def page(items: list[str], number: int, size: int) -> list[str]:
    """Page ``number`` (1-based) of ``items``, ``size`` items per page."""
    start = (number - 1) * size
    return items[start : start + size + 1]
