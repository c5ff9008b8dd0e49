"""The config files (user and workspace ``agent-ls.toml``) as the editor sees them: their problems as
diagnostics (``textDocument/publishDiagnostics``), refreshed when the client is ready, when such a file
is saved, and at each run (which reads them again).

A file whose problems are gone gets an empty diagnostics list, so the editor clears them. Positions
come from ``config/key_locator.py`` in code points of the line and are converted to the negotiated position
encoding (LSP 3.17 ``PositionEncodingKind``).
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from pathlib import Path

from lsprotocol import types as t
from pygls.uris import from_fs_path

from agent_ls.config import CONFIG_FILE_NAME, ConfigDiagnostic, LoadedConfig, load_config
from agent_ls.core.file_diagnostics import FileDiagnostic
from agent_ls.lsp.file_uris import to_fs_path
from agent_ls.lsp.state import AgentLanguageServer
from agent_ls.settings import EnvSnapshot

log = logging.getLogger(__name__)

SOURCE = "agent-ls"
SEVERITY = {
    "error": t.DiagnosticSeverity.Error,
    "warning": t.DiagnosticSeverity.Warning,
    "information": t.DiagnosticSeverity.Information,
}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def initialized(ls: AgentLanguageServer, params: t.InitializedParams) -> list[tuple[Path, LoadedConfig]]:
    """Read and publish the config files; returns each workspace root with its config."""
    loaded = refresh(ls)
    return list(zip(ls.state.roots, loaded, strict=False)) if len(loaded) == len(ls.state.roots) else []


def did_save(ls: AgentLanguageServer, params: t.DidSaveTextDocumentParams) -> None:
    path = to_fs_path(params.text_document.uri)
    if path and Path(path).name == CONFIG_FILE_NAME:
        refresh(ls)


def refresh(ls: AgentLanguageServer) -> list[LoadedConfig]:
    """Read the config of every workspace root and publish its diagnostics; returns what was loaded.

    Never raises: a config that breaks the reader is logged (the run that follows reports its own error),
    so a hostile ``agent-ls.toml`` cannot leave a run without its end.
    """
    env = EnvSnapshot.from_environ()
    try:
        loaded = [load_config(env, root) for root in ls.state.roots] or [load_config(env, None)]
        publish(ls, loaded)
    except Exception as exc:
        log.exception("reading the config files failed")
        message = f"agent-ls: cannot read the config files: {exc}"
        ls.window_log_message(t.LogMessageParams(type=t.MessageType.Error, message=message))
        return []
    return loaded


def for_root(ls: AgentLanguageServer, root: Path) -> LoadedConfig:
    """The config of ``root`` for a run, read once: every root's files are read (``refresh``), so their
    problems are published as they are now, and ``root``'s is returned."""
    for config in refresh(ls):
        if config.workspace_file is not None and config.workspace_file.parent == root.resolve():
            return config
    return load_config(EnvSnapshot.from_environ(), root)  # a root the client never announced


def publish(ls: AgentLanguageServer, loaded: list[LoadedConfig]) -> None:
    """Publish the diagnostics of ``loaded``, per file, and clear files that no longer have any."""
    by_file: dict[Path, list[ConfigDiagnostic]] = defaultdict(list)
    for config in loaded:
        for path in (config.user_file, config.workspace_file):
            if path is not None:
                by_file.setdefault(path, [])
        for diagnostic in config.diagnostics:
            if diagnostic not in by_file[diagnostic.path]:
                by_file[diagnostic.path].append(diagnostic)
    for path in ls.state.config_diagnostic_files - set(by_file):
        by_file[path] = []
    for path, diagnostics in by_file.items():
        if not diagnostics and path not in ls.state.config_diagnostic_files:
            continue  # nothing shown before, nothing to show now
        uri = from_fs_path(str(path))
        if uri is None:
            continue
        ls.state.diagnostics.publish(ls, uri, "config", [_lsp(ls, d) for d in diagnostics])
    ls.state.config_diagnostic_files = {path for path, found in by_file.items() if found}


def _lsp(ls: AgentLanguageServer, diagnostic: ConfigDiagnostic) -> t.Diagnostic:
    return lsp_diagnostic(diagnostic, ls.workspace.position_encoding or t.PositionEncodingKind.Utf16)


def lsp_diagnostic(diagnostic: FileDiagnostic, encoding: str) -> t.Diagnostic:
    """``diagnostic`` as an LSP ``Diagnostic`` (source ``agent-ls``), its columns converted from code points
    to ``encoding`` (an LSP 3.17 ``PositionEncodingKind``). Reads the diagnostic's line from disk unless the
    encoding is UTF-32: blocking, so callers with many files run it in a worker thread."""
    start, end = _columns(diagnostic, encoding)
    return t.Diagnostic(
        range=t.Range(start=t.Position(diagnostic.line, start), end=t.Position(diagnostic.line, end)),
        message=diagnostic.message,
        severity=SEVERITY[diagnostic.severity],
        source=SOURCE,
    )


def _columns(diagnostic: FileDiagnostic, encoding: str) -> tuple[int, int]:
    """The diagnostic's start and end columns in ``encoding`` (code points are UTF-32). The line is read as
    the editor shows it: without a BOM, split at LSP line breaks only (``\\n``, ``\\r\\n``, ``\\r``)."""
    if encoding == t.PositionEncodingKind.Utf32:
        return diagnostic.character, diagnostic.end_character
    try:
        text = diagnostic.path.read_text(encoding="utf-8-sig")
        line = _LINE_BREAK.split(text)[diagnostic.line]
    except (OSError, UnicodeDecodeError, IndexError):
        return diagnostic.character, diagnostic.end_character
    codec = "utf-8" if encoding == t.PositionEncodingKind.Utf8 else "utf-16-le"
    unit = 1 if codec == "utf-8" else 2

    def units(column: int) -> int:
        return len(line[:column].encode(codec, "surrogatepass")) // unit

    return units(diagnostic.character), units(diagnostic.end_character)
