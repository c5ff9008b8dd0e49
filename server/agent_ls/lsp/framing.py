"""LSP base-protocol frames (``Content-Length: N`` headers, a blank line, N bytes of JSON) out of a byte
stream, and the next frame found again after a malformed one. Sans-IO: bytes in, events out.

pygls 2's stdio reader (``pygls.io_.run_async``) accepts only the exact line ``Content-Length: N\\r\\n``
and then reads exactly N bytes. After one lower-case header name, LF-only line ends, a header block
without Content-Length or a body shorter than declared it never finds a frame again: the server lives
on and answers nothing. No framing library we know of resynchronizes either (python-lsp-jsonrpc and
sansio-lsp-client are as strict; h11 parses HTTP messages, not bare header blocks), so this module does.

Reading follows LSP 3.17 "Base Protocol" and tolerates what RFC 7230 lets a recipient tolerate:
- header names in any case (RFC 7230 §3.2), whitespace around a value (OWS);
- lines ended by LF alone (RFC 7230 §3.5), and blank lines before a header block.
What it cannot read, it skips up to the next ``Content-Length: N`` line:
- a header block without a valid Content-Length (missing, not a number, two different ones);
- bytes that are not a header line (junk), a header block longer than ``MAX_HEADER_BYTES``, and a
  header line with a ``Content-Length: N`` line glued to its end (junk without a line end before a frame);
- a body holding a ``Content-Length: N`` line followed by a line end: valid JSON never holds one (a raw
  line break is allowed only between tokens, and a header name is no JSON token), so that is the next
  frame, and the body before it was shorter than declared. A short body is thus found without waiting;
- a declared length over ``max_body_bytes``: the header is skipped, and its content as junk (never
  kept in memory).
Nothing is skipped silently: bytes skipped between two good frames make one ``Skipped`` event, sent
when the next good header block is read or the stream ends, and announced at the end of the ``feed``
call where skipping began (so a client that sends garbage and waits is told at once).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_MAX_BODY_BYTES = 128 * 1024 * 1024
"""Above VS Code's 50 MB limit for documents it syncs to extensions, with room for JSON escaping."""
MAX_HEADER_BYTES = 8 * 1024
"""A header block whose blank line does not come within this many bytes is junk."""
_TAIL_BYTES = 256
"""Kept when junk without a line end is dropped: a ``Content-Length`` line may begin in it."""
_JUNK = "bytes that are not a message header"

# A Content-Length line anywhere (case-insensitive): where a frame starts again after junk. Searched
# from its "-length" part, whose leading literal lets ``re`` skip ahead fast (ten times faster than the
# whole line with IGNORECASE over a 100 MiB body); ``_find_length_line`` checks the "content" before it.
_LENGTH_TAIL = re.compile(
    b"-" + b"".join(b"[%c%c]" % (c, c - 32) for c in b"length") + rb"[ \t]*:[ \t]*[0-9]+[ \t]*\r?\n"
)
_CONTENT = b"content"
# A header field (RFC 7230 §3.2): a token, a colon, the value with optional whitespace around it.
_FIELD = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*")


def _prefixes(pieces: list[bytes]) -> bytes:
    """A pattern for any prefix of ``pieces`` matched in order (at least the first)."""
    return pieces[0] + (b"(?:" + _prefixes(pieces[1:]) + b")?" if len(pieces) > 1 else b"")


# The first bytes of such a line, up to the end of the input.
_LENGTH_LINE_START = re.compile(
    _prefixes([bytes([c]) for c in b"content-length"] + [rb"[ \t]*", rb":[ \t]*[0-9]*[ \t]*\r?"]) + rb"\Z",
    re.IGNORECASE,
)
_BLANK_LINES = re.compile(rb"[\r\n]*")


@dataclass(frozen=True)
class Frame:
    """The content of one message (JSON bytes as sent; not yet decoded)."""

    body: bytes


@dataclass(frozen=True)
class Skipped:
    """Bytes skipped because no frame could be read from them.

    Attributes:
        reasons: what was wrong, in order of first occurrence, each once.
        size: bytes skipped (so far, when ``ongoing``).
        ongoing: True when skipping goes on (more bytes are needed to find the next frame).
    """

    reasons: tuple[str, ...]
    size: int
    ongoing: bool = False

    def describe(self) -> str:
        """One line for the log, e.g. ``skipped 12 bytes (a header block without Content-Length)``."""
        what = "; ".join(self.reasons)
        if self.ongoing:
            return f"skipping input that is not a message ({what}; {self.size} bytes so far)"
        return f"skipped {self.size} bytes of input that is not a message ({what})"


Event = Frame | Skipped


def _find_length_line(buffer: bytearray, start: int, end: int | None = None) -> int | None:
    """Where the first whole Content-Length line starting at ``start`` or later (and ending before
    ``end``) begins in ``buffer``; None without one."""
    pos = start + len(_CONTENT)
    limit = len(buffer) if end is None else min(end, len(buffer))
    while (tail := _LENGTH_TAIL.search(buffer, pos, limit)) is not None:
        begin = tail.start() - len(_CONTENT)
        if buffer[begin : tail.start()].lower() == _CONTENT:
            return begin
        pos = tail.start() + 1
    return None


