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

from collections.abc import Sequence

from agent_ls.core.proposal import FileChange
from agent_ls.workspace.line_diff import LineDiff, has_bare_cr, text_diff

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
    if all(code[0] == "equal" for code in diff.opcodes):
        return ""
    from_file = "/dev/null" if change.is_new else _header_name(f"a/{change.path}")
    to_file = _header_name(f"b/{change.path}")
    out = [f"--- {from_file}\n", f"+++ {to_file}\n"]
    old = _diff_lines(diff.old_lines, has_bare_cr(change.base_text))
    _hunks(out, diff, old, _diff_lines(diff.new_lines, has_bare_cr(change.new_text)), context_lines)
    return "".join(out)


def _diff_lines(lines: Sequence[str], bare_cr: bool) -> Sequence[str]:
    """``lines`` as they are written in a diff after their ``-``, ``+`` or space: ending with ``\\n`` (a
    bare ``\\r``, which ``bare_cr`` says the text holds, gets one appended), the last line without
    terminator followed by git's no-newline line."""
    if bare_cr:  # rare: an old Mac line end
        return [_diff_line(line) for line in lines]
    if lines and not lines[-1].endswith("\n"):
        return [*lines[:-1], _diff_line(lines[-1])]
    return lines  # nearly always: every line ends with \n (LF or CR LF)


def _hunks(out: list[str], diff: LineDiff, old: Sequence[str], new: Sequence[str], context: int) -> None:
    """``diff``'s hunks of the diff lines ``old`` and ``new`` with ``context`` equal lines around each
    change, in one pass over its opcodes (``difflib.SequenceMatcher.get_grouped_opcodes``' grouping: an
    equal run longer than twice the context ends a hunk and starts the next). A run of lines is written
    with one join."""
    last = len(diff.opcodes) - 1
    hunk: list[str] = []
    start_old = start_new = 0  # where the open hunk starts
    for index, (tag, i1, i2, j1, j2) in enumerate(diff.opcodes):
        if tag != "equal":
            if i2 > i1:
                hunk.append("-" + "-".join(old[i1:i2]))
            if j2 > j1:
                hunk.append("+" + "+".join(new[j1:j2]))
            continue
        if index == 0:  # leading context
            start_old, start_new = max(i1, i2 - context), max(j1, j2 - context)
            if i2 > start_old:
                hunk.append(" " + " ".join(old[start_old:i2]))
            continue
        if index < last and i2 - i1 <= 2 * context:  # inside a hunk
            hunk.append(" " + " ".join(old[i1:i2]))
            continue
        stop = min(i2, i1 + context)  # the trailing context of the open hunk
        if stop > i1:
            hunk.append(" " + " ".join(old[i1:stop]))
        out.append(f"@@ -{_unified_range(start_old, stop)} +{_unified_range(start_new, j1 + stop - i1)} @@\n")
        out.extend(hunk)
        hunk = []
        start_old, start_new = max(i1, i2 - context), max(j1, j2 - context)
        if index < last and i2 > start_old:  # the leading context of the next hunk
            hunk.append(" " + " ".join(old[start_old:i2]))
    if hunk:  # the last opcode was a change
        _, _, i2, _, j2 = diff.opcodes[last]
        out.append(f"@@ -{_unified_range(start_old, i2)} +{_unified_range(start_new, j2)} @@\n")
        out.extend(hunk)


def _diff_line(line: str) -> str:
    if line.endswith("\n"):
        return line
    if line.endswith("\r"):
        return line + "\n"
    return line + "\n" + _NO_NEWLINE


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
