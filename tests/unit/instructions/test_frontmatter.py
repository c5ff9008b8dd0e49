"""The one frontmatter splitter, reading only the head of a file, and lenient YAML loading."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.core.file_diagnostics import FileDiagnostic
from agent_ls.instructions.frontmatter import (
    MAX_FRONTMATTER_BYTES,
    KeySpan,
    frontmatter_unclosed,
    load_frontmatter,
    quote_colon_scalars,
    read_head,
    split_frontmatter,
)

SPLITS = [
    # (id, text, expected (yaml, body, body_line))
    ("plain", "---\nname: a\n---\nbody\n", ("name: a\n", "body\n", 3)),
    ("bom", "\ufeff---\nname: a\n---\nbody\n", ("name: a\n", "body\n", 3)),
    ("crlf", "---\r\nname: a\r\n---\r\nbody\r\nmore\r\n", ("name: a\n", "body\nmore\n", 3)),
    ("bom+crlf", "\ufeff---\r\nname: a\r\n---\r\n\r\nBody.\r\n", ("name: a\n", "\nBody.\n", 3)),
    ("lone cr", "---\rname: a\r---\rbody", ("name: a\n", "body", 3)),
    ("trailing blanks on delimiters", "--- \nname: a\n---\t\nbody", ("name: a\n", "body", 3)),
    ("closing line at end of file", "---\nname: a\n---", ("name: a\n", "", 3)),
    ("empty frontmatter", "---\n---\nbody", ("", "body", 2)),
    ("no frontmatter", "# Title\n---\nname: a\n---\n", (None, "# Title\n---\nname: a\n---\n", 0)),
    ("delimiter not first", "\n---\nname: a\n---\n", (None, "\n---\nname: a\n---\n", 0)),
    ("only an opening line", "---", (None, "---", 0)),
    ("unclosed", "---\nname: a\nbody\n", (None, "---\nname: a\nbody\n", 0)),
    ("--- inside a value does not close", "---\nd: a---b\n---\nx", ("d: a---b\n", "x", 3)),
    ("indented --- does not close", "---\nd: |\n  ---\n---\nx", ("d: |\n  ---\n", "x", 4)),
    ("---- does not close", "---\nd: a\n----\n---\nx", ("d: a\n----\n", "x", 4)),
    ("... does not close", "---\nd: a\n...\n---\nx", ("d: a\n...\n", "x", 4)),
    ("second BOM kept", "\ufeff\ufeff---\nd: a\n---\n", (None, "\ufeff---\nd: a\n---\n", 0)),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in SPLITS], ids=[c[0] for c in SPLITS])
def test_split_frontmatter(text: str, expected: tuple[str | None, str, int]) -> None:
    assert split_frontmatter(text) == expected


@pytest.mark.parametrize(
    ("text", "unclosed"),
    [("---\nname: a\n", True), ("---\nname: a\n---\n", False), ("# no\n", False), ("---", False)],
)
def test_frontmatter_unclosed(text: str, unclosed: bool) -> None:
    assert frontmatter_unclosed(text) is unclosed


def test_read_head_stops_after_the_frontmatter(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text("---\nname: a\ndescription: b\n---\n" + "body line\n" * 100_000)
    text, complete = read_head(path)
    assert not complete
    assert len(text) <= 4096 and text.endswith("\n")
    assert split_frontmatter(text)[0] == "name: a\ndescription: b\n"


def test_read_head_of_a_file_without_frontmatter_reads_one_chunk(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text("# Title\n" * 100_000)
    text, complete = read_head(path)
    assert not complete and len(text) <= 4096


def test_read_head_reads_a_short_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes(b"\xef\xbb\xbf---\r\nname: a\r\n---")
    assert read_head(path) == ("\ufeff---\r\nname: a\r\n---", True)


def test_read_head_keeps_a_long_frontmatter_and_multibyte_text_across_chunks(tmp_path: Path) -> None:
    description = "é" * 3000 + "—" * 2000  # 12,000 bytes: three reads, code points split across them
    path = tmp_path / "SKILL.md"
    path.write_bytes(f"---\r\ndescription: {description}\r\n---\r\n{'x' * 50_000}".encode())
    text, complete = read_head(path)
    assert not complete
    assert split_frontmatter(text)[0] == f"description: {description}\n"


def test_read_head_gives_up_on_an_unclosed_frontmatter_at_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text("---\n" + "key: value\n" * 20_000)
    text, complete = read_head(path)
    assert not complete
    assert MAX_FRONTMATTER_BYTES - 11 <= len(text) <= MAX_FRONTMATTER_BYTES
    assert frontmatter_unclosed(text)


def test_read_head_raises_on_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes(b"---\nname: \xff\n---\n")
    with pytest.raises(UnicodeDecodeError):
        read_head(path)


QUOTING = [
    # (id, yaml text, quoted text)
    ("unquoted colon", "description: Use when: the user asks", 'description: "Use when: the user asks"'),
    (
        "SK12 changelog",
        "name: changelog\ndescription: Generate changelogs. Usage: /changelog <generate|lint> [options]\n",
        'name: changelog\ndescription: "Generate changelogs. Usage: /changelog <generate|lint> [options]"\n',
    ),
    ("trailing colon", "description: Triggers:", 'description: "Triggers:"'),
    ("reserved backtick", "description: `x` does y", 'description: "`x` does y"'),
    ("quotes and backslashes escaped", 'd: say "a: b" \\ c', 'd: "say \\"a: b\\" \\\\ c"'),
    ("comment dropped as YAML would", "d: a: b # note", 'd: "a: b"'),
    (
        "continuation lines quoted in place",
        "d: Use when: x\n  and also: y\n\nname: n",
        'd: "Use when: x\n  and also: y"\n\nname: n',
    ),
    ("no colon: unchanged", "d: plain text\n  more text", "d: plain text\n  more text"),
    ("url colon without space: unchanged", "d: see https://example.com", "d: see https://example.com"),
    ("already quoted: unchanged", "d: \"a: b\"\ne: 'c: d'", "d: \"a: b\"\ne: 'c: d'"),
    (
        "block scalar content untouched",
        "d: >\n  Main Agents: do not\n  x: y",
        "d: >\n  Main Agents: do not\n  x: y",
    ),
    ("flow value untouched", "t: [a: b]", "t: [a: b]"),
    ("flow then text", "argument-hint: [file] [--fix]", 'argument-hint: "[file] [--fix]"'),
    ("flow then comment untouched", "t: [a] # c", "t: [a] # c"),
    ("nested mapping value", "metadata:\n  short: Use when: x", 'metadata:\n  short: "Use when: x"'),
    ("list item mapping", "- name: a: b", '- name: "a: b"'),
]


@pytest.mark.parametrize(("text", "quoted"), [c[1:] for c in QUOTING], ids=[c[0] for c in QUOTING])
def test_quote_colon_scalars(text: str, quoted: str) -> None:
    assert quote_colon_scalars(text) == quoted
    assert quoted.count("\n") == text.count("\n")  # line numbers stay valid


P = Path("/ws/SKILL.md")


def test_load_frontmatter_keeps_keys_case_sensitive_and_their_positions() -> None:
    loaded, diagnostics = load_frontmatter(P, "Name: Upper\nname: lower\n  # c\nmeta: {a: 1}\n")
    assert diagnostics == []
    assert loaded is not None and not loaded.lenient
    assert loaded.data == {"Name": "Upper", "name": "lower", "meta": {"a": 1}}
    assert loaded.spans == {"Name": KeySpan(1, 0, 4), "name": KeySpan(2, 0, 4), "meta": KeySpan(4, 0, 4)}


def test_load_frontmatter_keeps_scalars_as_written() -> None:
    loaded, _ = load_frontmatter(P, "v: 1.10\nd: 2026-03-17\nb: yes\nn: ~\nl: [1]\ns: 'x'\n")
    assert loaded is not None
    assert loaded.texts == {"v": "1.10", "d": "2026-03-17", "b": "yes", "n": None, "l": None, "s": "x"}
    assert loaded.data["v"] == 1.1  # what YAML made of it, for the spec validator


def test_load_frontmatter_reports_duplicate_keys() -> None:
    loaded, _ = load_frontmatter(P, "name: a\ndescription: d\nname: b\n")
    assert loaded is not None
    assert loaded.data["name"] == "b" and loaded.duplicates == (("name", 1, 3),)


def test_unquoted_colon_loads_leniently_with_a_warning_on_the_yaml_error_line() -> None:
    loaded, diagnostics = load_frontmatter(P, "name: x\ndescription: Use this skill when: the user asks\n")
    assert loaded is not None and loaded.lenient
    assert loaded.data["description"] == "Use this skill when: the user asks"
    assert [(d.line, d.character, d.severity) for d in diagnostics] == [(2, 32, "warning")]
    assert diagnostics[0].message.startswith(
        "loaded leniently: the frontmatter is not valid YAML (mapping values"
    )
    assert "(line 3, column 33)" in diagnostics[0].message


def test_multi_line_plain_description_with_colons_loads_leniently_folded() -> None:
    loaded, _ = load_frontmatter(P, "description: Use when: a\n  or when: b\nname: x\n")
    assert loaded is not None and loaded.data == {"description": "Use when: a or when: b", "name": "x"}


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("name: x\ndescription: [unclosed\n", 3, "invalid YAML frontmatter: "),
        ("name: x\nkey: 'unterminated\n", 3, "invalid YAML frontmatter: while scanning a quoted scalar, "),
        ("name: &a x\nd: *b\n", 2, "invalid YAML frontmatter: found undefined alias (line 3, column 4)"),
        ("- a\n- b\n", 0, "the frontmatter is a list, not a mapping of keys; skill not loaded"),
        ("just text\n", 0, "the frontmatter is a str, not a mapping of keys; skill not loaded"),
        ("", 0, "the frontmatter is empty; skill not loaded"),
        ("# only a comment\n", 0, "the frontmatter is empty; skill not loaded"),
        ("a: 1\n---\nb: 2\n", 2, "invalid YAML frontmatter: expected a single document in the stream, but"),
    ],
)
def test_load_frontmatter_errors_are_positioned(text: str, line: int, message: str) -> None:
    loaded, diagnostics = load_frontmatter(P, text)
    assert loaded is None
    assert len(diagnostics) == 1
    (diagnostic,) = diagnostics
    assert isinstance(diagnostic, FileDiagnostic) and diagnostic.severity == "error"
    assert diagnostic.line == line and diagnostic.message.startswith(message)
