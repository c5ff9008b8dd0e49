"""``agent-ls run --check``: the checks run in the proposal when the scripted model says it is done, the
terminal shows each one next to the proposal and what was not verified, and a false "done" exits 1."""

from __future__ import annotations

from pathlib import Path

from tests.support import agent_cli
from tests.support.model_server import FakeModelServer

PRICE = "def price(amount):\n    return amount * 2\n"
GUARDED = PRICE.replace("    return", "    if amount < 0:\n        raise ValueError('negative')\n    return")
CHECK = "grep -q negative price.py"
GUARD = {"name": "edit_file", "arguments": {"path": "price.py", "old_string": PRICE, "new_string": GUARDED}}


def _shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    (root / "price.py").write_text(PRICE)
    return root


def _run(root: Path, server: FakeModelServer, *checks: str, apply: bool = False) -> tuple[int, str, str]:
    env = agent_cli.user_environment(AGENT_LS_BASE_URL=server.base_url)
    flags = [flag for check in checks for flag in ("--check", check)] + (["--apply"] if apply else [])
    args = ["run", "Refuse negative amounts", "--model", "openai/test", "--workspace", str(root), *flags]
    done = agent_cli.run(args, cwd=root, env=env)
    return done.returncode, done.stdout, done.stderr


def test_passing_and_denied_checks_are_shown_next_to_the_proposal(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    with FakeModelServer([{"tool_calls": [GUARD]}, {"content": "Guarded."}]) as server:
        code, diff, stderr = _run(root, server, CHECK, "rm -rf build")
    assert code == 0, stderr
    assert "+    if amount < 0:" in diff
    assert (root / "price.py").read_text() == PRICE
    report = stderr[stderr.index("Acceptance checks:") :]
    assert report.splitlines()[:5] == [
        "Acceptance checks:",
        f"  ✓ {CHECK} (exit code 0)",
        "  – rm -rf build (not run)",
        "Not verified:",
        "  - rm -rf build: not run: Blocked by policy (bash: rm * (built-in)): rm -rf build.",
    ]


def test_a_false_done_exits_1_with_the_failing_check(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    with FakeModelServer([{"content": "Done."}, {"content": "Done, really."}]) as server:
        code, diff, stderr = _run(root, server, CHECK)
        feedback = server.requests[1]["messages"][-2]["content"]  # then the reminder
    assert code == 1, stderr
    assert diff == ""
    assert f"■ run stopped: claims done, checks fail: {CHECK} (exit code 1)" in stderr
    assert f"  ✗ {CHECK} (exit code 1)\nNot verified: nothing (every check ran)" in stderr
    assert feedback.startswith(
        f"The acceptance checks failed, so the task is not done yet:\n- {CHECK}: exit code 1"
    )


def test_the_users_own_ask_check_runs_with_no_terminal(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    check = "python3 -c 'print(1)'"  # "ask" (no rule matches): the user typed it, so it counts as approved
    with FakeModelServer([{"content": "Nothing to change."}]) as server:
        code, _, stderr = _run(root, server, check)
    assert code == 0, stderr
    assert f"  ✓ {check} (exit code 0)\nNot verified: nothing (every check ran)" in stderr
    assert "nobody could be asked" not in stderr


def test_apply_is_refused_when_a_check_was_not_verified(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    with FakeModelServer([{"tool_calls": [GUARD]}, {"content": "Guarded."}]) as server:
        code, _, stderr = _run(root, server, CHECK, "rm -rf build", apply=True)
    assert code == 1, stderr
    assert "agent-ls: not applying: 1 acceptance check(s) not verified" in stderr
    assert (root / "price.py").read_text() == PRICE


def test_a_skills_checks_written_as_a_list_run_one_per_item(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    skill = root / ".agents" / "skills" / "guard"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: guard\ndescription: Guard prices.\nmetadata:\n  checks:\n    - {CHECK}\n---\nGuard it.\n"
    )
    env = agent_cli.user_environment()
    listed = agent_cli.run(["skills", "--workspace", str(root)], cwd=root, env=env)
    assert "information: metadata 'checks' is a list" in listed.stdout + listed.stderr
    with FakeModelServer([{"content": "Done."}, {"content": "Done, really."}]) as server:
        env = agent_cli.user_environment(AGENT_LS_BASE_URL=server.base_url)
        args = ["run", "/guard prices", "--model", "openai/test", "--workspace", str(root)]
        done = agent_cli.run(args, cwd=root, env=env)
    assert done.returncode == 1, done.stderr  # the check ran and failed, rather than "- grep ..." not run
    assert f"  ✗ {CHECK} (exit code 1)" in done.stderr
