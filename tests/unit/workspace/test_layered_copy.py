"""Commands in an overlay view of the real tree (``layered_copy``, issue 14): nothing is copied before the
first command, and everything the copy guaranteed still holds: pending edits and unsaved text are what
commands see, secrets (and hard links to them, sockets, ``.git``) are masked, reviewable changes come
back into the proposal, deletions and refused changes are undone, build outputs stay, the user's files
are never touched. Real trees, real ``bwrap``, real overlayfs."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent_ls.core.ports import CommandResult
from agent_ls.workspace.layered_copy import LayeredCopy
from agent_ls.workspace.layers import layers_status
from agent_ls.workspace.overlay import OpenBuffer, Overlay
from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.secret_index import SecretIndex
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shell_runner import ShellRunner
from tests.support.processes import require_sandbox
from tests.support.processes import run_quietly as run
from tests.unit.workspace.conftest import FakeBuffers, write

ENVIRON = {"PATH": os.environ.get("PATH", os.defpath), "HOME": "/nonexistent-home"}
TREE = {f"src/p{i // 10}/m{i}.py": f"value = {i}\n" for i in range(60)}
READ_EVERY_FILE = (
    "python3 -c \"import pathlib; [print(p.read_text()) for p in sorted(pathlib.Path('.').rglob('*')) "
    'if p.is_file()]"'
)


@pytest.fixture
def layered(root: Path, tmp_path: Path) -> Iterator[LayeredCopy]:
    sandbox = require_sandbox()
    if layers_status(sandbox.bwrap).unshare is None:
        message = f"overlay views do not work here: {layers_status(sandbox.bwrap).detail}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    parent = tmp_path / "views"
    parent.mkdir()
    index = SecretIndex(root, PathPolicy(root).is_secret, temp_parent=parent)
    view = LayeredCopy(root, index, owns_index=True, temp_parent=parent)
    yield view
    view.close()


@pytest.fixture
def runner(layered: LayeredCopy, overlay: Overlay, shadow: ShadowCopy) -> ShellRunner:
    return ShellRunner(shadow, overlay, ENVIRON, sandbox=require_sandbox(), layered=layered)


def resolved(path: Path) -> Path:
    return path.resolve()


def upper(layered: LayeredCopy) -> set[str]:
    """The entries of the view's upper folder (what commands and pending edits put there)."""
    assert layered.layers is not None
    top = layered.layers.upper
    return {str(p.relative_to(top)) for p in top.rglob("*")}


async def test_the_first_command_copies_nothing_and_sees_the_real_tree(
    runner: ShellRunner, layered: LayeredCopy, shadow: ShadowCopy, root: Path
) -> None:
    write(root, TREE)
    assert await run(runner, "cat src/p3/m37.py; ls src | wc -l") == CommandResult(
        0, "value = 37\n6\n", False
    )
    assert upper(layered) == set()
    assert shadow.path is None  # the copy was never made
    (root / "src/p3/m37.py").write_text("value = 'saved'\n")
    assert (await run(runner, "cat src/p3/m37.py")).output == "value = 'saved'\n"


async def test_pending_edits_and_unsaved_buffers_are_what_commands_see(
    runner: ShellRunner, overlay: Overlay, buffers: FakeBuffers, root: Path
) -> None:
    write(root, {"a.py": "disk\n", "b.py": "disk b\n"})
    overlay.propose("a.py", "proposed\n")
    buffers.open[root / "b.py"] = OpenBuffer("unsaved b\n", 3)
    assert (await run(runner, "cat a.py b.py")).output == "proposed\nunsaved b\n"
    overlay.discard()
    del buffers.open[root / "b.py"]
    assert (await run(runner, "cat a.py b.py")).output == "disk\ndisk b\n"
    assert (root / "a.py").read_text() == "disk\n"


def _link(root: Path) -> None:
    os.link(root / ".env", root / "notes.txt")


def _key(root: Path) -> None:
    write(root, {"deploy/keys/id_rsa": "KEY=sk-live\n"})


@pytest.mark.parametrize(
    ("plant", "path"),
    [
        pytest.param(lambda root: None, ".env", id="secret file"),
        pytest.param(_link, "notes.txt", id="hard link to a secret"),
        pytest.param(_key, "deploy/keys/id_rsa", id="key in a folder"),
    ],
)
async def test_secrets_are_masked_in_the_view(
    runner: ShellRunner, root: Path, plant: Callable[[Path], object], path: str
) -> None:
    (root / ".env").write_text("KEY=sk-live\n")
    plant(root)
    result = await run(runner, f"python3 -c \"print(open('{path}').read())\"; {READ_EVERY_FILE}")
    assert "sk-live" not in result.output
    assert "Permission denied" in result.output


async def test_git_folders_and_sockets_are_masked(runner: ShellRunner, root: Path, tmp_path: Path) -> None:
    write(root, {".git/config": "[core]\n", ".git/HEAD": "ref: refs/heads/main\n", "a.py": "a\n"})
    server = socket.socket(socket.AF_UNIX)
    short = Path("/tmp") / f"agent-ls-test-{os.getpid()}.sock"
    server.bind(str(short))
    try:
        os.rename(short, root / "daemon.sock")  # bound at a short path: AF_UNIX paths are short
        server.listen(1)
        result = await run(
            runner,
            "ls -A .git | wc -l; "
            "python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('daemon.sock')\"",
        )
    finally:
        server.close()
    assert result.output.startswith("0\n")
    assert "Connection refused" in result.output or "Permission denied" in result.output or result.exit_code


