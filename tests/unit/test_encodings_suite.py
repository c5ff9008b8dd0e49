"""The Encodings suite (issue 12): documents round-trip byte-exact through edits in every position encoding.

Each example writes a document to disk: emoji (with ZWJ sequences), CJK, combining marks, LF, CRLF or
mixed line endings, with or without a final newline, in UTF-8 (with or without a BOM), UTF-16 LE/BE and
UTF-32 LE with a BOM, cp1252 or Shift-JIS. Then, through the real pieces (``Overlay`` on the disk,
the ``edit_file`` and ``write_file`` tools, ``apply_proposal``, ``build_workspace_edit``):

1. the model's view is read with ``read_file``'s page (CRLF shown as LF, the BOM not shown), an
   ``old_string`` is cut from it and replaced (every occurrence) with new text;
2. the proposal's new text, seen as the model sees it, is exactly the view with that replacement;
   an edit is refused only when the file's encoding cannot write the new text ("cannot be written");
3. ``agent-ls run --apply``'s writer puts bytes on disk that decode to the new text in the file's
   encoding, keep the BOM, and keep every byte of the lines before and after the lines the edit touched;
4. the proposal's ``WorkspaceEdit``, built for a client in UTF-8, UTF-16 and UTF-32 positions and applied
   by an independent applier that counts code units itself, turns the base text into the new text
   exactly;
5. ``write_file`` with a whole new text in the view keeps the encoding and gives back that text.

``AGENT_LS_FUZZ_LONG=1`` runs the long mode (``AGENT_LS_FUZZ_EXAMPLES`` overrides the count);
docs/reliability.md gives the figures.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types as t

from agent_ls.core.errors import EditFailed
from agent_ls.core.file_views import PageRequest
from agent_ls.core.ports import CommandResult
from agent_ls.lsp.convert import build_workspace_edit
from agent_ls.tools import edit_file, write_file
from agent_ls.tools.base import ToolContext
from agent_ls.workspace.apply import apply_proposal
from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.shadow import ShadowCopy

LONG = os.environ.get("AGENT_LS_FUZZ_LONG") == "1"
EXAMPLES = int(os.environ.get("AGENT_LS_FUZZ_EXAMPLES", 5000 if LONG else 150))

EVERYTHING = [
    "code = 1",
    "x",
    " ",
    "\t",
    "é",
    "ü",
    "😀",
    "👨\u200d👩\u200d👧",
    "漢字",
    "かな",
    "e\u0301",
    "a\u0308\u0323",
]


@dataclass(frozen=True)
class Codec:
    name: str
    bom: bytes
    pieces: tuple[str, ...]


CODECS = [
    Codec("utf-8", b"", tuple(EVERYTHING)),
    Codec("utf-8", codecs.BOM_UTF8, tuple(EVERYTHING)),
    Codec("utf-16-le", codecs.BOM_UTF16_LE, tuple(EVERYTHING)),
    Codec("utf-16-be", codecs.BOM_UTF16_BE, tuple(EVERYTHING)),
    Codec("utf-32-le", codecs.BOM_UTF32_LE, tuple(EVERYTHING)),
    Codec("cp1252", b"", ("café", "crème brûlée", "Größe", "“quote”", "— €", "x = 1", " ")),
    Codec("shift_jis", b"", ("日本語のテキスト", "これはテストです。", "カタカナ", "x = 1", " ")),
]
ENCODINGS = (t.PositionEncodingKind.Utf8, t.PositionEncodingKind.Utf16, t.PositionEncodingKind.Utf32)


class _NoRunner:
    async def run(self, command: str, timeout_s: float) -> CommandResult:
        raise AssertionError("the suite runs no command")


@st.composite
def documents(draw: st.DrawFn) -> tuple[Codec, str]:
    codec = draw(st.sampled_from(CODECS))
    endings = draw(st.sampled_from([("\n",), ("\r\n",), ("\n", "\r\n")]))
    lines = draw(
        st.lists(st.lists(st.sampled_from(codec.pieces), max_size=5).map("".join), min_size=1, max_size=8)
    )
    text = "".join(line + draw(st.sampled_from(endings)) for line in lines)
    if draw(st.booleans()):
        text = text[: -2 if text.endswith("\r\n") else -1]  # no final newline
    return codec, text


def _view(text: str) -> str:
    return text.replace("\r\n", "\n")


def _apply_lsp(text: str, edits: Sequence[t.TextEdit | t.AnnotatedTextEdit], encoding: str) -> str:
    """Apply ``edits`` the way a client counting ``encoding`` units would, independently of pygls."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]

    def offset(position: t.Position) -> int:
        if position.line >= len(starts):
            return len(text)
        at, units = starts[position.line], 0
        while units < position.character:
            char = text[at]
            units += {"utf-8": len(char.encode()), "utf-16": 2 if ord(char) > 0xFFFF else 1}.get(encoding, 1)
            at += 1
        assert units == position.character, "a position inside a character"
        return at

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def _touched(view: str, old: str) -> tuple[int, int]:
    """The view's line range (first line index, lines after the last) that the matches of ``old`` touch."""
    first = view.find(old)
    last = view.rfind(old) + len(old)
    after = view.find("\n", last)
    return view[:first].count("\n"), (view[after + 1 :].count("\n") if after >= 0 else -1)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(documents(), st.data())
