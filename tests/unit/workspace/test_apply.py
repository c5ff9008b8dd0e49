"""Writing a proposal outside an editor: the staleness and escape checks made at apply time."""

from __future__ import annotations

from pathlib import Path

from agent_ls.core.proposal import FileChange
from agent_ls.workspace.apply import apply_proposal, disk_stale_reason


def _change(path: str, base: str = "old\n", new: str = "new\n", is_new: bool = False) -> FileChange:
    return FileChange(
        path=path, is_new=is_new, base_text="" if is_new else base, base_version=None, new_text=new
    )


def test_an_unchanged_file_is_written_atomically_keeping_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "src" / "app.py"
    target.parent.mkdir()
    target.write_text("old\n")
    target.chmod(0o754)
    assert disk_stale_reason(tmp_path, _change("src/app.py")) is None
    assert apply_proposal(
        tmp_path, [_change("src/app.py", new="new\r\n")], edit_refusal=lambda _: None
    ).applied
    assert target.read_bytes() == b"new\r\n"
    assert target.stat().st_mode & 0o777 == 0o754


def test_a_directory_swapped_for_a_symlink_out_is_refused_at_apply_time(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("old\n")
    outside.mkdir()
    (outside / "app.py").write_text("old\n")
    # After the agent read src/app.py, src/ is replaced by a link to a directory outside the workspace.
    (root / "src" / "app.py").unlink()
    (root / "src").rmdir()
    (root / "src").symlink_to(outside, target_is_directory=True)
    assert disk_stale_reason(root, _change("src/app.py")) == (
        "src/app.py now resolves outside the workspace (a symlink on its path); not written"
    )
    assert (outside / "app.py").read_text() == "old\n"


def test_a_new_file_is_stale_when_something_appeared_at_its_path(tmp_path: Path) -> None:
    assert disk_stale_reason(tmp_path, _change("new.py", is_new=True)) is None
    (tmp_path / "new.py").write_text("x\n")
    assert disk_stale_reason(tmp_path, _change("new.py", is_new=True)) == (
        "new.py now exists on disk; the agent proposed it as a new file"
    )


def test_a_file_changed_on_disk_is_stale(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("changed\n")
    assert disk_stale_reason(tmp_path, _change("a.py")) == "a.py changed on disk since the agent read it"
