"""``agent-ls run --plan`` then ``agent-ls run --continue "go"`` (issue 17) as a user runs them: real
processes against the scripted model server on 127.0.0.1, one session store. The plan run refuses the
write the model asks for (even with ``--yes``), prints the plan and how to implement it; the follow-up
carries the plan in its first request and its write is proposed and applied."""

from __future__ import annotations

from pathlib import Path

from tests.support.agent_cli import run, user_environment
from tests.support.model_server import FakeModelServer

PLAN = {
    "summary": "Add a NOTES.md that explains the project.",
    "files": ["NOTES.md"],
    "steps": ["Write NOTES.md with one line", "Check it exists"],
    "checks": ["test -f NOTES.md"],
    "risks": ["none worth a mention"],
}


def test_plan_then_continue_go_implements_the_plan(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    write = {"name": "write_file", "arguments": {"path": "NOTES.md", "content": "notes\n"}}
    steps = [
        {"tool_calls": [write, {"name": "bash", "arguments": {"command": "rm a.txt"}}]},
        {"tool_calls": [{"name": "submit_plan", "arguments": PLAN}]},
        {"tool_calls": [write]},
        {"content": "NOTES.md is written."},
    ]
    with FakeModelServer(steps) as model:
        env = user_environment(
            AGENT_LS_STATE_DIR=str(tmp_path / "state"),
            AGENT_LS_BASE_URL=model.base_url,
            AGENT_LS_MODEL="openai/test-model",
        )
        planned = run(["run", "Add notes", "--plan", "--yes"], cwd=root, env=env)
        assert planned.returncode == 0, planned.stderr
        assert planned.stdout == ""  # no proposal: no diff
        assert (
            planned.stderr.count("permission deny (plan mode: edits are refused until the plan is approved)")
            == 2
        )
        assert (
            "\nAdd a NOTES.md that explains the project.\n\nFiles:\n- `NOTES.md`\n\nSteps:\n"
            in planned.stderr
        )
        assert (
            "1. Write NOTES.md with one line\n2. Check it exists\n\nChecks:\n- `test -f NOTES.md`"
            in planned.stderr
        )
        assert "Risks:\n- none worth a mention" in planned.stderr
        assert 'Implement it: agent-ls run --continue "go"' in planned.stderr
        assert not (root / "NOTES.md").exists() and (root / "a.txt").exists()

        implemented = run(["run", "go", "--continue", "--yes", "--apply"], cwd=root, env=env)
        assert implemented.returncode == 0, implemented.stderr
        assert "+notes" in implemented.stdout
        assert "plan ready" not in implemented.stderr
        first = model.requests[2]  # the implementation run's first request
        users = [str(m["content"]) for m in first["messages"] if m["role"] == "user"]
        carried = next(text for text in users if "The user approved this plan" in text)
        assert "Add a NOTES.md that explains the project." in carried and carried.endswith("go")
        assert "submit_plan" not in [tool["function"]["name"] for tool in first["tools"]]
    assert (root / "NOTES.md").read_text() == "notes\n"


def test_apply_and_check_belong_to_the_run_that_implements_the_plan(tmp_path: Path) -> None:
    # Found by a new-user trial: `--continue --plan --apply` applied the earlier run's proposal from a
    # run that promises to edit nothing, and `--plan --check` dropped the check without a word.
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    for extra in (["--apply"], ["--check", "test -f a.txt"]):
        refused = run(["run", "--plan", *extra, "plan it"], cwd=root)
        assert refused.returncode == 2, refused.stderr
        assert f"{extra[0]} does not go with --plan" in refused.stderr
        assert "Traceback" not in refused.stderr
    empty = run(["run", "--check", " ", "do it"], cwd=root)
    assert empty.returncode == 2 and "--check needs a command" in empty.stderr
    assert (root / "a.txt").read_text() == "one\n"


def test_a_plan_run_tells_the_model_why_a_command_or_tool_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    listing = {"name": "bash", "arguments": {"command": f"ls {root}"}}
    load = {"name": "load_tools", "arguments": {"names": ["write_file"]}}
    steps = [
        {"tool_calls": [listing, load]},
        {"tool_calls": [{"name": "submit_plan", "arguments": PLAN}]},
    ]
    with FakeModelServer(steps) as model:
        env = user_environment(
            AGENT_LS_STATE_DIR=str(tmp_path / "state"),
            AGENT_LS_BASE_URL=model.base_url,
            AGENT_LS_MODEL="openai/test-model",
        )
        planned = run(["run", "Add notes", "--plan"], cwd=root, env=env)
        assert planned.returncode == 0, planned.stderr
        results = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    refused, loaded = results
    assert "an absolute path into the real workspace" in refused  # the policy's own reason
    assert "A read-only variant" in refused and "Do not retry it or a variant" not in refused
    assert "write_file not available in plan mode" in loaded and "call them now" not in loaded
