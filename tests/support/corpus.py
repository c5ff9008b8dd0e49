"""Where the shared real-world corpus lives: ``<repo>/../shared/corpus`` (read-only; never written).

In a plain clone (no ``../shared`` beside it) the tests that need it skip with ``MISSING`` as the reason;
under ``CI=true`` the run fails at its start instead (``tests/conftest.py``), so CI can never pass by
skipping them.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
AVAILABLE = (CORPUS / "README.md").is_file()
T = TypeVar("T")
MISSING = f"needs the shared corpus at {CORPUS} (../shared/corpus beside the repository), which is missing"


def corpus_params(cases: Sequence[T], case_id: Callable[[T], str]) -> list[Any]:
    """``cases`` as ``pytest.param``s named by ``case_id``; when the corpus is missing (``cases`` is then
    empty), one parameter that skips with ``MISSING``, so the skip names the corpus."""
    if not AVAILABLE:
        return [pytest.param(None, id="corpus-missing", marks=pytest.mark.skip(reason=MISSING))]
    return [pytest.param(case, id=case_id(case)) for case in cases]


def require_corpus() -> None:
    """Skip the calling test, or the whole module when called at its top, when the corpus is missing."""
    if not AVAILABLE:
        pytest.skip(MISSING, allow_module_level=True)


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
