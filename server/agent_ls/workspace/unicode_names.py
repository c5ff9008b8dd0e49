"""Names that differ only in Unicode normalization: one file, not two, and never a silent guess.

macOS tools, archives and some editors store names decomposed (NFD: ``e`` + U+0301), while models and
most keyboards write them composed (NFC: ``é``). Linux file systems compare bytes, so ``café.txt`` and
``café.txt`` are different names there, and a model that copies a name from ``list_files`` output
that it then re-encodes gets "file not found". ``match_entry`` maps the name written onto the one entry
equal to it after NFC normalization. Two such entries (``café.txt`` stored both ways) look the same in
every listing, so a model cannot tell which it means even when it wrote one of them exactly: that is an
error naming both (``AmbiguousName``), never a guess.

``closest_entry`` gives the nearest existing name for a "not found" message.
"""

from __future__ import annotations

import difflib
import os
import unicodedata
from pathlib import Path


class AmbiguousName(ValueError):
    """Two or more entries of a folder equal the name written after Unicode normalization."""


def _nfc(name: str) -> str:
    return unicodedata.normalize("NFC", name)


def _entries(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def match_entry(directory: Path, name: str) -> str:
    """The entry of ``directory`` that ``name`` means (module docstring).

    Returns:
        The single entry equal to ``name`` after NFC normalization; ``name`` itself when none is (a new
        file) or when it is ASCII (which has one form only).

    Raises:
        AmbiguousName: several entries equal ``name`` after normalization.
    """
    if name.isascii():
        return name
    wanted = _nfc(name)
    found = sorted(entry for entry in _entries(directory) if _nfc(entry) == wanted)
    if len(found) > 1:
        shown = " and ".join(repr(entry) for entry in found)
        where = directory.name or str(directory)
        raise AmbiguousName(f"{name!r} matches {shown} in {where!r} after Unicode normalization")
    return found[0] if found else name


def match_path(path: Path) -> Path:
    """``path`` (absolute) with each non-ASCII component replaced by its ``match_entry``.

    Raises:
        AmbiguousName: as ``match_entry``, for the first ambiguous component.
    """
    if path.as_posix().isascii():
        return path
    parts = path.parts
    current = Path(parts[0])
    for index, part in enumerate(parts[1:], start=1):
        if not current.is_dir():
            return current.joinpath(*parts[index:])
        current = current / match_entry(current, part)
    return current


def closest_entry(directory: Path, name: str) -> str | None:
    """The existing entry of ``directory`` nearest to ``name`` (for "not found: did you mean …?"), or
    None when nothing is close. Compared after NFC normalization and case folding."""
    entries = _entries(directory)
    keyed = {_nfc(entry).casefold(): entry for entry in entries}
    close = difflib.get_close_matches(_nfc(name).casefold(), list(keyed), n=1, cutoff=0.6)
    return keyed[close[0]] if close else None


def not_found_hint(root: Path, rel: str) -> str:
    """For a "not found" message about ``rel`` (relative to ``root``, or absolute): ``"; the closest
    existing entry is 'src/app.py'"`` naming the nearest entry at the first component that does not
    exist, or ``""`` when nothing is close."""
    path = Path(rel) if os.path.isabs(rel) else root / rel
    current = Path(path.parts[0])
    for part in path.parts[1:]:
        if not os.path.lexists(current / part):
            near = closest_entry(current, part) if current.is_dir() else None
            if near is None:
                return ""
            shown = current / near
            try:
                shown = shown.relative_to(root)
            except ValueError:
                pass
            return f"; the closest existing entry is {shown.as_posix()!r}"
        current = current / part
    return ""
