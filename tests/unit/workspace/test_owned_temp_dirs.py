"""A shadow copy's directory is removed by a later session once its process is dead, and never while it lives
(even when its pid means nothing here), nor when it is not one of ours to judge."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from agent_ls.workspace.owned_temp_dirs import OWNER_LOCK, make_owned_dir, remove_dead_leftovers
from agent_ls.workspace.shadow import ShadowCopy

PREFIX = "agent-ls-shadow-"


def _owner(parent: Path) -> tuple[subprocess.Popen[str], Path]:
    """Another process that makes an owned directory in ``parent``, prints it, and lives on."""
    code = f"""
        import sys, time
        from pathlib import Path
        from agent_ls.workspace.owned_temp_dirs import make_owned_dir
        print(make_owned_dir({PREFIX!r}, Path({str(parent)!r})).path, flush=True)
        time.sleep(600)
    """
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def test_a_live_sessions_directory_stays_and_a_killed_ones_goes(tmp_path: Path) -> None:
    alive, alive_dir = _owner(tmp_path)
    dead, dead_dir = _owner(tmp_path)
    try:
        (dead_dir / "ws").mkdir()
        (dead_dir / "ws" / "a.txt").write_text("copied\n")
        assert remove_dead_leftovers(PREFIX, tmp_path) == []
        dead.send_signal(signal.SIGKILL)
        dead.wait()
        assert remove_dead_leftovers(PREFIX, tmp_path) == [dead_dir]
        assert not dead_dir.exists() and alive_dir.is_dir()
    finally:
        for process in (alive, dead):
            process.kill()
            process.wait()


def test_what_is_not_ours_to_judge_is_left(tmp_path: Path) -> None:
    legacy = tmp_path / f"{PREFIX}legacy"  # made before locks, or being made right now: no lock file
    legacy.mkdir()
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / OWNER_LOCK).parent.mkdir()
    (elsewhere / OWNER_LOCK).write_text("")
    (tmp_path / f"{PREFIX}link").symlink_to(elsewhere, target_is_directory=True)  # not a real directory
    (tmp_path / f"{PREFIX}file").write_text("")
    assert remove_dead_leftovers(PREFIX, tmp_path) == []
    assert legacy.is_dir() and (elsewhere / OWNER_LOCK).exists() and (tmp_path / f"{PREFIX}file").exists()


def test_a_new_copy_sweeps_first_and_close_removes_its_own(tmp_path: Path) -> None:
    dead, dead_dir = _owner(tmp_path)
    dead.send_signal(signal.SIGKILL)
    dead.wait()
    root = tmp_path / "ws"
    root.mkdir()
    shadow = ShadowCopy(root, temp_parent=tmp_path)
    home = shadow.scratch_home()  # the first use makes the copy's directory
    assert not dead_dir.exists()
    mine = home.parent
    assert mine.name.startswith(PREFIX) and (mine / OWNER_LOCK).exists()
    assert remove_dead_leftovers(PREFIX, tmp_path) == []  # this process holds it
    shadow.close()
    assert not mine.exists()


def test_the_lock_is_not_inherited_by_commands(tmp_path: Path) -> None:
    owned = make_owned_dir(PREFIX, tmp_path)
    # A command still running after we die must not keep the lock (close_fds=False: only CLOEXEC protects).
    child = subprocess.Popen(["sleep", "30"], close_fds=False)
    try:
        os.close(owned.lock_fd)  # as our death would
        owned.lock_fd = -1
        assert remove_dead_leftovers(PREFIX, tmp_path) == [owned.path]
    finally:
        child.kill()
        child.wait()
