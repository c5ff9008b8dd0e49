"""build_workspace_edit: the shape of the WorkspaceEdit for each client capability set."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as t

from agent_ls.core.proposal import FileChange
from agent_ls.lsp.convert import EditNotSupported, build_workspace_edit, file_uri

ROOT = Path("/ws")
EDITED = FileChange("b.py", False, "x = 1\ny = 2\n", 4, "x = 1\ny = 3\n")
CREATED = FileChange("a/new.py", True, "", None, "print()\n")
UNCHANGED = FileChange("c.py", False, "same\n", 2, "same\n")


def edit_range(start: tuple[int, int], end: tuple[int, int]) -> t.Range:
    return t.Range(start=t.Position(*start), end=t.Position(*end))


def test_annotated_document_changes_in_path_order() -> None:
    edit = build_workspace_edit(
        [EDITED, UNCHANGED, CREATED],
        root=ROOT,
        encoding=t.PositionEncodingKind.Utf16,
        change_annotations=True,
        resource_create=True,
        label="fix y",
    )
    new_uri, b_uri = "file:///ws/a/new.py", "file:///ws/b.py"
    assert edit == t.WorkspaceEdit(
        document_changes=[
            t.CreateFile(
                uri=new_uri,
                options=t.CreateFileOptions(overwrite=False, ignore_if_exists=False),
                annotation_id="agent-ls:a/new.py",
            ),
            t.TextDocumentEdit(
                text_document=t.OptionalVersionedTextDocumentIdentifier(uri=new_uri, version=None),
                edits=[
                    t.AnnotatedTextEdit(
                        range=edit_range((0, 0), (0, 0)),
                        new_text="print()\n",
                        annotation_id="agent-ls:a/new.py",
                    )
                ],
            ),
            t.TextDocumentEdit(
                text_document=t.OptionalVersionedTextDocumentIdentifier(uri=b_uri, version=4),
                edits=[
                    t.AnnotatedTextEdit(
                        range=edit_range((1, 0), (2, 0)), new_text="y = 3\n", annotation_id="agent-ls:b.py"
                    )
                ],
            ),
        ],
        change_annotations={
            "agent-ls:a/new.py": t.ChangeAnnotation(
                label="a/new.py", needs_confirmation=True, description="Proposed by agent-ls: fix y"
            ),
            "agent-ls:b.py": t.ChangeAnnotation(
                label="b.py", needs_confirmation=True, description="Proposed by agent-ls: fix y"
            ),
        },
    )


def test_plain_text_edits_without_annotation_support() -> None:
    edit = build_workspace_edit(
        [EDITED],
        root=ROOT,
        encoding=t.PositionEncodingKind.Utf8,
        change_annotations=False,
        resource_create=False,
        label="",
    )
    assert edit == t.WorkspaceEdit(
        document_changes=[
            t.TextDocumentEdit(
                text_document=t.OptionalVersionedTextDocumentIdentifier(uri="file:///ws/b.py", version=4),
                edits=[t.TextEdit(range=edit_range((1, 0), (2, 0)), new_text="y = 3\n")],
            )
        ]
    )


def test_changes_map_without_document_changes_support() -> None:
    edit = build_workspace_edit(
        [EDITED],
        root=ROOT,
        encoding=t.PositionEncodingKind.Utf16,
        change_annotations=True,
        resource_create=True,
        label="x",
        document_changes=False,
    )
    assert edit == t.WorkspaceEdit(
        changes={"file:///ws/b.py": [t.TextEdit(range=edit_range((1, 0), (2, 0)), new_text="y = 3\n")]}
    )


@pytest.mark.parametrize(("resource_create", "document_changes"), [(False, True), (True, False)])
def test_new_file_without_create_support_is_refused(resource_create: bool, document_changes: bool) -> None:
    with pytest.raises(EditNotSupported) as caught:
        build_workspace_edit(
            [EDITED, CREATED],
            root=ROOT,
            encoding=t.PositionEncodingKind.Utf16,
            change_annotations=False,
            resource_create=resource_create,
            label="",
            document_changes=document_changes,
        )
    assert str(caught.value) == (
        "the editor cannot create files (no resourceOperations 'create' support); "
        "use agent-ls run --apply or a client that supports it"
    )


def test_empty_new_file_is_only_created() -> None:
    edit = build_workspace_edit(
        [FileChange("pkg/__init__.py", True, "", None, "")],
        root=ROOT,
        encoding=t.PositionEncodingKind.Utf16,
        change_annotations=False,
        resource_create=True,
        label="",
    )
    assert edit.document_changes == [
        t.CreateFile(
            uri="file:///ws/pkg/__init__.py",
            options=t.CreateFileOptions(overwrite=False, ignore_if_exists=False),
        )
    ]


def test_file_uri_escapes_like_pygls() -> None:
    assert file_uri(ROOT, "a b/ü#1.py") == "file:///ws/a%20b/%C3%BC%231.py"
