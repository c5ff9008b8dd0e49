"""The core's edit model: a proposal is the pending edits of a session, one ``FileChange`` per file.

It knows nothing of LSP: ``lsp/convert.py`` turns it into a WorkspaceEdit, ``workspace/diffs.py`` into
unified diffs, and ``agent-ls run --apply`` writes it to disk.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileChange:
    """The agent's proposed new content for one file.

    Attributes:
        path: workspace-relative POSIX path (``src/app.py``).
        is_new: True when the file did not exist (on disk or in an editor buffer) when first written.
        base_text: the text the agent's edit is based on (the editor buffer if open, else the disk
            file; ``""`` for a new file). Line endings kept byte for byte.
        base_version: the editor buffer version ``base_text`` came from, or None for a closed file.
        new_text: the proposed text, line endings kept byte for byte.
    """

    path: str
    is_new: bool
    base_text: str
    base_version: int | None
    new_text: str
