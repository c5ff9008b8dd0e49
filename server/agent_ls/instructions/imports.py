"""``@path`` imports in CLAUDE.md-style instruction files: finding them, resolving them, inlining them.

Syntax (``find_imports``), following Claude Code memory imports ("Import additional files": ``@path``,
relative to the importing file, not evaluated inside Markdown code spans or code blocks) and Gemini CLI
``memoryImportProcessor`` (circular imports detected, ``maxDepth: 5``):

- an ``@`` at the start of a line or after a blank, followed by a quoted path (``@'~/my rules.md'``,
  ``@"x.md"``) or a bare word;
- a bare word is an import only when it looks like a path: it starts with ``./``, ``../``, ``/`` or
  ``~/``, or its last segment has a text-file extension (``@AGENTS.md``, ``@docs/style.md``). So npm
  scopes (``@cline/llms``, ``@scope/package``), decorators (``@pytest.fixture``, ``@dataclass``),
  ``@mentions`` and e-mail addresses are not imports, and neither are Markdown links (no ``@``);
- trailing sentence punctuation is not part of the path (``see @AGENTS.md.``);
- nothing inside fenced code blocks (``````` or ``~~~``, also in list items and block quotes) or code
  spans (which may run over several lines of a paragraph) is an import.

Resolution (``Importer.expand``), for each import in order of appearance:

1. ``~`` paths are refused: a workspace's instructions never read the user's home;
2. the path is made absolute against the importing file's directory, ``..`` folded, and its real path
   (symlinks resolved) must be inside the workspace root, else refused (never read);
3. not found, a cycle (the target is being imported right now), deeper than 5 hops, a file already
   loaded (a chain file or an earlier import: never inlined twice) or a secret file: a notice instead;
4. otherwise the target is read once and inlined, recursively, right after the importing line, framed
   by ``[imported from <label>]`` and ``[end of import <label>]``.

Every import that is not inlined leaves ``[import <message>]`` in the text and a diagnostic on the
importing file's line; the importing line itself stays as written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agent_ls.core.file_diagnostics import FileDiagnostic, Severity
from agent_ls.instructions.reading import read_head, split_lines, strip_ending

ImportStatus = Literal["resolved", "refused", "not_found", "cycle", "too_deep", "duplicate"]

MAX_IMPORT_DEPTH = 5
"""Hops from the instruction file: its own imports are hop 1 (Claude Code and Gemini CLI: 5)."""

# Extensions of a bare ``@word.ext`` that make it a file path. Decorators and scoped packages either
# have no extension (``@dataclass``, ``@cline/llms``) or one that is no file type (``@pytest.fixture``).
TEXT_EXTENSIONS = frozenset(
    "md mdc mdx markdown txt text rst adoc org json jsonc json5 yaml yml toml ini cfg conf xml csv html "
    "py pyi js mjs cjs ts tsx jsx sh bash go rs java kt rb c h cc cpp hpp cs swift sql proto graphql "
    "css scss".split()
)

_CANDIDATE = re.compile(
    r"""(?<!\S)@(?:'(?P<single>[^'\r\n]+)'|"(?P<double>[^"\r\n]+)"|(?P<bare>[^\s'"`]+))"""
)
_NOT_IN_BARE_PATH = re.compile(r"""[()\[\]{}<>=,;*?|\\:!$#&^%]""")
_TRAILING = ".,;:!?)]}>"
_FENCE_OPEN = re.compile(r"^[ \t>]*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_FENCE_CLOSE = re.compile(r"^[ \t>]*(?P<fence>`{3,}|~{3,})[ \t]*$")
_BACKTICKS = re.compile(r"`+")


@dataclass(frozen=True)
class ImportRecord:
    """One ``@path`` import and what became of it.

    Attributes:
        spec: the path as written, without the ``@`` (and without quotes).
        line: 0-based line of the import in ``importer``.
        status: ``resolved`` (inlined), ``refused`` (outside the workspace, a home path, a secret file),
            ``not_found`` (missing or not a readable regular file), ``cycle``, ``too_deep`` (more than
            ``MAX_IMPORT_DEPTH`` hops) or ``duplicate`` (already loaded, not inlined twice).
        path: the absolute target when known (folded, symlinks kept); None for a ``~`` path.
        message: one line, e.g. ``refused: ~/.claude/CLAUDE.local.md is outside the workspace``.
        importer: the file holding the import: the instruction file, or an imported file for nested
            imports.
    """

    spec: str
    line: int
    status: ImportStatus
    path: Path | None
    message: str
    importer: Path

    def wire(self) -> dict[str, object]:
        """``{spec, line, status, path, message, importer}`` (camelCase JSON; ``path`` may be null)."""
        return {
            "spec": self.spec,
            "line": self.line,
            "status": self.status,
            "path": None if self.path is None else str(self.path),
            "message": self.message,
            "importer": str(self.importer),
        }


@dataclass(frozen=True)
class ImportToken:
    """An ``@path`` found in a text: ``spec`` on 0-based ``line``, code points ``start``..``end``."""

    spec: str
    line: int
    start: int
    end: int


def find_imports(lines: Sequence[str]) -> list[ImportToken]:
    """The imports of a Markdown text, in order (module docstring, "Syntax").

    Args:
        lines: the text's lines without their endings.
    """
    tokens: list[ImportToken] = []
    for paragraph in _paragraphs(lines):
        text = "\n".join(lines[i] for i in paragraph)
        spans = _code_spans(text)
        offset = 0
        for index in paragraph:
            line = lines[index]
            for match in _CANDIDATE.finditer(line):
                at = offset + match.start()
                if any(start <= at < end for start, end in spans):
                    continue
                spec = _spec(match)
                if spec is not None:
                    tokens.append(ImportToken(spec, index, match.start(), match.end()))
            offset += len(line) + 1
    return tokens


def _spec(match: re.Match[str]) -> str | None:
    quoted = match.group("single") or match.group("double")
    if quoted is not None:
        return quoted.strip() or None
    bare = match.group("bare").rstrip(_TRAILING)
    if not bare or "://" in bare or _NOT_IN_BARE_PATH.search(bare):
        return None
    if bare.startswith(("./", "../", "/", "~/")):
        return bare
    last = bare.rsplit("/", 1)[-1]
    stem, dot, extension = last.rpartition(".")
    return bare if dot and stem and extension.lower() in TEXT_EXTENSIONS else None


def _paragraphs(lines: Sequence[str]) -> list[list[int]]:
    """Runs of non-blank lines outside fenced code blocks (code spans cannot cross them)."""
    paragraphs: list[list[int]] = []
    current: list[int] = []
    fence: str | None = None
    for index, line in enumerate(lines):
        if fence is not None:
            close = _FENCE_CLOSE.match(line)
            if close and close["fence"][0] == fence[0] and len(close["fence"]) >= len(fence):
                fence = None
            continue
        opening = _FENCE_OPEN.match(line)
        if opening and not (opening["fence"][0] == "`" and "`" in opening["info"]):
            fence = opening["fence"]
        if fence is not None or not line.strip():
            if current:
                paragraphs.append(current)
            current = []
            continue
        current.append(index)
    if current:
        paragraphs.append(current)
    return paragraphs


def _code_spans(text: str) -> list[tuple[int, int]]:
    """CommonMark code spans: a backtick run up to the next run of the same length (else literal)."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        start, end = runs[index]
        closer = next(
            (j for j in range(index + 1, len(runs)) if runs[j][1] - runs[j][0] == end - start), None
        )
        if closer is None:
            index += 1
            continue
        spans.append((start, runs[closer][1]))
        index = closer + 1
    return spans


@dataclass
class Expansion:
    """A file's text with its imports inlined.

    Attributes:
        pieces: ``(raw text, line)`` in order; joined they are the expanded text with the line endings
            of the files. ``line`` is the 0-based line of the instruction file the piece belongs to
            (an inlined block belongs to its ``@`` line).
        imports: every import met, nested ones included, in order of appearance.
        diagnostics: on the file holding each import that was not inlined.
        unread_bytes: bytes of imported files beyond what was read (they count in the size, never kept).
    """

    pieces: list[tuple[str, int]] = field(default_factory=list)
    imports: list[ImportRecord] = field(default_factory=list)
    diagnostics: list[FileDiagnostic] = field(default_factory=list)
    unread_bytes: int = 0


class Importer:
    """Inlines imports for one chain (or one session's nested files), never the same real file twice.

    Args:
        workspace_root: the workspace root as given (labels are relative to it).
        real_root: its real path; every import target's real path must be inside it.
        loaded: real paths already in the prompt (the chain's files); grows with every inlined file.
        read_limit: bytes read of an imported file (the per-file cap: more can never be kept).
        is_secret: whether a path relative to ``real_root`` (POSIX) names a secret file.
        label: the display label of an absolute path.
    """

    def __init__(
        self,
        *,
        workspace_root: Path,
        real_root: Path,
        loaded: set[Path],
        read_limit: int,
        is_secret: Callable[[str], bool],
        label: Callable[[Path], str],
    ) -> None:
        self._root = workspace_root
        self._real_root = real_root
        self._loaded = loaded
        self._read_limit = read_limit
        self._is_secret = is_secret
        self._label = label

    def expand(self, text: str, *, path: Path, real_path: Path) -> Expansion:
        """``text`` (of the instruction file ``path``) with its imports inlined (module docstring)."""
        expansion = Expansion()
        expansion.pieces = self._process(expansion, text, path, depth=0, stack=(real_path,))
        return expansion

    def _process(
        self, out: Expansion, text: str, path: Path, *, depth: int, stack: tuple[Path, ...]
    ) -> list[tuple[str, int]]:
        lines = split_lines(text)
        by_line: dict[int, list[ImportToken]] = {}
        for token in find_imports([strip_ending(line) for line in lines]):
            by_line.setdefault(token.line, []).append(token)
        pieces: list[tuple[str, int]] = []
        for index, line in enumerate(lines):
            pieces.append((line, index))
            tokens = by_line.get(index)
            if not tokens:
                continue
            if not line.endswith(("\n", "\r")):
                pieces.append(("\n", index))
            for token in tokens:
                pieces.extend((chunk, index) for chunk in self._one(out, token, path, depth, stack))
        return pieces

    def _one(
        self, out: Expansion, token: ImportToken, importer: Path, depth: int, stack: tuple[Path, ...]
    ) -> list[str]:
        status, target, real, message = self._resolve(token.spec, importer, depth, stack)
        chunks: list[str]
        if status == "resolved" and target is not None and real is not None:
            readout = read_head(real, self._read_limit, hard_links_base=self._real_root)
            if isinstance(readout, str) and readout.startswith("is a hard link"):
                status, message = "refused", f"refused: {self._label(target)} {readout}"
            elif isinstance(readout, str):
                status, message = "not_found", f"not found: {self._label(target)}: {readout}"
            else:
                self._loaded.add(real)
                out.imports.append(ImportRecord(token.spec, token.line, status, target, message, importer))
                if not readout.complete:
                    out.unread_bytes += readout.size_bytes - len(readout.text.encode("utf-8"))
                inner = self._process(out, readout.text, target, depth=depth + 1, stack=(*stack, real))
                body = "".join(chunk for chunk, _ in inner)
                if body and not body.endswith(("\n", "\r")):
                    body += "\n"
                label = self._label(target)
                chunks = [f"[imported from {label}]\n", body, f"[end of import {label}]\n"]
                return [chunk for chunk in chunks if chunk]
        out.imports.append(ImportRecord(token.spec, token.line, status, target, message, importer))
        severity: Severity = "information" if status == "duplicate" else "warning"
        out.diagnostics.append(
            FileDiagnostic(importer, token.line, token.start, token.end, severity, f"import {message}")
        )
        return [f"[import {message}]\n"]

    def _resolve(
        self, spec: str, importer: Path, depth: int, stack: tuple[Path, ...]
    ) -> tuple[ImportStatus, Path | None, Path | None, str]:
        """``(status, target, real target, message)``; status "resolved" means "read it next"."""
        if spec.startswith("~"):
            message = f"refused: {spec} is outside the workspace (home paths are never read)"
            return "refused", None, None, message
        written = Path(spec)
        target = Path(os.path.normpath(written if written.is_absolute() else importer.parent / written))
        try:
            real = target.resolve()
        except (OSError, RuntimeError):
            return "not_found", target, None, f"not found: {spec} (its symlinks cannot be resolved)"
        if not real.is_relative_to(self._real_root):
            how = "through a symlink " if target.is_relative_to(self._root) else ""
            return "refused", target, None, f"refused: {spec} resolves {how}outside the workspace"
        label = self._label(target)
        if not real.exists():
            return "not_found", target, None, f"not found: {label}"
        if real in stack:
            trail = " → ".join(self._label(p) for p in (*stack, real))
            return "cycle", target, None, f"cycle: {label} is already being imported ({trail})"
        if depth + 1 > MAX_IMPORT_DEPTH:
            return "too_deep", target, None, f"too deep: {label} is more than {MAX_IMPORT_DEPTH} imports away"
        if real in self._loaded:
            return "duplicate", target, None, f"already loaded: {label} is not inlined twice"
        if self._is_secret(real.relative_to(self._real_root).as_posix()):
            return "refused", target, None, f"refused: {label} is a secret file"
        return "resolved", target, real, f"imported {label}"
