"""ShadowCopy and ShellRunner: commands see the agent's view, never touch the user's files or keys.

Every ShellRunner test runs twice: in the bubblewrap sandbox and unsandboxed (where the one-time
no-sandbox note is stripped; ``tests/unit/workspace/test_sandbox.py`` checks the note and the isolation).
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from agent_ls.core.ports import CommandResult
from agent_ls.workspace.child_env import ENV_FIXED, child_environment
from agent_ls.workspace.overlay import OpenBuffer, Overlay
from agent_ls.workspace.sandbox import Sandbox
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shell_runner import NO_SANDBOX_NOTE, ShellRunner
from tests.support.processes import command_lines, processes_with
from tests.unit.workspace.conftest import FakeBuffers, write

ENVIRON = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/someone",
    "LANG": "C.UTF-8",
    "OPENAI_API_KEY": "sk-test-not-real",
    "AGENT_LS_API_KEY": "al-test-not-real",
    "AGENT_LS_MODEL": "openai/x",
    "GITHUB_TOKEN": "gh-test-not-real",
    "DB_PASSWORD": "pw",
    "AWS_SECRET_ACCESS_KEY": "aws",
    "EDITOR": "vim",
}
SHELL_SET = {"PWD", "OLDPWD", "SHLVL", "_"}  # variables the shell itself sets


@pytest.fixture
def runner(shadow: ShadowCopy, overlay: Overlay, sandbox: Sandbox | None) -> ShellRunner:
    return ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox)


async def run(runner: ShellRunner, command: str, timeout_s: float = 30) -> CommandResult:
    """``runner.run`` without the no-sandbox note of an unsandboxed runner's first output."""
    result = await runner.run(command, timeout_s)
    return replace(result, output=result.output.removeprefix(f"{NO_SANDBOX_NOTE}\n"))


# -- ShadowCopy --------------------------------------------------------------------------------------


async def test_shadow_copies_lazily_and_skips_heavy_dirs_and_secrets(
    shadow: ShadowCopy, overlay: Overlay, root: Path
) -> None:
    write(
        root,
        {
            "src/a.py": "a\n",
            ".git/config": "[remote]\n",
            "node_modules/x/index.js": "",
            ".venv/bin/python": "",
            "src/__pycache__/a.pyc": b"\0",
            ".env": "K=1\n",
            ".env.example": "K=\n",
            "keys/server.pem": "-----BEGIN\n",
            ".github/ci.yml": "",
        },
    )
    (root / "link.py").symlink_to("src/a.py")
    os.mkfifo(root / "pipe")
    assert shadow.path is None
    copy = await shadow.sync(overlay)
    assert copy == shadow.path
    found = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if not p.is_dir())
    assert found == [".env.example", ".github/ci.yml", "link.py", "src/a.py"]
    assert (copy / "link.py").is_symlink() and os.readlink(copy / "link.py") == "src/a.py"


async def test_shadow_sync_writes_bytes_exactly_and_restores_what_it_wrote(
    shadow: ShadowCopy, overlay: Overlay, buffers: FakeBuffers, root: Path
) -> None:
    write(root, {"a.txt": "a\n", "b.txt": "b\n"})
    buffers.open[root / "b.txt"] = OpenBuffer("b\r\nunsaved\r", 3)
    overlay.propose("a.txt", "a\r\nagent\r\n")
    overlay.propose("new/c.txt", "c")
    copy = await shadow.sync(overlay)
    assert (copy / "a.txt").read_bytes() == b"a\r\nagent\r\n"
    assert (copy / "b.txt").read_bytes() == b"b\r\nunsaved\r"
    assert (copy / "new" / "c.txt").read_bytes() == b"c"
    (copy / "made-by-command.txt").write_text("kept")
    overlay.discard()
    buffers.open.clear()
    await shadow.sync(overlay)
    assert (copy / "a.txt").read_bytes() == b"a\n"
    assert (copy / "b.txt").read_bytes() == b"b\n"
    assert not (copy / "new" / "c.txt").exists()
    assert (copy / "made-by-command.txt").read_text() == "kept"
    assert (root / "a.txt").read_bytes() == b"a\n"


