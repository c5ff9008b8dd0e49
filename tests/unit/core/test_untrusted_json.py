"""JSON from outside the process: lone surrogates become U+FFFD, deep nesting never raises RecursionError."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_ls.core.untrusted_json import (
    MAX_DEPTH,
    TOO_DEEP,
    JSONTooDeep,
    decode_prefix,
    depth,
    loads,
    loads_bounded,
    utf8,
    well_formed,
    well_formed_value,
)

DEEP = "[" * 100_000 + "]" * 100_000


def nested(levels: int, inner: Any = 1) -> Any:
    value = inner
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "plain"),
        ("a\ud83d b", "a\ufffd b"),  # a lone high half
        ("\udc80", "\ufffd"),  # a lone low half (what surrogateescape makes of a byte)
        ("\ude00\ud83d", "\ufffd\ufffd"),  # low before high is no pair
        ("x\ud83d\ude00y", "x\U0001f600y"),  # a pair side by side is the character it encodes
    ],
)
def test_well_formed(text: str, expected: str) -> None:
    assert well_formed(text) == expected
    assert well_formed(text).encode("utf-8")  # never raises


def test_every_decoder_makes_strings_and_keys_well_formed() -> None:
    text = '{"k\\ud83d": ["\\ud83d", "\\ud83d\\ude00", {"\\udc80": "\\udfff x"}], "n": 1}'
    expected = {"k\ufffd": ["\ufffd", "\U0001f600", {"\ufffd": "\ufffd x"}], "n": 1}
    assert loads(text) == expected
    assert loads(text.encode()) == expected
    assert loads_bounded(text) == expected
    assert decode_prefix(f"  {text} tail", 0) == (expected, 2 + len(text))
    assert loads('"\\ud83d"') == "\ufffd"


def test_loads_refuses_deep_nesting_with_a_value_error() -> None:
    for text in (DEEP, '{"path": ' + DEEP + "}", "[" * 100_000):
        with pytest.raises(JSONTooDeep, match=f"more than {MAX_DEPTH} levels deep"):
            loads(text)
    with pytest.raises(JSONTooDeep, match="more than 3 levels"):
        loads("[[[[1]]]]", max_depth=3)
    assert loads("[[[1]]]", max_depth=3) == [[[1]]]
    assert issubclass(JSONTooDeep, ValueError)


def test_bounded_decoders_cut_what_is_too_deep_and_keep_the_rest() -> None:
    """A response holding one deep value stays readable; the deep part becomes TOO_DEEP at the limit."""
    text = '{"calls": [{"input": ' + DEEP + '}], "text": "ok"}'
    value = loads_bounded(text)
    assert value["text"] == "ok"
    assert depth(value) == MAX_DEPTH
    assert json.dumps(value).count(json.dumps(TOO_DEEP)) == 1
    assert depth(loads_bounded(json.dumps(nested(500)))) == MAX_DEPTH
    assert loads_bounded("[[[[1]]]]", max_depth=2) == [[TOO_DEEP]]
    value, end = decode_prefix("x " + DEEP + " tail", 1)
    assert (depth(value), end) == (MAX_DEPTH, 2 + len(DEEP))


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a": [1, 2', "", "[1] 2", "nope"])
def test_bounded_decoders_still_refuse_what_is_not_json(text: str) -> None:
    with pytest.raises(ValueError):
        loads_bounded(text)


def test_integers_past_the_conversion_limit() -> None:
    digits = "7" * 5000
    with pytest.raises(ValueError, match="integer string conversion"):
        loads(f'{{"n": {digits}}}')
    assert loads_bounded(f'{{"n": {digits}, "m": 12}}') == {"n": digits, "m": 12}


def test_depth_counts_containers_without_recursion() -> None:
    assert [depth(1), depth([]), depth({"a": [1]}), depth(nested(10_000))] == [0, 1, 2, 10_000]


def test_well_formed_value_walks_a_decoded_message_in_place() -> None:
    message = {
        "jsonrpc": "2.0",
        "params": {"text": "a\ud83d", "list": ["\udc80", {"k\ud800": nested(3, "\ud83d")}]},
    }
    assert well_formed_value(message) == {
        "jsonrpc": "2.0",
        "params": {"text": "a\ufffd", "list": ["\ufffd", {"k\ufffd": nested(3, "\ufffd")}]},
    }
    assert well_formed_value("\ud83d") == "\ufffd"


def test_utf8_never_raises() -> None:
    assert utf8("é") == "é".encode()
    assert utf8('{"a": "\ud83d"}') == '{"a": "\ufffd"}'.encode()
