"""The editor's unsaved texts over ACP: ``fs/read_text_file`` fetched before the tools read, served to
the overlay as its ``BufferSource``.

The overlay reads synchronously (``Workspace.read_text``, ``read_page``), and ACP's read is a request to
the client. So the reads are made ahead: ``PrefetchingModel`` wraps the run's model client, and when a
response carries tool calls it asks the client, before returning, for every file a ``read_file``,
``edit_file`` or ``write_file`` call names (the tools run right after, from the loop). The text the
client returns is kept by ``ClientBuffers`` when it differs from the disk file (an unsaved buffer),
with a version that moves when it changes; a text equal to the disk file is not kept, so the overlay's
own disk read (encoding, line endings) stays the source for saved files. The shadow copy then gets the
unsaved texts as it gets an LSP editor's (``workspace/unsaved.py``), so commands see them too.

Paths the session's path policy refuses (a secret file, outside the root) are never asked for. Without
the client capability ``fs.readTextFile`` nothing is fetched and the disk is read.
Limits: a subagent's reads (``task``) are not prefetched (they read the disk or a text fetched before).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from agent_ls.acp.mapping import parsed_arguments
from agent_ls.core.events import EventSink
from agent_ls.core.messages import Message, ModelResponse, ToolSpec
from agent_ls.core.ports import ModelClient
from agent_ls.workspace.overlay import OpenBuffer

log = logging.getLogger(__name__)

PREFETCHED_TOOLS = ("read_file", "edit_file", "write_file")

ReadText = Callable[[Path], Awaitable[str | None]]
"""Asks the client for the text of an absolute path; None when it has none (no such file, an error)."""


class ClientBuffers:
    """Implements the overlay's ``BufferSource`` with the texts fetched from the client (module docstring)."""

    def __init__(self) -> None:
        self._buffers: dict[Path, OpenBuffer] = {}

    def get(self, path: Path) -> OpenBuffer | None:
        return self._buffers.get(path)

    def open_paths(self) -> list[Path]:
        return list(self._buffers)

    def put(self, path: Path, text: str | None) -> None:
        """Keep ``text`` as the buffer of ``path`` when it differs from the disk file; forget it when it is
        None or equal to the disk (the file was saved, or closed)."""
        if text is None or _same_as_disk(path, text):
            self._buffers.pop(path, None)
            return
        known = self._buffers.get(path)
        if known is not None and known.text == text:
            return
        self._buffers[path] = OpenBuffer(text=text, version=(known.version + 1) if known else 1)


class PrefetchingModel:
    """A ``ModelClient`` that, after each response with tool calls, fetches the files they will read
    (module docstring) through ``read_text`` into ``buffers``. ``allowed`` maps a model-given path to the
    absolute path to fetch, or None when the path policy refuses it."""

    def __init__(
        self,
        inner: ModelClient,
        buffers: ClientBuffers,
        read_text: ReadText,
        allowed: Callable[[str], Path | None],
    ) -> None:
        self.inner = inner
        self._buffers = buffers
        self._read_text = read_text
        self._allowed = allowed

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def config(self) -> object:  # read through wrappers by ``models.request_body.context_window_of``
        return getattr(self.inner, "config", None)

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse:
        response = await self.inner.complete(messages, tools, emit)
        for call in response.message.tool_calls:
            if call.name not in PREFETCHED_TOOLS:
                continue
            path = parsed_arguments(call.arguments).get("path")
            target = self._allowed(path) if isinstance(path, str) and path else None
            if target is not None:
                self._buffers.put(target, await self._read_text(target))
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def _same_as_disk(path: Path, text: str) -> bool:
    """True when the file at ``path`` holds ``text`` in UTF-8 (its size compared first: a large file that
    differs is not read)."""
    encoded = text.encode("utf-8", errors="surrogatepass")
    try:
        return path.stat().st_size == len(encoded) and path.read_bytes() == encoded
    except OSError:
        return False