async def test_shadow_close_deletes_it(shadow: ShadowCopy, overlay: Overlay, root: Path) -> None:
    write(root, {"a.txt": "a\n"})
    copy = await shadow.sync(overlay)
    shadow.close()
    assert shadow.path is None and not copy.exists()
    shadow.close()


# -- ShellRunner -------------------------------------------------------------------------------------


async def test_command_runs_in_the_shadow_and_sees_the_pending_edit(
    runner: ShellRunner, overlay: Overlay, shadow: ShadowCopy, root: Path
) -> None:
    write(root, {"app.py": "print('disk')\n"})
    overlay.propose("app.py", "print('agent')\n")
    result = await run(runner, "pwd; python3 app.py; echo changed > app.py", 30)
    assert result == CommandResult(
        0, f"{shadow.path}\nagent\n[agent-ls: brought into the proposal: app.py]\n", False, ("app.py",)
    )
    assert (root / "app.py").read_text() == "print('disk')\n"
    assert overlay.proposal()[0].new_text == "changed\n"  # a command's change comes back


async def test_command_exit_code_and_merged_output(runner: ShellRunner) -> None:
    result = await run(runner, "echo out; echo err >&2; exit 3", 30)
    assert result == CommandResult(3, "out\nerr\n", False)


async def test_command_stdin_is_empty(runner: ShellRunner) -> None:
    assert await run(runner, "cat; echo done", 30) == CommandResult(0, "done\n", False)


async def test_environment_is_an_allowlist_without_keys(runner: ShellRunner) -> None:
    result = await run(runner, "env", 30)
    names = {line.split("=", 1)[0] for line in result.output.splitlines()} - SHELL_SET
    assert names == {"HOME", "LANG", "PATH", *ENV_FIXED}
    assert "sk-test-not-real" not in result.output and "al-test-not-real" not in result.output


def test_child_environment() -> None:
    env = child_environment({**ENVIRON, "SHELL": "/bin/zsh", "TERM_TOKEN": "t", "HOME_KEY": "k"})
    assert env == {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin",
        "HOME": "/home/someone",
        "LANG": "C.UTF-8",
        "SHELL": "/bin/zsh",
        **ENV_FIXED,
    }


def test_child_environment_keeps_locales_and_toolchains_never_keys() -> None:
    environ = {
        **ENVIRON,
        "LC_MESSAGES": "fr_FR.UTF-8",
        "LC_API_KEY": "sk-in-a-locale-name",
        "CARGO_HOME": "/opt/cargo",
        "AWS_PROFILE": "prod",
        "AWS_ACCESS_KEY_ID": "AKIA",
        "MY_PROVIDER": "sk-configured-key",
        "TERM": "xterm",
        "GIT_CREDENTIALS": "x",
    }
    env = child_environment(environ, venv=Path("/proj/.venv"), key_names=["my_provider", "TERM"])
    assert env == {
        "PATH": f"/proj/.venv/bin{os.pathsep}{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin",
        "VIRTUAL_ENV": "/proj/.venv",
        "HOME": "/home/someone",
        "LANG": "C.UTF-8",
        "LC_MESSAGES": "fr_FR.UTF-8",
        "CARGO_HOME": "/opt/cargo",
        **ENV_FIXED,
    }


def test_child_environment_fixes_git_against_repository_config() -> None:
    """A repository the agent wrote cannot make git run a program (found by an adversarial review)."""
    env = child_environment({**ENVIRON, "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.pager"})
    keys = {
        env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"] for i in range(int(env["GIT_CONFIG_COUNT"]))
    }
    assert keys == {
        "safe.bareRepository": "explicit",
        "core.fsmonitor": "false",
        "core.hooksPath": "/dev/null",
    }


async def test_git_does_not_discover_a_bare_repository_the_agent_wrote(
    runner: ShellRunner, overlay: Overlay
) -> None:
    overlay.propose("sub/HEAD", "ref: refs/heads/main\n")
    overlay.propose(
        "sub/config",
        '[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "echo FSMONITOR-RAN >&2; false"\n',
    )
    overlay.propose("sub/objects/.keep", "")
    overlay.propose("sub/refs/.keep", "")
    result = await run(runner, "cd sub && git status", 30)
    assert "FSMONITOR-RAN" not in result.output
    assert "safe.bareRepository" in result.output


def test_child_environment_without_path_uses_the_default() -> None:
    assert child_environment({})["PATH"] == f"{Path(sys.executable).parent}{os.pathsep}{os.defpath}"


