"""The frame decoder alone: what it reads, what it tolerates, what it skips and where it finds the next
frame (``lsp/framing.py``). The same inputs through a real server are in tests/e2e/test_jsonrpc_fuzz.py."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.lsp.framing import Event, Frame, FrameDecoder, Skipped

BODY = b'{"jsonrpc": "2.0", "id": 7, "method": "x"}'
GOOD = b"Content-Length: %d\r\n\r\n" % len(BODY) + BODY


def decode(*chunks: bytes, max_body_bytes: int = 1000) -> list[Event]:
    decoder = FrameDecoder(max_body_bytes=max_body_bytes)
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    return events + decoder.close()


def skipped(size: int, *reasons: str) -> Skipped:
    return Skipped(reasons, size)


NO_LENGTH = "a header block without Content-Length"
JUNK = "bytes that are not a message header"


@pytest.mark.parametrize(
    ("data", "events"),
    [
        pytest.param(GOOD + GOOD, [Frame(BODY), Frame(BODY)], id="two frames"),
        pytest.param(b"content-LENGTH: 2\r\n\r\n{}", [Frame(b"{}")], id="header name in any case"),
        pytest.param(b"Content-Length: 2\n\n{}", [Frame(b"{}")], id="LF-only lines"),
        pytest.param(b"Content-Length:2 \t\r\n\r\n{}", [Frame(b"{}")], id="whitespace around the value"),
        pytest.param(b"\r\n\n" + GOOD, [Frame(BODY)], id="blank lines before a frame"),
        pytest.param(
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}",
            [Frame(b"{}")],
            id="another header first",
        ),
        pytest.param(
            b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", [Frame(b"{}")], id="the same length twice"
        ),
        pytest.param(b"Content-Length: 0\r\n\r\n", [Frame(b"")], id="an empty content"),
        pytest.param(
            b"Foo: bar\r\n\r\n{}" + GOOD,
            [skipped(14, NO_LENGTH), Frame(BODY)],
            id="a header block without Content-Length, then junk glued to a frame",
        ),
        pytest.param(
            b"Content-Length: 3\r\n\r\n{}" + GOOD,
            [skipped(23, "a message declared 3 bytes but the next one began after 2"), Frame(BODY)],
            id="a body one byte short",
        ),
        pytest.param(
            b"Content-Length: 900\r\n\r\n{}" + GOOD,
            [skipped(25, "a message declared 900 bytes but the next one began after 2"), Frame(BODY)],
            id="a body far short: found without waiting for 900 bytes",
        ),
        pytest.param(
            b"Content-Length: 2\r\n\r\n{}}}}" + GOOD,
            [Frame(b"{}"), skipped(3, JUNK), Frame(BODY)],
            id="a body longer than declared",
        ),
        pytest.param(
            b"Content-Length: two\r\n\r\n{}" + GOOD,
            [skipped(25, "Content-Length b'two' is not a byte count"), Frame(BODY)],
            id="a length that is no number",
        ),
        pytest.param(
            b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}" + GOOD,
            [
                skipped(19, "two different Content-Length headers"),
                skipped(23, "a message declared 3 bytes but the next one began after 2"),
                Frame(BODY),
            ],
            id="two different lengths: the second is taken as the next frame",
        ),
        pytest.param(
            b"Content-Length: 5000\r\n\r\n" + b"[" * 5000 + GOOD,
            [skipped(24 + 5000, "a message of 5000 bytes, over the limit of 1000"), Frame(BODY)],
            id="a message over the limit is skipped",
        ),
        pytest.param(
            b"Content-Length: 12\r\nFoo: bar" + GOOD,
            [skipped(28, JUNK), Frame(BODY)],
            id="junk glued to the header line of the next frame",
        ),
        pytest.param(
            b"x" * 10_000 + GOOD,
            [skipped(10_000, JUNK), Frame(BODY)],
            id="a long junk line glued to a frame",
        ),
        pytest.param(
            b"Content-Length: 9\r\n\r\n{}",
            [skipped(23, "the stream ended inside a message of 9 bytes")],
            id="the stream ends inside a body",
        ),
        pytest.param(
            b"Content-Len", [skipped(11, "the stream ended inside a header block")], id="inside a header"
        ),
    ],
)
def test_events(data: bytes, events: list[Event]) -> None:
    assert decode(data) == events


def test_an_incomplete_frame_waits_for_its_bytes() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(GOOD[:10]) == []
    assert decoder.feed(GOOD[10:-1]) == []
    assert decoder.feed(GOOD[-1:]) == [Frame(BODY)]


def test_a_body_ending_in_the_start_of_a_header_waits_for_the_rest_of_that_line() -> None:
    """``{}C``: three bytes as declared, but the C may begin the next frame's Content-Length line."""
    decoder = FrameDecoder()
    assert decoder.feed(b"Content-Length: 3\r\n\r\n{}C") == []
    assert decoder.feed(GOOD[1:]) == [
        Skipped(("a message declared 3 bytes but the next one began after 2",), 23),
        Frame(BODY),
    ]


