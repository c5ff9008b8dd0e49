"""The ``session/update`` notifications of one ACP session, sent in the order they were queued.

An ``EventSink`` must not block (``core.events.EventSink``), and the SDK's ``session_update`` is a
coroutine: updates are queued and one task sends them; ``drain`` waits until all were sent (before a
prompt's answer, which must come after its updates, and before a question about a call just announced).

The stream also knows which tool calls it announced and has not ended (``completed`` / ``failed``):
``fail_open`` ends them ``failed``, at the end of a prompt (a cancel stops a command, a question, the apply
question before their own end is sent; ACP says a call ends completed or failed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from acp import helpers, schema
from acp.interfaces import Client

log = logging.getLogger(__name__)


class UpdateStream:
    """Sends ``session/update`` notifications of one session in the order they were put."""

    def __init__(self, client: Client, session_id: str) -> None:
        self._client = client
        self.session_id = session_id
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task = asyncio.get_running_loop().create_task(self._pump())
        self._open: dict[str, None] = {}  # tool call ids announced and not ended, in order

    def send(self, update: Any) -> None:
        if isinstance(update, (schema.ToolCallStart, schema.ToolCallProgress)):
            if update.status in ("completed", "failed"):
                self._open.pop(update.tool_call_id, None)
            elif isinstance(update, schema.ToolCallStart):
                self._open[update.tool_call_id] = None
        self._queue.put_nowait(update)

    def fail_open(self) -> None:
        """End every tool call still open (``pending`` / ``in_progress``) with status ``failed``."""
        for call_id in list(self._open):
            self.send(helpers.update_tool_call(call_id, status="failed"))

    async def drain(self) -> None:
        await self._queue.join()

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _pump(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                await self._client.session_update(session_id=self.session_id, update=update)
            except Exception as exc:  # a client gone away: the run goes on, its record is written
                log.warning("session/update failed: %s", exc)
            finally:
                self._queue.task_done()
