"""Folders only their owner may enter: the user state dir of sessions, kept outputs and notes.

``make_private(folder)`` creates ``folder`` and every missing folder above it with mode 0700 (``mkdir -p``
gives the missing parents 0777 minus the umask, 0755 usually: the names of the folders below them,
project base names, would be listed to every local user). Folders that exist already keep their mode:
they may be the user's own choice (``AGENT_LS_STATE_DIR=/some/shared/dir``). Source: the XDG Base Directory
Specification, which asks 0700 of the folders that hold a user's private runtime files.
"""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_MODE = 0o700


def make_private(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each with mode 0700 (module docstring).

    Raises:
        OSError: a folder cannot be created (a file in the way, no permission); an existing one is fine.
    """
    missing: list[Path] = []
    current = folder
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, PRIVATE_MODE)  # the umask only takes bits away: 0700 or less
        except FileExistsError:
            if not path.is_dir():
                raise
