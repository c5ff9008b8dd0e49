"""The shadow copy's cost follows the change, not the repository (issue 14): after the first sync, a file
watch tells which workspace entries to copy and which of the copy's files a command changed, so
nothing is walked whole (``ShadowCopy.trace`` says what each sync did). Anything the watch cannot
answer exactly (a new folder in the workspace, a ``.gitignore``) walks, as before. Real trees, real
commands, sandboxed (real ``bwrap``) and not.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from agent_ls.core.ports import CommandResult
from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.sandbox import Sandbox
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shell_runner import ShellRunner
from agent_ls.workspace.tree_watch import TreeWatch
from tests.support.processes import run_quietly as run
from tests.unit.workspace.conftest import FakeBuffers, write

ENVIRON = {"PATH": os.environ.get("PATH", os.defpath), "HOME": "/nonexistent-home"}
TREE = {f"src/p{i // 10}/m{i}.py": f"value = {i}\n" for i in range(120)}


def walks(shadow: ShadowCopy) -> tuple[bool, bool]:
    return shadow.trace.walked_workspace, shadow.trace.walked_copy


async def test_a_command_after_one_changed_file_copies_only_that_file(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: Sandbox | None
) -> None:
    write(root, {".gitignore": "build/\n", **TREE})
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox)
    assert await run(runner, "cat src/p3/m37.py") == CommandResult(0, "value = 37\n", False)
    assert (
        shadow.trace.walked_workspace and len(shadow.trace.copied) == len(TREE) + 14
    )  # + src/, 12 folders, .gitignore
    (root / "src/p3/m37.py").write_text("value = 'saved just now'\n")  # no wait: the watch's barrier
    assert await run(runner, "cat src/p3/m37.py") == CommandResult(0, "value = 'saved just now'\n", False)
    assert shadow.trace.copied == ("src/p3/m37.py",)
    assert walks(shadow) == (False, False)
    assert await run(runner, "true") == CommandResult(0, "", False)
    assert (shadow.trace.copied, walks(shadow)) == ((), (False, False))


async def test_a_commands_changes_are_found_without_walking_the_copy(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: Sandbox | None
) -> None:
    write(root, {".gitignore": "build/\n", **TREE})
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox)
    await run(runner, "true")
    result = await run(
        runner, "echo more >> src/p0/m1.py; mkdir -p new/deep build; echo x > new/deep/n.py; echo o > build/o"
    )
    assert result.changed_paths == ("new/deep/n.py", "src/p0/m1.py")
    assert walks(shadow) == (False, False)
    assert overlay.read_text("src/p0/m1.py") == "value = 1\nmore\n"
    # the folder the command made is watched from now on
    result = await run(runner, "echo again >> new/deep/n.py")
    assert result.changed_paths == ("new/deep/n.py",) and overlay.read_text("new/deep/n.py") == "x\nagain\n"
    result = await run(runner, "rm -r src/p2; cat src/p0/m1.py")
    assert "deleted in the copy, not proposed" in result.output and "src/p2/m20.py" in result.output
    assert walks(shadow) == (False, False)
    assert await run(runner, "cat src/p2/m25.py") == CommandResult(0, "value = 25\n", False)  # undone


async def test_what_reshapes_the_tree_walks_it_again(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: Sandbox | None
) -> None:
    write(root, {".gitignore": "build/\n", **TREE})
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox)
    await run(runner, "true")
    write(root, {"lib/new.py": "fresh\n", "build/out.txt": "built\n"})
    assert await run(runner, "cat lib/new.py; ls build 2>/dev/null | wc -l") == CommandResult(
        0, "fresh\n0\n", False
    )
    assert shadow.trace.walked_workspace
    result = await run(
        runner, "echo 'src/p1/' >> .gitignore; echo changed >> src/p1/m10.py; echo y >> src/p0/m2.py"
    )
    assert result.changed_paths == (".gitignore", "src/p0/m2.py")  # p1 is ignored now: stays out
    assert shadow.trace.walked_copy


async def test_without_the_watch_every_sync_walks_and_finds_the_same(
    root: Path, tmp_path: Path, buffers: FakeBuffers, sandbox: Sandbox | None
) -> None:
    write(root, TREE)
    shadow = ShadowCopy(root, temp_parent=tmp_path, watch=False)
    runner = ShellRunner(shadow, Overlay(root, buffers, shadow=shadow), ENVIRON, sandbox=sandbox)
    try:
        await run(runner, "true")
        (root / "src/p3/m37.py").write_text("value = 'saved'\n")
        result = await run(runner, "cat src/p3/m37.py; echo more >> src/p0/m1.py")
        assert result.output.startswith("value = 'saved'\n") and result.changed_paths == ("src/p0/m1.py",)
        assert shadow.trace.copied == ("src/p3/m37.py",) and walks(shadow) == (True, True)
    finally:
        shadow.close()


def test_the_watch_reports_every_change_made_before_collect(tmp_path: Path) -> None:
    real, copy, marker = tmp_path / "real", tmp_path / "copy", tmp_path / "marker"
    for folder in (real / "a", copy):
        folder.mkdir(parents=True)
    watch = TreeWatch.start(real, [".", "a"], copy, ["."], marker)
    assert watch is not None
    try:
        for i in range(200):
            (real / "a" / f"f{i}").write_text("x")
        (copy / "gone").write_text("x")
        (copy / "gone").unlink()
        found = watch.collect()
        assert found is not None
        assert found.real == {f"a/f{i}" for i in range(200)}
        assert (found.copy, found.copy_removed) == ({"gone"}, {"gone"})
        found = watch.collect()
        assert found is not None and (found.real, found.copy) == (set(), set())
    finally:
        watch.close()


async def test_close_moves_the_copy_aside_at_once_and_deletes_it_in_the_background(
    root: Path, tmp_path: Path, buffers: FakeBuffers
) -> None:
    write(root, TREE)
    parent = tmp_path / "shadows"
    parent.mkdir()
    shadow = ShadowCopy(root, temp_parent=parent)
    copy = await shadow.sync(Overlay(root, buffers, shadow=shadow))
    shadow.close()
    assert shadow.path is None and not copy.exists()  # renamed aside before close returned
    for thread in threading.enumerate():
        if thread.name == "agent-ls-remove-temp":
            thread.join()
    assert list(parent.iterdir()) == []
