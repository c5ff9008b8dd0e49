"""The state dir, ``sessions/`` and each workspace's folder are created 0700, with any missing parent;
folders that exist keep their mode (docs/sessions.md "Where"; issue 15, finding F12)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agent_ls.sessions.redaction import Redactor
from agent_ls.sessions.run_lock import RunLock
from agent_ls.sessions.store import SessionStore
from agent_ls.workspace.private_dirs import make_private


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def usual_umask() -> object:
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_every_folder_a_session_file_creates_is_private(tmp_path: Path) -> None:
    state = tmp_path / "home" / "state" / "agent-ls"
    store = SessionStore(state, Redactor())
    log = store.create(tmp_path / "proj", "s1")
    assert log.append("message", {"text": "hi"})
    log.close()
    created = [state.parent, state, state / "sessions", store.folder(tmp_path / "proj")]
    assert [oct(mode(folder)) for folder in created] == ["0o700"] * 4


def test_the_run_lock_creates_private_folders_too(tmp_path: Path) -> None:
    lock = RunLock(tmp_path / "state" / "sessions" / "ws" / "s1.jsonl")
    lock.acquire()
    lock.release()
    assert {mode(tmp_path / "state"), mode(tmp_path / "state" / "sessions")} == {0o700}


def test_existing_folders_keep_their_mode_and_a_file_in_the_way_is_an_error(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    make_private(shared / "sessions" / "ws")
    assert (mode(shared), mode(shared / "sessions"), mode(shared / "sessions" / "ws")) == (
        0o755,
        0o700,
        0o700,
    )
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError):
        make_private(tmp_path / "file" / "sub")
