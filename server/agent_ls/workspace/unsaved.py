"""What the shadow copy must hold on top of the disk: the unsaved texts of a session (a port).

The overlay (``overlay.py``) implements it with its pending edits and the editor's open buffers; the
shadow copy (``shadow.py``) writes them before each search or command. This small protocol is what
lets the shadow copy sit below the overlay, which owns a shadow copy, without importing it back.
"""

from __future__ import annotations

from typing import Protocol


class UnsavedFiles(Protocol):
    """The session's texts that differ from the disk, as bytes ready to be written."""

    def unsaved_files(self) -> dict[str, bytes]:
        """Workspace-relative POSIX path to the bytes of its pending edit, else its open buffer (in the
        file's encoding, line endings kept)."""
        ...
