"""Issue 12.16: the small things a new user met in the first hour, through the real ``agent-ls`` CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import time
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
