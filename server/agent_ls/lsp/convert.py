"""Builds the LSP ``WorkspaceEdit`` of a proposal (a list of ``FileChange``), and nothing else.

Steps, per file, in path order:

1. a new file becomes ``CreateFile`` (no overwrite, fail if it exists) followed by a
   ``TextDocumentEdit`` (version null) that inserts the whole text at (0, 0);
2. an existing file becomes one ``TextDocumentEdit`` stamped with ``base_version`` (the editor buffer
   version the edit was computed against, null for a closed file), so a client whose buffer moved on
   rejects it instead of clobbering the user's typing;
3. its edits are the minimal line hunks of ``workspace.text_edits``, whose code-point columns are
   converted to the negotiated position encoding by pygls ``PositionCodec`` (never by hand; a line's
   start, column 0, is 0 in every encoding and skips it);
4. with change annotations, every edit is an ``AnnotatedTextEdit`` with one annotation per file that
   needs confirmation, so VS Code opens its refactor preview.

Source: LSP 3.17 ``WorkspaceEdit``, ``TextDocumentEdit``, ``CreateFile``, ``ChangeAnnotation``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from agent_ls.core.proposal import FileChange
from agent_ls.workspace.line_diff import text_diff
from agent_ls.workspace.text_edits import line_boundary, line_hunks

ANNOTATION_DESCRIPTION = "Proposed by agent-ls"

TextEditItem = types.TextEdit | types.AnnotatedTextEdit
DocumentChange = types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile


class EditNotSupported(ValueError):
    """User: the client cannot apply this proposal (for example it cannot create files); not applied."""


def annotation_id(path: str) -> str:
    """The change annotation id of one file of the proposal (``agent-ls:src/app.py``)."""
    return f"agent-ls:{path}"


def file_uri(root: Path, path: str) -> str:
    """The ``file://`` URI of workspace-relative ``path`` under ``root``, spelled as pygls spells it."""
    absolute = str(root / path)
    uri = from_fs_path(absolute)
    return str(uri) if uri is not None else Path(absolute).as_uri()


def build_workspace_edit(
    changes: Sequence[FileChange],
    *,
    root: Path,
    encoding: types.PositionEncodingKind | str,
    change_annotations: bool,
    resource_create: bool,
    label: str,
    document_changes: bool = True,
) -> types.WorkspaceEdit:
    """The ``WorkspaceEdit`` that turns every ``base_text`` into its ``new_text``.

    Args:
        changes: the proposal; any order (the result is in path order). Unchanged files are skipped.
        root: the workspace root as the editor knows it (URIs are built on it).
        encoding: the negotiated ``PositionEncodingKind`` (``utf-16`` unless the client offered another).
        change_annotations: the client supports ``workspace.workspaceEdit.changeAnnotationSupport``.
        resource_create: the client lists ``create`` in ``workspace.workspaceEdit.resourceOperations``.
        label: what the edit is for (``fix the failing test``); shown in each annotation's description.
        document_changes: the client supports ``documentChanges``. Without it the edit is a plain
            ``changes`` map: no versions, no annotations, no file creation.

    Returns:
        A ``WorkspaceEdit`` whose ``document_changes`` (or ``changes``) are in path order; positions
        are in ``encoding`` units and never split a ``\\r\\n`` pair.

    Raises:
        EditNotSupported: a file is new and the client cannot create files.
    """
    ordered = sorted((c for c in changes if c.is_new or c.new_text != c.base_text), key=lambda c: c.path)
    if any(change.is_new for change in ordered) and not (resource_create and document_changes):
        raise EditNotSupported(
            "the editor cannot create files (no resourceOperations 'create' support); "
            "use agent-ls run --apply or a client that supports it"
        )
    codec = PositionCodec(encoding)
    annotate = change_annotations and document_changes
    if not document_changes:
        return types.WorkspaceEdit(
            changes={
                file_uri(root, c.path): [
                    types.TextEdit(range=r, new_text=t) for r, t in _replacements(c, codec)
                ]
                for c in ordered
            }
        )
    items: list[DocumentChange] = []
    for change in ordered:
        uri = file_uri(root, change.path)
        note = annotation_id(change.path) if annotate else None
        if change.is_new:
            options = types.CreateFileOptions(overwrite=False, ignore_if_exists=False)
            items.append(types.CreateFile(uri=uri, options=options, annotation_id=note))
        edits = _text_edits(change, codec, note)
        if edits:
            document = types.OptionalVersionedTextDocumentIdentifier(
                uri=uri, version=None if change.is_new else change.base_version
            )
            items.append(types.TextDocumentEdit(text_document=document, edits=edits))
    annotations = None
    if annotate:
        description = f"{ANNOTATION_DESCRIPTION}: {label}" if label else ANNOTATION_DESCRIPTION
        annotations = {
            annotation_id(c.path): types.ChangeAnnotation(
                label=c.path, needs_confirmation=True, description=description
            )
            for c in ordered
        }
    return types.WorkspaceEdit(document_changes=items, change_annotations=annotations)


def _text_edits(change: FileChange, codec: PositionCodec, note: str | None) -> list[TextEditItem]:
    return [
        types.TextEdit(range=span, new_text=text)
        if note is None
        else types.AnnotatedTextEdit(range=span, new_text=text, annotation_id=note)
        for span, text in _replacements(change, codec)
    ]


def _replacements(change: FileChange, codec: PositionCodec) -> list[tuple[types.Range, str]]:
    """(range, new text) per hunk, in ascending order, relative to ``base_text`` ("" for a new file)."""
    base = "" if change.is_new else change.base_text
    lines = text_diff(base, change.new_text).old_lines  # the diff's own split (cached), not a new one
    replacements = []
    for hunk in line_hunks(base, change.new_text):
        start, end = _bound(codec, lines, hunk.start_line), _bound(codec, lines, hunk.end_line)
        replacements.append((types.Range(start=start, end=end), hunk.new_text))
    return replacements


def _bound(codec: PositionCodec, lines: Sequence[str], index: int) -> types.Position:
    """Where old line ``index`` starts (``text_edits.line_boundary``: the exact end of the text for
    ``len(lines)``), in the client's units."""
    if index < len(lines):  # a line's start (every hunk bound but the end of a text): 0 in every encoding
        return types.Position(line=index, character=0)
    end = line_boundary(lines, index)
    return codec.position_to_client_units(lines, ServerTextPosition(end.line, end.column))
