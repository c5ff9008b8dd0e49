"""``sessions.run_lock``: one run per session, refused at once, freed with its holder."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.sessions.run_lock import RunLock, SessionBusy


def test_a_second_run_is_refused_until_the_first_releases(tmp_path: Path) -> None:
    session_file = tmp_path / "sessions" / "ws" / "abc123def456.jsonl"
    first, second = RunLock(session_file), RunLock(session_file)
    first.acquire()
    with pytest.raises(SessionBusy, match="session abc123def456 is running a task in this process"):
        second.acquire()
    first.release()
    first.release()  # idempotent
    with second:
        assert second.path.read_text().strip().isdigit()  # the holder's pid, for the message
    assert second.path.read_text() == ""


def test_an_unwritable_state_folder_does_not_stop_the_run(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    lock = RunLock(blocker / "sessions" / "abc.jsonl")  # its folder cannot be made
    lock.acquire()
    lock.release()
