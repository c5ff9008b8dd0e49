"""The whole outputs of a session's tool calls, kept beside its JSONL file so the model can read them again.

Where: ``<session id>.outputs/<call>.txt`` next to ``<session id>.jsonl`` (``store.SessionStore.path``),
one UTF-8 file per call whose result the model read cut (a command's head and tail, the registry's central
cut), written whole with its secrets redacted (the log's ``Redactor``, as every line of the JSONL). The
file name is the call id when it is letters, digits, ``-`` and ``_`` (64 at most), else those characters of
it and 12 hex digits of its SHA-256 (``call_1_2-3f2a9c0d1e4b``). A command's output is at most
``workspace.processes.FULL_OUTPUT_MAX_BYTES`` (8 MiB), the registry's other results what a tool returned.

``read(call_id)`` returns the kept file, or else the result the model read for that call, from the
session's ``message`` lines (unwrapped from ``core.context.wrap_tool_result``'s element): any earlier
result, also one a compaction has pruned since (its ``message`` line still holds it), also after a restart
or from another process. Call ids may repeat (local models number them per turn): the latest wins, a kept
file being replaced and the last ``message`` line read.

Writing 8 MiB (redaction included) takes about 0.1 s (``docs/sessions.md`` has the measure); the registry
calls ``keep`` in a worker thread, and ``read_output`` calls ``read`` in one.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from agent_ls.core.context import TOOL_RESULT_TAG
from agent_ls.sessions.store import SessionFormatError, SessionLog, read_file
from agent_ls.workspace.private_dirs import make_private

_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_WRAPPED = re.compile(rf"<{TOOL_RESULT_TAG} [^>\n]*>\n(.*?)\n</{TOOL_RESULT_TAG}>", re.DOTALL)


def output_file_name(call_id: str) -> str:
    """``<call id>.txt``, or for an id that cannot name a file as it is, its safe characters (at most 40)
    and 12 hex digits of its SHA-256 (so two ids never share a file)."""
    if _PLAIN_ID.fullmatch(call_id):
        return f"{call_id}.txt"
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", call_id)[:40]
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{safe}-{digest}.txt"


class SessionOutputs:
    """The ``OutputKeeper`` of one session (``tools.base.OutputKeeper``), over its ``SessionLog``.

    Args:
        log: the session's open log: its path names the folder, its redactor cleans what is kept.
    """

    def __init__(self, log: SessionLog) -> None:
        self._log = log
        self._redactor = log.redactor
        self.folder = outputs_folder(log.path)

    def keep(self, call_id: str, text: str) -> bool:
        """Write ``text``, redacted, as the call's file (replacing an earlier one of the same id);
        False when the disk refused it. Blocking."""
        data = self._redactor.text(text).encode("utf-8", "surrogatepass")
        path = self.folder / output_file_name(call_id)
        partial = path.with_name(f".{path.name}.partial")
        try:
            make_private(self.folder)
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(partial, path)  # a reader sees the old file or the new one, never half of one
        except OSError:
            return False
        return True

    def read(self, call_id: str) -> str | None:
        """The call's kept file, else the result the model read for it (the last ``message`` line of a
        tool result with that id, unwrapped), else None. Blocking: waits for the log's queued lines."""
        try:
            return (self.folder / output_file_name(call_id)).read_text("utf-8", "replace")
        except OSError:
            pass
        self._log.flush()
        try:
            stored = read_file(self._log.path)
        except (OSError, SessionFormatError):
            return None
        found: str | None = None
        for record in stored.records:
            message = record.get("message") if record.get("kind") == "message" else None
            if (
                isinstance(message, dict)
                and message.get("role") == "tool"
                and message.get("callId") == call_id
            ):
                content = message.get("content")
                found = content if isinstance(content, str) else found
        return unwrap_tool_result(found) if found is not None else None


def unwrap_tool_result(content: str) -> str:
    """The text inside ``core.context.wrap_tool_result``'s element (tags inside stay neutralized, as the
    model read them); ``content`` as it is when it is not wrapped. Instruction blocks after it are left
    out: they are not the tool's output."""
    found = _WRAPPED.match(content)
    return found.group(1) if found else content


def outputs_folder(path: Path) -> Path:
    """The outputs folder of the session file ``path`` (``<id>.jsonl`` → ``<id>.outputs``)."""
    return path.with_name(f"{path.stem}.outputs")