class FrameDecoder:
    """Feed it bytes as they arrive; it returns the frames and skips they complete, in order.

    Args:
        max_body_bytes: the largest content accepted, in bytes; a frame declaring more is skipped.
    """

    def __init__(self, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self._max_body_bytes = max_body_bytes
        self._buffer = bytearray()
        self._body_length: int | None = None  # set while reading a body
        self._scanned = 0  # body bytes already searched for a Content-Length line
        self._header_bytes = 0  # the size of the header block of the body being read
        self._skipped = 0
        self._reasons: list[str] = []
        self._announced = False
        self._oversized = False  # the junk that follows is an oversized frame's content

    def feed(self, data: bytes) -> list[Event]:
        """The events that ``data`` completes (with what was fed before)."""
        self._buffer += data
        events: list[Event] = []
        while self._step(events):
            pass
        if self._skipped and not self._announced:
            self._announced = True
            events.append(Skipped(tuple(self._reasons), self._skipped, ongoing=True))
        return events

    def incomplete(self) -> str | None:
        """What is held while more bytes are awaited (a frame begun), or None when nothing is."""
        if self._body_length is not None:
            return f"a message declared {self._body_length} bytes, {len(self._buffer)} came"
        if self._buffer.strip():
            return f"a header block of {len(self._buffer)} bytes has no blank line yet"
        return None

    def close(self) -> list[Event]:
        """At the end of the stream: what is left, skipped."""
        if self._body_length is not None:
            reason = f"the stream ended inside a message of {self._body_length} bytes"
            self._skip(self._header_bytes + len(self._buffer), reason)
        elif self._buffer.strip():
            self._skip(len(self._buffer), "the stream ended inside a header block")
        self._buffer.clear()
        self._body_length = None
        events: list[Event] = []
        self._end_skipping(events)
        return events

    def _step(self, events: list[Event]) -> bool:
        """Read one header block or one body from the buffer; False when more bytes are needed."""
        if self._body_length is not None:
            return self._read_body(events)
        return self._read_headers(events)

    def _read_headers(self, events: list[Event]) -> bool:
        buffer = self._buffer
        blank = _BLANK_LINES.match(buffer)
        if blank is not None and blank.end():  # blank lines between frames are tolerated
            del buffer[: blank.end()]
        length: int | None = None
        problem: str | None = None
        pos = 0
        while True:
            end = buffer.find(b"\n", pos, MAX_HEADER_BYTES)
            if end < 0:
                if len(buffer) < MAX_HEADER_BYTES:
                    return False  # the block is still arriving
                self._resync(len(buffer), _JUNK, line_open=True)
                return True
            line = bytes(buffer[pos:end]).rstrip(b"\r")
            glued = _find_length_line(buffer, pos + 1, end + 1)  # junk before a Content-Length line
            pos = end + 1
            if not line.strip():
                break
            field = _FIELD.fullmatch(line)
            if field is None or glued is not None:
                self._resync(pos, _JUNK)
                return True
            if field[1].lower() != b"content-length" or problem is not None:
                continue
            value = field[2]
            if not value.isdigit() or len(value) > 18:
                problem = f"Content-Length {value[:40]!r} is not a byte count"
            elif length is not None and int(value) != length:
                problem = "two different Content-Length headers"
            else:
                length = int(value)
        if problem is not None or length is None:
            self._resync(pos, problem or "a header block without Content-Length")
            return True
        if length > self._max_body_bytes:
            self._resync(pos, f"a message of {length} bytes, over the limit of {self._max_body_bytes}")
            self._oversized = True  # its content is skipped as junk, under this reason
            return True
        del buffer[:pos]
        self._end_skipping(events)
        self._body_length, self._scanned, self._header_bytes = length, 0, pos
        return True

    def _read_body(self, events: list[Event]) -> bool:
        length = self._body_length
        assert length is not None
        buffer = self._buffer
        cut = _find_length_line(buffer, max(0, self._scanned - _TAIL_BYTES))
        if cut is not None and cut < length:
            self._body_length = None
            reason = f"a message declared {length} bytes but the next one began after {cut}"
            self._skip(self._header_bytes + cut, reason)
            del buffer[:cut]
            return True
        self._scanned = len(buffer)
        if len(buffer) < length:
            return False
        # A body ending in the first bytes of a Content-Length line is no JSON: wait for the rest of
        # that line, which tells whether the next frame began inside this body.
        if len(buffer) - length < _TAIL_BYTES:  # with more after the body, the search above decided
            started = _LENGTH_LINE_START.search(buffer, max(0, length - _TAIL_BYTES))
            if started is not None and started.start() < length:
                return False
        body = bytes(buffer[:length])
        del buffer[:length]
        self._body_length = None
        events.append(Frame(body))
        return True

    def _resync(self, examined: int, reason: str, *, line_open: bool = False) -> None:
        """Skip the header block at the buffer's start, of which ``examined`` bytes were read, up to the
        next Content-Length line after its first byte; without one, skip what was examined. When the
        last line examined has no line end yet (``line_open``), its last bytes are kept: a Content-Length
        line may be arriving in them."""
        found = _find_length_line(self._buffer, 1, examined + _TAIL_BYTES)
        if found is not None:
            cut = found
        elif line_open:
            cut = max(1, examined - _TAIL_BYTES)
        else:
            cut = examined
        self._skip(cut, reason)
        del self._buffer[:cut]

    def _skip(self, size: int, reason: str) -> None:
        self._skipped += size
        if self._oversized and reason == _JUNK:
            return
        if reason not in self._reasons and len(self._reasons) < 4:
            self._reasons.append(reason)

    def _end_skipping(self, events: list[Event]) -> None:
        if self._skipped:
            events.append(Skipped(tuple(self._reasons), self._skipped))
        self._skipped, self._reasons, self._announced, self._oversized = 0, [], False, False
