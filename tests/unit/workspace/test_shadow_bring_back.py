"""Files a command changes in the shadow copy come back into the proposal when they are reviewable: so a
formatter's output is part of the diff, while caches, ignored files, binaries, huge files and secrets
never are. Every test runs sandboxed and unsandboxed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from agent_ls.core.ports import CommandResult
from agent_ls.core.proposal import FileChange
from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.sandbox import Sandbox
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shell_runner import NO_SANDBOX_NOTE, ShellRunner
from tests.support.processes import command_lines, processes_with, require_sandbox
from tests.unit.workspace.conftest import write

ENVIRON = {"PATH": os.environ.get("PATH", os.defpath), "HOME": "/nonexistent-home"}
PY = sys.executable


@pytest.fixture
def runner(shadow: ShadowCopy, overlay: Overlay, sandbox: Sandbox | None) -> ShellRunner:
    return ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox)


async def run(runner: ShellRunner, command: str, timeout_s: float = 30) -> CommandResult:
    result = await runner.run(command, timeout_s)
    return replace(result, output=result.output.removeprefix(f"{NO_SANDBOX_NOTE}\n"))


def real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def texts(overlay: Overlay) -> dict[str, str]:
    return {change.path: change.new_text for change in overlay.proposal()}


async def test_a_formatters_rewrite_and_a_new_file_enter_the_proposal(
    runner: ShellRunner, overlay: Overlay, root: Path
) -> None:
    write(root, {"app.py": "x=1\r\ny=2\r\n", "notes.md": "keep\n"})
    result = await run(
        runner, f"sed -i 's/=/ = /' app.py && {PY} -c \"open('new.py', 'w').write('z = 3\\n')\""
    )
    assert result == CommandResult(
        0, "[agent-ls: brought into the proposal: app.py, new.py]\n", False, ("app.py", "new.py")
    )
    assert overlay.proposal() == [
        FileChange("app.py", False, "x=1\r\ny=2\r\n", None, "x = 1\r\ny = 2\r\n"),
        FileChange("new.py", True, "", None, "z = 3\n"),
    ]
    assert (root / "app.py").read_bytes() == b"x=1\r\ny=2\r\n"  # the user's file is untouched
    assert not (root / "new.py").exists()


async def test_a_change_to_a_pending_file_updates_the_proposal(
    runner: ShellRunner, overlay: Overlay, root: Path
) -> None:
    write(root, {"app.py": "disk\n"})
    overlay.propose("app.py", "agent\n")
    await run(runner, "echo formatted >> app.py")
    assert texts(overlay) == {"app.py": "agent\nformatted\n"}


async def test_caches_ignored_files_and_touches_stay_out(
    runner: ShellRunner, overlay: Overlay, shadow: ShadowCopy, root: Path
) -> None:
    write(
        root, {".gitignore": "*.log\nout/\n", "mod.py": "X = 1\n", "test_mod.py": "def test_x():\n    pass\n"}
    )
    result = await run(
        runner,
        f"{PY} -c \"import py_compile; py_compile.compile('mod.py')\" && "
        "mkdir -p __pycache__ out && echo note > __pycache__/note.txt && echo log > run.log && "
        f"echo built > out/app.txt && touch mod.py && {PY} -m pytest -q test_mod.py > /dev/null 2>&1",
    )
    assert result == CommandResult(0, "", False)
    assert overlay.proposal() == []
    copy = shadow.path
    assert copy is not None  # the command really made them, in the copy
    assert any(p.suffix == ".pyc" for p in (copy / "__pycache__").iterdir())
    assert (
        (copy / ".pytest_cache").is_dir()
        and (copy / "run.log").is_file()
        and (copy / "out/app.txt").is_file()
    )


async def test_binary_huge_and_secret_files_are_reported_not_proposed(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: Sandbox | None
) -> None:
    write(root, {"logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "big.txt": "small\n"})
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox, max_file_bytes=100)
    result = await run(
        runner,
        "printf '\\377\\376' > logo.png && head -c 200 /dev/zero | tr '\\0' x > big.txt && echo K=1 > .env",
    )
    assert result == CommandResult(
        0,
        "[agent-ls: not brought into the proposal: .env (refused by the path rules), "
        "big.txt (over 100 bytes, or not a regular file), logo.png (binary, or not text)]\n",
        False,
    )
    assert overlay.proposal() == []
    # What cannot be reviewed is undone before the next command; a file only the command made stays.
    assert await run(runner, "od -c logo.png | head -1; cat big.txt; cat .env") == CommandResult(
        0,
        "0000000 211   P   N   G  \\r  \\n 032  \\n  \\0  \\0  \\0  \\r   I   H   D   R\nsmall\nK=1\n",
        False,
    )


async def test_a_deleted_file_is_reported_and_comes_back(
    runner: ShellRunner, overlay: Overlay, root: Path
) -> None:
    write(root, {"a.txt": "a\n", "b.txt": "b\n"})
    assert await run(runner, "rm a.txt b.txt") == CommandResult(
        0,
        "[agent-ls: deleted in the copy, not proposed (a proposal cannot delete files): a.txt, b.txt]\n",
        False,
    )
    assert overlay.proposal() == []
    assert await run(runner, "cat a.txt b.txt") == CommandResult(0, "a\nb\n", False)


async def test_a_rewrite_to_the_same_text_changes_nothing(
    runner: ShellRunner, overlay: Overlay, root: Path
) -> None:
    write(root, {"a.txt": "same\n"})
    assert await run(runner, "printf 'same\\n' > a.txt.tmp && mv a.txt.tmp a.txt") == CommandResult(
        0, "", False
    )
    assert overlay.proposal() == []


async def test_after_a_timeout_changes_are_undone_not_proposed(
    runner: ShellRunner, overlay: Overlay, root: Path
) -> None:
    write(root, {"a.txt": "a\n"})
    result = await run(runner, "echo half > a.txt; echo new > new.txt; sleep 30", timeout_s=1)
    assert result == CommandResult(
        None,
        "[agent-ls: the command timed out; its file changes were undone, not proposed: a.txt, new.txt]\n",
        True,
    )
    assert overlay.proposal() == []
    assert await run(runner, "cat a.txt") == CommandResult(0, "a\n", False)


async def test_after_a_cancellation_changes_are_undone_at_the_next_command(
    runner: ShellRunner, overlay: Overlay, root: Path
) -> None:
    write(root, {"a.txt": "a\n"})
    marker = "sleep 30.456"
    task = asyncio.create_task(runner.run(f"echo half > a.txt; {marker}", 60))
    for _ in range(200):
        await asyncio.sleep(0.05)
        if any(line.startswith(f"{marker} ") for line in command_lines().values()):
            break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert overlay.proposal() == []
    assert await run(runner, "cat a.txt") == CommandResult(0, "a\n", False)
    for _ in range(100):
        if not processes_with(marker):
            break
        await asyncio.sleep(0.05)
    assert processes_with(marker) == []


async def test_workspace_mode_runs_in_the_real_tree(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: Sandbox | None
) -> None:
    write(root, {"a.txt": "disk\n"})
    overlay.propose("a.txt", "agent\n")
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox, mode="workspace")
    result = await run(runner, "pwd; cat a.txt; echo made > made.txt")
    assert result == CommandResult(0, f"{real(root)}\ndisk\n", False)
    assert (root / "made.txt").read_text() == "made\n"
    assert texts(overlay) == {"a.txt": "agent\n"}  # nothing is brought back: the change is on disk


async def test_workspace_mode_masks_secrets_in_the_sandbox(
    shadow: ShadowCopy, overlay: Overlay, root: Path
) -> None:
    write(root, {".env": "KEY=hunter2\n", "config/.env.prod": "KEY=prod\n", "app.py": ""})
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=require_sandbox(), mode="workspace")
    result = await run(runner, "cat .env config/.env.prod; echo ran")
    assert result.output == (
        "cat: .env: Permission denied\ncat: config/.env.prod: Permission denied\nran\n"
    )  # more in test_shadow_secrets.py


async def test_a_path_whose_edit_is_denied_stays_out(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: Sandbox | None
) -> None:
    write(root, {"src/a.py": "a\n", "migrations/0001.py": "m\n"})
    runner = ShellRunner(
        shadow, overlay, ENVIRON, sandbox=sandbox, may_propose=lambda rel: not rel.startswith("migrations/")
    )
    result = await run(runner, "echo '# formatted' | tee -a src/a.py migrations/0001.py > /dev/null")
    assert result.output == (
        "[agent-ls: brought into the proposal: src/a.py]\n"
        "[agent-ls: not brought into the proposal: migrations/0001.py (refused by the policy)]\n"
    )
    assert texts(overlay) == {"src/a.py": "a\n# formatted\n"}


async def test_links_a_command_plants_are_never_read_back(
    runner: ShellRunner, overlay: Overlay, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    write(outside, {"id_rsa": "PRIVATE KEY\n", "dir/notes.txt": "outside notes\n"})
    write(root, {"app.py": "app\n"})
    result = await run(runner, f"ln -sf {outside / 'id_rsa'} app.py && ln -s {outside / 'dir'} dir")
    assert (
        result.output
        == "[agent-ls: deleted in the copy, not proposed (a proposal cannot delete files): app.py]\n"
    )
    assert overlay.proposal() == []
    assert await run(runner, "cat app.py") == CommandResult(0, "app\n", False)  # restored


async def test_a_commands_rewrite_of_a_file_the_user_saved_meanwhile_stays_out(
    runner: ShellRunner, overlay: Overlay, root: Path
) -> None:
    """The command's output rests on the text the copy held; proposing it would undo the user's save."""
    write(root, {"app.py": "x = 1\n", "other.py": "y = 1\n"})
    running = asyncio.create_task(run(runner, "sleep 1; sed -i 's/1/2/' app.py other.py"))
    await asyncio.sleep(0.5)
    write(root, {"app.py": "x = 1  # saved by the user while the command ran\n"})
    result = await running
    assert result.output == (
        "[agent-ls: brought into the proposal: other.py]\n"
        "[agent-ls: not brought into the proposal: app.py (the file changed in the workspace while the "
        "command ran; run it again)]\n"
    )
    assert texts(overlay) == {"other.py": "y = 2\n"}
