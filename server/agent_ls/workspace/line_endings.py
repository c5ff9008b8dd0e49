"""Edits made on the model's view of a file (every CRLF shown as LF) applied to its real text, keeping
every line ending the edit did not touch byte for byte.

read_file and grep show a CRLF line ending as a plain line feed, in any file: all CRLF, mixed, or LF. So
the model's ``old_string`` and ``content`` hold ``\\n`` where the file may hold ``\\r\\n``. Here:

- ``replace_in_view`` finds ``old`` in the view (the text with ``\\r\\n`` as ``\\n``), and rebuilds the
  real text: everything outside the matches is copied from the real text, so untouched bytes are exact;
  each line feed the model wrote becomes the ending that stood in that place (the n-th line feed of a
  match gets the n-th ending the match covered, further ones the last), or, where the match covered
  none, the ending of the line it is in;
- ``restore_endings`` does the same for a whole new text (write_file): lines are matched to the old
  ones (``difflib``), an unchanged line keeps its ending, a changed one takes the ending of the line it
  replaces, an added one that of the line before it.

A ``\\r\\n`` the model writes itself is kept as it is. A lone ``\\r`` (not before ``\\n``) is an ordinary
character of its line in the view and here.
"""

from __future__ import annotations

import bisect
import difflib
from array import array
from dataclasses import dataclass


@dataclass(frozen=True)
class Replaced:
    """The result of ``replace_in_view``: the new real text, and how many matches were replaced."""

    text: str
    count: int


class _View:
    """The text with CRLF as LF, and where the collapsed CRs were (for mapping offsets back)."""

    def __init__(self, real: str) -> None:
        self.real = real
        self.text = real.replace("\r\n", "\n")
        # View offsets of the line feeds that are CRLF in the real text, ascending.
        self.crlf = array("q")
        start = 0
        removed = 0
        while (found := real.find("\r\n", start)) >= 0:
            self.crlf.append(found - removed)
            removed += 1
            start = found + 2

    def real_offset(self, offset: int) -> int:
        """The real offset of view ``offset``; an offset at a CRLF's line feed lands before its CR."""
        return offset + bisect.bisect_left(self.crlf, offset)

    def ending_at(self, offset: int) -> str:
        """The real line ending of the view's line feed at ``offset``."""
        index = bisect.bisect_left(self.crlf, offset)
        return "\r\n" if index < len(self.crlf) and self.crlf[index] == offset else "\n"

    def ending_near(self, start: int, end: int) -> str:
        """The ending of the line that holds view range ``[start, end)``: its own line feed, else the
        previous one, else LF."""
        after = self.text.find("\n", end)
        if after >= 0:
            return self.ending_at(after)
        before = self.text.rfind("\n", 0, start)
        return self.ending_at(before) if before >= 0 else "\n"


def replace_in_view(real: str, old: str, new: str, *, replace_all: bool) -> Replaced:
    """Replace ``old`` (as the model saw it) with ``new`` in ``real``; see the module docstring.

    Args:
        real: the file's text, line endings as they are.
        old: the text to find, matched in the view; a ``\\r\\n`` in it is read as ``\\n``.
        new: the replacement; its bare ``\\n`` take the endings around them.
        replace_all: replace every non-overlapping match (left to right), else only the first.

    Returns:
        The new real text and the number of matches in the view (all of them, even when only the
        first was replaced); ``count == 0`` leaves ``real`` as it is.
    """
    view = _View(real)
    needle = old.replace("\r\n", "\n")
    starts: list[int] = []
    at = view.text.find(needle)
    while at >= 0:
        starts.append(at)
        at = view.text.find(needle, at + len(needle))
    if not starts:
        return Replaced(real, 0)
    out: list[str] = []
    copied = 0  # real offset copied so far
    for start in starts if replace_all else starts[:1]:
        end = start + len(needle)
        out.append(real[copied : view.real_offset(start)])
        out.append(_with_endings(new, _endings_within(view, start, end), view.ending_near(start, end)))
        copied = view.real_offset(end)
    out.append(real[copied:])
    return Replaced("".join(out), len(starts))


def restore_endings(real: str, new_view: str) -> str:
    """``new_view`` (a whole new text with LF endings) with the line endings of ``real`` put back where its
    lines stand (module docstring). A ``new_view`` holding ``\\r`` is returned as it is: the model wrote
    its endings itself."""
    if "\r" in new_view or "\r\n" not in real:
        return new_view
    old_lines = real.replace("\r\n", "\n").split("\n")
    old_endings = _line_endings(real)
    new_lines = new_view.split("\n")
    fallback = max(set(old_endings), key=old_endings.count) if old_endings else "\n"
    endings: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(j2 - j1):
            if tag == "equal" or (tag == "replace" and i1 + k < i2):
                index = i1 + k
            elif tag == "replace":
                index = i2 - 1
            else:  # inserted: the ending of the line before, else of the line after
                index = i1 - 1 if i1 > 0 else i1
            endings.append(old_endings[index] if 0 <= index < len(old_endings) else fallback)
    parts: list[str] = []
    for index, line in enumerate(new_lines[:-1]):
        parts.append(line + endings[index])
    parts.append(new_lines[-1])
    return "".join(parts)


def _line_endings(real: str) -> list[str]:
    """The ending of each line feed of ``real``, in order (``\\r\\n`` or ``\\n``)."""
    endings: list[str] = []
    start = 0
    while (found := real.find("\n", start)) >= 0:
        endings.append("\r\n" if found > 0 and real[found - 1] == "\r" else "\n")
        start = found + 1
    return endings


def _endings_within(view: _View, start: int, end: int) -> list[str]:
    """The real endings of the line feeds inside view range ``[start, end)``, in order."""
    endings: list[str] = []
    at = view.text.find("\n", start, end)
    while at >= 0:
        endings.append(view.ending_at(at))
        at = view.text.find("\n", at + 1, end)
    return endings


def _with_endings(new: str, covered: list[str], around: str) -> str:
    """``new`` with each bare ``\\n`` given the next ending of ``covered`` (then its last one, or
    ``around`` when it is empty); a ``\\r\\n`` already in ``new`` stays."""
    pieces = new.split("\r\n")
    out: list[str] = []
    used = 0
    for p_index, piece in enumerate(pieces):
        lines = piece.split("\n")
        for l_index, line in enumerate(lines):
            out.append(line)
            if l_index < len(lines) - 1:
                out.append(covered[min(used, len(covered) - 1)] if covered else around)
                used += 1
        if p_index < len(pieces) - 1:
            out.append("\r\n")
            used += 1
    return "".join(out)
