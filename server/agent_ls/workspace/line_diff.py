"""The one line diff of the server: which lines of an old text stand for which lines of a new one.

Every user (``text_edits.line_hunks`` for the WorkspaceEdit, ``diffs.unified_diff`` and ``diffs.line_counts``
for people, ``line_endings.restore_endings``) gets its opcodes here, in ``difflib``'s format
(``("equal" | "replace" | "delete" | "insert", i1, i2, j1, j2)``).

The matcher is breezy's patience diff (``patiencediff.PatienceSequenceMatcher``, a Rust extension, the
family of the ``merge3`` the re-base already uses): lines unique to both sides anchor the match, the
gaps between anchors are matched recursively, so the cost grows with the lines and the changes, not
quadratically like ``difflib.SequenceMatcher(autojunk=False)`` on changes spread through a file with
many repeated lines (a formatter's output): 10k lines with 1,000 spread changes took difflib 1.2 s and
take it about 5 ms, with as many changed lines (``benchmarks/bench_diffs.py``).

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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from patiencediff import PatienceSequenceMatcher

Tag = Literal["equal", "replace", "delete", "insert"]
Opcode = tuple[Tag, int, int, int, int]

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


def line_opcodes(old: Sequence[str], new: Sequence[str]) -> tuple[Opcode, ...]:
    """``difflib``-style opcodes turning the lines ``old`` into ``new`` (patience diff; module docstring).

    Lines compare as whole strings (with their terminators, if the caller kept them). Not cached.
    """
    if not old and not new:
        return ()
    matcher = PatienceSequenceMatcher(None, old, new)
    return tuple(matcher.get_opcodes())


@functools.lru_cache(maxsize=_CACHED_DIFFS)
def text_diff(old: str, new: str) -> LineDiff:
    """The line diff of ``old`` and ``new``, computed once per pair of texts (module docstring).

    Safe to call from worker threads (the LRU is thread-safe; two threads may compute the same diff once
    each, never a wrong one).
    """
    old_lines = tuple(split_lines(old))
    new_lines = tuple(split_lines(new))
    return LineDiff(old_lines, new_lines, line_opcodes(old_lines, new_lines))


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
