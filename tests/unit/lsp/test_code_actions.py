"""Code actions: which ones, in which order, with which ``agent.runSkill`` arguments, for which documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t

from agent_ls.lsp.handlers.code_actions import (
    EXPLAIN_TITLE,
    FIX_TITLE,
    REVIEW_TITLE,
    TESTS_TITLE,
    actions_for,
)
from agent_ls.lsp.protocol import RunSkillParams

ROOT = Path("/ws")
URI = "file:///ws/src/app.py"


def rng(start: tuple[int, int], end: tuple[int, int]) -> t.Range:
    return t.Range(start=t.Position(*start), end=t.Position(*end))


def wire_range(start: tuple[int, int], end: tuple[int, int]) -> dict[str, Any]:
    return {
        "start": {"line": start[0], "character": start[1]},
        "end": {"line": end[0], "character": end[1]},
    }


UNUSED = t.Diagnostic(
    range=rng((3, 4), (3, 10)),
    message="'os' imported but unused",
    severity=t.DiagnosticSeverity.Warning,
    source="ruff",
    code="F401",
)
ELSEWHERE = t.Diagnostic(
    range=rng((20, 0), (20, 5)), message="undefined name 'x'", severity=t.DiagnosticSeverity.Error
)


def request(
    selection: t.Range,
    diagnostics: list[t.Diagnostic] | None = None,
    only: list[str] | None = None,
    uri: str = URI,
) -> t.CodeActionParams:
    return t.CodeActionParams(
        text_document=t.TextDocumentIdentifier(uri=uri),
        range=selection,
        context=t.CodeActionContext(diagnostics=diagnostics or [], only=only),
    )


def summary(actions: list[t.CodeAction] | None) -> list[tuple[str, str | None, Any]]:
    assert actions is not None
    out = []
    for action in actions:
        assert action.command is not None and action.command.command == "agent.runSkill"
        assert action.command.title == action.title
        [argument] = action.command.arguments or []
        out.append((action.title, action.kind, argument))
    return out


def test_a_cursor_on_a_diagnostic_offers_its_fix_then_review_and_tests() -> None:
    actions = actions_for(request(rng((3, 6), (3, 6)), [UNUSED, ELSEWHERE]), [ROOT])
    assert summary(actions) == [
        (
            FIX_TITLE,
            "quickfix",
            {
                "skill": "fix-diagnostics",
                "uri": URI,
                "range": wire_range((3, 4), (3, 10)),
                "diagnostics": [
                    {
                        "range": wire_range((3, 4), (3, 10)),
                        "message": "'os' imported but unused",
                        "severity": 2,
                        "source": "ruff",
                        "code": "F401",
                    }
                ],
            },
        ),
        (REVIEW_TITLE, "source", {"skill": "code-review", "uri": URI}),
        (TESTS_TITLE, "source", {"skill": "write-tests", "uri": URI, "range": wire_range((3, 6), (3, 6))}),
    ]
    assert actions is not None and actions[0].diagnostics == [UNUSED]
    assert all(action.diagnostics is None for action in actions[1:])


def test_a_selection_is_explained() -> None:
    actions = actions_for(request(rng((1, 0), (4, 2))), [ROOT])
    assert summary(actions) == [
        (REVIEW_TITLE, "source", {"skill": "code-review", "uri": URI}),
        (EXPLAIN_TITLE, "", {"skill": "explain", "uri": URI, "range": wire_range((1, 0), (4, 2))}),
        (TESTS_TITLE, "source", {"skill": "write-tests", "uri": URI, "range": wire_range((1, 0), (4, 2))}),
    ]


@pytest.mark.parametrize(
    ("selection", "fixes"),
    [
        (rng((3, 4), (3, 4)), 1),  # at the diagnostic's start
        (rng((3, 10), (3, 10)), 1),  # at its end: still on it
        (rng((3, 7), (3, 8)), 1),  # inside
        (rng((0, 0), (9, 0)), 1),  # a selection covering it
        (rng((3, 9), (5, 0)), 1),  # a selection starting inside it
        (rng((3, 11), (3, 11)), 0),  # just after it
        (rng((3, 0), (3, 3)), 0),  # just before it
        (rng((2, 0), (2, 80)), 0),  # the line above
    ],
)
def test_a_fix_is_offered_for_diagnostics_overlapping_the_range(selection: t.Range, fixes: int) -> None:
    actions = actions_for(request(selection, [UNUSED]), [ROOT]) or []
    assert sum(action.title == FIX_TITLE for action in actions) == fixes


def test_each_diagnostic_in_range_gets_its_own_fix() -> None:
    second = t.Diagnostic(range=rng((3, 0), (3, 20)), message="line too long")
    actions = actions_for(request(rng((3, 5), (3, 5)), [UNUSED, second]), [ROOT]) or []
    fixes = [action for action in actions if action.title == FIX_TITLE]
    assert [action.diagnostics for action in fixes] == [[UNUSED], [second]]
    assert [summary([action])[0][2]["diagnostics"][0]["message"] for action in fixes] == [
        UNUSED.message,
        "line too long",
    ]
    assert all("args" not in summary([action])[0][2] for action in fixes)  # never in the skill block


@pytest.mark.parametrize(
    ("only", "titles"),
    [
        (None, [FIX_TITLE, REVIEW_TITLE, EXPLAIN_TITLE, TESTS_TITLE]),
        ([""], [FIX_TITLE, REVIEW_TITLE, EXPLAIN_TITLE, TESTS_TITLE]),  # the empty kind covers all
        (["quickfix"], [FIX_TITLE]),
        (["source"], [REVIEW_TITLE, TESTS_TITLE]),
        (["quickfix", "source"], [FIX_TITLE, REVIEW_TITLE, TESTS_TITLE]),
        (["refactor"], []),
        (["source.organizeImports"], []),  # a sub-kind does not cover its parent
        (["quick"], []),  # kinds match by whole dotted parts, not string prefixes
    ],
)
def test_only_filters_by_kind(only: list[str] | None, titles: list[str]) -> None:
    actions = actions_for(request(rng((3, 4), (3, 9)), [UNUSED], only=only), [ROOT]) or []
    assert [action.title for action in actions] == titles


@pytest.mark.parametrize(
    "uri",
    [
        "file:///elsewhere/app.py",  # outside every root
        "file:///wsx/app.py",  # a sibling sharing the root's prefix
        "untitled:Untitled-1",
        "git:/ws/src/app.py?ref=HEAD",
        "vscode-notebook-cell:/ws/nb.ipynb#cell1",
    ],
)
def test_no_action_for_documents_outside_the_workspace_or_not_files(uri: str) -> None:
    assert actions_for(request(rng((0, 0), (0, 0)), [UNUSED], uri=uri), [ROOT]) is None


def test_no_action_without_a_workspace() -> None:
    assert actions_for(request(rng((0, 0), (0, 0))), []) is None


def test_a_path_through_a_symlink_to_the_root_counts(tmp_path: Path) -> None:
    root = tmp_path / "real"
    (root / "src").mkdir(parents=True)
    (tmp_path / "link").symlink_to(root)
    uri = (tmp_path / "link" / "src" / "app.py").as_uri()
    assert actions_for(request(rng((0, 0), (0, 0)), uri=uri), [root.resolve()]) is not None


def test_every_command_argument_is_valid_run_skill_params() -> None:
    """The lead's ``agent.runSkill`` reads these arguments: they must parse, with nothing dropped."""
    actions = actions_for(request(rng((3, 4), (3, 9)), [UNUSED]), [ROOT]) or []
    for _title, _kind, argument in summary(actions):
        params = RunSkillParams.model_validate(argument)
        assert params.uri == URI and params.skill in (
            "fix-diagnostics",
            "code-review",
            "explain",
            "write-tests",
        )
        assert set(argument) <= {"skill", "uri", "range", "args", "diagnostics"}
