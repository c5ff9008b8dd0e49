"""Edits made on the model's view of a file (every CRLF shown as LF) applied to its real text, keeping
every line ending the edit did not touch byte for byte.

read_file and grep show a CRLF line ending as a plain line feed, in any file: all CRLF, mixed, or LF. So
the model's ``old_string`` and ``content`` hold ``\\n`` where the file may hold ``\\r\\n``. Here:

- ``restore_endings`` puts the endings back into a new text written in the view (write_file): its
  lines are matched to the old ones (``line_diff.line_opcodes``); an unchanged line keeps its ending, a
  changed one takes the ending of the line it replaces, an added one that of the line before it (else
  after it);
- ``replace_in_view`` finds ``old`` in the view and rebuilds the real text: everything outside the
  lines a match touches is copied from the real text byte for byte, and those lines get their endings
  back with ``restore_endings`` (so in a mixed file, lines added in a CRLF region get CRLF).

A ``content`` holding ``\\r`` is taken as written: the model chose its endings. A lone ``\\r`` (not before
``\\n``) is an ordinary character of its line in the view and here.
"""

from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass

from agent_ls.workspace.line_diff import line_opcodes


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


def replace_in_view(real: str, old: str, new: str, *, replace_all: bool) -> Replaced:
    """Replace ``old`` (as the model saw it) with ``new`` in ``real``; see the module docstring.

    Args:
        real: the file's text, line endings as they are.
        old: the text to find, matched in the view; a ``\\r\\n`` in it is read as ``\\n``.
        new: the replacement; a ``\\r\\n`` in it is read as ``\\n`` too, and each line feed takes the
            ending of the line it stands for.
        replace_all: replace every non-overlapping match (left to right), else only the first.

    Returns:
        The new real text and the number of matches in the view (all of them, even when only the
        first was replaced); ``count == 0`` leaves ``real`` as it is.
    """
    view = _View(real)
    needle, replacement = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    starts: list[int] = []
    at = view.text.find(needle)
    while at >= 0:
        starts.append(at)
        at = view.text.find(needle, at + len(needle))
    if not starts:
        return Replaced(real, 0)
    out: list[str] = []
    copied = 0  # view offset copied so far
    chosen = starts if replace_all else starts[:1]
    for region_start, region_end, matches in _regions(view.text, chosen, len(needle)):
        out.append(real[view.real_offset(copied) : view.real_offset(region_start)])
        pieces: list[str] = []
        at = region_start
        for match in matches:
            pieces += [view.text[at:match], replacement]
            at = match + len(needle)
        pieces.append(view.text[at:region_end])
        old_real = real[view.real_offset(region_start) : view.real_offset(region_end)]
        out.append(restore_endings(old_real, "".join(pieces)))
        copied = region_end
    out.append(real[view.real_offset(copied) :])
    return Replaced("".join(out), len(starts))


def _regions(text: str, starts: list[int], size: int) -> list[tuple[int, int, list[int]]]:
    """The whole lines (view offsets, the last line feed included) around the matches at ``starts``,
    matches whose lines touch merged into one region; each with its matches in order."""
    regions: list[tuple[int, int, list[int]]] = []
    for start in starts:
        line_start = text.rfind("\n", 0, start) + 1
        after = text.find("\n", start + size)
        line_end = len(text) if after < 0 else after + 1
        if regions and line_start < regions[-1][1]:
            first, _, matches = regions[-1]
            regions[-1] = (first, line_end, [*matches, start])
        else:
            regions.append((line_start, line_end, [start]))
    return regions


def restore_endings(real: str, new_view: str) -> str:
    """``new_view`` (a new text with LF endings) with the line endings of ``real`` put back where its
    lines stand (module docstring)."""
    if "\r\n" not in real:
        return new_view
    old_lines = real.replace("\r\n", "\n").split("\n")
    old_endings = _line_endings(real)
    new_lines = new_view.split("\n")
    fallback = max(set(old_endings), key=old_endings.count) if old_endings else "\n"
    endings: list[str] = []
    for tag, i1, i2, j1, j2 in line_opcodes(old_lines, new_lines):
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
