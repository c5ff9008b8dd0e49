"""The shadow copy is made incrementally: heavy ignored trees are linked (read-only in the sandbox), build
outputs and caches left out, and each sync copies only what changed on disk or in the overlay.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agent_ls.core.ports import CommandResult
from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.sandbox import Sandbox
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shell_runner import ShellRunner
from tests.support.processes import require_sandbox
from tests.support.processes import run_quietly as run
from tests.unit.workspace.conftest import FakeBuffers, write

ENVIRON = {"PATH": os.environ.get("PATH", os.defpath), "HOME": "/nonexistent-home"}


def real_path(path: Path) -> Path:
    return Path(os.path.realpath(path))


def entries(copy: Path) -> dict[str, str]:
    """Every entry of the copy: path to ``dir``, ``file`` or ``-> target`` (links not followed)."""
    found = {}
    for directory, dirs, files in os.walk(copy):
        for name in [*dirs, *files]:
            path = Path(directory) / name
            rel = path.relative_to(copy).as_posix()
            found[rel] = (
                f"-> {os.readlink(path)}" if path.is_symlink() else "dir" if path.is_dir() else "file"
            )
    return found


def workspace_tree(root: Path) -> None:
    write(
        root,
        {
            ".gitignore": "data/\n/build/\n*.log\ndist/\n",
            "src/app.py": "print('app')\n",
            "node_modules/pkg/index.js": "module.exports = 1\n",  # not gitignored: linked all the same
            ".venv/bin/tool": "#!/bin/sh\necho venv tool\n",
            "env/pyvenv.cfg": "home = /usr/bin\n",  # a virtual environment by another name: linked
            "src/venv/__init__.py": "",  # a package named venv: copied
            "data/big.csv": "a,b\n",  # gitignored: linked
            "build/out.o": "obj\n",  # gitignored build output: left out
            "tools/build/make.sh": "",  # a tracked folder named build: copied
            "run.log": "log\n",  # a gitignored file: copied
            "src/__pycache__/app.cpython-311.pyc": b"\0",
            ".pytest_cache/README.md": "cache\n",
            ".env": "SECRET=1\n",
        },
    )
    (root / ".venv/bin/tool").chmod(0o755)
    (root / "build").mkdir(exist_ok=True)
    (root / "tools/build").mkdir(parents=True, exist_ok=True)


async def test_heavy_trees_are_linked_outputs_and_caches_left_out(
    shadow: ShadowCopy, overlay: Overlay, root: Path
) -> None:
    workspace_tree(root)
    copy = await shadow.sync(overlay)
    real = real_path(root)
    assert entries(copy) == {
        ".gitignore": "file",
        ".venv": f"-> {real / '.venv'}",
        "data": f"-> {real / 'data'}",
        "env": f"-> {real / 'env'}",
        "node_modules": f"-> {real / 'node_modules'}",
        "run.log": "file",
        "src": "dir",
        "src/app.py": "file",
        "src/venv": "dir",
        "src/venv/__init__.py": "file",
        "tools": "dir",
        "tools/build": "dir",
        "tools/build/make.sh": "file",
    }
    assert shadow.linked == (real / ".venv", real / "data", real / "env", real / "node_modules")


async def test_linked_trees_are_readable_and_read_only_in_the_sandbox(
    shadow: ShadowCopy, overlay: Overlay, root: Path
) -> None:
    workspace_tree(root)
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=require_sandbox())
    result = await run(
        runner, "cat node_modules/pkg/index.js data/big.csv; .venv/bin/tool; echo x >> data/big.csv"
    )
    assert result.output == (
        "module.exports = 1\na,b\nvenv tool\n/bin/bash: line 1: data/big.csv: Read-only file system\n"
    )
    assert (root / "data/big.csv").read_text() == "a,b\n"


async def test_a_configured_venv_runs_first_on_path(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: Sandbox | None
) -> None:
    workspace_tree(root)
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox, venv=root / ".venv")
    result = await run(runner, 'tool; echo "$VIRTUAL_ENV"')
    assert result == CommandResult(0, f"venv tool\n{real_path(root / '.venv')}\n", False)


async def test_only_changed_files_are_copied_again(shadow: ShadowCopy, overlay: Overlay, root: Path) -> None:
    write(root, {"a.txt": "a\n", "b.txt": "b\n", "old/c.txt": "c\n"})
    copy = await shadow.sync(overlay)
    inode = {name: os.lstat(copy / name).st_ino for name in ("a.txt", "b.txt")}
    write(root, {"b.txt": "b changed\n", "new/d.txt": "d\n"})
    (root / "old/c.txt").unlink()
    (root / "old").rmdir()
    await shadow.sync(overlay)
    assert os.lstat(copy / "a.txt").st_ino == inode["a.txt"]  # untouched: not copied again
    assert (copy / "b.txt").read_text() == "b changed\n"
    assert (copy / "new/d.txt").read_text() == "d\n"
    assert not (copy / "old").exists()


async def test_an_unchanged_pending_edit_is_not_written_again(
    shadow: ShadowCopy, overlay: Overlay, buffers: FakeBuffers, root: Path
) -> None:
    write(root, {"a.txt": "a\n"})
    overlay.propose("a.txt", "agent\n")
    copy = await shadow.sync(overlay)
    before = os.lstat(copy / "a.txt")
    await shadow.sync(overlay)
    after = os.lstat(copy / "a.txt")
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
    overlay.propose("a.txt", "agent again\n")
    await shadow.sync(overlay)
    assert (copy / "a.txt").read_text() == "agent again\n"


async def test_a_pending_edit_keeps_the_executable_bit(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: Sandbox | None
) -> None:
    write(root, {"run.sh": "#!/bin/sh\necho disk\n"})
    (root / "run.sh").chmod(0o755)
    overlay.propose("run.sh", "#!/bin/sh\necho agent\n")
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox)
    assert await run(runner, "./run.sh") == CommandResult(0, "agent\n", False)


async def test_a_file_a_command_made_survives_the_next_sync(
    shadow: ShadowCopy, overlay: Overlay, root: Path
) -> None:
    write(root, {"a.txt": "a\n"})
    copy = await shadow.sync(overlay)
    (copy / "build").mkdir()
    (copy / "build" / "out.bin").write_bytes(b"\0")
    write(root, {"a.txt": "a changed\n"})
    await shadow.sync(overlay)
    assert (copy / "build" / "out.bin").read_bytes() == b"\0"


async def test_the_home_is_a_scratch_directory(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: Sandbox | None, tmp_path: Path
) -> None:
    home = tmp_path / "real home"
    write(home, {".netrc": "machine example.com password hunter2\n"})
    runner = ShellRunner(shadow, overlay, {**ENVIRON, "HOME": str(home)}, sandbox=sandbox)
    result = await run(runner, 'cat ~/.netrc; echo "$HOME"; touch ~/made && ls -A ~')
    assert "hunter2" not in result.output
    expected_home = str(home) if sandbox is not None else str(shadow.scratch_home())
    assert result.output.endswith(f"{expected_home}\nmade\n")
    assert not (home / "made").exists()


def test_the_default_shadow_parent_is_the_system_temp(root: Path) -> None:
    shadow = ShadowCopy(root)
    try:
        home = shadow.scratch_home()
        assert home.parent.name.startswith("agent-ls-shadow-")
        assert sys.platform != "linux" or oct(home.stat().st_mode & 0o777) == "0o700"
    finally:
        shadow.close()
    assert not home.exists()
