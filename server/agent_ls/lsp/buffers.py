"""The editor's open documents as the overlay's ``BufferSource``: unsaved text and its version."""

from __future__ import annotations

from pathlib import Path

from pygls.workspace import Workspace as PyglsWorkspace

from agent_ls.lsp.file_uris import to_fs_path
from agent_ls.workspace.overlay import OpenBuffer


class EditorBuffers:
    """Reads pygls's document store (kept current by didOpen/didChange/didClose) on every call."""

    def __init__(self, workspace: PyglsWorkspace) -> None:
        self._workspace = workspace

    def get(self, path: Path) -> OpenBuffer | None:
        """The open document at ``path`` (compared by resolved path), or None when it is not open."""
        target = path.resolve()
        for uri, document in self._workspace.text_documents.items():
            fs = to_fs_path(uri)
            if fs and Path(fs).resolve() == target:
                return OpenBuffer(text=document.source, version=document.version or 0)
        return None

    def open_paths(self) -> list[Path]:
        """Paths of every open document with a file URI."""
        return [Path(fs) for uri in self._workspace.text_documents if (fs := to_fs_path(uri))]
