"""Running ``agent-ls`` as a user does, for the tests of applies, signals and kills: real processes, a
replay model, an empty user config, and a temporary directory of the test's own (``TMPDIR``), so the
shadow copies a run makes can be seen and no other session's are touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any


def script(path: Path, steps: list[dict[str, Any]]) -> str:
    """Write a replay script (docs/replay-format.md) at ``path``; returns the ``--model`` value."""
    path.write_text(json.dumps(steps), encoding="utf-8")
    return f"replay:{path}"


def environment(temp: Path, config: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment of a run: no ``AGENT_LS_*`` or provider keys from ours, ``TMPDIR`` on ``temp``,
    and ``AGENT_LS_CONFIG_DIR`` on ``config`` (the session's empty one when None)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
    env["AGENT_LS_CONFIG_DIR"] = str(config) if config else os.environ["AGENT_LS_CONFIG_DIR"]
    env["AGENT_LS_STATE_DIR"] = os.environ["AGENT_LS_STATE_DIR"]  # tests/conftest.py's
    env["TMPDIR"] = str(temp)
    return env | extra


def start(
    args: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    stdout: IO[bytes] | int = subprocess.DEVNULL,
    preexec_fn: Callable[[], Any] | None = None,
) -> subprocess.Popen[str]:
    """Start ``agent-ls ARGS``; its stderr is a text pipe to read the transcript from."""
    return subprocess.Popen(
        [sys.executable, "-m", "agent_ls", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec_fn,
    )


def wait_for_line(process: subprocess.Popen[str], needle: str, timeout_s: float = 60) -> list[str]:
    """Read ``process``'s stderr up to the first line holding ``needle``; returns the lines read.

    Raises:
        AssertionError: the process ended, or ``timeout_s`` passed, first.
    """
    assert process.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            raise AssertionError(f"agent-ls ended before {needle!r}:\n{''.join(lines)}")
        lines.append(line)
        if needle in line:
            return lines
    raise AssertionError(f"no {needle!r} within {timeout_s} s:\n{''.join(lines)}")


def shadow_dirs(temp: Path) -> list[str]:
    """The names of the shadow copies in ``temp``."""
    return sorted(p.name for p in temp.glob("agent-ls-shadow-*"))


def tree(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` (relative path to bytes): the whole state a test compares."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def user_environment(config: Path | None = None, **extra: str) -> dict[str, str]:
    """This process's environment without ``AGENT_LS_*`` or provider key variables, with
    ``AGENT_LS_CONFIG_DIR`` on ``config`` (the session's empty one when None), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_", "ANTHROPIC_"))}
    env["AGENT_LS_CONFIG_DIR"] = str(config) if config else os.environ["AGENT_LS_CONFIG_DIR"]
    env["AGENT_LS_STATE_DIR"] = os.environ["AGENT_LS_STATE_DIR"]  # tests/conftest.py's
    return env | extra


def run(
    args: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``agent-ls ARGS`` to its end, as a user would from ``cwd``: stdin closed (or ``input``),
    stdout and stderr captured as text; ``env`` defaults to ``user_environment()``."""
    return subprocess.run(
        [sys.executable, "-m", "agent_ls", *args],
        cwd=cwd,
        env=env if env is not None else user_environment(),
        stdin=subprocess.DEVNULL if input is None else None,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
