"""``agent-ls run`` ended by SIGTERM or SIGHUP cleans up as Ctrl-C does, and a run killed outright leaves a
shadow copy that the next run removes, while the copy of a run still alive stays."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent_cli import environment, script, shadow_dirs, start, wait_for_line

BASH_THEN_WAIT: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "bash", "arguments": {"command": "echo in the copy"}}]},
    {"content": "slow answer", "delay_s": 120},
]


def _start(tmp_path: Path, name: str, steps: list[dict[str, Any]]) -> subprocess.Popen[str]:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    temp = tmp_path / "tmp"
    temp.mkdir(exist_ok=True)
    model = script(tmp_path / f"{name}.json", steps)
    return start(["run", name, "--model", model, "--yes"], cwd=root, env=environment(temp))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_cancel_the_run_and_remove_its_shadow_copy(tmp_path: Path, signum: int) -> None:
    process = _start(tmp_path, "slow", BASH_THEN_WAIT)
    try:
        wait_for_line(process, "turn 2")
        assert len(shadow_dirs(tmp_path / "tmp")) == 1
        process.send_signal(signum)
        _, rest = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 128 + signum, rest
    assert "run cancelled" in rest and "Traceback" not in rest
    assert shadow_dirs(tmp_path / "tmp") == []


def test_the_next_run_removes_the_copy_of_a_killed_run_and_keeps_a_live_ones(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    started: list[subprocess.Popen[str]] = []
    try:
        killed = _start(tmp_path, "killed", BASH_THEN_WAIT)
        started.append(killed)
        wait_for_line(killed, "turn 2")
        (killed_copy,) = shadow_dirs(temp)
        alive = _start(tmp_path, "alive", BASH_THEN_WAIT)
        started.append(alive)
        wait_for_line(alive, "turn 2")
        (alive_copy,) = set(shadow_dirs(temp)) - {killed_copy}
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        assert shadow_dirs(temp) == sorted([killed_copy, alive_copy])  # SIGKILL: nothing could clean up
        later = _start(tmp_path, "later", [BASH_THEN_WAIT[0], {"content": "done"}])
        _, rest = later.communicate(timeout=60)
        assert later.returncode == 0, rest
        assert shadow_dirs(temp) == [alive_copy]
        alive.send_signal(signal.SIGTERM)
        alive.communicate(timeout=30)
        assert shadow_dirs(temp) == []
    finally:
        for process in started:
            process.kill()
            process.wait()
