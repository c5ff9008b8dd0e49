"""Explicit invocation syntax: ``/name args``."""

from __future__ import annotations

import pytest

from agent_ls.instructions.activation import parse_slash


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("/code-review", ("code-review", "")),
        ("/code-review focus on auth", ("code-review", "focus on auth")),
        ("  /explain  lines 3-9 \n", ("explain", "lines 3-9")),
        ("/fix-diagnostics\nmulti\nline", ("fix-diagnostics", "multi\nline")),
        ("review /code-review", None),
        ("/", None),
        ("/ code-review", None),
        ("/-x", None),
        ("plain task", None),
        ("/code-review: focus auth", ("code-review", "focus auth")),
        ("/explain, please", ("explain", "please")),
        ("/explain.", ("explain", "")),
        ("/v1.2 notes", ("v1.2", "notes")),
        ("/code-review:focus", None),
    ],
)
def test_parse_slash(task: str, expected: tuple[str, str] | None) -> None:
    assert parse_slash(task) == expected


@pytest.mark.parametrize(
    ("task", "expected"),
    [("/café-check now", ("café-check", "now")), ("/проверка", ("проверка", "")), ("/_x", None)],
)
def test_parse_slash_takes_unicode_names(task: str, expected: tuple[str, str] | None) -> None:
    assert parse_slash(task) == expected
