"""``agent-ls apply`` after the user edited a proposed file (issue 16, finding F8): as
``agent.applyProposal`` does, the proposal is re-based onto the user's text by a three-way merge and kept,
the apply stops for the user to apply again, and the second apply writes both changes; a change that
overlaps the agent's is refused with the way out (docs/sessions.md "Resume")."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.agent_cli import run, script, user_environment


def _agent_ls(*args: str, root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run(args, cwd=root, env=env)


def _proposed_then_edited(
    tmp_path: Path, original: str, proposed: str, edited: str
) -> tuple[Path, dict[str, str]]:
    """A project whose a.txt held ``original`` when a run proposed ``proposed`` for it, and which the user
    then changed to ``edited`` on disk; returns the project folder and the environment to run in."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.txt").write_text(original)
    env = user_environment(AGENT_LS_STATE_DIR=str(tmp_path / "state"))
    write = {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": proposed}}]}
    model = script(tmp_path / "a.txt.json", [write, {"content": "ok"}])
    ran = _agent_ls("run", "--model", model, "change a.txt", root=root, env=env)
    assert ran.returncode == 0, ran.stderr
    (root / "a.txt").write_text(edited)
    return root, env


def test_a_user_edit_is_merged_into_the_stored_proposal_and_the_next_apply_writes_both(
    tmp_path: Path,
) -> None:
    root, env = _proposed_then_edited(
        tmp_path, "one\ntwo\nthree\n", "one\ntwo\nTHREE\n", "# user edit\none\ntwo\nthree\n"
    )
    first = _agent_ls("apply", root=root, env=env)
    assert first.returncode == 1, first.stderr
    assert "a.txt changed on disk since the agent read it; the proposal was re-based" in first.stderr
    assert "run agent-ls apply again" in first.stderr
    assert (root / "a.txt").read_text() == "# user edit\none\ntwo\nthree\n"
    second = _agent_ls("apply", root=root, env=env)
    assert second.returncode == 0, second.stderr
    assert (root / "a.txt").read_text() == "# user edit\none\ntwo\nTHREE\n"


def test_an_overlapping_user_edit_is_refused_with_what_to_do(tmp_path: Path) -> None:
    root, env = _proposed_then_edited(tmp_path, "one\n", "ONE\n", "one, typed\n")
    refused = _agent_ls("apply", root=root, env=env)
    assert refused.returncode == 1, refused.stderr
    assert "your change to a.txt overlaps the agent's at line(s) 1" in refused.stderr
    assert "agent-ls discard a.txt" in refused.stderr
    assert (root / "a.txt").read_text() == "one, typed\n"


def test_run_continue_apply_re_bases_the_same_way(tmp_path: Path) -> None:
    root, env = _proposed_then_edited(
        tmp_path, "one\ntwo\nthree\n", "one\ntwo\nTHREE\n", "# user edit\none\ntwo\nthree\n"
    )
    model = script(tmp_path / "noop.json", [{"content": "nothing to add"}, {"content": "still nothing"}])
    first = _agent_ls("run", "--continue", "--apply", "--model", model, "apply it", root=root, env=env)
    assert first.returncode == 1 and "the proposal was re-based onto your text" in first.stderr, first.stderr
    assert (root / "a.txt").read_text() == "# user edit\none\ntwo\nthree\n"
    model = script(tmp_path / "noop2.json", [{"content": "nothing to add"}])
    second = _agent_ls("run", "--continue", "--apply", "--model", model, "apply it", root=root, env=env)
    assert second.returncode == 0, second.stderr
    assert (root / "a.txt").read_text() == "# user edit\none\ntwo\nTHREE\n"
