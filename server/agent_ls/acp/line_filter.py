"""The lines the client sends, sorted before the ACP SDK reads them: only JSON objects reach it.

The SDK's receive loop expects each line to be a JSON object: a line of valid JSON that is not one
(``[]``, ``42``, ``"x"``) ended the agent, ``null`` read as the end of input, and a line that is not JSON
was dropped without a reply. ``LineFilter`` sits between stdin and the SDK and answers such lines as
JSON-RPC 2.0 says (section 5.1), with ``id`` null, one whole line on stdout each:

- not JSON (or not UTF-8): ``-32700`` Parse error;
- JSON that is not an object, including a batch (an array: ACP v1 sends none, so a batch is not
  served): ``-32600`` Invalid Request;
- an object whose ``method`` is present but not a string: ``-32600``, with the object's ``id``.

Everything else (each JSON object, blank lines left out) is passed on unchanged, and the end of input
too, so the agent keeps serving after a bad line.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def error_line(code: int, message: str, request_id: Any = None) -> bytes:
    """One JSON-RPC error response as a line (``id`` null unless the request's own id is known)."""
    reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(reply).encode() + b"\n"


def judge(line: bytes) -> bytes | None:
    """None when ``line`` (stripped, not blank) is a JSON object to pass on, else the error line that
    answers it (module docstring)."""
    try:
        message = json.loads(line)
    except ValueError:  # UnicodeDecodeError is one
        return error_line(PARSE_ERROR, "Parse error: the line is not JSON")
    if isinstance(message, list):
        return error_line(INVALID_REQUEST, "Invalid Request: batches are not served, send one object a line")
    if not isinstance(message, dict):
        return error_line(INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    if "method" in message and not isinstance(message["method"], str):
        request_id = message.get("id")
        valid_id = request_id if isinstance(request_id, (str, int)) else None
        return error_line(INVALID_REQUEST, "Invalid Request: method must be a string", valid_id)
    return None


class LineFilter:
    """Reads ``source`` (stdin) line by line; JSON objects go to ``reader`` (what the SDK reads), other
    lines are answered on ``writer`` (stdout). ``limit``: the longest line in bytes."""

    def __init__(self, source: asyncio.StreamReader, writer: asyncio.StreamWriter, limit: int) -> None:
        self._source = source
        self._writer = writer
        self.reader = asyncio.StreamReader(limit=limit)
        self._task = asyncio.get_running_loop().create_task(self._pump())

    async def close(self) -> None:
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass

    async def _pump(self) -> None:
        try:
            while True:
                try:
                    line = await self._source.readline()
                except ValueError:  # longer than the limit: its bytes are dropped
                    log.warning("a line over the length limit was left out")
                    self._writer.write(error_line(PARSE_ERROR, "Parse error: the line is too long"))
                    await self._writer.drain()
                    continue
                if not line:
                    break
                stripped = line.strip()
                if not stripped:
                    continue
                error = judge(stripped)
                if error is None:
                    self.reader.feed_data(stripped + b"\n")
                else:
                    log.warning("answered a line that is not a JSON-RPC object: %s", error.decode().strip())
                    self._writer.write(error)  # one whole line: the SDK's writes are whole lines too
                    await self._writer.drain()
        finally:
            self.reader.feed_eof()