async def test_venv_tools_are_on_path(runner: ShellRunner) -> None:
    result = await run(runner, "command -v rg", 30)
    assert result == CommandResult(0, f"{Path(sys.executable).parent / 'rg'}\n", False)


async def test_timeout_kills_the_process_group(runner: ShellRunner) -> None:
    result = await asyncio.wait_for(run(runner, "echo started; sleep 30 & sleep 30", 0.5), 20)
    assert result == CommandResult(None, "started\n", True)


async def test_cancellation_kills_the_command(runner: ShellRunner) -> None:
    marker = f"sleep 30.{uuid.uuid4().int % 10**9}"
    task = asyncio.create_task(runner.run(f"{marker} & exec {marker}", 60))
    for _ in range(200):  # until both sleeps run (bwrap's and bash's command lines hold the marker too)
        await asyncio.sleep(0.05)
        if list(command_lines().values()).count(f"{marker} ") == 2:
            break
    assert list(command_lines().values()).count(f"{marker} ") == 2
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(100):  # in the sandbox, the kernel tears the pid namespace down after bwrap died
        if not processes_with(marker):
            break
        await asyncio.sleep(0.05)
    assert processes_with(marker) == []


async def test_output_keeps_head_and_tail(
    shadow: ShadowCopy, overlay: Overlay, sandbox: Sandbox | None
) -> None:
    runner = ShellRunner(shadow, overlay, ENVIRON, head_chars=10, tail_chars=15, sandbox=sandbox)
    # The cuts fall between words: a word the cut goes through is left out whole (test_cut_redaction).
    result = await run(runner, "printf '0123456789 abcdefghij lmnopqrstuvwxy'", 30)
    text = "0123456789\n[... 11 characters omitted: line 1 of 1 ...]\n lmnopqrstuvwxy"
    assert result == CommandResult(0, text, False, full_output="0123456789 abcdefghij lmnopqrstuvwxy")


async def test_the_middle_note_counts_lines(runner: ShellRunner) -> None:
    result = await run(runner, "seq -w 1 5400", 30)  # 5 characters a line
    head = "".join(f"{n:04}\n" for n in range(1, 1_601))
    tail = "".join(f"{n:04}\n" for n in range(3_001, 5_401))
    note = "[... 7,000 characters omitted: lines 1,601–3,000 of 5,400 ...]"
    whole = "".join(f"{n:04}\n" for n in range(1, 5_401))
    assert result == CommandResult(0, f"{head}\n{note}\n{tail}", False, full_output=whole)


async def test_large_output_is_capped(runner: ShellRunner) -> None:
    result = await run(runner, "python3 -c \"print('é' * 1000000, end='')\"", 60)
    assert result.exit_code == 0
    assert result.output == "é" * 8000 + "\n[... 980,000 characters omitted: line 1 of 1 ...]\n" + "é" * 12000


async def test_invalid_utf8_output_is_replaced(runner: ShellRunner) -> None:
    assert await run(runner, "printf 'a\\377b'", 30) == CommandResult(0, "a\ufffdb", False)


async def test_command_sees_an_unsaved_buffer(runner: ShellRunner, buffers: FakeBuffers, root: Path) -> None:
    write(root, {"notes.txt": "saved\n"})
    buffers.open[root / "notes.txt"] = OpenBuffer("unsaved\r\n", 5)
    assert await run(runner, "od -c notes.txt | head -1", 30) == CommandResult(
        0, "0000000   u   n   s   a   v   e   d  \\r  \\n\n", False
    )


async def test_discard_restores_a_file_a_command_deleted(
    runner: ShellRunner, overlay: Overlay, root: Path
) -> None:
    write(root, {"a.txt": "disk\n"})
    overlay.propose("a.txt", "agent\n")
    deleted = "[agent-ls: deleted in the copy, not proposed (a proposal cannot delete files): a.txt]\n"
    assert await run(runner, "cat a.txt; rm a.txt", 30) == CommandResult(0, f"agent\n{deleted}", False)
    assert await run(runner, "cat a.txt", 30) == CommandResult(0, "agent\n", False)  # back
    overlay.discard()
    assert await run(runner, "cat a.txt", 30) == CommandResult(0, "disk\n", False)
