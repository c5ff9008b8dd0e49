"""A real ``agent-ls serve`` process driven over raw stdio bytes, for tests that send what no LSP client
library would (malformed frames, wrong types, floods).

``RawServer`` writes bytes as given and reads the server's output with a strict frame parser (the
server's own frames must be well-formed). It answers every request the server sends with a null result
(as a plain editor without those features would) or with what ``replies`` holds for the method,
records notifications and stderr, and counts the responses to each request id, so a test can check
that every request was answered exactly once.

Usage::

    with RawServer(workspace) as server:
        server.initialize()
        server.write(b"Content-Length: 3\\r\\n\\r\\n{}")   # a body shorter than declared
        assert server.ping() == {"files": []}
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from types import TracebackType
from typing import Any

ANSWER_TIMEOUT_S = 20.0


def frame(message: Any) -> bytes:
    """``message`` as one well-formed LSP frame."""
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class ServerGone(AssertionError):
    """The server exited, or closed its output, while a test waited for it."""


class RawServer:
    """``python -m agent_ls serve`` in ``workspace``, with an empty home and user config.

    Attributes:
        notifications: every notification the server sent, in order (whole JSON-RPC objects).
        stderr: the server's stderr lines so far.
        answers: response count per request id (ids of the requests this side sent).
    """

    def __init__(self, workspace: Path, home: Path) -> None:
        self.workspace = workspace
        env = {**os.environ, "HOME": str(home), "AGENT_LS_CONFIG_DIR": str(home)}
        for name in [n for n in env if n.startswith(("AGENT_LS_API_KEY", "OPENAI_", "ANTHROPIC_"))]:
            env.pop(name)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agent_ls", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workspace,
            env=env,
        )
        self.notifications: list[dict[str, Any]] = []
        self.stderr: list[str] = []
        self.answers: Counter[Any] = Counter()
        self.replies: dict[str, Any] = {}
        """What to answer the server's requests with, by method (default: a null result)."""
        self.bytes_sent = 0
        self._responses: dict[Any, dict[str, Any]] = {}
        self._ids = itertools.count(1)
        self._changed = threading.Condition()
        self._closed = False
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.kill()

    # Writing.

    def write(self, data: bytes) -> None:
        """Send ``data`` as it is. Raises ``ServerGone`` when the server no longer reads."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(data)
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise ServerGone(f"the server stopped reading: {self.describe()}") from exc
        self.bytes_sent += len(data)

    def send(self, message: Any) -> None:
        self.write(frame(message))

    def new_id(self) -> int:
        return next(self._ids)

    def request(self, method: str, params: Any = None, timeout_s: float = ANSWER_TIMEOUT_S) -> dict[str, Any]:
        """Send a request and wait for its response (the whole JSON-RPC object)."""
        msg_id = self.new_id()
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return self.response(msg_id, timeout_s)

    def command(self, name: str, *arguments: Any, timeout_s: float = ANSWER_TIMEOUT_S) -> dict[str, Any]:
        """``workspace/executeCommand`` with ``arguments`` as given (none: the field is left out)."""
        params: dict[str, Any] = {"command": name}
        if arguments:
            params["arguments"] = list(arguments)
        return self.request("workspace/executeCommand", params, timeout_s)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(
        self, capabilities: dict[str, Any] | None = None, settings: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """initialize (by default as a minimal editor with work-done progress), with the workspace as its
        folder and ``settings`` as ``agentLs`` initialization options; then initialized."""
        uri = self.workspace.as_uri()
        reply = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": "ws"}],
                "capabilities": capabilities or {"window": {"workDoneProgress": True}},
                "initializationOptions": {"agentLs": settings or {}},
            },
        )
        assert "result" in reply, reply
        self.notify("initialized", {})
        return reply

    def ping(self, timeout_s: float = ANSWER_TIMEOUT_S) -> Any:
        """A valid request (``agent.proposal``); its result. Fails when it is not answered in time."""
        reply = self.command("agent.proposal", timeout_s=timeout_s)
        assert "result" in reply, reply
        return reply["result"]

    # Reading.

    def response(self, msg_id: Any, timeout_s: float = ANSWER_TIMEOUT_S) -> dict[str, Any]:
        """The response to request ``msg_id``; raises ``ServerGone`` or ``TimeoutError``."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while msg_id not in self._responses:
                if self._closed:
                    raise ServerGone(f"no answer to request {msg_id}: {self.describe()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no answer to request {msg_id} in {timeout_s} s: {self.describe()}")
                self._changed.wait(left)
            return self._responses[msg_id]

    def assert_healthy(self, what: str, timeout_s: float = ANSWER_TIMEOUT_S) -> None:
        """The server answers a valid request (in ``timeout_s``), has written no traceback, sent no "Error
        in server" popup (``window/showMessage`` of type Error) and answered no request twice. ``what``
        names the step."""
        assert isinstance(self.ping(timeout_s)["files"], list), what
        assert not self.tracebacks(), f"{what}: {self.describe()}"
        popups = [
            n["params"]["message"]
            for n in self.notifications
            if n["method"] == "window/showMessage" and n["params"]["type"] == 1
        ]
        assert not popups, f"{what}: {popups}"
        repeated = {msg_id: count for msg_id, count in self.answers.items() if count > 1}
        assert not repeated, f"{what}: requests answered more than once: {repeated}"

    def notification(self, method: str, timeout_s: float = ANSWER_TIMEOUT_S) -> dict[str, Any]:
        """The first notification ``method`` the server sent (waiting for it)."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not (found := [n for n in self.notifications if n["method"] == method]):
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    raise TimeoutError(f"no {method} in {timeout_s} s: {self.describe()}")
                self._changed.wait(left)
            return found[0]

    def describe(self) -> str:
        """The process's state and the end of its stderr, for assertion messages."""
        code = self.process.poll()
        state = "running" if code is None else f"exited with {code}"
        return f"server {state}; stderr ends with:\n" + "".join(self.stderr[-20:])

    def tracebacks(self) -> list[str]:
        return [line for line in self.stderr if line.startswith("Traceback")]

    def wait_exit(self, timeout_s: float) -> int:
        return self.process.wait(timeout=timeout_s)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:  # a flush into a closed pipe
                    pass

    def peak_memory_kib(self) -> int | None:
        """The server's peak resident memory (VmHWM), while it runs."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return None
        line = next((s for s in status.splitlines() if s.startswith("VmHWM:")), None)
        return int(line.split()[1]) if line else None

    def _read_stdout(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        try:
            while (message := _read_frame(stream)) is not None:
                self._take(message)
        finally:
            with self._changed:
                self._closed = True
                self._changed.notify_all()

    def _take(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:  # a request of the server's: answer it
            try:
                result = self.replies.get(message["method"])
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            except ServerGone:
                pass
            return
        with self._changed:
            if "method" in message:
                self.notifications.append(message)
            else:
                self.answers[message.get("id")] += 1
                self._responses[message.get("id")] = message
            self._changed.notify_all()

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))


def _read_frame(stream: Any) -> dict[str, Any] | None:
    """One frame of the server's output, read strictly (CRLF headers with Content-Length); None at EOF."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line == b"\r\n":
            break
        assert line.endswith(b"\r\n"), f"a header line of the server's without CRLF: {line!r}"
        name, _, value = line.decode("ascii").partition(":")
        if name == "Content-Length":
            length = int(value)
    assert length is not None, "a frame of the server's without Content-Length"
    body = stream.read(length)
    if len(body) < length:
        return None
    message: dict[str, Any] = json.loads(body)
    return message


class ServerPool:
    """One server for a test module, started again (initialized) when a test ended it; that test fails
    on its own, the next ones get a fresh server. Its workspace holds ``main.py``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.workspace = root / "ws"
        self.workspace.mkdir()
        (self.workspace / "main.py").write_text("x = 1\n")
        self.current: RawServer | None = None
        self.started = 0

    def get(self) -> RawServer:
        if self.current is None or self.current.process.poll() is not None:
            home = self.root / f"home{self.started}"
            home.mkdir()
            self.current = RawServer(self.workspace, home)
            self.current.initialize()
            self.started += 1
        return self.current

    def close(self) -> None:
        if self.current is not None:
            self.current.kill()
