"""The one line diff of the server: which lines of an old text stand for which lines of a new one.

Every user (``text_edits.line_hunks`` for the WorkspaceEdit, ``diffs.unified_diff`` and ``diffs.line_counts``
for people, ``line_endings.restore_endings``) gets its opcodes here, in ``difflib``'s format
(``("equal" | "replace" | "delete" | "insert", i1, i2, j1, j2)``).

The matcher is git's xdiff (Myers' algorithm with git's heuristics, which bound its cost on long runs of
changes and repeated lines), as Mercurial ships it in C (``mercurial.cext.bdiff.xdiffblocks``, the
function ``hg diff`` uses). It takes the two texts as bytes and cuts them into lines itself, so a diff
makes no Python object per line; on 2,000 lines with 200 spread changes it takes 0.3 ms where breezy's
patience diff (Rust, matching Python ``str`` objects; what the server used) took 0.9 ms and git's own
through libgit2 (``pygit2``) 0.8 ms, and on a formatter's output it changes fewer lines (2,000 where
patience changed 2,254, for 1,000 changed lines; ``benchmarks/bench_diffs.py``). xdiff cuts at ``\n``
only: a text with a bare ``\r`` (an LSP line end xdiff does not know) and any other line lists are
first numbered (each distinct line gets a number; the numbers, one a line, are what xdiff compares).

``text_diff`` is cached: a proposal's change is diffed at the run's end (the summary's counts), for
``agent.proposal`` (the diff and its counts) and for the apply (the WorkspaceEdit), always over the
same two texts. The cache is an LRU keyed by the two texts themselves, not a property of
``FileChange``: ``core`` cannot import the diff library, and a re-based change or a headless run's
change over equal texts hits it too. A ``str`` caches its hash, and equal keys compare by identity
first, so a hit costs no pass over the text; the cache holds at most ``_CACHED_DIFFS`` diffs (enough for
a proposal of a few hundred files), and the texts it keeps alive are the proposal's own.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

from mercurial.cext import bdiff  # C, with stubs

Tag = Literal["equal", "replace", "delete", "insert"]
Opcode = tuple[Tag, int, int, int, int]
Block = tuple[int, int, int, int]
"""xdiff's matching lines: ``(old_start, old_end, new_start, new_end)``."""

_CACHED_DIFFS = 512
# The alternation tries "\r\n" first, so a CR LF pair is one terminator.
_LINE_END = re.compile(r"\r\n|\r|\n")
# What ``str.splitlines`` also cuts at and LSP does not: without them it is LSP's split, in C. Looked for
# one by one with ``in`` (a memchr-like scan each; a regex character class is 40 times slower).
_OTHER_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@dataclass(frozen=True)
class LineDiff:
    """The line diff of two texts (lines cut by ``split_lines``, terminators kept).

    Attributes:
        old_lines: the old text's lines; ``"".join(old_lines)`` is the old text.
        new_lines: the new text's lines.
        opcodes: ``difflib``-style opcodes covering both line lists in order; ``()`` for two empty texts.
    """

    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]
    opcodes: tuple[Opcode, ...]

    @property
    def counts(self) -> tuple[int, int]:
        """``(added, removed)`` lines; a changed line counts in both."""
        added = removed = 0
        for tag, i1, i2, j1, j2 in self.opcodes:
            if tag != "equal":
                removed += i2 - i1
                added += j2 - j1
        return added, removed


def split_lines(text: str) -> list[str]:
    """Split ``text`` into lines that keep their terminators, with LSP line semantics.

    Only ``\\r\\n``, ``\\n`` and ``\\r`` end a line (LSP 3.17 "Text Documents"); form feeds,
    ``\\u2028`` and the other characters ``str.splitlines`` honours stay inside their line.

    Returns:
        The lines in order; ``"".join(result) == text``. ``""`` gives ``[]``, and a text ending with a
        terminator has no empty last element (``"a\\n"`` gives ``["a\\n"]``).
    """
    if not any(other in text for other in _OTHER_BREAKS):  # nearly always: 10k lines in 1 ms, not 10
        return text.splitlines(keepends=True)
    lines: list[str] = []
    start = 0
    for match in _LINE_END.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


