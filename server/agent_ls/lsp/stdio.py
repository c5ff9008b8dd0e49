"""The server on stdin/stdout: frames read leniently, every message checked before pygls sees it.

Replaces pygls's ``start_io``, whose reader stops answering for good after one malformed frame
(``lsp/framing.py`` says why and how frames are found again). In order, for each chunk of stdin:
1. a daemon thread reads it (so ``exit`` ends the process even while a read is pending) and hands it
   over through a small queue (a client that floods waits on the pipe, memory does not grow);
2. ``FrameDecoder`` cuts it into frames; what it skips is logged as one line (stderr and
   ``window/logMessage``), never silently, and so is a frame left unfinished for ``STALL_S``;
3. ``Dispatcher`` reads each frame as JSON-RPC 2.0 and hands it to pygls, after answering itself what
   pygls would leave unanswered or answer badly:
   - a request that is not valid JSON-RPC (``method`` not a string) gets InvalidRequest;
   - a request whose params do not fit the method's LSP type gets InvalidParams naming the fields
     (pygls would log a traceback and never answer, and the client would wait for ever);
   - a request after ``shutdown`` gets InvalidRequest (LSP 3.17: "requests should error with
     InvalidRequest"; pygls drops them unanswered);
   - an answer of the editor to one of our requests that cannot be read fails that request (so a
     permission prompt ends, denied) instead of leaving it pending;
   - what cannot be answered (not JSON, no usable id) is logged in one line and skipped.
The process ends when stdin ends or at ``exit`` (code 0 after ``shutdown``, else 1, as LSP says).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import os
import re
import sys
import threading
from typing import Any, BinaryIO

import cattrs
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from agent_ls.lsp.command_args import one_line
from agent_ls.lsp.framing import Frame, FrameDecoder
from agent_ls.lsp.pipe_writer import PipeWriter

log = logging.getLogger(__name__)

CHUNK_BYTES = 64 * 1024
STALL_S = 5.0
"""A frame begun and not finished for this long is reported (then the wait goes on)."""
_QUEUED_CHUNKS = 16
SWITCH_INTERVAL_S = 0.001
"""How long a thread holding the GIL keeps it once another asks (CPython's default is 5 ms). A worker
thread diffing a large proposal holds it in pure Python; an editor request needs the event loop to get it
several times (read, handle, write), so at 5 ms each a hover waited 10-20 ms behind the diff (issue 14)."""
_INVALID_REQUEST = -32600
_PYGLS_LOGGER = "pygls.protocol.json_rpc"


def serve(server: LanguageServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Serve ``server`` on ``stdin``/``stdout`` (default: the process's) until exit or end of input.

    Raises:
        SystemExit: at the ``exit`` notification, with LSP's exit code.
    """
    logging.getLogger(_PYGLS_LOGGER).addFilter(_one_line_client_errors)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    writer = PipeWriter(stdout or sys.stdout.buffer)  # a thread writes: a big message never blocks the loop
    server.protocol.set_writer(writer)
    try:
        asyncio.run(_serve(server, stdin or sys.stdin.buffer, writer))
    except BrokenPipeError:
        log.warning("agent-ls: the editor closed its end of the connection; exiting")
    except KeyboardInterrupt:
        pass
    finally:
        writer.close()  # what is queued (the answer to shutdown) is written before the process ends
        server.shutdown()  # type: ignore[no-untyped-call]  # pygls's, unannotated


async def _serve(server: LanguageServer, stdin: BinaryIO, writer: PipeWriter) -> None:
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(_quiet_cancellations)
    chunks: asyncio.Queue[bytes] = asyncio.Queue(maxsize=_QUEUED_CHUNKS)
    threading.Thread(target=_pump, args=(stdin, loop, chunks), name="agent-ls stdin", daemon=True).start()
    decoder = FrameDecoder()
    dispatcher = Dispatcher(server, writer)
    while True:
        try:
            waiting = decoder.incomplete()
            chunk = await asyncio.wait_for(chunks.get(), STALL_S if waiting else None)
        except TimeoutError:  # said once per stall: a client that miscounts Content-Length waits too
            dispatcher.report(f"waiting for the rest of the input for {STALL_S:.0f} s: {waiting}")
            chunk = await chunks.get()
        for event in decoder.feed(chunk) if chunk else decoder.close():
            if isinstance(event, Frame):
                dispatcher.dispatch(event.body)
                await asyncio.sleep(0)  # handlers started by this message run before the next one
            else:
                dispatcher.report(event.describe())
        if not chunk:
            return


def _quiet_cancellations(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """pygls resumes a generator handler (initialized, executeCommand) from its inner handler's future
    even when that future was cancelled (at ``shutdown``, or when ``exit`` ends the loop), and the
    CancelledError escapes as an "Exception in callback" traceback. Those are dropped; anything else
    is reported as asyncio would."""
    if not isinstance(context.get("exception"), asyncio.CancelledError):
        loop.default_exception_handler(context)


def _pump(stdin: BinaryIO, loop: asyncio.AbstractEventLoop, chunks: asyncio.Queue[bytes]) -> None:
    """Read ``stdin`` into ``chunks`` until end of input (an empty chunk), or until the loop is gone."""
    try:
        fd = stdin.fileno()
    except (OSError, ValueError, AttributeError):  # not a file (a test's BytesIO)
        read = getattr(stdin, "read1", stdin.read)
    else:
        # The descriptor, not the buffered reader: this daemon thread blocked inside the reader would
        # hold its lock at interpreter exit, and CPython aborts on that (SIGABRT instead of exit 0).
        def read(size: int) -> bytes:
            return os.read(fd, size)

    while True:
        try:
            chunk: bytes = read(CHUNK_BYTES)
        except (OSError, ValueError):  # closed under us: the same as the end of input
            chunk = b""
        try:
            asyncio.run_coroutine_threadsafe(chunks.put(chunk), loop).result()
        except (RuntimeError, concurrent.futures.CancelledError):
            return
        if not chunk:
            return


class Dispatcher:
    """Checks each message, answers what pygls would not, and hands the rest to pygls.

    Args:
        server: the pygls server whose protocol handles the messages.
        writer: where our own answers are written (the transport pygls writes to).
    """

    def __init__(self, server: LanguageServer, writer: PipeWriter) -> None:
        self._server = server
        self._writer = writer
        self.shutting_down = False
        """Set by a ``shutdown`` request: from then on only ``exit`` is accepted."""

    def dispatch(self, body: bytes) -> None:
        """Handle one frame's content. Raises only ``SystemExit`` (``exit``) and ``BrokenPipeError``."""
        try:
            raw = json.loads(body)
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            self.report(f"skipped a message that is not JSON ({type(exc).__name__}: {exc})")
            return
        if not isinstance(raw, dict):
            self.report(f"skipped a message that is not a JSON object: {_preview(raw)}")
            return
        msg_id, method = raw.get("id"), raw.get("method")
        request = "id" in raw and "method" in raw
        if "id" in raw and not _usable_id(msg_id):
            self.report(f"skipped a message whose id is not a number or a string: {_preview(raw)}")
            return
        if raw.get("jsonrpc") != "2.0":
            self._refuse(raw, _INVALID_REQUEST, 'not JSON-RPC 2.0 ("jsonrpc": "2.0" is missing)')
            return
        if "method" in raw and not isinstance(method, str):
            self._refuse(raw, _INVALID_REQUEST, "method is not a string")
            return
        if self.shutting_down and method != t.EXIT:
            if request:
                self._answer_error(msg_id, _INVALID_REQUEST, f"{method}: the server is shutting down")
            else:
                self.report(f"ignored {method or 'a response'} after shutdown")
            return
        if request and method == t.SHUTDOWN:
            self.shutting_down = True
        try:
            message = self._server.protocol.structure_message(raw)
        except JsonRpcException as exc:
            self._refuse(raw, JsonRpcInvalidParams.CODE, _structure_problem(exc))
            return
        try:
            self._server.protocol.handle_message(message)
        except BrokenPipeError:
            raise
        except Exception as exc:  # pygls answers requests itself; this is a response or a notification
            self.report(f"could not handle {method or 'a response'}: {type(exc).__name__}: {exc}")

    def report(self, problem: str) -> None:
        """Say ``problem`` on stderr and in the editor's log (``window/logMessage``)."""
        text = one_line(f"agent-ls: {problem}")
        log.warning("%s", text)
        if not self.shutting_down:
            self._server.window_log_message(t.LogMessageParams(type=t.MessageType.Warning, message=text))

    def _refuse(self, raw: dict[str, Any], code: int, problem: str) -> None:
        """Answer a request that cannot be handled; fail the pending request an unreadable response
        answers; report anything else."""
        msg_id, method = raw.get("id"), raw.get("method")
        if "id" in raw and "method" in raw:
            self._answer_error(msg_id, code, f"{method}: {problem}")
        elif "id" in raw and isinstance(msg_id, int | str):
            error = {"code": code, "message": one_line(f"the answer could not be read: {problem}")}
            answer = {"jsonrpc": "2.0", "id": msg_id, "error": error}  # as if the editor had said so
            self._server.protocol.handle_message(self._server.protocol.structure_message(answer))
            self.report(f"the editor's answer to request {msg_id} could not be read: {problem}")
        else:
            self.report(f"ignored {method or 'a message'}: {problem}")

    def _answer_error(self, msg_id: Any, code: int, message: str) -> None:
        response = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": one_line(message)}}
        content = json.dumps(response).encode()
        self._writer.write(b"Content-Length: %d\r\n\r\n" % len(content) + content)


def _usable_id(msg_id: object) -> bool:
    return isinstance(msg_id, str) or (isinstance(msg_id, int) and not isinstance(msg_id, bool))


def _preview(raw: object) -> str:
    return one_line(json.dumps(raw)[:120])


def _structure_problem(exc: JsonRpcException) -> str:
    """What cattrs found wrong, with LSP's camelCase paths (``expected int @ $.params.position.line``)."""
    cause = exc.__cause__
    try:
        lines = cattrs.transform_error(cause) if isinstance(cause, Exception) else [exc.message]
    except Exception:  # transform_error knows cattrs' own errors; anything else is said as it is
        lines = [f"{type(cause).__name__}: {cause}"]
    camel = [re.sub(r"_([a-z])", lambda m: m[1].upper(), line) for line in lines]
    return "invalid params: " + "; ".join(camel)


def _one_line_client_errors(record: logging.LogRecord) -> bool:
    """pygls logs every error it answers with a traceback, the expected ones too (a command's
    InvalidParams), and a second traceback for params it cannot read (which ``Dispatcher`` reports
    itself). Expected errors become one line; an InternalError (a bug) keeps its traceback."""
    if isinstance(record.msg, str) and record.msg.startswith("Unable to deserialize message"):
        return False
    error = record.exc_info[1] if record.exc_info else None
    if isinstance(error, JsonRpcException) and error.code != JsonRpcInternalError.CODE:
        record.msg, record.args = (
            "agent-ls: answered with error %s: %s",
            (error.code, one_line(error.message)),
        )
        record.exc_info, record.exc_text = None, None
    return True