def test_skipping_is_announced_once_then_summed() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(b"junk\n") == [Skipped((JUNK,), 5, ongoing=True)]
    assert decoder.feed(b"more junk\n") == []
    assert decoder.feed(GOOD) == [Skipped((JUNK,), 15), Frame(BODY)]


# Framings a reader must accept (RFC 7230 tolerances), and bodies of valid JSON.
HEADERS = st.sampled_from(
    [
        b"Content-Length: %d\r\n\r\n",
        b"content-length: %d\n\n",
        b"CONTENT-LENGTH:%d\r\n\n",
        b"Content-Type: application/vscode-jsonrpc\r\nContent-Length: %d\r\n\r\n",
        b"\r\nContent-Length: %d  \r\n\r\n",
    ]
)
JSON_VALUES = st.recursive(
    st.none() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
# Compact, and pretty-printed (raw line breaks between tokens are valid JSON).
JSON_BODIES = st.tuples(JSON_VALUES, st.sampled_from([None, 1])).map(
    lambda v: json.dumps({"value": v[0]}, indent=v[1]).encode()
)


@settings(max_examples=300)
@given(st.lists(st.tuples(HEADERS, JSON_BODIES), min_size=1, max_size=5), st.integers(1, 64))
def test_tolerated_frames_in_any_chunks_give_exactly_their_bodies(
    frames: list[tuple[bytes, bytes]], chunk: int
) -> None:
    data = b"".join(header % len(body) + body for header, body in frames)
    chunks = [data[i : i + chunk] for i in range(0, len(data), chunk)]
    assert decode(*chunks, max_body_bytes=10**6) == [Frame(body) for _, body in frames]


PIECES = [b"Content-Length: ", b"content-length:", b"\r\n", b"\n", b"\r", b"\r\n\r\n", b"{}", b"Foo: bar"]
PIECES += [
    b"12",
    b"99999999999",
    b"C",
    b"Content-Length: 3\r\n\r\n",
    b'{"a',
    b"\x00",
    b" ",
    b":",
    b"Content-Len",
]
JUNK_PIECES = st.sampled_from(PIECES)


@settings(max_examples=1000)
@given(st.lists(JUNK_PIECES | st.binary(max_size=24), max_size=12).map(b"".join), st.integers(1, 64))
def test_after_any_junk_the_next_frame_is_read(junk: bytes, chunk: int) -> None:
    data = junk + GOOD
    chunks = [data[i : i + chunk] for i in range(0, len(data), chunk)]
    events = decode(*chunks)
    assert events[-1] == Frame(BODY), events


def test_what_is_held_while_waiting_is_said() -> None:
    decoder = FrameDecoder()
    assert decoder.incomplete() is None
    decoder.feed(b"Content-Len")
    assert decoder.incomplete() == "a header block of 11 bytes has no blank line yet"
    decoder.feed(b"gth: 9\r\n\r\n{}")
    assert decoder.incomplete() == "a message declared 9 bytes, 2 came"
    decoder.feed(b"1234567")
    assert decoder.incomplete() is None
