"""Skills and AGENTS.md end to end: a real ``agent-ls serve``, an LSP client, a scripted model on 127.0.0.1.

Progressive disclosure as the model sees it: the catalog is in the first request and no skill body is; a
body arrives only after the ``skill`` call (outside the data-marked tool result), or up front when the user
invokes ``/code-review`` explicitly; nested AGENTS.md files arrive next to the first tool result inside
their folder; the answer is the run's result.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, model_settings, run_ended, start
from tests.support.model_server import FakeModelServer

SKILLS = Path(__file__).resolve().parents[2] / "skills"
BUNDLED = sorted(p.name for p in SKILLS.iterdir() if (p / "SKILL.md").is_file())


def body_of(name: str) -> str:
    """The body of a bundled skill, after its frontmatter."""
    text = (SKILLS / name / "SKILL.md").read_text(encoding="utf-8")
    return text.split("\n---\n", 1)[1]


def heading(name: str) -> str:
    """A line unique to the skill's body (its first heading), to find the body in requests."""
    return next(line for line in body_of(name).splitlines() if line.startswith("# "))


def request_text(request: dict[str, Any]) -> str:
    return json.dumps(request["messages"], ensure_ascii=False)


def system_text(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


def outside_tool_results(content: str) -> str:
    """``content`` with every ``<tool_result …>…</tool_result>`` element removed."""
    return re.sub(r"<tool_result\b.*?</tool_result>", "", content, flags=re.DOTALL)


async def _run(client: LanguageClient, name: str, argument: dict[str, Any]) -> Any:
    result = await command(client, name, argument)
    return await run_ended(client, field(result, "sessionId"))


async def test_code_review_catalog_first_body_after_the_skill_call(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    answer = "major — stats.py:5 `return sum(values) / (len(values) - 1)` divides by n-1; use len(values)."
    model_server.steps.extend(
        [
            {"tool_calls": [{"id": "c1", "name": "skill", "arguments": {"name": "code-review"}}]},
            {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": {"path": "stats.py"}}]},
            {"content": answer},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    ended = await _run(
        client, "agent.run", {"task": "Review this file", "uri": (workspace / "stats.py").as_uri()}
    )

    assert field(ended, "status") == "done"
    assert field(ended, "answer") == answer
    first, second, third = model_server.requests
    catalog = system_text(first)
    assert "<available_skills>" in catalog
    for name in BUNDLED:
        assert f"\n- {name}: " in catalog
        assert heading(name) not in request_text(first)  # no body before it is asked for
    skill_spec = next(t for t in first["tools"] if t["function"]["name"] == "skill")
    assert skill_spec["function"]["parameters"]["properties"]["name"]["enum"] == BUNDLED
    result = next(m for m in second["messages"] if m["role"] == "tool")
    assert heading("code-review") in outside_tool_results(result["content"])  # trusted, not data
    assert '<instructions source="skill:code-review">' in result["content"]
    assert "$ARGUMENTS" not in result["content"]
    assert request_text(third).count(heading("code-review")) == 1  # the body once, never again
    assert re.search(r"\bstats\.py:\d+", field(ended, "answer"))  # the step: every finding cites a line


async def test_explicit_code_review_injects_the_body_up_front(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.append({"content": "minor — stats.py:5 off-by-one in the divisor."})
    await start(client, workspace, model_settings(model_server))
    ended = await _run(
        client,
        "agent.runSkill",
        {"skill": "code-review", "uri": (workspace / "stats.py").as_uri(), "args": "focus on division"},
    )

    assert field(ended, "status") == "done"
    assert field(ended, "answer") == "minor — stats.py:5 off-by-one in the divisor."
    (request,) = model_server.requests
    user = next(m for m in request["messages"] if m["role"] == "user")["content"]
    assert user.index(heading("code-review")) < user.index("File in focus: stats.py")
    assert "focus on division" in user and "$ARGUMENTS" not in user
    assert user.startswith('<instructions source="skill:code-review">')


async def test_a_slash_task_is_explicit_invocation(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.append({"content": "It computes the mean."})
    await start(client, workspace, model_settings(model_server))
    ended = await _run(client, "agent.run", {"task": "/explain", "uri": (workspace / "stats.py").as_uri()})

    assert field(ended, "status") == "done"
    (request,) = model_server.requests
    assert heading("explain") in request_text(request)


@pytest.mark.parametrize("name", BUNDLED)
async def test_each_bundled_skill_is_loaded_by_the_skill_tool(
    name: str, client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [
            {"tool_calls": [{"id": "s", "name": "skill", "arguments": {"name": name}}]},
            {"tool_calls": [{"id": "r", "name": "read_file", "arguments": {"path": "stats.py"}}]},
            {"content": "stats.py:5 done."},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    ended = await _run(client, "agent.run", {"task": "help", "uri": (workspace / "stats.py").as_uri()})

    assert field(ended, "status") == "done"
    assert heading(name) not in request_text(model_server.requests[0])
    assert heading(name) in outside_tool_results(request_text(model_server.requests[1]))
    # The model went on with the procedure's first step (reading the file in focus).
    tool = [m for m in model_server.requests[2]["messages"] if m["role"] == "tool"][-1]
    assert "return sum(values)" in tool["content"]


async def test_an_unknown_skill_is_refused_before_any_run(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    await start(client, workspace, model_settings(model_server))
    with pytest.raises(Exception, match="no skill named 'nope'"):
        await command(client, "agent.runSkill", {"skill": "nope"})
    assert model_server.requests == []


async def test_nested_agents_md_arrives_on_first_touch_and_governs_the_proposal(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    (workspace / ".git").mkdir()
    (workspace / "AGENTS.md").write_text("Root rule: run pytest before answering.\n", encoding="utf-8")
    pkg = workspace / "pkg"
    pkg.mkdir()
    (pkg / "AGENTS.md").write_text("Pkg rule: keep functions pure.\n", encoding="utf-8")
    (pkg / "util.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    edit = {"path": "pkg/util.py", "old_string": "return 1", "new_string": "return 2"}
    model_server.steps.extend(
        [
            {"tool_calls": [{"id": "a", "name": "read_file", "arguments": {"path": "pkg/util.py"}}]},
            {"tool_calls": [{"id": "b", "name": "read_file", "arguments": {"path": "pkg/util.py"}}]},
            {"tool_calls": [{"id": "c", "name": "edit_file", "arguments": edit}]},
            {"content": "done"},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    ended = await _run(client, "agent.run", {"task": "bump f"})

    first = model_server.requests[0]
    assert "Root rule" in system_text(first) and "Pkg rule" not in request_text(first)
    tools = [m["content"] for m in model_server.requests[-1]["messages"] if m["role"] == "tool"]
    assert "Instructions from: pkg/AGENTS.md" in outside_tool_results(tools[0])
    assert all("Pkg rule" not in content for content in tools[1:])  # once per session
    # agent/runEnded names the governing files per proposed file (the test client turns JSON objects
    # into named tuples, renaming keys that are not identifiers: read the values)...
    assert list(field(field(ended, "proposal"), "governedBy")) == [["AGENTS.md", "pkg/AGENTS.md"]]
    # ... and so does agent.proposal, per file.
    (proposed,) = field(await command(client, "agent.proposal", {}), "files")
    assert (proposed["path"], proposed["instructions"]) == ("pkg/util.py", ["AGENTS.md", "pkg/AGENTS.md"])


async def test_list_skills_and_instructions_commands(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    (workspace / "AGENTS.md").write_text("Use tabs.\n", encoding="utf-8")
    mine = workspace / ".agents" / "skills" / "deploy"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Use this skill when: the user deploys\n---\nSteps.\n",
        encoding="utf-8",
    )
    await start(client, workspace, model_settings(model_server))

    listed = await command(client, "agent.listSkills", {"uri": (workspace / "stats.py").as_uri()})
    by_name = {s["name"]: s for s in field(listed, "skills")}
    assert set(BUNDLED) <= set(by_name)
    assert by_name["code-review"]["source"] == "bundled"
    assert by_name["deploy"]["source"] == "project"
    assert any("lenient" in d["message"] for d in by_name["deploy"]["diagnostics"])

    chain = await command(client, "agent.instructions", {"uri": (workspace / "stats.py").as_uri()})
    assert [f["label"] for f in field(chain, "files")] == ["AGENTS.md"]
    assert model_server.requests == []