async def test_a_commands_reviewable_changes_come_back_and_the_rest_is_undone(
    runner: ShellRunner, overlay: Overlay, layered: LayeredCopy, root: Path
) -> None:
    write(root, {".gitignore": "build/\n", "notes.txt": "keep me\n", **TREE})
    result = await run(
        runner,
        "echo more >> src/p0/m1.py; echo new > src/new.py; mkdir -p build; echo o > build/out; "
        "python3 -c \"import os; os.remove('notes.txt')\"",
    )
    assert result.changed_paths == ("src/new.py", "src/p0/m1.py")
    assert "notes.txt" in result.output and "cannot delete" in result.output
    assert overlay.read_text("src/p0/m1.py") == "value = 1\nmore\n"
    # the deletion was undone; the build output stays; the user's files are untouched
    assert (await run(runner, "cat notes.txt build/out")).output == "keep me\no\n"
    assert (root / "src/p0/m1.py").read_text() == "value = 1\n" and not (root / "build").exists()
    assert not (root / "src/new.py").exists()


async def test_a_folder_replaced_whole_reports_its_files_deleted_and_gets_them_back(
    runner: ShellRunner, root: Path
) -> None:
    write(root, {"src/a.py": "a\n", "src/b.py": "b\n"})
    result = await run(runner, "rm -rf src && mkdir src && echo c > src/c.py")
    assert result.changed_paths == ("src/c.py",)
    assert "src/a.py, src/b.py" in result.output
    assert (await run(runner, "cat src/a.py src/b.py src/c.py")).output == "a\nb\nc\n"


async def test_a_change_refused_by_the_policy_is_undone(
    layered: LayeredCopy, overlay: Overlay, shadow: ShadowCopy, root: Path
) -> None:
    write(root, {"locked.py": "locked\n", "open.py": "open\n"})
    runner = ShellRunner(
        shadow,
        overlay,
        ENVIRON,
        sandbox=require_sandbox(),
        layered=layered,
        may_propose=lambda rel: rel != "locked.py",
    )
    result = await run(runner, "echo x > locked.py; echo y > open.py")
    assert result.changed_paths == ("open.py",)
    assert (await run(runner, "cat locked.py open.py")).output == "locked\ny\n"


async def test_a_new_secret_is_masked_at_the_next_command_without_a_walk(
    runner: ShellRunner, layered: LayeredCopy, root: Path
) -> None:
    write(root, TREE)
    await run(runner, "true")
    index = layered.index
    walks = index.walks
    (root / "src/p2/.env").write_text("KEY=sk-new\n")
    result = await run(runner, "python3 -c \"print(open('src/p2/.env').read())\"")
    assert "sk-new" not in result.output and "Permission denied" in result.output
    assert index.walks == walks


async def test_workspace_mode_masks_come_from_the_index(
    layered: LayeredCopy, overlay: Overlay, shadow: ShadowCopy, root: Path
) -> None:
    write(root, {".env": "KEY=sk-live\n", "a.py": "a\n"})
    runner = ShellRunner(
        shadow, overlay, ENVIRON, sandbox=require_sandbox(), layered=layered, mode="workspace"
    )
    for _ in range(2):
        result = await run(runner, "python3 -c \"print(open('.env').read())\"")
        assert "sk-live" not in result.output
    assert layered.index.walks == 1


async def test_absolute_paths_into_the_workspace_reach_the_view_never_the_real_tree(
    runner: ShellRunner, overlay: Overlay, root: Path
) -> None:
    write(root, {"a.py": "disk\n", "tool/run": f"#!{root}/tool/python\nprint('ran')\n"})
    (root / "tool/python").symlink_to(resolved(Path(sys.executable)))  # a venv's interpreter link
    (root / "tool/run").chmod(0o755)
    overlay.propose("a.py", "proposed\n")
    result = await run(runner, f"pwd; cat {root}/a.py; {root}/tool/run; echo written > {root}/a.py")
    assert result.output.splitlines()[:3] == [str(resolved(root)), "proposed", "ran"]
    assert result.changed_paths == ("a.py",)
    assert (root / "a.py").read_text() == "disk\n"
    assert overlay.read_text("a.py") == "written\n"


async def test_a_session_folder_outside_tmp_shows_neither_the_real_tree_nor_the_unmasked_view(
    root: Path, overlay: Overlay, shadow: ShadowCopy
) -> None:
    """The sandbox binds the system read-only, recursively: with ``TMPDIR`` outside the private ``/tmp``
    it showed the lower layer (the real tree) and the view's own mount point, neither masked."""
    sandbox = require_sandbox()
    outside = Path(tempfile.mkdtemp(prefix="agent-ls-test-", dir="/var/tmp"))
    try:
        index = SecretIndex(root, PathPolicy(root).is_secret, temp_parent=outside)
        view = LayeredCopy(root, index, owns_index=True, temp_parent=outside)
        runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox, layered=view)
        write(root, {".env": "KEY=sk-live\n", "a.py": "a\n"})
        finder = f"import glob; print(glob.glob('{outside}/**/.env', recursive=True))"
        result = await run(runner, f'python3 -c "{finder}"; ls {outside}/agent-ls-shadow-*')
        view.close()
    finally:
        shutil.rmtree(outside, ignore_errors=True)
    assert result.output.startswith("[]\n")
    assert "sk-live" not in result.output