def test_documents_round_trip_byte_exact_through_edits(
    tmp_path: Path, document: tuple[Codec, str], data: st.DataObject
) -> None:
    codec, text = document
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    original = codec.bom + text.encode(codec.name)
    (root / "doc.txt").write_bytes(original)
    overlay = Overlay(root, shadow=ShadowCopy(root, temp_parent=tmp_path), sandbox=None)
    context = ToolContext(workspace=overlay, runner=_NoRunner())

    # 1. What the model sees, and an edit cut from it.
    page = overlay.read_page("doc.txt", PageRequest(max_line_chars=10_000, max_chars=10**6))
    seen = "\n".join(line.text for line in page.lines)
    real = overlay.read_text("doc.txt")
    assert _view(real).rstrip("\n") == seen.rstrip("\n") or _view(real) == seen
    view = _view(real)
    start = data.draw(st.integers(0, max(len(view) - 1, 0)))
    old = view[start : data.draw(st.integers(start + 1, max(len(view), start + 1)))] or "x"
    new = data.draw(st.lists(st.sampled_from([*codec.pieces, "\n", "🎉", ""]), max_size=4).map("".join))
    if old not in view or old == new:
        return
    try:
        args = edit_file.Args(path="doc.txt", old_string=old, new_string=new, replace_all=True)
        asyncio.run(edit_file.run(args, context))
    except EditFailed as exc:
        assert "cannot be written" in str(exc) or "would empty the file" in str(exc), exc
        return
    (change,) = overlay.proposal() or [None]
    if change is None:  # the replacement changed nothing the proposal counts
        assert view.replace(old, new) == view
        return

    # 2. The model's view changed exactly as asked.
    assert _view(change.new_text) == view.replace(old, new)

    # 4. Every position encoding a client may negotiate rebuilds the new text exactly.
    for encoding in ENCODINGS:
        edit = build_workspace_edit(
            [change], root=root, encoding=encoding, change_annotations=False, resource_create=True, label="x"
        )
        (document_edit,) = edit.document_changes or []
        assert isinstance(document_edit, t.TextDocumentEdit)
        assert _apply_lsp(change.base_text, document_edit.edits, encoding) == change.new_text, encoding

    # 3. The bytes on disk: the new text in the file's encoding, BOM kept, untouched lines byte-exact.
    assert apply_proposal(root, [change], edit_refusal=lambda _: None).applied
    written = (root / "doc.txt").read_bytes()
    assert written.startswith(codec.bom) and change.encoding.bom == codec.bom
    assert codecs.decode(written[len(codec.bom) :], change.encoding.codec) == change.new_text
    before, after = _touched(view, old)
    old_lines, new_lines = real.split("\n"), change.new_text.split("\n")
    assert new_lines[:before] == old_lines[:before]
    if after >= 0:
        assert new_lines[len(new_lines) - after :] == old_lines[len(old_lines) - after :] if after else True

    # 5. write_file with a whole new text in the view keeps the encoding and gives that text back.
    overlay.discard()
    overlay.read_page("doc.txt", PageRequest())
    encoding_now = overlay.encoding_of("doc.txt")  # found again from the bytes written
    content = data.draw(st.lists(st.sampled_from([*codec.pieces, "\n"]), min_size=1, max_size=8).map("".join))
    try:
        asyncio.run(write_file.run(write_file.Args(path="doc.txt", content=content), context))
    except EditFailed as exc:
        assert "cannot be written" in str(exc), exc
        return
    rewritten = {c.path: c for c in overlay.proposal()}.get("doc.txt")
    if rewritten is not None:
        assert _view(rewritten.new_text) == content
        assert rewritten.encoding == encoding_now
        if "\r\n" not in change.new_text:
            assert "\r\n" not in rewritten.new_text
