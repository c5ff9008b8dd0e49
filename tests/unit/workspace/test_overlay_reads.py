"""The overlay remembers what the agent read: a write on a file changed since is refused, the base is the
version read; legacy encodings are kept; large files are paged, never read whole (issue 12.2, 12.4, 12.9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.core.errors import EditFailed, ToolError
from agent_ls.core.file_views import PageLine, PageRequest, TextPage
from agent_ls.core.proposal import TextEncoding
from agent_ls.workspace import disk_text
from agent_ls.workspace.overlay import OpenBuffer, Overlay
from tests.unit.workspace.conftest import FakeBuffers, write

STALE = "changed since you read it; read it again"


def test_a_file_saved_after_the_agent_read_it_is_refused(overlay: Overlay, root: Path) -> None:
    write(root, {"config.py": "PORT = 1\n"})
    overlay.read_page("config.py", PageRequest())
    write(root, {"config.py": "PORT = 2  # the user's\n"})
    with pytest.raises(EditFailed, match=f"config.py {STALE}"):
        overlay.propose("config.py", "PORT = 1\nX = 1\n")
    overlay.read_page("config.py", PageRequest())  # read again: now it goes through
    assert overlay.propose("config.py", "PORT = 2  # the user's\nX = 1\n")
    (change,) = overlay.proposal()
    assert change.base_text == "PORT = 2  # the user's\n"


def test_a_buffer_typed_in_after_the_read_is_refused_but_typed_then_undone_is_not(
    overlay: Overlay, buffers: FakeBuffers, root: Path
) -> None:
    write(root, {"a.py": "a\n"})
    buffers.open[root / "a.py"] = OpenBuffer("a\n", 1)
    overlay.read_page("a.py", PageRequest())
    buffers.open[root / "a.py"] = OpenBuffer("a\n", 3)  # typed, then undone: same text
    assert overlay.propose("a.py", "A\n")
    overlay.discard()
    buffers.open[root / "a.py"] = OpenBuffer("A\n", 4)  # the proposal was applied to the buffer
    assert overlay.propose("a.py", "AA\n")  # what the agent proposed is what it knows
    overlay.discard()
    buffers.open[root / "a.py"] = OpenBuffer("typed\n", 5)
    with pytest.raises(EditFailed, match=STALE):
        overlay.propose("a.py", "AAA\n")


def test_a_file_deleted_after_the_read_is_refused_and_a_failed_read_forgets(
    overlay: Overlay, root: Path
) -> None:
    write(root, {"gone.txt": "x\n"})
    overlay.read_page("gone.txt", PageRequest())
    (root / "gone.txt").unlink()
    with pytest.raises(EditFailed, match=STALE):
        overlay.propose("gone.txt", "y\n")
    with pytest.raises(ToolError, match="file not found"):
        overlay.read_page("gone.txt", PageRequest())
    assert overlay.propose("gone.txt", "y\n")  # a new file now


def test_based_on_guards_the_moment_between_a_tools_read_and_its_proposal(
    overlay: Overlay, root: Path
) -> None:
    write(root, {"a.txt": "one\n"})
    text = overlay.read_text("a.txt")
    write(root, {"a.txt": "two\n"})
    with pytest.raises(EditFailed, match=STALE):
        overlay.propose("a.txt", text.upper(), based_on=text)


def test_a_legacy_file_keeps_its_encoding_and_refuses_what_it_cannot_write(
    overlay: Overlay, root: Path
) -> None:
    write(root, {"l.py": "# café\n".encode("cp1252")})
    page = overlay.read_page("l.py", PageRequest())
    assert page == TextPage((PageLine(1, 1, "# café", 6),), 1, "cp1252")
    with pytest.raises(EditFailed, match=r"'😀' .* cannot be written in cp1252, the file's encoding"):
        overlay.propose("l.py", "# 😀\n")
    overlay.propose("l.py", "# thé\n")
    (change,) = overlay.proposal()
    assert change.encoding == TextEncoding("cp1252")
    assert overlay.unsaved_files() == {"l.py": "# thé\n".encode("cp1252")}


def test_a_file_over_the_cap_is_paged_from_disk_and_cannot_be_edited(
    overlay: Overlay, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(disk_text, "MAX_TEXT_BYTES", 1000)
    monkeypatch.setattr(disk_text, "CHUNK_BYTES", 64)
    write(root, {"big.log": "".join(f"line {n}\n" for n in range(1, 501))})
    page = overlay.read_page("big.log", PageRequest(line=250, max_lines=2))
    assert page == TextPage((PageLine(250, 1, "line 250", 8), PageLine(251, 1, "line 251", 8)), 500)
    with pytest.raises(disk_text.TooLarge, match="can be read in pages with read_file"):
        overlay.read_text("big.log")
    with pytest.raises(disk_text.TooLarge):
        overlay.propose("big.log", "small\n")
