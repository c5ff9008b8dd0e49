"""Control and format characters shown as printable ASCII (``core.visible_text``), the one rule behind every
terminal line the CLI prints and every transcript line."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_ls.core.visible_text import hidden_forms, visible

CASES = [
    # (text, shown), tab and line feed kept
    ("plain text, émoji 🎉, 漢字, tab\tand\nline", "plain text, émoji 🎉, 漢字, tab\tand\nline"),
    ("OSC 52: \x1b]52;c;Y3VybA==\x07", "OSC 52: ^[]52;c;Y3VybA==^G"),
    ("title: \x1b]0;all checks passed\x1b\\", "title: ^[]0;all checks passed^[\\"),
    ("cursor up: \x1b[1A\x1b[2K", "cursor up: ^[[1A^[[2K"),
    ("overwrite\rfake", "overwrite^Mfake"),
    ("crlf\r\n", "crlf^M\n"),
    ("nul \x00 bs \x08 del \x7f", "nul ^@ bs ^H del ^?"),
    ("C1 CSI \x9b31m and NEL \x85", "C1 CSI <U+009B>31m and NEL <U+0085>"),
    ("bidi: if x\u202e } \u2066y\u2069", "bidi: if x<U+202E> } <U+2066>y<U+2069>"),
    (
        "zero width: ad\u200bmin, bom \ufeff, shy \u00ad",
        "zero width: ad<U+200B>min, bom <U+FEFF>, shy <U+00AD>",
    ),
    ("tags: \U000e0041\U000e0042", "tags: <U+E0041><U+E0042>"),
    ("separators: a\u2028b\u2029c", "separators: a<U+2028>b<U+2029>c"),
    ("undecodable name byte: x\udc9by", "undecodable name byte: x<U+DC9B>y"),
]


@pytest.mark.parametrize(("text", "shown"), CASES)
def test_visible(text: str, shown: str) -> None:
    assert visible(text) == shown


def test_one_line_fields_show_line_feeds_too() -> None:
    assert visible("docs.txt\n+++ b/README.md\tx", newlines=False) == "docs.txt^J+++ b/README.md\tx"


def test_hidden_forms_are_listed_once_in_order() -> None:
    assert hidden_forms("a\x1b[1m\rb\x1bc\u202e\n\t") == ["^[", "^M", "<U+202E>"]
    assert hidden_forms("nothing to see\n\t") == []


@given(st.text())
def test_no_control_or_format_character_is_left_and_escaping_twice_changes_nothing(text: str) -> None:
    shown = visible(text, newlines=False)
    assert visible(shown) == shown
    assert not any(
        unicodedata.category(char) in {"Cc", "Cf", "Cs", "Zl", "Zp"} for char in shown if char != "\t"
    )


def test_every_format_character_of_this_pythons_unicode_is_escaped() -> None:
    """The table in visible_text.py is written out (computing it at import costs start-up time): it must
    cover every Cf, Zl and Zp character of the Unicode database this Python ships."""
    missed = [
        f"U+{code:04X}"
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in {"Cc", "Cf", "Zl", "Zp"}
        and chr(code) not in "\t\n"
        and visible(chr(code)) == chr(code)
    ]
    assert missed == []
