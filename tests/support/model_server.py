"""A fake OpenAI-compatible model server: real HTTP on 127.0.0.1, scripted answers, recorded requests.

Each ``POST /v1/chat/completions`` takes the next step of the script, in order. Steps use the replay
format (docs/replay-format.md: ``content``, ``tool_calls``, ``delay_s``) plus:

- ``status``: an HTTP status; without ``body`` the reply is an OpenAI-style error body;
- ``body``: a string sent verbatim, or a JSON value sent as JSON (with ``status``, or 200 without it);
- ``headers``: extra response headers;
- ``raw_arguments`` on a tool call: sent verbatim as ``function.arguments`` (malformed JSON tests).

A request with no step left gets HTTP 500 saying so; any other path gets 404. The server runs in a
background thread (``ThreadingHTTPServer``), so sync tests, async tests and a server subprocess can
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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from pydantic import Field, ValidationError

from agent_ls.models.replay import ReplayStep, ReplayToolCall

CHAT_PATH = "/v1/chat/completions"


class ServerToolCall(ReplayToolCall):
    raw_arguments: str | None = None


class ServerStep(ReplayStep):
    tool_calls: list[ServerToolCall] = Field(default_factory=list)  # type: ignore[assignment]
    status: int | None = Field(default=None, ge=100, le=599)
    headers: dict[str, str] = Field(default_factory=dict)
    body: str | dict[str, Any] | list[Any] | None = None


class FakeModelServer:
    """Serves ``steps`` (dicts in the format above) to successive chat completion requests.

    Attributes:
        steps: the script, checked here and again when served; tests may extend it after ``start()``.
        requests: the JSON body of each request received, in order (a request that is not JSON is
            recorded as its text).
        request_headers: the headers of each request, names lowercased, in the same order.
        request_times / reply_times: ``time.monotonic()`` when each request arrived and when its
            reply was written (for benchmarks; never asserted in tests).
    """

    def __init__(self, steps: list[dict[str, Any]]) -> None:
        for step in steps:
            ServerStep.model_validate(step)
        self.steps: list[dict[str, Any]] = list(steps)
        self.requests: list[Any] = []
        self.request_headers: list[dict[str, str]] = []
        self.request_times: list[float] = []
        self.reply_times: list[float] = []
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

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
        if self.path != CHAT_PATH:
            self._send(404, _error_body(f"no route {self.path}; the fake server answers {CHAT_PATH}", 404))
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
        if step.status is not None or step.body is not None:
            status = step.status or 200
            if step.body is None:
                text = _error_body(f"scripted HTTP {status}", status)
            else:
                text = step.body if isinstance(step.body, str) else json.dumps(step.body)
            self._send(status, text, step.headers)
            return
        model = body.get("model", "fake") if isinstance(body, dict) else "fake"
        self._send(200, _completion(step, number, model, len(raw.encode())), step.headers)

    def _send(self, status: int, text: str, headers: dict[str, str] | None = None) -> None:
        payload = text.encode()
        self.send_response(status)
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        for name, value in all_headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()
        self.fake.reply_times.append(time.monotonic())


def _completion(step: ServerStep, number: int, model: str, request_bytes: int) -> str:
    """A Chat Completions body for ``step``; ids ``chatcmpl-<n>`` and ``call_<n>_<i>`` (both 1-based)."""
    tool_calls = [
        {
            "id": call.id or f"call_{number}_{i}",
            "type": "function",
            "function": {
                "name": call.name,
                "arguments": call.raw_arguments
                if call.raw_arguments is not None
                else json.dumps(call.arguments),
            },
        }
        for i, call in enumerate(step.tool_calls, start=1)
    ]
    # Like OpenAI: null content next to tool calls, a string otherwise.
    message: dict[str, Any] = {"role": "assistant", "content": step.content or (None if tool_calls else "")}
    if tool_calls:
        message["tool_calls"] = tool_calls
    completion_bytes = len(step.content.encode()) + sum(len(json.dumps(c)) for c in tool_calls)
    prompt_tokens = max(1, request_bytes // 4)
    completion_tokens = max(1, completion_bytes // 4)
    return json.dumps(
        {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def _error_body(message: str, status: int) -> str:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": None}})
