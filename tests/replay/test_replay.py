"""Replayed regression tests (issue 19, docs/replay-format.md "Replaying a session").

Each case of ``tests/replay/cases`` is a run recorded with ``agent-ls run --record`` (``record.py``): it is
replayed by a real ``agent-ls run --model replay:<session.jsonl>`` in a copy of its ``repo/``, which must
send the very requests that were recorded (ids, paths, times ignored) and end with the task's check
passing. A harness change that alters what the model is sent fails here with the first difference;
record again (``record.py NAME``) when the change is meant, and the fixture's diff shows it in review.

The cases come from the corpus (``../shared/corpus``: found-2026-11-30/01, /12, /F12, injection/inj02)
and the demo; every fault fixed from now on gets one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.replay.record import CASES, isolated_environment, run_case
from tests.support.model_server import FakeModelServer

NAMES = sorted(p.name for p in CASES.iterdir() if (p / "session.jsonl").is_file())
PLANTED_KEY = "sk-proj-PLANTEDreplayKEY0123456789abcdefXYZ"


def _copy(case: Path, temp: Path) -> Path:
    workspace = temp / "ws"
    shutil.copytree(case / "repo", workspace, symlinks=True)
    return workspace


def _check(case: Path, workspace: Path) -> subprocess.CompletedProcess[str]:
    spec = tomllib.loads((case / "task.toml").read_text(encoding="utf-8"))
    return subprocess.run(
        spec["check"], shell=True, cwd=workspace, capture_output=True, text=True, timeout=120
    )


def test_every_case_has_a_recording() -> None:
    cases = sorted(p.name for p in CASES.iterdir() if (p / "task.toml").is_file())
    assert cases and cases == NAMES, "record the missing ones: .venv/bin/python tests/replay/record.py NAME"


@pytest.mark.parametrize("name", NAMES)
def test_case_replays_with_the_recorded_requests(name: str, tmp_path: Path) -> None:
    case = CASES / name
    workspace = _copy(case, tmp_path)
    done = run_case(
        case, workspace, isolated_environment(tmp_path), f"replay:{case / 'session.jsonl'}", "--apply"
    )
    assert done.returncode == 0, done.stderr
    assert "differs from the recording" not in done.stderr
    checked = _check(case, workspace)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_eval_replays_the_recorded_sessions(tmp_path: Path) -> None:
    """``agent-ls eval --model replay`` answers a task with its session.jsonl (the cases have no
    solution.json: their scripts are named script.json, for record.py)."""
    report = tmp_path / "report.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_ls",
            "eval",
            str(CASES),
            "--model",
            "replay",
            "--min-pass",
            "1",
            "--json",
            str(report),
        ],
        env=isolated_environment(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    tasks = json.loads(report.read_text())["tasks"]
    assert sorted(task["name"] for task in tasks if task["passed"]) == NAMES


def _edited_fixture(tmp_path: Path, edit: str) -> Path:
    """The demo case's recording with its first exchange changed as the current harness would send it."""
    fixture = tmp_path / "edited.jsonl"
    lines = (CASES / "demo-mean-bug" / "session.jsonl").read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        record = json.loads(line)
        if record["kind"] == "exchange" and record["call"] == 1:
            if edit == "prompt":
                system = record["messages"][0]
                system["text"] = system["text"].replace("Read before you edit", "Read after you edit")
            else:
                record["tools"][0]["description"] += " Now with more words."
        out.append(json.dumps(record))
    fixture.write_text("\n".join(out) + "\n", encoding="utf-8")
    return fixture


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ("prompt", 'at message 1 (system) text: recorded …"'),
        ("tool", "at tool read_file's description: recorded …"),
    ],
)
def test_a_changed_request_fails_loudly_with_the_first_difference(
    tmp_path: Path, edit: str, said: str
) -> None:
    case = CASES / "demo-mean-bug"
    fixture = _edited_fixture(tmp_path, edit)
    workspace = _copy(case, tmp_path)
    done = run_case(case, workspace, isolated_environment(tmp_path), f"replay:{fixture}", "--apply")
    assert done.returncode == 1
    line = next(line for line in done.stderr.splitlines() if "differs from the recording" in line)
    assert f"replay session {fixture}: request 1 (run 1) differs from the recording {said}" in line
    if edit == "prompt":
        assert "Read after you edit" in line and "Read before you edit" in line
    assert (workspace / "stats.py").read_bytes() == (case / "repo" / "stats.py").read_bytes()


def test_a_run_recorded_against_an_http_model_replays_and_holds_no_secret(tmp_path: Path) -> None:
    """``--record`` against a real HTTP model (the fake server on 127.0.0.1) with a key in the environment
    and in a file the agent reads: the fixture holds neither, and replays to the same proposal."""
    case = CASES / "demo-mean-bug"
    script = json.loads((case / "script.json").read_text(encoding="utf-8"))
    script[0]["tool_calls"].append({"name": "read_file", "arguments": {"path": "secrets.txt"}})
    workspace = _copy(case, tmp_path)
    (workspace / "secrets.txt").write_text(f"token = {PLANTED_KEY}\n", encoding="utf-8")
    pristine = tmp_path / "pristine"
    shutil.copytree(workspace, pristine)
    env = isolated_environment(tmp_path) | {"OPENAI_API_KEY": PLANTED_KEY}
    fixture = tmp_path / "recorded" / "session.jsonl"
    with FakeModelServer(script) as server:
        env["AGENT_LS_BASE_URL"] = server.base_url
        done = run_case(case, workspace, env, "openai/test", "--record", str(fixture))
        assert done.returncode == 0, done.stderr
        assert server.requests and server.request_headers[0]["authorization"] == f"Bearer {PLANTED_KEY}"
    text = fixture.read_text(encoding="utf-8")
    assert PLANTED_KEY not in text and PLANTED_KEY[8:30] not in text
    assert '"kind":"exchange"' in text and "[redacted]" in text
    replayed = run_case(case, pristine, isolated_environment(tmp_path), f"replay:{fixture}")
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == done.stdout and "stats.py" in done.stdout


