"""Where the shared real-world corpus lives: ``<repo>/../shared/corpus`` (read-only; never written)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"

if not (CORPUS / "README.md").is_file():  # an empty parametrization would pass silently
    raise RuntimeError(f"the shared corpus is missing at {CORPUS}; clone the repository next to shared/")


_SYMLINK = re.compile(r"^\* 120000 \d+ (?P<path>\S+) -> (?P<target>\S+)$")


def copy_set(name: str, tmp_path: Path) -> Path:
    """The corpus set ``name`` as a workspace in ``tmp_path``, symlinks restored, with a ``.git`` marker."""
    workspace = tmp_path / "ws"
    shutil.copytree(CORPUS / "agents-md" / name, workspace, symlinks=True)
    layout = workspace / "LAYOUT.txt"
    for line in layout.read_text(encoding="utf-8").splitlines() if layout.exists() else []:
        match = _SYMLINK.match(line)
        if match is None:
            continue
        link = workspace / match["path"]
        if not link.is_symlink():
            assert link.read_text(encoding="utf-8") == match["target"], link
            link.unlink()
            link.symlink_to(match["target"])
    (workspace / ".git").mkdir()
    return workspace
