"""A strict LSP client's WorkspaceEdit applier: the demo's "editor", and the tests' reference.

It is written from the LSP specification, independently of pygls and of ``lsp/convert.py``, so the
corpus tests can judge the server's edits with it (and check it against the corpus first).
``EditorFiles`` is the editor around it: open buffers with versions, over the files on disk.

It works on the wire form (camelCase JSON, as in ``../shared/corpus/lsp-edits``); ``wire`` turns an
lsprotocol object into it. Semantics (LSP 3.17, as written in the corpus README section 6):

- positions count ``encoding`` code units (UTF-16 by default) and are 0-based;
- only ``\\r\\n``, ``\\n`` and ``\\r`` end a line, and a position cannot point inside ``\\r\\n``;
- a character past the end of its line clamps to the line end (before the terminator); a line past
  the last line clamps to the end of the document; a position inside a character (half a surrogate
  pair, part of a UTF-8 sequence) is rejected;
- all edits of one ``TextDocumentEdit`` refer to the original text; equal starts keep array order;
  overlapping ranges reject the whole ``WorkspaceEdit``;
- ``documentChanges`` apply strictly in order, including create/rename/delete on an in-memory file
  map; a ``TextDocumentEdit`` whose version is not null and differs from the document's rejects the
  whole edit; an ``annotationId`` missing from ``changeAnnotations`` rejects it too.

Rejection is all or nothing: the caller's files are never modified (a new map is returned).
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol.converters import get_converter
from pygls.uris import to_fs_path

from agent_ls.workspace.apply_files import FileWrite, apply_files

_LINE_END = re.compile(r"\r\n|\r|\n")

Json = Mapping[str, Any]

_CONVERTER = get_converter()  # building one takes milliseconds; the property tests call wire() often


class EditRejected(Exception):
    """The client refuses the whole WorkspaceEdit (``applied: false``); the message is the reason."""


@dataclass(frozen=True)
class Document:
    """A file as the client holds it: its text and its version (None for a closed file)."""

    text: str
    version: int | None = None


def wire(value: object) -> Any:
    """The JSON (camelCase) form of an lsprotocol object, as it travels to the client."""
    return _CONVERTER.unstructure(value)


def _units(char: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(char.encode("utf-8"))
    if encoding == "utf-32":
        return 1
    return len(char.encode("utf-16-le")) // 2


def _offset(text: str, starts: Sequence[int], position: Json, encoding: str) -> int:
    line, character = position["line"], position["character"]
    if line < 0 or character < 0:
        raise EditRejected(f"negative position {line}:{character}")
    if line >= len(starts):
        return len(text)
    index = starts[line]
    line_end = starts[line + 1] if line + 1 < len(starts) else len(text)
    content_end = line_end
    while content_end > index and text[content_end - 1] in "\r\n":
        content_end -= 1
    units = 0
    while index < content_end and units < character:
        units += _units(text[index], encoding)
        index += 1
    if units > character:
        raise EditRejected(f"position {line}:{character} ({encoding}) points inside a character")
    return index


def apply_text_edits(text: str, edits: Sequence[Json], encoding: str = "utf-16") -> str:
    """Apply one document's ``TextEdit``s (all relative to ``text``) and return the new text.

    Raises:
        EditRejected: a range ends before it starts, ranges overlap, or a position splits a character.
    """
    starts = [0, *(match.end() for match in _LINE_END.finditer(text))]
    spans = []
    for edit in edits:
        start = _offset(text, starts, edit["range"]["start"], encoding)
        end = _offset(text, starts, edit["range"]["end"], encoding)
        if end < start:
            raise EditRejected(f"range {edit['range']} ends before it starts")
        spans.append((start, end, edit["newText"]))
    spans.sort(key=lambda span: span[0])  # stable: equal starts keep array order
    for (_, previous_end, _), (start, _, _) in itertools.pairwise(spans):
        if previous_end > start:
            raise EditRejected("overlapping ranges")
    out: list[str] = []
    cursor = 0
    for start, end, new_text in spans:
        out += [text[cursor:start], new_text]
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def apply_workspace_edit(
    files: Mapping[str, Document], edit: Json, encoding: str = "utf-16"
) -> dict[str, Document]:
    """Apply a wire-form ``WorkspaceEdit`` to ``files`` (URI to document) and return the new map.

    A document a ``TextDocumentEdit`` changes gets version + 1 (as an editor's buffer would).

    Raises:
        EditRejected: anything a strict client refuses (see the module docstring); ``files`` is
            untouched either way.
    """
    result = dict(files)
    annotations = edit.get("changeAnnotations") or {}

    def check_annotation(item: Json) -> None:
        note = item.get("annotationId")
        if note is not None and note not in annotations:
            raise EditRejected(f"unknown annotation id {note!r}")

    def edit_document(uri: str, version: int | None, edits: Sequence[Json]) -> None:
        if uri not in result:
            raise EditRejected(f"{uri} does not exist")
        document = result[uri]
        if version is not None and version != document.version:
            raise EditRejected(f"version mismatch for {uri}: edit {version}, document {document.version}")
        for item in edits:
            check_annotation(item)
        new_version = None if document.version is None else document.version + 1
        result[uri] = Document(apply_text_edits(document.text, edits, encoding), new_version)

    document_changes = edit.get("documentChanges")
    if document_changes is not None:
        for change in document_changes:
            check_annotation(change)
            kind = change.get("kind")
            options = change.get("options") or {}
            if kind is None:
                identifier = change["textDocument"]
                edit_document(identifier["uri"], identifier.get("version"), change["edits"])
            elif kind == "create":
                _create(result, change["uri"], options)
            elif kind == "rename":
                _rename(result, change["oldUri"], change["newUri"], options)
            elif kind == "delete":
                _delete(result, change["uri"], options)
            else:
                raise EditRejected(f"unknown resource operation {kind!r}")
    else:
        for uri, edits in (edit.get("changes") or {}).items():
            edit_document(uri, None, edits)
    return result


def _create(files: dict[str, Document], uri: str, options: Json) -> None:
    if uri in files:
        if options.get("overwrite"):  # overwrite wins over ignoreIfExists
            files[uri] = Document("")
        elif not options.get("ignoreIfExists"):
            raise EditRejected(f"cannot create {uri}: it exists")
        return
    files[uri] = Document("")


def _rename(files: dict[str, Document], old: str, new: str, options: Json) -> None:
    if old not in files:
        raise EditRejected(f"cannot rename {old}: it does not exist")
    if new in files and not options.get("overwrite"):
        if options.get("ignoreIfExists"):
            return
        raise EditRejected(f"cannot rename to {new}: it exists")
    files[new] = files.pop(old)


def _delete(files: dict[str, Document], uri: str, options: Json) -> None:
    inside = [key for key in files if options.get("recursive") and key.startswith(uri.rstrip("/") + "/")]
    if uri not in files and not inside:
        if options.get("ignoreIfNotExists"):
            return
        raise EditRejected(f"cannot delete {uri}: it does not exist")
    for key in [uri, *inside]:
        files.pop(key, None)


@dataclass(frozen=True)
class Outcome:
    """The client's answer to ``workspace/applyEdit``: ``applied``, and why not."""

    applied: bool
    failure_reason: str | None = None


def _touched(edit: Json) -> list[str]:
    uris: list[str] = []
    for change in edit.get("documentChanges") or []:
        if change.get("kind") == "rename":
            uris += [change["oldUri"], change["newUri"]]
        elif change.get("kind") in ("create", "delete"):
            uris.append(change["uri"])
        else:
            uris.append(change["textDocument"]["uri"])
    return uris + list((edit.get("changes") or {}).keys())


class EditorFiles:
    """An editor's files: open buffers (text and version) over the disk.

    ``apply`` applies a wire-form WorkspaceEdit all or nothing: open documents change in their buffer
    (version + 1, unsaved, as in an editor); closed files are read from and written to disk with their
    line endings kept byte for byte, through ``apply_files`` (checked first, rolled back on an error).
    """

    def __init__(self) -> None:
        self.buffers: dict[str, Document] = {}

    def open(self, uri: str, text: str, version: int) -> None:
        self.buffers[uri] = Document(text, version)

    def text(self, uri: str) -> str:
        if uri in self.buffers:
            return self.buffers[uri].text
        with _path(uri).open(encoding="utf-8", newline="") as handle:
            return handle.read()

    def save(self, uri: str) -> None:
        _path(uri).write_text(self.buffers[uri].text, encoding="utf-8", newline="")

    def apply(self, edit: Json, encoding: str = "utf-16") -> Outcome:
        before: dict[str, Document] = {}
        try:
            for uri in _touched(edit):
                if uri in self.buffers:
                    before[uri] = self.buffers[uri]
                elif _path(uri).is_file():
                    before[uri] = Document(self.text(uri))
            after = apply_workspace_edit(before, edit, encoding)
        except EditRejected as exc:
            return Outcome(applied=False, failure_reason=str(exc))
        on_disk: dict[Path, bytes | None] = {_path(uri): None for uri in before.keys() - after.keys()}
        for uri, document in after.items():
            if uri not in self.buffers and document.version is None and before.get(uri) != document:
                on_disk[_path(uri)] = document.text.encode("utf-8")
        if on_disk:  # all or nothing on disk too, as an editor's refactoring does
            root = Path(os.path.commonpath([path.parent for path in on_disk]))
            while not root.is_dir() and root != root.parent:  # a new file's folders are made by the apply
                root = root.parent
            writes = [FileWrite(path.relative_to(root).as_posix(), data) for path, data in on_disk.items()]
            outcome = apply_files(root, writes)
            if not outcome.applied:
                return Outcome(applied=False, failure_reason=outcome.message)
        for uri in before.keys() - after.keys():
            self.buffers.pop(uri, None)
        for uri, document in after.items():
            if uri in self.buffers or document.version is not None:
                self.buffers[uri] = document
        return Outcome(applied=True)


def _path(uri: str) -> Path:
    fs = to_fs_path(uri)
    if not fs:
        raise EditRejected(f"{uri} is not a file URI")
    return Path(fs)
