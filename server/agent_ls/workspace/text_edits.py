"""Line-based edits between two texts, with LSP line semantics and no LSP types.

``lsp/convert.py`` turns the hunks into ``TextEdit``s; this module only decides *which lines* change.
Steps, in order:

1. ``split_lines`` (defined in ``line_diff``) cuts both texts into lines the way LSP does: only
   ``\\r\\n``, ``\\n`` and ``\\r`` end a line (``str.splitlines`` would also cut at ``\\x0b``, ``\\x0c``,
   ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028`` and ``\\u2029``, which a client does not count as line breaks).
2. ``line_hunks`` diffs the two line lists (each line keeps its terminator) with ``line_diff.text_diff``
   (a cached xdiff, git's line diff) and returns one ``Hunk`` per non-equal opcode.
3. ``hunk_span`` gives a hunk's range as (line, code-point column) positions in the *old* text;
   the LSP layer converts the columns to the negotiated encoding with pygls ``PositionCodec``.

Because a hunk always starts and ends at a line boundary, it can never split a ``\\r\\n`` pair
(oxc-project/oxc#23462 shows what goes wrong when an edit ends between ``\\r`` and ``\\n``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_ls.workspace.line_diff import split_lines as split_lines  # where every user looks for it
from agent_ls.workspace.line_diff import text_diff

_TERMINATORS = ("\r\n", "\n", "\r")


@dataclass(frozen=True)
class Hunk:
    """Replace the old text's lines ``[start_line, end_line)`` (0-based) with ``new_text``.

    ``start_line == end_line`` is a pure insertion before line ``start_line``; ``new_text == ""`` a
    pure deletion. ``new_text`` holds whole lines with their terminators (the last one may lack it
    when the hunk reaches the end of the new text).
    """

    start_line: int
    end_line: int
    new_text: str


@dataclass(frozen=True)
class LinePosition:
    """A 0-based line and a 0-based column counted in code points (not UTF-16 units)."""

    line: int
    column: int


def line_hunks(old: str, new: str) -> list[Hunk]:
    """The line hunks that turn ``old`` into ``new``.

    Lines are compared with their terminators, so a line whose ending changed (``\\n`` to ``\\r\\n``)
    is a changed line. The diff is ``line_diff.text_diff``'s (git's xdiff, computed once per pair of
    texts); applying the hunks to ``old`` gives ``new`` exactly.

    Returns:
        Hunks in ascending, non-overlapping order of ``start_line``; ``[]`` when the texts are equal.
        A single hunk covers the whole file only when no line is shared.
    """
    diff = text_diff(old, new)
    return [
        Hunk(i1, i2, "".join(diff.new_lines[j1:j2])) for tag, i1, i2, j1, j2 in diff.opcodes if tag != "equal"
    ]


def line_boundary(lines: Sequence[str], index: int) -> LinePosition:
    """The position where old line ``index`` starts, or the end of the document for ``len(lines)``.

    The end of the document is an exact position, never one past the last line (some clients clamp
    such positions, others reject them):

    - the text ends with a terminator: ``(len(lines), 0)``, the start of the empty last line, which
      LSP counts as a line of the document;
    - it does not: ``(len(lines) - 1, len(lines[-1]))``, after the last character (code points);
    - the text is empty: ``(0, 0)``.

    Args:
        lines: the old text as returned by ``split_lines``.
        index: 0-based line index, ``0 <= index <= len(lines)``.

    Raises:
        IndexError: ``index`` is outside ``[0, len(lines)]``.
    """
    if index < 0 or index > len(lines):
        raise IndexError(f"line {index} is outside 0..{len(lines)}")
    if index < len(lines) or not lines:
        return LinePosition(index, 0)
    last = lines[-1]
    if last.endswith(_TERMINATORS):
        return LinePosition(len(lines), 0)
    return LinePosition(len(lines) - 1, len(last))


def hunk_span(lines: Sequence[str], hunk: Hunk) -> tuple[LinePosition, LinePosition]:
    """The (start, end) positions of ``hunk`` in the old text, columns in code points.

    Args:
        lines: the old text as returned by ``split_lines``.
        hunk: a hunk computed against that text.

    Returns:
        ``(start, end)`` where start is ``(start_line, 0)`` and end is ``(end_line, 0)``, except that an
        index equal to ``len(lines)`` becomes the exact end of the document (see ``line_boundary``).
    """
    return line_boundary(lines, hunk.start_line), line_boundary(lines, hunk.end_line)
