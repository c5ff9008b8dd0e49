"""Where the shared real-world corpus lives: ``<repo>/../shared/corpus`` (read-only; never written)."""

from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"

if not (CORPUS / "README.md").is_file():  # an empty parametrization would pass silently
    raise RuntimeError(f"the shared corpus is missing at {CORPUS}; clone the repository next to shared/")