def test_a_plain_session_file_replays_from_its_history(tmp_path: Path) -> None:
    """Any stored session (no ``--record``) replays: its history's assistant messages answer, its
    messages are checked."""
    case = CASES / "mixed-eol-edit"
    env = isolated_environment(tmp_path)
    first = run_case(case, _copy(case, tmp_path / "a"), env, f"replay:{case / 'script.json'}")
    assert first.returncode == 0, first.stderr
    (stored,) = (tmp_path / "state" / "sessions").glob("*/*.jsonl")
    assert '"kind":"exchange"' not in stored.read_text(encoding="utf-8")
    again = run_case(case, _copy(case, tmp_path / "b"), env, f"replay:{stored}")
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    changed = _copy(case, tmp_path / "c")
    (changed / "notes.txt").write_bytes(b"alpha\r\nbeta\r\ngamma\nepsilon\r\n")
    differs = run_case(case, changed, env, f"replay:{stored}")
    assert differs.returncode == 1
    assert (
        "request 2 (run 1) differs from the recording at message 4 (tool, read_file) content"
        in differs.stderr
    )


def test_the_committed_recordings_hold_no_key_shaped_text() -> None:
    """Fixtures are committed: every string in them passes the session redactor unchanged."""
    from agent_ls.sessions.redaction import Redactor

    for name in NAMES:
        text = (CASES / name / "session.jsonl").read_text(encoding="utf-8")
        assert Redactor().text(text) == text, name


def test_a_recorded_compaction_and_follow_ups_replay_run_by_run(tmp_path: Path) -> None:
    """``--record`` over three runs of one session (a task, ``/compact``, a follow-up): the summary call
    is recorded too, and each run replays with ``--continue`` in a fresh copy."""
    case = CASES / "demo-mean-bug"
    runs = [
        (
            "Find the bug in mean",
            [{"tool_calls": [{"name": "read_file", "arguments": {"path": "stats.py"}}]}],
        ),
        ("/compact the bug", [{"content": "Summary: mean() in stats.py divides by len(values) - 1."}]),
        ("what was it?", [{"content": "mean() divides by len(values) - 1."}]),
    ]
    runs[0][1].append({"content": "mean() divides by len(values) - 1 instead of len(values)."})
    fixture = tmp_path / "three-runs.jsonl"
    recording = _copy(case, tmp_path / "recording")
    env = isolated_environment(tmp_path / "recording")
    for number, (task, steps) in enumerate(runs):
        script = tmp_path / f"run{number}.json"
        script.write_text(json.dumps(steps), encoding="utf-8")
        extra = ["--continue"] if number else []
        done = run_case(case, recording, env, f"replay:{script}", *extra, "--record", str(fixture), task=task)
        assert done.returncode == 0, done.stderr
    text = fixture.read_text(encoding="utf-8")
    assert text.count('"kind":"exchange"') == 4 and "You write handoff summaries" in text
    replaying = _copy(case, tmp_path / "replaying")
    env = isolated_environment(tmp_path / "replaying")
    for number, (task, _) in enumerate(runs):
        extra = ["--continue"] if number else []
        done = run_case(case, replaying, env, f"replay:{fixture}", *extra, task=task)
        assert done.returncode == 0, f"run {number + 1}: {done.stderr}"
    assert "mean() divides by len(values) - 1." in done.stderr


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("link", "a symbolic link"),
        ("folder", "not a regular file"),
        ("inside", "inside the workspace"),
    ],
)
def test_record_refuses_a_target_it_must_not_write_through(tmp_path: Path, target: str, said: str) -> None:
    case = CASES / "mixed-eol-edit"
    workspace = _copy(case, tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    chosen = {
        "link": tmp_path / "fix.jsonl",
        "folder": tmp_path / "folder.jsonl",
        "inside": workspace / "f.jsonl",
    }
    path = chosen[target]
    if target == "link":
        path.symlink_to(victim)
    elif target == "folder":
        path.mkdir()
    done = run_case(
        case,
        workspace,
        isolated_environment(tmp_path),
        f"replay:{case / 'script.json'}",
        "--record",
        str(path),
    )
    assert done.returncode == 2 and said in done.stderr
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert not (tmp_path / "state" / "sessions").exists(), "refused before the run"


def test_a_saved_recording_is_private_and_written_through_a_new_file(tmp_path: Path) -> None:
    """A planted ``.NAME.partial`` link is never followed: the copy goes to a new temporary file."""
    case = CASES / "mixed-eol-edit"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".fix.jsonl.partial").symlink_to(victim)
    done = run_case(
        case,
        _copy(case, tmp_path),
        isolated_environment(tmp_path),
        f"replay:{case / 'script.json'}",
        "--record",
        str(out / "fix.jsonl"),
    )
    assert done.returncode == 0, done.stderr
    assert victim.read_text(encoding="utf-8") == "precious\n"
    fixture = out / "fix.jsonl"
    assert not fixture.is_symlink() and (fixture.stat().st_mode & 0o777) == 0o600
    assert sorted(p.name for p in out.iterdir()) == [".fix.jsonl.partial", "fix.jsonl"]
