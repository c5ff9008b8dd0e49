"""Large files are linked into the shadow copy, never copied, tracked or not; a sparse file that is copied
keeps its holes. A 2 GiB sparse file costs each session one symlink, not 2 GiB of disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.sandbox import Sandbox
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shadow_tree import LINKED_FILE_BYTES, copy_keeping_holes
from agent_ls.workspace.shell_runner import NO_SANDBOX_NOTE, ShellRunner

ENVIRON = {"PATH": os.environ.get("PATH", os.defpath), "HOME": "/nonexistent-home"}
MIB = 1024 * 1024


def _sparse(path: Path, size: int, data: dict[int, bytes]) -> None:
    """A file of ``size`` bytes that holds ``data`` (offset to bytes) and holes elsewhere."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(size)
        for offset, chunk in data.items():
            handle.seek(offset)
            handle.write(chunk)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _allocated(path: Path) -> int:
    """The bytes of disk ``path`` takes (its blocks), not its length."""
    return os.lstat(path).st_blocks * 512


async def test_a_tracked_file_over_the_limit_is_linked_whatever_its_kind_and_one_under_it_copied(
    shadow: ShadowCopy, overlay: Overlay, root: Path
) -> None:
    _sparse(root / "disk.img", 2 * 1024 * MIB, {MIB: b"boot"})  # tracked: no .gitignore
    (root / "data").mkdir()
    (root / "data" / "table.csv").write_bytes(b"x,y\n" * (LINKED_FILE_BYTES // 4 + 1))  # dense, tracked
    (root / "data" / "small.csv").write_bytes(b"x,y\n" * (LINKED_FILE_BYTES // 4))  # exactly the limit
    copy = await shadow.sync(overlay)
    real = _real(root)
    assert os.readlink(copy / "disk.img") == str(real / "disk.img")
    assert os.readlink(copy / "data" / "table.csv") == str(real / "data" / "table.csv")
    assert not (copy / "data" / "small.csv").is_symlink()
    assert (copy / "data" / "small.csv").read_bytes() == (root / "data" / "small.csv").read_bytes()
    assert shadow.linked == (real / "data" / "table.csv", real / "disk.img")


async def test_a_sparse_file_under_the_limit_is_copied_with_its_holes(
    shadow: ShadowCopy, overlay: Overlay, root: Path
) -> None:
    data = {0: b"head", 3 * MIB: b"middle" * 1000, 7 * MIB - 4: b"tail"}
    _sparse(root / "cache.bin", 7 * MIB, data)
    if _allocated(root / "cache.bin") >= 7 * MIB:
        pytest.skip("this file system does not make sparse files")
    copy = await shadow.sync(overlay)
    assert (copy / "cache.bin").read_bytes() == (root / "cache.bin").read_bytes()
    assert _allocated(copy / "cache.bin") <= _allocated(root / "cache.bin") + 64 * 1024


def test_a_file_ending_in_a_hole_or_holding_no_hole_keeps_its_exact_bytes(tmp_path: Path) -> None:
    cases = {
        "ends-in-hole": (3 * MIB, {100: b"data"}),
        "all-hole": (2 * MIB, {}),
        "dense": (0, {0: os.urandom(3 * MIB + 17)}),
        "empty": (0, {}),
    }
    for name, (size, data) in cases.items():
        source = tmp_path / name
        _sparse(source, size, data)
        target = tmp_path / f"{name}.copy"
        with source.open("rb") as reader, target.open("wb") as writer:
            copy_keeping_holes(reader.fileno(), writer.fileno())
        assert target.read_bytes() == source.read_bytes(), name


async def test_commands_read_a_linked_large_file_and_a_rewrite_of_it_is_not_proposed(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: Sandbox | None
) -> None:
    _sparse(root / "big.dat", LINKED_FILE_BYTES + 1, {0: b"MAGIC"})
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox)
    result = await runner.run("head -c 5 big.dat; echo; wc -c < big.dat; du -sk . | cut -f1", 30)
    magic, size, used_kib, *_ = result.output.removeprefix(f"{NO_SANDBOX_NOTE}\n").splitlines()
    assert (magic, int(size)) == ("MAGIC", LINKED_FILE_BYTES + 1)
    assert int(used_kib) < 1024  # the copy holds a link, not 8 MiB
    rewrite = await runner.run("sed -i 's/MAGIC/magic/' big.dat", 30)
    assert rewrite.exit_code == 0 and "not brought into the proposal" in rewrite.output
    assert overlay.proposal() == []
    with (root / "big.dat").open("rb") as handle:
        assert handle.read(5) == b"MAGIC"
