"""A fake model server for the three wire APIs: real HTTP on 127.0.0.1, scripted answers, recorded requests.

Each ``POST`` to a known path (``WIRES``: ``/v1/chat/completions``, ``/v1/messages``, ``/v1/responses``)
takes the next step of the script, in order, and is answered in that path's wire format, streamed as
server-sent events when the request body has ``"stream": true``. Steps use the replay format
(docs/replay-format.md: ``content``, ``tool_calls``, ``delay_s``) plus:

- ``reasoning``: visible reasoning text, rendered the wire's way;
- ``status``: an HTTP status; without ``body`` the reply is an OpenAI-style error body;
- ``body``: a string sent verbatim, or a JSON value sent as JSON (with ``status``, or 200 without it);
- ``content_type``: the Content-Type of ``body`` or ``chunks`` (default JSON, or SSE for chunks);
- ``chunks``: strings written one by one, flushed, ``chunk_delay_s`` apart (a recorded SSE stream);
- ``end``: how a chunked reply ends: ``close`` (EOF, the default), ``reset`` (the connection drops with
  bytes still announced: the client sees a broken read), ``hang`` (held open until the client leaves
  or the server stops);
- ``headers``: extra response headers;
- ``raw_arguments`` on a tool call: sent verbatim as ``function.arguments`` (malformed JSON tests).

With a ``responder`` (a function of the request body returning a step), each request is answered by
it instead of the script: concurrent runs then each get the answer their own conversation calls for
(the load test). A request with no step left gets HTTP 500 saying so; any other path gets 404.
``GET /v1/models`` (what ``agent-ls doctor`` asks) answers ``models_reply`` (``{"data": []}`` by
default) without taking a step, and its headers are recorded in ``models_request_headers``. The server
runs in a background thread (``ThreadingHTTPServer``), so sync tests, async tests and a server subprocess can
all talk to it; ``stop()`` aborts replies held by ``delay_s``.

Usage::

    with FakeModelServer([{"content": "hi"}]) as server:
        client = OpenAIChatClient(model="m", base_url=server.base_url)
        ...
        assert server.requests[0]["messages"] == [...]
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

from pydantic import Field, ValidationError

from agent_ls.models.replay import ReplayStep, ReplayToolCall
from tests.support import sweep

CHAT_PATH = "/v1/chat/completions"


class ServerToolCall(ReplayToolCall):
    raw_arguments: str | None = None


class ServerStep(ReplayStep):
    tool_calls: list[ServerToolCall] = Field(default_factory=list)  # type: ignore[assignment]
    reasoning: str = ""
    status: int | None = Field(default=None, ge=100, le=599)
    headers: dict[str, str] = Field(default_factory=dict)
    body: str | dict[str, Any] | list[Any] | None = None
    content_type: str | None = None
    chunks: list[str] | None = None
    chunk_delay_s: float = Field(default=0.0, ge=0)
    end: Literal["close", "reset", "hang"] = "close"


Rendered = tuple[str, list[str]]
"""(content type, chunks) of a reply; a JSON reply is one chunk."""

Renderer = Callable[[ServerStep, int, str, int, bool], Rendered]
"""(step, 1-based request number, model, request bytes, stream) -> the reply in one wire's format."""


def _wires() -> dict[str, Renderer]:
    from tests.support import wire_formats

    return wire_formats.RENDERERS


