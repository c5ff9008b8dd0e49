"""Issue 12.16: the small things a new user met in the first hour, through the real ``agent-ls`` CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import unicodedata
from pathlib import Path


def _agent_ls(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_", "ANTHROPIC_"))}
    return subprocess.run(
        [sys.executable, "-m", "agent_ls", *args],
        cwd=cwd,
        env={**base, "AGENT_LS_CONFIG_DIR": os.environ["AGENT_LS_CONFIG_DIR"], **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


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
