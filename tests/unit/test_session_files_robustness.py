"""The session store against files it did not write whole (new-user trial F2/F4/F5/F12): every line that
is not a JSON object is skipped, one file never hides another, a held run lock reads as ``running``, a
run that recorded nothing leaves no file, and every line written is valid UTF-8."""

from __future__ import annotations

import json
from pathlib import Path

from agent_ls.sessions.continuation import summaries
from agent_ls.sessions.redaction import Redactor
from agent_ls.sessions.run_lock import RunLock, is_running
from agent_ls.sessions.store import SessionStore, json_line, line_record

DEEP = "[" * 100_000 + "]" * 100_000


def _store(tmp_path: Path) -> tuple[SessionStore, Path]:
    root = tmp_path / "proj"
    root.mkdir()
    return SessionStore(tmp_path / "state", Redactor(())), root


def _session(store: SessionStore, root: Path, session_id: str, *lines: str) -> Path:
    log = store.create(root, session_id)
    log.append("run_start", {"run": 1, "task": f"task of {session_id}", "model": "m"})
    log.append("run_end", {"run": 1, "status": "done", "reason": "", "answer": "", "usage": {}})
    log.close()
    with log.path.open("a", encoding="utf-8") as file:
        file.writelines(line + "\n" for line in lines)
    return log.path


def test_a_line_nested_too_deeply_is_not_a_record() -> None:
    assert line_record(DEEP.encode()) is None
    assert line_record(('{"kind":"message","message":' + DEEP + "}").encode()) is None
    assert line_record(b'{"kind": 3}') is None and line_record(b"[1]") is None
    assert line_record(b'{"kind":"x","a":1}') == {"kind": "x", "a": 1}


def test_one_bad_file_never_hides_the_others(tmp_path: Path) -> None:
    store, root = _store(tmp_path)
    _session(store, root, "good")
    _session(store, root, "deep", '{"kind":"message","at":"2099-01-01T00:00:00.000Z","message":' + DEEP + "}")
    future = _session(store, root, "future")
    header, *rest = future.read_text().splitlines()
    future.write_text("\n".join([json.dumps(json.loads(header) | {"format": 99}), *rest]) + "\n")
    (store.folder(root) / "junk.jsonl").write_text(DEEP + "\n")
    notes: list[str] = []
    listed = summaries(store, [root], notes=notes)
    assert sorted(s["sessionId"] for s in listed) == ["deep", "good"]
    assert sorted(note.split(" left out")[0] for note in notes) == ["session future", "session junk"]
    assert any("format 99" in note for note in notes)


def test_a_held_run_lock_lists_the_session_running(tmp_path: Path) -> None:
    store, root = _store(tmp_path)
    path = _session(store, root, "busy")
    assert not is_running(path)  # never locked: no lock file
    with RunLock(path):
        assert is_running(path)
        (listed,) = summaries(store, [root])
        assert listed["status"] == "running"
    assert not is_running(path)  # released: the file is emptied
    (listed,) = summaries(store, [root])
    assert listed["status"] == "done"


def test_a_held_line_is_written_only_with_the_next_one(tmp_path: Path) -> None:
    store, root = _store(tmp_path)
    log = store.create(root, "quiet")
    assert log.is_new
    log.hold("run_start", {"run": 1})
    assert log.drop_held() and not log.drop_held()
    log.close()
    assert not log.path.exists()  # nothing recorded: no file
    log = store.create(root, "busy")
    log.hold("run_start", {"run": 1})
    log.append("message", {"message": {}})
    log.close()
    kinds = [json.loads(line)["kind"] for line in log.path.read_text().splitlines()]
    assert kinds == ["session", "run_start", "message"]


def test_lone_surrogates_are_written_as_json_escapes(tmp_path: Path) -> None:
    text = "bad \udcff\udcfe bytes, é kept"
    line = json_line({"task": text})
    line.encode("utf-8")  # strict
    assert "é" in line and "\\udcff" in line
    assert json.loads(line) == {"task": text}
    store, root = _store(tmp_path)
    log = store.create(root, "utf8")
    log.append("run_start", {"run": 1, "task": text, "model": "m"})
    log.close()
    data = log.path.read_bytes().decode("utf-8")
    assert json.loads(data.splitlines()[1])["task"] == text