class FakeModelServer:
    """Serves ``steps`` (dicts in the format above) to successive chat completion requests.

    Attributes:
        steps: the script, checked here and again when served; tests may extend it after ``start()``.
        requests: the JSON body of each request received, in order (a request that is not JSON is
            recorded as its text).
        request_headers: the headers of each request, names lowercased, in the same order.
        request_times / reply_times: ``time.monotonic()`` when each request arrived and when its
            reply was written (for benchmarks; never asserted in tests).
        models_reply: (HTTP status, JSON body) of ``GET /v1/models``.
        models_request_headers: the headers of each ``GET /v1/models``, names lowercased.
    """

    def __init__(
        self, steps: list[dict[str, Any]], responder: Callable[[Any], dict[str, Any]] | None = None
    ) -> None:
        for step in steps:
            ServerStep.model_validate(step)
        self.steps: list[dict[str, Any]] = list(steps)
        self.responder = responder
        sweep.register(self)
        self.requests: list[Any] = []
        self.request_headers: list[dict[str, str]] = []
        self.request_times: list[float] = []
        self.reply_times: list[float] = []
        self.models_reply: tuple[int, Any] = (200, {"data": []})
        self.models_request_headers: list[dict[str, str]] = []
        self._received = threading.Condition()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``; set by ``start()`` and kept after ``stop()``."""
        if self._port is None:
            raise RuntimeError("FakeModelServer is not started")
        return f"http://127.0.0.1:{self._port}/v1"

    def start(self) -> FakeModelServer:
        server = self

        class Handler(_Handler):
            fake = server

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="fake-model-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; held replies are abandoned. Idempotent."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        sweep.scan_server(self)

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def wait_for_requests(self, count: int, timeout_s: float = 5.0) -> bool:
        """Block until ``count`` requests have arrived (True) or ``timeout_s`` seconds passed (False).

        From async code: ``await asyncio.to_thread(server.wait_for_requests, 1)``.
        """
        with self._received:
            return self._received.wait_for(lambda: len(self.requests) >= count, timeout_s)

    def _take_step(self, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, Any] | None]:
        """Record the request; return its 1-based number and its step (None when the script ran out)."""
        with self._received:
            self.request_times.append(time.monotonic())
            self.requests.append(body)
            self.request_headers.append(headers)
            number = len(self.requests)
            self._received.notify_all()
            if self.responder is not None:
                return number, self.responder(body)
            return number, self.steps[number - 1] if number <= len(self.steps) else None


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out or was cancelled closes the socket mid-reply; that is expected here.
        pass


class _Handler(BaseHTTPRequestHandler):
    fake: FakeModelServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path != "/v1/models":
            message = f"no route GET {self.path}; the fake server answers GET /v1/models"
            self._send(404, _error_body(message, 404))
            return
        self.fake.models_request_headers.append({name.lower(): value for name, value in self.headers.items()})
        status, body = self.fake.models_reply
        self._send(status, json.dumps(body))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
        renderer = _wires().get(self.path)
        if renderer is None:
            known = ", ".join(sorted(_wires()))
            self._send(404, _error_body(f"no route {self.path}; the fake server answers {known}", 404))
            return
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw
        headers = {name.lower(): value for name, value in self.headers.items()}
        number, raw_step = self.fake._take_step(body, headers)
        if raw_step is None:
            total = len(self.fake.steps)
            message = f"fake model server: no step left for request {number} (script has {total} steps)"
            self._send(500, _error_body(message, 500))
            return
        try:
            step = ServerStep.model_validate(raw_step)
        except ValidationError as exc:
            message = f"fake model server: step {number} is invalid: {' '.join(str(exc).split())}"
            self._send(500, _error_body(message, 500))
            return
        if step.delay_s and self.fake._stopping.wait(step.delay_s):
            return
        if step.chunks is not None:
            content_type = step.content_type or "text/event-stream"
            self._send_chunks(step.status or 200, content_type, step.chunks, step)
            return
        if step.status is not None or step.body is not None:
            status = step.status or 200
            if step.body is None:
                text = _error_body(f"scripted HTTP {status}", status)
            else:
                text = step.body if isinstance(step.body, str) else json.dumps(step.body)
            self._send(status, text, step.headers, step.content_type)
            return
        model = body.get("model", "fake") if isinstance(body, dict) else "fake"
        stream = isinstance(body, dict) and body.get("stream") is True
        content_type, chunks = renderer(step, number, model, len(raw.encode()), stream)
        if stream:
            self._send_chunks(200, content_type, chunks, step)
        else:
            self._send(200, "".join(chunks), step.headers, content_type)

    def _send_chunks(self, status: int, content_type: str, chunks: list[str], step: ServerStep) -> None:
        """Write ``chunks`` one by one without a length, then end as ``step.end`` says."""
        payloads = [chunk.encode() for chunk in chunks]
        self.send_response(status)
        for name, value in {"Content-Type": content_type, **step.headers}.items():
            self.send_header(name, value)
        if step.end == "reset":
            # Announce more bytes than will come: the client's read breaks when the socket closes.
            self.send_header("Content-Length", str(sum(map(len, payloads)) + 1000))
        self.send_header("Connection", "close")
        self.end_headers()
        for payload in payloads:
            if step.chunk_delay_s and self.fake._stopping.wait(step.chunk_delay_s):
                return
            self.wfile.write(payload)
            self.wfile.flush()
        self.fake.reply_times.append(time.monotonic())
        if step.end == "hang":
            while not self.fake._stopping.wait(0.05):
                try:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                except OSError:
                    return
        self.close_connection = True

    def _send(
        self, status: int, text: str, headers: dict[str, str] | None = None, content_type: str | None = None
    ) -> None:
        payload = text.encode()
        self.send_response(status)
        all_headers = {"Content-Type": content_type or "application/json", **(headers or {})}
        for name, value in all_headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()
        self.fake.reply_times.append(time.monotonic())


def _error_body(message: str, status: int) -> str:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": None}})
