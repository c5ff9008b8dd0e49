"""The core's edit model: a proposal is the pending edits of a session, one ``FileChange`` per file.

It knows nothing of LSP: ``lsp/convert.py`` turns it into a WorkspaceEdit, ``workspace/diffs.py`` into
unified diffs, and ``agent-ls run --apply`` writes it to disk (``FileChange.encoding`` gives the bytes).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TextEncoding:
    """How a file's bytes become text and back; found when the file is read (``workspace.file_encoding``).

    Attributes:
        codec: the Python codec name (``utf-8``, ``cp1252``, ``shift_jis``, ``utf-16-le``).
        bom: the byte order mark the file starts with (not part of the text), written back first;
            ``b""`` for none.
    """

    codec: str = "utf-8"
    bom: bytes = b""

    def encode(self, text: str) -> bytes:
        """The file's bytes for ``text``.

        Raises:
            UnicodeEncodeError: ``text`` holds a character the codec cannot write.
        """
        return self.bom + text.encode(self.codec)

    @property
    def label(self) -> str:
        """How to name it to the model and the user: ``utf-8``, ``utf-8 with BOM``, ``cp1252``."""
        return f"{self.codec} with BOM" if self.bom else self.codec


UTF8 = TextEncoding()
"""The encoding of a new file, and of a file read as UTF-8 without a BOM."""


@dataclass(frozen=True)
class FileChange:
    """The agent's proposed new content for one file.

    Attributes:
        path: workspace-relative POSIX path (``src/app.py``).
        is_new: True when the file did not exist (on disk or in an editor buffer) when first written.
        base_text: the text the agent's edit is based on: the version the agent read (the editor buffer
            if open, else the disk file; ``""`` for a new file). Line endings kept byte for byte.
        base_version: the editor buffer version ``base_text`` came from, or None for a closed file.
        new_text: the proposed text, line endings kept byte for byte.
        encoding: how ``base_text`` was decoded from the disk file and how ``new_text`` is written back
            (``agent-ls run --apply``, the shadow copy); UTF-8 for a new file.
    """

    path: str
    is_new: bool
    base_text: str
    base_version: int | None
    new_text: str
    encoding: TextEncoding = UTF8
