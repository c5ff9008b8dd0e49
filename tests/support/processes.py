"""Test helpers about processes and the sandbox: what runs on this machine, and whether bwrap works."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from agent_ls.core.ports import CommandResult
from agent_ls.workspace.sandbox import Sandbox, find_sandbox
from agent_ls.workspace.shell_runner import NO_SANDBOX_NOTE, ShellRunner
from tests.conftest import require_tool


def require_sandbox() -> Sandbox:
    """This machine's sandbox; like ``require_tool``, a missing one skips locally and fails under CI."""
    require_tool("bwrap")
    sandbox = find_sandbox()
    if sandbox is None:
        message = "bwrap is installed but cannot make a sandbox here (user namespaces disabled?)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return sandbox


def command_lines() -> dict[int, str]:
    """This machine's processes: pid to command line, arguments joined by spaces (as ``pgrep -af``)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except (OSError, UnicodeDecodeError):
                continue
    return found


def processes_with(marker: str) -> list[int]:
    """The pids of the processes whose command line contains ``marker`` (like ``pgrep -f``)."""
    return [pid for pid, line in command_lines().items() if marker in line]


async def run_quietly(runner: ShellRunner, command: str) -> CommandResult:
    """``runner.run(command, 30)`` without the one-time no-sandbox note, so sandboxed and unsandboxed
    runs read alike."""
    result = await runner.run(command, 30)
    return replace(result, output=result.output.removeprefix(f"{NO_SANDBOX_NOTE}\n"))
