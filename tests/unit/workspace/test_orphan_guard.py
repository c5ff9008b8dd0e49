"""Unsandboxed commands do not outlive a killed agent-ls: ``processes.execute`` lists their groups with the
orphan guard, whose watchdog kills them when our process dies, and only the groups still listed."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.support.processes import command_lines


def _marker() -> str:
    """A ``sleep`` argument no other process on this machine has."""
    return f"{random.randint(100_000, 999_999)}.{os.getpid()}"


def _sleeping(marker: str) -> list[int]:
    """The ``sleep`` processes themselves (not a shell or a Python whose code mentions them)."""
    return [pid for pid, line in command_lines().items() if line.startswith(f"sleep {marker}")]


def _wait_for(condition: object, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def _python(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], start_new_session=True)


def test_a_sigkilled_process_takes_its_unsandboxed_commands_and_their_background_children_along(
    tmp_path: Path,
) -> None:
    marker = _marker()
    runner = _python(
        f"""
        import asyncio
        from pathlib import Path
        from agent_ls.workspace.processes import execute

        asyncio.run(execute(
            ["/bin/bash", "-c", "sleep {marker} & sleep {marker}"], cwd=Path({str(tmp_path)!r}),
            env={{"PATH": "/usr/bin:/bin"}}, sandbox=None, workspace_root=Path({str(tmp_path)!r}),
            timeout_s=600, head_chars=100, tail_chars=100,
        ))
        """
    )
    try:
        assert _wait_for(lambda: len(_sleeping(marker)) >= 2)
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait()
        assert _wait_for(lambda: not _sleeping(marker)), _sleeping(marker)
    finally:
        for pid in _sleeping(marker):
            os.kill(pid, signal.SIGKILL)


def test_a_released_group_is_never_killed_and_a_watched_one_is_when_the_process_ends() -> None:
    released, watched = _marker(), _marker()
    survivors = [
        subprocess.Popen(["sleep", released], start_new_session=True),
        subprocess.Popen(["sleep", watched], start_new_session=True),
    ]
    try:
        owner = _python(
            f"""
            from agent_ls.workspace.orphan_guard import ORPHAN_GUARD
            ORPHAN_GUARD.watch({survivors[0].pid})
            ORPHAN_GUARD.watch({survivors[1].pid})
            ORPHAN_GUARD.release({survivors[0].pid})
            """
        )
        assert owner.wait(timeout=30) == 0
        assert _wait_for(lambda: survivors[1].poll() is not None)
        assert survivors[1].returncode == -signal.SIGKILL
        time.sleep(0.3)
        assert survivors[0].poll() is None
    finally:
        for process in survivors:
            process.kill()
            process.wait()