def line_opcodes(old: Sequence[Hashable], new: Sequence[Hashable]) -> tuple[Opcode, ...]:
    """``difflib``-style opcodes turning the lines ``old`` into ``new`` (git's xdiff; module docstring).

    Lines compare as whole values (strings with their terminators, if the caller kept them): each
    distinct one is numbered and xdiff compares the numbers. Not cached.
    """
    if not old and not new:
        return ()
    numbers: dict[Hashable, int] = {}
    return _opcodes(_xdiff(_numbered(old, numbers), _numbered(new, numbers)), len(old), len(new))


def has_bare_cr(text: str) -> bool:
    """``text`` holds a ``\\r`` that is not followed by ``\\n`` (an old Mac line end)."""
    return "\r" in text and text.count("\r") != text.count("\r\n")


@functools.lru_cache(maxsize=_CACHED_DIFFS)
def text_diff(old: str, new: str) -> LineDiff:
    """The line diff of ``old`` and ``new``, computed once per pair of texts (module docstring).

    Safe to call from worker threads (the LRU is thread-safe; two threads may compute the same diff once
    each, never a wrong one).
    """
    old_lines = tuple(split_lines(old))
    new_lines = tuple(split_lines(new))
    if not old_lines and not new_lines:
        return LineDiff(old_lines, new_lines, ())
    if has_bare_cr(old) or has_bare_cr(new):
        return LineDiff(old_lines, new_lines, line_opcodes(old_lines, new_lines))
    # xdiff's lines are split_lines' here: both cut at \n only. "surrogatepass" keeps the encoding one to
    # one for a text holding lone surrogates (bytes a decoder kept as surrogates).
    blocks = _xdiff(old.encode("utf-8", "surrogatepass"), new.encode("utf-8", "surrogatepass"))
    return LineDiff(old_lines, new_lines, _opcodes(blocks, len(old_lines), len(new_lines)))


def _numbered(lines: Sequence[Hashable], numbers: dict[Hashable, int]) -> bytes:
    """``lines`` as a text of one number a line, equal lines (in either list) with equal numbers."""
    if not lines:
        return b""
    return ("\n".join([str(numbers.setdefault(line, len(numbers))) for line in lines]) + "\n").encode()


def _xdiff(old: bytes, new: bytes) -> list[Block]:
    """xdiff's matching blocks of lines, ``(old_start, old_end, new_start, new_end)``, in order."""
    return bdiff.xdiffblocks(old, new)


def _opcodes(blocks: Sequence[Block], old_count: int, new_count: int) -> tuple[Opcode, ...]:
    """The opcodes of ``difflib.SequenceMatcher.get_opcodes`` from matching blocks (an equal run is
    one opcode; empty blocks are dropped)."""
    codes: list[Opcode] = []
    i = j = 0
    for a1, a2, b1, b2 in [*blocks, (old_count, old_count, new_count, new_count)]:
        if a1 > i and b1 > j:
            codes.append(("replace", i, a1, j, b1))
        elif a1 > i:
            codes.append(("delete", i, a1, j, b1))
        elif b1 > j:
            codes.append(("insert", i, a1, j, b1))
        if a2 > a1:
            if codes and codes[-1][0] == "equal" and codes[-1][2] == a1:
                _, e1, _, f1, _ = codes[-1]
                codes[-1] = ("equal", e1, a2, f1, b2)
            else:
                codes.append(("equal", a1, a2, b1, b2))
        i, j = a2, b2
    return tuple(codes)


def grouped_opcodes(opcodes: Sequence[Opcode], context: int) -> list[list[Opcode]]:
    """The opcodes cut into hunks with up to ``context`` equal lines around each change.

    ``difflib.SequenceMatcher.get_grouped_opcodes``' algorithm over given opcodes: ``[]`` when nothing
    changed.
    """
    codes = list(opcodes)
    if not any(tag != "equal" for tag, *_ in codes):
        return []
    if codes[0][0] == "equal":
        _, i1, i2, j1, j2 = codes[0]
        codes[0] = ("equal", max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    if codes[-1][0] == "equal":
        _, i1, i2, j1, j2 = codes[-1]
        codes[-1] = ("equal", i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    span = context + context
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > span:
            group.append(("equal", i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups
