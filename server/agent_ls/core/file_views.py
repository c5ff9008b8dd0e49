"""What the tools are given of a file's text: a page of lines (read_file) and search hits (grep).

Both are bounded whatever the file's size: a page holds at most a given number of characters, a hit a
window of its line. Lines are the model's lines: a line ends at ``\\n``; a ``\\r`` before it (CRLF)
or at the very end of the file is not shown, and columns count code points from 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PageRequest:
    """Which part of a file to read, and how much of it.

    Attributes:
        line: the first line, 1-indexed.
        column: the first character of ``line`` to show, 1-indexed (code points); later lines start at 1.
        max_lines: the most lines in the page.
        max_line_chars: the most characters shown of one line.
        max_chars: the most characters of the whole page, each line counted as its text plus
            ``line_overhead_chars``; the first line is always shown.
        line_overhead_chars: what the caller adds to each line (read_file: a 6-column number, a tab and a
            line feed).
    """

    line: int = 1
    column: int = 1
    max_lines: int = 2000
    max_line_chars: int = 2000
    max_chars: int = 28_000
    line_overhead_chars: int = 8


@dataclass(frozen=True)
class PageLine:
    """One line of a page: ``text`` is the line from column ``column`` on (1-indexed), at most
    ``PageRequest.max_line_chars`` characters, without its line ending. ``length`` is the whole line's
    length in characters, None when the line is longer than the read could scan."""

    number: int
    column: int
    text: str
    length: int | None


@dataclass(frozen=True)
class TextPage:
    """A page of a file, lines in order.

    Attributes:
        lines: the lines shown; empty only for an empty file.
        total_lines: how many lines the file has, None when it is too large to count them all.
        encoding: the file's encoding label when it is not plain UTF-8 (``cp1252``, ``utf-8 with BOM``),
            else "".
    """

    lines: tuple[PageLine, ...]
    total_lines: int | None
    encoding: str = ""


@dataclass(frozen=True)
class SearchHit:
    """One match of a search.

    Attributes:
        path: workspace-relative POSIX path.
        line: the 1-indexed line.
        column: the 1-indexed column (code points) where the match starts.
        text: the line, or for a long line the window of it around the match, without its line ending.
        start_column: the 1-indexed column of ``text``'s first character (1 when the line starts it).
        line_length: the whole line's length in characters (without its ending).
    """

    path: str
    line: int
    column: int
    text: str
    start_column: int
    line_length: int


@dataclass(frozen=True)
class SearchResult:
    """What a search found, bounded: the hits kept, and how many each file had in all.

    Attributes:
        hits: the hits kept, sorted by path, line and column; a few per file at most, so that one file
            cannot crowd the others out.
        counts: per path with a match, how many hits it had (kept or not).
        unreadable: notes on files whose matches could not be shown (a line too long for the search to
            read), one line each.
    """

    hits: tuple[SearchHit, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    unreadable: tuple[str, ...] = ()
