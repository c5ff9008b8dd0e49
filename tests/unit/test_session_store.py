"""The session store (docs/sessions.md): a torn last line, redaction, repair of an unfinished run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_ls.core.messages import AssistantMessage, SystemMessage, ToolCall, ToolResultMessage, UserMessage
from agent_ls.core.proposal import FileChange
from agent_ls.sessions.records import change_json, message_json
from agent_ls.sessions.redaction import Redactor
from agent_ls.sessions.saved import INTERRUPTED, replay, shorten
from agent_ls.sessions.store import (
    FORMAT_VERSION,
    SessionFormatError,
    SessionNotFound,
    SessionStore,
    workspace_folder,
)

KEY = "sk-test-abcdefghijklmnopqrstuvwxyz0123"


def _store(tmp_path: Path, *secrets: str) -> SessionStore:
    return SessionStore(tmp_path / "state", Redactor(secrets))


def _write_run(store: SessionStore, root: Path) -> Path:
    log = store.create(root, "abc123")
    log.append("run_start", {"run": 1, "task": "Fix the mean in stats.py please", "model": "m"})
    for message in (
        SystemMessage("sys"),
        UserMessage("Fix the mean"),
        AssistantMessage("", (ToolCall("c1", "read_file", "{}"), ToolCall("c2", "grep", "{}"))),
        ToolResultMessage("c1", "read_file", "text"),
    ):
        log.append("message", {"message": message_json(message)})
    change = FileChange("a.py", False, "old\n", None, "new\n")
    log.append("proposal", {"changes": [change_json(change)], "removed": []})
    log.close()
    return log.path


def test_header_folder_and_listing(tmp_path: Path) -> None:
    store, root = _store(tmp_path), tmp_path / "my app"
    root.mkdir()
    path = _write_run(store, root)
    assert path.parent.name == workspace_folder(root)
    assert path.parent.name.startswith("my_app-")
    header = json.loads(path.read_text().splitlines()[0])
    assert header["kind"] == "session" and header["format"] == FORMAT_VERSION
    assert header["sessionId"] == "abc123" and header["workspace"] == str(root)
    assert store.session_ids(root) == ["abc123"]
    with pytest.raises(SessionNotFound):
        store.path(root, "../evil")


def test_unfinished_run_is_repaired(tmp_path: Path) -> None:
    store, root = _store(tmp_path), tmp_path
    _write_run(store, root)
    saved = replay(store.read(root, "abc123"))
    assert saved.status == "interrupted"
    assert saved.runs == 1 and saved.title == "Fix the mean in stats.py please"
    last = saved.messages[-1]
    assert isinstance(last, ToolResultMessage) and last.call_id == "c2"
    assert last.content == INTERRUPTED and last.is_error
    assert saved.repairs == [last]
    assert sorted(saved.proposal) == ["a.py"] and saved.proposal["a.py"].new_text == "new\n"


def test_torn_last_line_is_ignored(tmp_path: Path) -> None:
    store, root = _store(tmp_path), tmp_path
    path = _write_run(store, root)
    with path.open("ab") as file:  # a write cut short by a kill: no newline, half a JSON object
        file.write(b'{"kind":"run_end","status":"do')
    stored = store.read(root, "abc123")
    assert stored.torn
    saved = replay(stored)
    assert saved.status == "interrupted" and saved.torn
    # The next line appended after a torn one starts on its own line and is read.
    log = store.reopen(root, "abc123")
    log.append("run_end", {"run": 1, "status": "done", "reason": "", "answer": "", "usage": {}})
    log.close()
    assert replay(store.read(root, "abc123")).status == "done"


def test_secrets_are_redacted_before_writing(tmp_path: Path) -> None:
    secret = "hunter2-very-long-password"
    store, root = _store(tmp_path, secret), tmp_path
    log = store.create(root, "s1")
    log.append("message", {"message": message_json(UserMessage(f"key {KEY} and {secret}"))})
    log.append("message", {"message": message_json(UserMessage("Bearer abcdefghijklmnopqrstuvwxyz123"))})
    log.close()
    text = log.path.read_text()
    assert KEY not in text and secret not in text and "abcdefghijklmnopqrstuvwxyz123" not in text
    assert text.count("[redacted]") == 3


def test_redactor_from_environ_takes_key_variables() -> None:
    redactor = Redactor.from_environ({"MY_SERVICE_TOKEN": "tok-1234567890", "HOME": "/home/someone"})
    assert redactor.text("a tok-1234567890 at /home/someone") == "a [redacted] at /home/someone"


def test_newer_format_is_refused(tmp_path: Path) -> None:
    store, root = _store(tmp_path), tmp_path
    path = store.path(root, "new1")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"kind": "session", "format": FORMAT_VERSION + 1}) + "\n")
    with pytest.raises(SessionFormatError):
        store.read(root, "new1")


def test_unknown_kinds_are_skipped_and_title_is_short() -> None:
    assert shorten("word " * 30).endswith("…") and len(shorten("word " * 30)) <= 60
    assert shorten("first line\nsecond") == "first line"


def test_a_session_that_records_nothing_leaves_no_file(tmp_path: Path) -> None:
    """The header is written with the first event: a ``/context`` question is not a stored session."""
    store, root = _store(tmp_path), tmp_path / "app"
    root.mkdir()
    log = store.create(root, "quiet1")
    log.close()
    assert not log.path.exists() and store.session_ids(root) == []
    log = store.create(root, "s2")
    log.append("run_start", {"run": 1, "task": "t", "model": "m"})
    log.close()
    kinds = [json.loads(line)["kind"] for line in log.path.read_text().splitlines()]
    assert kinds == ["session", "run_start"] and store.session_ids(root) == ["s2"]
