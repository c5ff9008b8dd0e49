"""Unified diffs and line counts of a ``FileChange``, for people to read (CLI, editor previews, logs).

Lines are cut with LSP semantics (``text_edits.split_lines``: only ``\\r\\n``, ``\\n``, ``\\r`` end a
line) and keep their terminators, so a CRLF file shows ``\\r\\n`` in its diff lines and a change of
line ending alone shows up as a changed line. The format follows ``diff -u`` / ``git diff``:
``--- a/<path>`` and ``+++ b/<path>`` headers (``--- /dev/null`` for a new file), 3 lines of
context, and ``\\ No newline at end of file`` after a last line without terminator.

Names are quoted as git quotes them (``core.quotePath``, git's ``quote.c`` ``quote_c_style``): a name
holding a control character, ``"``, ``\\`` or a non-ASCII byte is written in double quotes with C
escapes (``"b/docs.txt\\n+++ b/README.md"``), so a line feed in a name cannot forge a header line, and
``git apply`` reads the name back. A header line whose name holds a space ends with a tab, as git's
``diff.c`` writes it for GNU patch. Content lines are the exact text; a terminal shows them through
``agent_ls.core.visible_text``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from agent_ls.core.proposal import FileChange
from agent_ls.workspace.line_diff import Opcode, grouped_opcodes, text_diff

_NO_NEWLINE = "\\ No newline at end of file\n"
# git's quote.c cq_lookup: these bytes get a letter escape; other bytes below 0x20, 0x7f and every byte
# from 0x80 (core.quotePath=true, git's default) get a 3-digit octal escape.
_C_ESCAPES = {
    0x07: "a", 0x08: "b", 0x09: "t", 0x0A: "n", 0x0B: "v", 0x0C: "f", 0x0D: "r", 0x22: '"', 0x5C: "\\"
}  # fmt: skip


def quote_path(name: str) -> str:
    """``name`` as git writes it in a diff header: unchanged, or in double quotes with C escapes.

    Args:
        name: a path (with its ``a/`` or ``b/`` prefix); lone surrogates stand for the undecodable
            bytes of a file system name (``os.fsdecode``) and are written as those bytes; any other
            lone surrogate as its 3-byte form.

    Returns:
        ``name`` when every byte is printable ASCII other than ``"`` and ``\\``; else the quoted form,
        for example ``"b/caf\\303\\251.txt"`` or ``"b/a\\nb"``.
    """
    try:
        data = name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte (a model's JSON may hold one)
        data = name.encode("utf-8", "surrogatepass")
    if all(0x20 <= byte < 0x7F and byte not in (0x22, 0x5C) for byte in data):
        return name
    out = ['"']
    for byte in data:
        if byte in _C_ESCAPES:
            out.append("\\" + _C_ESCAPES[byte])
        elif byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(chr(byte))
    out.append('"')
    return "".join(out)


def unified_diff(change: FileChange, *, context_lines: int = 3) -> str:
    """The unified diff from ``change.base_text`` to ``change.new_text``.

    Args:
        change: the file change; ``change.path`` is workspace-relative POSIX.
        context_lines: unchanged lines shown around each hunk.

    Returns:
        The diff text, every line ending with ``\\n`` (a line that ended with a bare ``\\r`` gets
        ``\\n`` appended so the diff stays line-oriented); ``""`` when nothing changed.
    """
    diff = text_diff(change.base_text, change.new_text)
    groups = grouped_opcodes(diff.opcodes, context_lines)
    if not groups:
        return ""
    from_file = "/dev/null" if change.is_new else _header_name(f"a/{change.path}")
    to_file = _header_name(f"b/{change.path}")
    out: list[str] = []
    for line in _unified_lines(diff.old_lines, diff.new_lines, groups, from_file, to_file):
        if line.endswith("\n"):
            out.append(line)
        elif line.endswith("\r"):
            out.append(line + "\n")
        else:
            out.append(line + "\n" + _NO_NEWLINE)
    return "".join(out)


def _unified_lines(
    old: Sequence[str], new: Sequence[str], groups: list[list[Opcode]], from_file: str, to_file: str
) -> Iterator[str]:
    """``difflib.unified_diff``'s lines (headers without dates, content lines as they are) over
    ``groups``, the diff's cached opcodes grouped with their context."""
    yield f"--- {from_file}\n"
    yield f"+++ {to_file}\n"
    for group in groups:
        first, last = group[0], group[-1]
        old_range = _unified_range(first[1], last[2])
        new_range = _unified_range(first[3], last[4])
        yield f"@@ -{old_range} +{new_range} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in old[i1:i2])
                continue
            yield from ("-" + line for line in old[i1:i2])
            yield from ("+" + line for line in new[j1:j2])


def _unified_range(start: int, stop: int) -> str:
    """A hunk header's range as ``diff -u`` writes it (``difflib._format_range_unified``)."""
    beginning = start + 1  # lines start numbering with one
    length = stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1  # an empty range begins at the line before it
    return f"{beginning},{length}"


def _header_name(name: str) -> str:
    quoted = quote_path(name)
    return quoted + "\t" if " " in quoted else quoted


def line_counts(change: FileChange) -> tuple[int, int]:
    """``(added, removed)``: how many lines the change adds and removes (a changed line counts in both)."""
    return text_diff(change.base_text, change.new_text).counts
