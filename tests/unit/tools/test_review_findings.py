"""review_findings: each finding checked against the agent's view of the file, accepted ones emitted.

Through the real registry with the in-memory workspace (pending edits over files); the result text is
what the model reads, and ``FindingsReported`` what the front ends show.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agent_ls.core.events import FindingsReported
from agent_ls.core.review import ReviewFinding, RunFindings
from agent_ls.policy.engine import BUILTIN_RULES, PermissionPolicy
from agent_ls.policy.rules import Rule
from agent_ls.tools import review_findings
from agent_ls.tools.review_findings import line_count
from agent_ls.workspace.paths import PathPolicy
from tests.unit.tools.fakes import ROOT
from tests.unit.tools.harness import Harness, make_harness

FILES = {"src/app.py": "a = 1\nb = 2\nc = 3\n", "src/empty.py": "", "README.md": "# x"}


def _harness(**kwargs: Any) -> Harness:
    return make_harness(FILES, tools=[review_findings.TOOL], **kwargs)


def _reported(harness: Harness) -> list[FindingsReported]:
    return [event for event in harness.events if isinstance(event, FindingsReported)]


async def test_findings_on_existing_lines_are_accepted_and_emitted() -> None:
    harness = _harness()
    findings = [
        {"path": "src/app.py", "line": 2, "severity": "warning", "message": "b is\nunused"},
        {"path": "./src/app.py", "line": 1, "endLine": 3, "severity": "error", "message": "all wrong"},
        {"path": "README.md", "line": 1, "severity": "hint", "message": "no trailing newline"},
    ]
    text = await harness.text("review_findings", {"findings": findings, "files": ["src/empty.py"]})
    assert text == "Accepted 3 of 3 findings; the user sees them in the editor."
    assert _reported(harness) == [
        FindingsReported(
            (
                ReviewFinding("src/app.py", 2, 2, "warning", "b is unused"),
                ReviewFinding("src/app.py", 1, 3, "error", "all wrong"),
                ReviewFinding("README.md", 1, 1, "hint", "no trailing newline"),
            ),
            ("README.md", "src/app.py", "src/empty.py"),
        )
    ]


async def test_bad_lines_and_paths_are_rejected_with_the_reason_and_the_rest_accepted() -> None:
    harness = _harness()
    findings = [
        {"path": "src/app.py", "line": 4, "severity": "error", "message": "past the end"},
        {"path": "src/app.py", "line": 2, "endLine": 9, "severity": "info", "message": "range past the end"},
        {"path": "src/app.py", "line": 3, "endLine": 2, "severity": "info", "message": "backwards"},
        {"path": "src/empty.py", "line": 1, "severity": "info", "message": "empty file"},
        {"path": "../outside.py", "line": 1, "severity": "error", "message": "outside"},
        {"path": ".env", "line": 1, "severity": "error", "message": "a secret"},
        {"path": "src", "line": 1, "severity": "error", "message": "a folder"},
        {"path": "src/gone.py", "line": 1, "severity": "error", "message": "no such file"},
        {"path": "src/app.py", "line": 3, "severity": "warning", "message": "fine"},
    ]
    text = await harness.text("review_findings", {"findings": findings})
    assert text.splitlines() == [
        "Accepted 1 of 9 findings. Fix these and call review_findings again with them:",
        "#1 src/app.py:4: rejected: src/app.py has 3 lines, so line 4 does not exist; read it again and cite "
        "an existing line",
        "#2 src/app.py:2: rejected: src/app.py has 3 lines, so lines 2-9 do not exist; read it again and "
        "cite an existing line",
        "#3 src/app.py:3: rejected: endLine 2 is before line 3",
        "#4 src/empty.py:1: rejected: src/empty.py is empty, so line 1 does not exist; read it again and "
        "cite an existing line",
        f"#5 ../outside.py:1: rejected: path '../outside.py' is outside the workspace {ROOT}; use a path "
        "inside it",
        "#6 .env:1: rejected: '.env' is a secret file; it cannot be read or written",
        "#7 src:1: rejected: src is a directory; cite a file",
        "#8 src/gone.py:1: rejected: src/gone.py does not exist",
    ]
    assert _reported(harness) == [
        FindingsReported((ReviewFinding("src/app.py", 3, 3, "warning", "fine"),), ("src/app.py",))
    ]


async def test_lines_are_those_of_the_pending_edit() -> None:
    harness = _harness()
    harness.workspace.pending["src/app.py"] = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"
    text = await harness.text(
        "review_findings",
        {"findings": [{"path": "src/app.py", "line": 5, "severity": "info", "message": "e"}]},
    )
    assert text == "Accepted 1 of 1 finding; the user sees them in the editor."


async def test_a_file_a_read_rule_denies_is_rejected() -> None:
    policy = PermissionPolicy(PathPolicy(ROOT), rules=[*BUILTIN_RULES, Rule("read", "src/**", "deny")])
    harness = _harness(policy=policy)
    finding = {"path": "src/app.py", "line": 1, "severity": "error", "message": "x"}
    text = await harness.text("review_findings", {"findings": [finding], "files": ["src/empty.py"]})
    assert text.splitlines() == [
        "Accepted 0 of 1 finding. Fix these and call review_findings again with them:",
        "#1 src/app.py:1: rejected: src/app.py: reading it is denied by a permission rule",
        "files: src/empty.py: rejected: src/empty.py: reading it is denied by a permission rule",
    ]
    assert _reported(harness) == []


async def test_a_review_with_no_finding_still_covers_its_files() -> None:
    harness = _harness()
    text = await harness.text("review_findings", {"findings": [], "files": ["src/app.py"]})
    assert text == "Accepted 0 of 0 findings; the user sees them in the editor."
    assert _reported(harness) == [FindingsReported((), ("src/app.py",))]


async def test_a_bad_severity_is_an_argument_error() -> None:
    harness = _harness()
    finding = {"path": "src/app.py", "line": 1, "severity": "critical", "message": "x"}
    result = await harness.call("review_findings", {"findings": [finding]})
    assert result.is_error
    assert "severity" in result.content and "'error', 'warning', 'info' or 'hint'" in result.content


async def test_files_are_capped_after_repeats_are_merged() -> None:
    harness = _harness()
    many = [f"src/f{n}.py" for n in range(review_findings.MAX_FILES + 1)]
    result = await harness.call("review_findings", {"findings": [], "files": many})
    assert result.is_error and f"at most {review_findings.MAX_FILES} per call" in result.content
    assert _reported(harness) == []
    text = await harness.text("review_findings", {"findings": [], "files": ["src/app.py"] * 50_000})
    assert text == "Accepted 0 of 0 findings; the user sees them in the editor."
    assert _reported(harness) == [FindingsReported((), ("src/app.py",))]
    long_path = {"path": "a" * 5000, "line": 1, "severity": "info", "message": "x"}
    too_long = await harness.call("review_findings", {"findings": [long_path]})
    assert too_long.is_error and "findings.0.path" in too_long.content


async def test_files_are_checked_off_the_event_loop() -> None:
    harness = _harness()
    on_loop: list[bool] = []
    resolve = harness.workspace.resolve

    def resolve_where(path: str) -> str:
        try:
            asyncio.get_running_loop()
            on_loop.append(True)
        except RuntimeError:  # a worker thread has no running loop
            on_loop.append(False)
        return resolve(path)

    harness.workspace.resolve = resolve_where  # type: ignore[method-assign]
    finding = {"path": "src/app.py", "line": 1, "severity": "info", "message": "x"}
    await harness.text("review_findings", {"findings": [finding], "files": ["README.md"]})
    assert on_loop == [False, False]


def test_line_count_is_read_files_numbering() -> None:
    assert [line_count(text) for text in ("", "a", "a\n", "a\nb", "a\r\nb\r\n", "\n")] == [0, 1, 1, 2, 2, 1]


def test_a_runs_findings_add_up_and_the_answer_lists_what_it_lacks() -> None:
    found = RunFindings()
    first = ReviewFinding("a.py", 1, 1, "error", "one")
    other = ReviewFinding("b.py", 2, 2, "warning", "two")
    found.add((first, other), ("a.py", "b.py"))
    again = ReviewFinding("a.py", 3, 4, "info", "three")
    found.add((again, first), ("a.py", "c.py"))  # the rejected one sent again, with one already shown
    assert (found.findings, found.files) == ([first, other, again], {"a.py", "b.py", "c.py"})
    assert found.lines_missing_from("a.py:1: error: one\nb.py:2: warning: two\n") == ["a.py:3: info: three"]
