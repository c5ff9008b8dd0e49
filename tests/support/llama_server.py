"""A real llama.cpp server for the optional real-model tests, and a recording proxy in front of it.

``LlamaServer`` starts ``python -m llama_cpp.server`` (llama-cpp-python's OpenAI-compatible server) on
127.0.0.1 with a free port and ``--chat_format chatml-function-calling`` (the only chat format with which
the Gemma 3 270M base model returns OpenAI-shaped tool calls; its GGUF has no chat template), waits until
``GET /v1/models`` answers 200, and stops it (SIGTERM, then SIGKILL after ``STOP_GRACE_S``). The server's
output goes to a log file, whose tail is in every startup error.

``RecordingProxy`` forwards every request to the server unchanged and records (request JSON, response
status, response text) so a test can assert what agent-ls actually sent, e.g. ``"content": ""`` on
assistant messages carrying tool calls (llama.cpp answers 500 to ``null`` or a missing key). It is a few
lines of stdlib ``http.server`` plus httpx rather than mitmproxy or similar: all it needs is to pass one
JSON or SSE body through on 127.0.0.1, and the stdlib server is what ``tests/support/model_server.py``
already uses. Responses go back as they arrive (SSE stays streamed), framed by closing the connection.

Usage::

    with LlamaServer(python, gguf, log_path=log) as llama, RecordingProxy(llama.base_url) as proxy:
        ...  # point the client at proxy.base_url ("http://127.0.0.1:<port>/v1")
        assert proxy.exchanges[0].request["messages"][0]["role"] == "system"

Quirks of this server and model: ../shared/research/toolchain-offline.md §4.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

HOST = "127.0.0.1"
READY_TIMEOUT_S = 180.0
STOP_GRACE_S = 10.0
LOG_TAIL_CHARS = 2000
# Hop-by-hop or re-framed headers: the proxy frames its reply by closing the connection.
DROPPED_HEADERS = {"content-length", "transfer-encoding", "connection", "keep-alive", "date", "server"}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


class LlamaServer:
    """``python -m llama_cpp.server`` serving one GGUF on 127.0.0.1, for the lifetime of a ``with`` block.

    Args:
        python: an interpreter that can import ``llama_cpp.server`` (llama-cpp-python[server]).
        model_path: the .gguf file.
        log_path: where the server's stdout and stderr go.
        n_ctx: the context window, in tokens.
        n_threads: CPU threads for generation.
        ready_timeout_s: how long to wait for ``/v1/models``, in seconds (the first load maps the file).

    Raises (from ``start``):
        RuntimeError: the server exited or did not answer within ``ready_timeout_s``; the message has
            the command and the tail of the log.
    """

    def __init__(
        self,
        python: str,
        model_path: Path,
        *,
        log_path: Path,
        n_ctx: int = 4096,
        n_threads: int = 2,
        ready_timeout_s: float = READY_TIMEOUT_S,
    ) -> None:
        self.port = free_port()
        self.base_url = f"http://{HOST}:{self.port}/v1"
        self.log_path = log_path
        self.command = [
            python,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_path),
            "--host",
            HOST,
            "--port",
            str(self.port),
            "--chat_format",
            "chatml-function-calling",
            "--n_ctx",
            str(n_ctx),
            "--n_threads",
            str(n_threads),
        ]
        self.ready_timeout_s = ready_timeout_s
        self.startup_s: float | None = None
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        started = time.monotonic()
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                self.command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = started + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(self._failure(f"exited with code {self._process.returncode}"))
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    self.startup_s = time.monotonic() - started
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(self._failure(f"did not answer within {self.ready_timeout_s:.0f} s"))

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def log_tail(self) -> str:
        """The last ``LOG_TAIL_CHARS`` characters of the server's output."""
        try:
            return self.log_path.read_text(errors="replace")[-LOG_TAIL_CHARS:]
        except OSError:
            return ""

    def _failure(self, what: str) -> str:
        return f"llama.cpp server {what}: {' '.join(self.command)}\n--- log tail ---\n{self.log_tail()}"

    def __enter__(self) -> LlamaServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


@dataclass(frozen=True)
class Exchange:
    """One proxied request.

    Attributes:
        path: the request path (``/v1/chat/completions``).
        request: the request body parsed as JSON (None when it was not JSON).
        status: the upstream's HTTP status, or 502 when the upstream could not be reached.
        response_text: the whole response body as text (for SSE: every event, as sent).
        elapsed_s: from the request to the end of the response, in seconds.
    """

    path: str
    request: Any
    status: int
    response_text: str
    elapsed_s: float

    def response_json(self) -> Any:
        """The response body as JSON, or None when it is not JSON (an SSE stream, an empty body)."""
        try:
            return json.loads(self.response_text)
        except ValueError:
            return None


class RecordingProxy:
    """Forwards ``POST`` and ``GET`` to ``upstream_base_url`` and records each ``Exchange``, in order.

    Args:
        upstream_base_url: the server's API root, ``http://127.0.0.1:<port>/v1``.
        timeout_s: the read timeout towards the upstream, in seconds.
    """

    def __init__(self, upstream_base_url: str, *, timeout_s: float = 300.0) -> None:
        self.upstream = upstream_base_url.rstrip("/").removesuffix("/v1")
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._http = httpx.Client(timeout=httpx.Timeout(timeout_s, connect=5.0))
        self._server = ThreadingHTTPServer((HOST, 0), self._handler())
        self._server.daemon_threads = True
        self.base_url = f"http://{HOST}:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="recording-proxy", daemon=True
        )

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                proxy._forward(self, b"")

            def do_POST(self) -> None:
                proxy._forward(self, self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def _forward(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        started = time.monotonic()
        try:
            request: Any = json.loads(body) if body else None
        except ValueError:
            request = None
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in {"host", "content-length"}}
        received = bytearray()
        status = 502
        try:
            with self._http.stream(
                handler.command, self.upstream + handler.path, content=body, headers=headers
            ) as upstream:
                status = upstream.status_code
                handler.send_response(status)
                for name, value in upstream.headers.items():
                    if name.lower() not in DROPPED_HEADERS:
                        handler.send_header(name, value)
                handler.send_header("Connection", "close")
                handler.end_headers()
                for chunk in upstream.iter_raw():
                    received.extend(chunk)
                    handler.wfile.write(chunk)
                    handler.wfile.flush()
        except httpx.HTTPError as exc:
            if status == 502:
                message = json.dumps({"error": {"message": f"proxy: upstream failed: {exc}"}}).encode()
                received.extend(message)
                handler.send_response(502)
                handler.send_header("Content-Type", "application/json")
                handler.end_headers()
                handler.wfile.write(message)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client left (cancelled); the exchange is still recorded
        finally:
            handler.close_connection = True
            with self._lock:
                self.exchanges.append(
                    Exchange(
                        path=handler.path,
                        request=request,
                        status=status,
                        response_text=received.decode(errors="replace"),
                        elapsed_s=time.monotonic() - started,
                    )
                )

    def chat_exchanges(self) -> list[Exchange]:
        """The exchanges to ``/v1/chat/completions``, in order."""
        with self._lock:
            return [e for e in self.exchanges if e.path.endswith("/chat/completions")]

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._http.close()
