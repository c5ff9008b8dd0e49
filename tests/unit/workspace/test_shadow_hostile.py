"""A command can plant links, FIFOs and huge files in the shadow copy; the server's own work on the
copy (writing the proposal, ripgrep) must never follow them out of it, hang, or blow up memory.

Found by a security review: a conftest.py run by an auto-allowed ``pytest`` planted directory
symlinks to the user's home and real workspace, and the next sync wrote the proposal through them.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.search import MAX_HITS_PER_FILE
from tests.unit.workspace.conftest import write


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the workspace and the copy: the user's home, say."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "id_rsa").write_text("PRIVATE KEY\n")
    return folder


async def _copy(overlay: Overlay) -> Path:
    return await overlay.shadow.sync(overlay)


async def test_sync_never_writes_through_a_planted_directory_link(
    overlay: Overlay, root: Path, outside: Path
) -> None:
    write(root, {"sub/a.txt": "a\n"})
    copy = await _copy(overlay)
    _replace_with_link(copy / "sub", outside)  # what a command could do
    overlay.propose("sub/x.txt", "proposed\n")
    await _copy(overlay)
    assert not (outside / "x.txt").exists()
    assert not (copy / "sub").is_symlink() and (copy / "sub" / "x.txt").read_text() == "proposed\n"


async def test_restoring_a_file_never_deletes_through_a_planted_link(
    overlay: Overlay, root: Path, outside: Path
) -> None:
    write(root, {"sub/a.txt": "a\n"})
    overlay.propose("sub/id_rsa", "mine\n")
    copy = await _copy(overlay)
    _replace_with_link(copy / "sub", outside)
    overlay.discard()  # the next sync restores sub/id_rsa from disk: it does not exist there
    await _copy(overlay)
    assert (outside / "id_rsa").read_text() == "PRIVATE KEY\n"


async def test_a_planted_link_or_fifo_at_the_target_is_replaced_not_followed(
    overlay: Overlay, root: Path, outside: Path
) -> None:
    write(root, {"a.txt": "a\n", "b.txt": "b\n"})
    copy = await _copy(overlay)
    (copy / "a.txt").unlink()
    (copy / "a.txt").symlink_to(outside / "id_rsa")
    (copy / "b.txt").unlink()
    os.mkfifo(copy / "b.txt")
    overlay.propose("a.txt", "new a\n")
    overlay.propose("b.txt", "new b\n")
    await asyncio.wait_for(_copy(overlay), timeout=5)  # a FIFO opened for reading would block forever
    assert (outside / "id_rsa").read_text() == "PRIVATE KEY\n"
    assert (copy / "a.txt").read_text() == "new a\n" and (copy / "b.txt").read_text() == "new b\n"


async def test_search_keeps_few_hits_in_memory_and_counts_the_rest(overlay: Overlay, root: Path) -> None:
    write(root, {"big.txt": "match this line\n" * 40_000})
    found = await overlay.search("match", ".", None)
    assert len(found.hits) == MAX_HITS_PER_FILE
    assert found.counts == {"big.txt": 40_000}


def _replace_with_link(path: Path, target: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        for child in sorted(path.rglob("*"), reverse=True):
            child.unlink() if not child.is_dir() else child.rmdir()
        path.rmdir()
    else:
        path.unlink()
    path.symlink_to(target)
