"""Issue 12.16: the small things a new user met in the first hour, through the real ``agent-ls`` CLI."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

from tests.support import agent_cli


def _agent_ls(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return agent_cli.run(args, cwd=cwd, env=agent_cli.user_environment(**(env or {})), timeout=60)


def test_a_missing_api_key_is_said_up_front_naming_the_variable(tmp_path: Path) -> None:
    started = time.monotonic()
    done = _agent_ls("run", "hello", "--model", "openai/gpt-4.1", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    said = "no API key for openai/gpt-4.1: set OPENAI_API_KEY (or AGENT_LS_API_KEY) in the environment"
    assert said in done.stderr
    assert "retrying" not in done.stderr
    assert time.monotonic() - started < 30  # no retries against an unreachable server


def test_a_composed_name_edits_the_decomposed_file_and_a_miss_names_the_closest(tmp_path: Path) -> None:
    """Issue 12.3: list_files shows a name stored decomposed (NFD); the model writes it composed."""
    root = tmp_path / "ws"
    root.mkdir()
    stored = unicodedata.normalize("NFD", "café.py")
    (root / stored).write_bytes(b"x = 1\n")
    written = unicodedata.normalize("NFC", "café.py")
    steps = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": written}}]},
        {
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": written, "old_string": "x = 1", "new_string": "x = 2"},
                }
            ]
        },
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "cafe.py"}}]},
        {"content": "ok"},
    ]
    script = tmp_path / "s.json"
    script.write_text(json.dumps(steps))
    done = _agent_ls(
        "run", "x", "--model", f"replay:{script}", "--apply", "--workspace", str(root), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in root.iterdir()) == [stored]  # the same file, no second one
    assert (root / stored).read_bytes() == b"x = 2\n"
    assert f"file not found: 'cafe.py'; the closest existing entry is '{stored}'" in done.stderr


def _replay(tmp_path: Path, steps: list[dict[str, Any]]) -> str:
    return agent_cli.script(tmp_path / "script.json", steps)


ASKS = [{"tool_calls": [{"name": "bash", "arguments": {"command": "make lint"}}]}, {"content": "ok"}]


def test_without_a_terminal_nobody_is_said_to_have_answered(tmp_path: Path) -> None:
    done = _agent_ls(
        "run", "lint", "--model", _replay(tmp_path, ASKS), "--workspace", str(tmp_path), cwd=tmp_path
    )
    assert (
        "permission deny (fallback: no rule matches, no one to ask: denied (headless)): make lint"
        in done.stderr
    )
    assert "user answered" not in done.stderr
    assert "✗ bash: denied: make lint was not run (" in done.stderr  # what the model reads says so too


def test_an_answer_that_is_not_one_is_asked_again_and_never_reaches_the_model(tmp_path: Path) -> None:
    primary, secondary = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "agent_ls", "run", "lint", "--model", _replay(tmp_path, ASKS)],
        cwd=tmp_path,
        env=agent_cli.user_environment(),
        stdin=secondary,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.write(primary, b"rm -rf the tests please\nn\n")
    _, stderr = child.communicate(timeout=60)
    os.close(primary)
    os.close(secondary)
    assert "(not an answer: type y, s, a or n; 'n <why>' tells the model why)" in stderr
    assert "permission deny (fallback: no rule matches, user answered deny): make lint" in stderr
    assert "✗ bash: denied by user: make lint was not run." in stderr
    assert "The user said" not in stderr


def test_the_task_can_come_from_standard_input(tmp_path: Path) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
    task = "a task too long for a command line " * 20_000
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_ls",
            "run",
            "-",
            "--model",
            _replay(tmp_path, [{"content": "read it"}]),
        ],
        cwd=tmp_path,
        env={**base, "AGENT_LS_CONFIG_DIR": os.environ["AGENT_LS_CONFIG_DIR"]},
        input=task,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "run started with replay:" in done.stderr and ": a task too long for a command line" in done.stderr


def test_a_focus_file_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    done = _agent_ls("run", "x", "--model", _replay(tmp_path, ASKS), "--file", "nope.py", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, "agent-ls: --file nope.py does not exist\n")


def test_a_reader_that_goes_away_ends_the_output_quietly(tmp_path: Path) -> None:
    command = "; ".join(f"ls f{i}" for i in range(5000))
    child = subprocess.Popen(
        [sys.executable, "-m", "agent_ls", "policy", "check", "--json", "--", command],
        cwd=tmp_path,
        env=agent_cli.user_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.readline()
    child.stdout.close()  # as `| head -1` does
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=60) == 141
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr
