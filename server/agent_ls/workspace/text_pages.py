"""A page of a file's lines (read_file), cut from a stream of text so that memory stays bounded.

``page_of`` reads decoded text in chunks (one for a file in memory, many for a file read from disk) and
keeps only what the page shows. In order:

1. lines before ``PageRequest.line`` are counted, not kept (whole chunks are skipped with one count);
2. page lines are kept up to ``max_line_chars`` characters each, from ``column`` on for the first;
3. the page ends after ``max_lines`` lines or when the next line would pass ``max_chars``;
4. the rest is only counted (lines, and the length of a page line still running), within
   ``COUNT_MAX_CHARS`` characters: past that the totals are unknown (None).

Reading stops when the page is done and counted, or after ``SCAN_MAX_CHARS`` characters before it:
a line that far into a file is refused with a hint (grep or a shell command reach it). A line ends at
``\\n``; a ``\\r`` before it or at the very end of the file is not shown.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_ls.core.errors import ToolError
from agent_ls.core.file_views import PageLine, PageRequest, TextPage

SCAN_MAX_CHARS = 256 * 1024 * 1024
"""The most characters read to reach a page's first line."""
COUNT_MAX_CHARS = 16 * 1024 * 1024
"""The most characters read after a page's text is complete, to count what follows."""


def page_of(chunks: Iterable[str], request: PageRequest, *, name: str, encoding: str = "") -> TextPage:
    """The page ``request`` asks for from the text ``chunks`` (in order, any sizes).

    Args:
        name: the file as the model named it, for messages.
        encoding: the encoding label to put in the page ("" for plain UTF-8).

    Raises:
        ToolError: the line is past the end of the file, the column past the end of the line, or the
            line lies beyond the first ``SCAN_MAX_CHARS`` characters.
    """
    pager = _Pager(request)
    for chunk in chunks:
        if not pager.feed(chunk):
            break
    else:
        pager.finish()
    if pager.column_error:
        raise ToolError(pager.column_error.format(name=name))
    if not pager.lines and pager.total is not None and pager.total > 0:
        raise ToolError(
            f"offset {request.line} is past the end of {name}, which has {_count(pager.total, 'line')}."
        )
    if not pager.lines and pager.total is None:
        raise ToolError(
            f"line {request.line:,} of {name} lies beyond the first {SCAN_MAX_CHARS // (1024 * 1024)} MiB "
            "that read_file scans; use grep to find what you need, or a shell command (sed -n)."
        )
    return TextPage(tuple(pager.lines), pager.total, encoding)


class _Pager:
    """The state of one page read; see ``page_of``."""

    def __init__(self, request: PageRequest) -> None:
        self.request = request
        self.lines: list[PageLine] = []
        self.total: int | None = None
        self.column_error = ""
        self._number = 1  # the line being read
        self._col = 0  # characters of it read so far (a "\r" included)
        self._last = ""  # its last character read so far
        self._piece: list[str] = []
        self._piece_len = 0
        self._used = 0
        self._page_done = False
        self._scanned = 0
        self._counted = 0  # characters read since the page's text was complete

    def feed(self, chunk: str) -> bool:
        """Take the next chunk; False when reading should stop (totals then stay unknown)."""
        if self._page_done:
            self._count_rest(chunk, 0)
        else:
            self._read(chunk)
        self._scanned += len(chunk)
        if self._text_complete():
            self._counted += len(chunk)
            if self._counted > COUNT_MAX_CHARS:
                self._stop()
                return False
        elif self._scanned > SCAN_MAX_CHARS:
            self._stop()
            return False
        return True

    def finish(self) -> None:
        """The text ended: close the last line and set ``total``."""
        if self._col > 0:  # a last line without a line ending
            if self._page_done or self._number < self.request.line:
                self._number += 1
            else:
                self._end_line()
        self.total = self._number - 1

    # -- internals -------------------------------------------------------------------------------

    def _read(self, chunk: str) -> None:
        pos = 0
        first = self.request.line
        while pos < len(chunk):
            if self._number < first:  # before the page: skip whole lines by counting
                newlines = chunk.count("\n", pos)
                if self._number + newlines < first:
                    self._number += newlines
                    last_nl = chunk.rfind("\n", pos)
                    self._col = len(chunk) - last_nl - 1 if last_nl >= 0 else self._col + len(chunk) - pos
                    self._last = chunk[-1]
                    return
                while self._number < first:
                    nl = chunk.find("\n", pos)
                    self._number += 1
                    pos = nl + 1
                self._col, self._last = 0, ""
                continue
            if self._page_done:
                self._count_rest(chunk, pos)
                return
            nl = chunk.find("\n", pos)
            end = len(chunk) if nl < 0 else nl
            if end > pos:
                self._collect(chunk, pos, end)
                self._col += end - pos
                self._last = chunk[end - 1]
            if nl < 0:
                return
            self._end_line()
            pos = nl + 1

    def _window_start(self) -> int:
        return self.request.column - 1 if self._number == self.request.line else 0

    def _collect(self, chunk: str, pos: int, end: int) -> None:
        start = self._window_start()
        stop = start + self.request.max_line_chars + 1  # one more: a final "\r" is dropped later
        lo, hi = max(self._col, start), min(self._col + end - pos, stop)
        if lo < hi:
            self._piece.append(chunk[pos + lo - self._col : pos + hi - self._col])
            self._piece_len += hi - lo

    def _end_line(self, length_known: bool = True) -> None:
        length = self._col - (1 if self._last == "\r" and length_known else 0)
        start = self._window_start()
        if start > 0 and start >= length and length_known:
            self.column_error = (
                f"column {start + 1:,} is past the end of line {self._number:,} of {{name}}, "
                f"which has {_count(length, 'character')}."
            )
            self._page_done = True
        else:
            shown = min(self.request.max_line_chars, max(length - start, 0))
            text = "".join(self._piece)[:shown]
            cost = len(text) + self.request.line_overhead_chars
            if self.lines and self._used + cost > self.request.max_chars:
                self._page_done = True  # the line that did not fit is counted below
            else:
                number = self._number
                self.lines.append(PageLine(number, start + 1, text, length if length_known else None))
                self._used += cost
                self._page_done = len(self.lines) >= self.request.max_lines
        self._piece, self._piece_len = [], 0
        self._number += 1
        self._col, self._last = 0, ""

    def _count_rest(self, chunk: str, pos: int) -> None:
        self._number += chunk.count("\n", pos)
        if pos < len(chunk):
            last_nl = chunk.rfind("\n", pos)
            self._col = len(chunk) - last_nl - 1 if last_nl >= 0 else self._col + len(chunk) - pos

    def _text_complete(self) -> bool:
        """True once nothing more of the page is to be shown: the rest is only counted."""
        if self._page_done:
            return True
        last_line = len(self.lines) == self.request.max_lines - 1 and self._number >= self.request.line
        return last_line and self._piece_len > self.request.max_line_chars

    def _stop(self) -> None:
        """Reading stopped early: a page line still running is shown with an unknown length."""
        if not self._page_done and self._number >= self.request.line:
            self._end_line(length_known=False)
        self.total = None


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
