"""Unified diffs and line counts of a ``FileChange``, for people to read (CLI, editor previews, logs).

Lines are cut with LSP semantics (``text_edits.split_lines``: only ``\\r\\n``, ``\\n``, ``\\r`` end a
line) and keep their terminators, so a CRLF file shows ``\\r\\n`` in its diff lines and a change of
line ending alone shows up as a changed line. The format follows ``diff -u`` / ``git diff``:
``--- a/<path>`` and ``+++ b/<path>`` headers (``--- /dev/null`` for a new file), 3 lines of
context, and ``\\ No newline at end of file`` after a last line without terminator.
"""

from __future__ import annotations

import difflib

from agent_ls.core.proposal import FileChange
from agent_ls.workspace.text_edits import split_lines

_NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(change: FileChange, *, context_lines: int = 3) -> str:
    """The unified diff from ``change.base_text`` to ``change.new_text``.

    Args:
        change: the file change; ``change.path`` is workspace-relative POSIX.
        context_lines: unchanged lines shown around each hunk.

    Returns:
        The diff text, every line ending with ``\\n`` (a line that ended with a bare ``\\r`` gets
        ``\\n`` appended so the diff stays line-oriented); ``""`` when nothing changed.
    """
    old = split_lines(change.base_text)
    new = split_lines(change.new_text)
    from_file = "/dev/null" if change.is_new else f"a/{change.path}"
    out: list[str] = []
    for line in difflib.unified_diff(old, new, from_file, f"b/{change.path}", n=context_lines):
        if line.endswith("\n"):
            out.append(line)
        elif line.endswith("\r"):
            out.append(line + "\n")
        else:
            out.append(line + "\n" + _NO_NEWLINE)
    return "".join(out)


def line_counts(change: FileChange) -> tuple[int, int]:
    """``(added, removed)``: how many lines the change adds and removes (a changed line counts in both)."""
    matcher = difflib.SequenceMatcher(
        None, split_lines(change.base_text), split_lines(change.new_text), autojunk=False
    )
    added = removed = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed
