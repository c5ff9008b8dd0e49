"""Writing a proposal to disk outside an editor (``agent-ls run --apply``), and the staleness check
shared with the LSP apply path for files that are not open in the editor."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from agent_ls.core.proposal import FileChange


def disk_stale_reason(root: Path, change: FileChange) -> str | None:
    """Why ``change`` no longer fits the file on disk, or None when it still does.

    An existing file is stale when its bytes differ from ``change.base_text``; a new file is stale when
    something now exists at its path; any file is refused when its path now resolves outside ``root``
    (checked again at apply time, not only when the agent read it). The reason is one line naming the path.
    """
    path = root / change.path
    real_root = root.resolve()
    if not path.resolve().is_relative_to(real_root):
        # A directory on the way was swapped for a symlink since the agent read the file: writing now
        # would land outside the workspace.
        return f"{change.path} now resolves outside the workspace (a symlink on its path); not written"
    if change.is_new:
        return (
            f"{change.path} now exists on disk; the agent proposed it as a new file"
            if path.exists()
            else None
        )
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            current = handle.read()
    except FileNotFoundError:
        return f"{change.path} was deleted since the agent read it"
    except (OSError, UnicodeDecodeError) as exc:
        return f"{change.path} can no longer be read as UTF-8 text: {exc}"
    return None if current == change.base_text else f"{change.path} changed on disk since the agent read it"


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` (line endings kept byte for byte) through a temporary file and ``os.replace``.

    The file's permission bits are kept. On any error the temporary file is removed and the original
    is untouched.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".agent-ls")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
