"""The demo's editor (``EditorFiles``) applies a WorkspaceEdit to closed files all or nothing on disk too: a
file it cannot write leaves every other file as it was, and the buffers unchanged."""

from __future__ import annotations

from pathlib import Path

from agent_ls.demo.edit_applier import EditorFiles


def _edit_replacing(uri: str, old: str, new: str) -> dict[str, object]:
    end = {"line": 0, "character": len(old)}
    return {
        "textDocument": {"uri": uri, "version": None},
        "edits": [{"range": {"start": {"line": 0, "character": 0}, "end": end}, "newText": new}],
    }


def test_a_closed_file_that_cannot_be_written_leaves_every_file_and_buffer_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old a")
    (tmp_path / "open.txt").write_text("on disk")
    (tmp_path / "sub").write_text("a file where the edit needs a folder")
    editor = EditorFiles()
    editor.open((tmp_path / "open.txt").as_uri(), "buffer", 1)
    edit = {
        "documentChanges": [
            _edit_replacing((tmp_path / "a.txt").as_uri(), "old a", "new a"),
            {
                "textDocument": {"uri": (tmp_path / "open.txt").as_uri(), "version": 1},
                "edits": [
                    {
                        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 6}},
                        "newText": "edited",
                    }
                ],
            },
            {"kind": "create", "uri": (tmp_path / "sub" / "new.txt").as_uri()},
        ]
    }
    outcome = editor.apply(edit)
    assert not outcome.applied
    assert outcome.failure_reason == "not applying, nothing written: sub/new.txt: sub is a file, not a folder"
    assert (tmp_path / "a.txt").read_text() == "old a"
    assert editor.buffers[(tmp_path / "open.txt").as_uri()].text == "buffer"


def test_closed_files_are_written_with_their_bytes_and_a_delete_goes_with_them(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"old a")
    (tmp_path / "gone.txt").write_text("x")
    edit = {
        "documentChanges": [
            _edit_replacing((tmp_path / "a.txt").as_uri(), "old a", "new\r\na"),
            {"kind": "create", "uri": (tmp_path / "d" / "new.txt").as_uri()},
            {"kind": "delete", "uri": (tmp_path / "gone.txt").as_uri()},
        ]
    }
    assert EditorFiles().apply(edit).applied
    assert (tmp_path / "a.txt").read_bytes() == b"new\r\na"
    assert (tmp_path / "d" / "new.txt").read_bytes() == b""
    assert not (tmp_path / "gone.txt").exists()


def test_a_new_file_alone_in_a_new_folder_is_written(tmp_path: Path) -> None:
    edit = {"documentChanges": [{"kind": "create", "uri": (tmp_path / "notes" / "new.md").as_uri()}]}
    assert EditorFiles().apply(edit).applied
    assert (tmp_path / "notes" / "new.md").read_bytes() == b""
