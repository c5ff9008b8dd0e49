"""Names that Windows reads differently: how a path is read there, for the path policy's checks.

Win32 path normalization (Microsoft, "Naming Files, Paths, and Namespaces") drops trailing dots and
spaces from a name, reads ``\\`` as a separator, and NTFS reads ``name:stream:type`` as a stream of
``name`` (``.git::$INDEX_ALLOCATION`` is the ``.git`` directory itself) and resolves 8.3 short names
(``GIT~1`` for ``.git``, ``ENV~1`` for ``.env``). So ``.git./hooks/x`` is ``.git/hooks/x`` on Windows, on a
WSL ``/mnt/c`` drive and on a Windows share, and on Linux it is a file that becomes ``.git/hooks/x``
when the tree reaches Windows. Git refuses these spellings of ``.git`` on every platform
(``core.protectNTFS``, git's path.c ``is_ntfs_dotgit``); the path policy does the same for ``.git``
and for secret files (``windows_reading`` for the lexical spellings, ``short_name_targets`` for short
names, which only the directory listing can resolve). Reserved device names (``CON``, ``NUL``,
``COM1``...) name devices only on Windows, where ``reserved_device`` refuses them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

ON_WINDOWS = os.name == "nt"

# An 8.3 short name as NTFS and FAT generate them: up to 6 characters (fewer past ~9), "~", a number,
# and up to 3 characters of extension; or, past four collisions, 2 characters and 4 hex digits.
_SHORT_NAME = re.compile(r"([^.~\s]{1,7})~([1-9][0-9]{0,5})(?:\.([^.\s]{1,3}))?")
_GIT_SHORT = re.compile(r"git~[0-9]+")
_ODD = re.compile(r"[\\:~]|[. ](?:/|$)")
# Characters a short name replaces with "_" (Microsoft, "Naming Files": the 8.3 character set).
_NOT_IN_SHORT_NAMES = re.compile(r"[^A-Z0-9!#$%&'()\-@^_`{}~]")
_DEVICES = frozenset(
    {"con", "prn", "aux", "nul", "conin$", "conout$"}
    | {f"{port}{n}" for port in ("com", "lpt") for n in (*"123456789", "\u00b9", "\u00b2", "\u00b3")}
)


def may_read_differently(path: str) -> bool:
    """False when Windows (and macOS) surely read ``path`` as written: it is ASCII and holds no
    ``\\``, ``:`` or ``~``, and no component ends with a dot or a space. The cheap test before the others."""
    return not path.isascii() or _ODD.search(path) is not None


def windows_name(name: str) -> str:
    """One path component as Windows reads it: without its ``:stream`` suffix and trailing dots and
    spaces, ``git~N`` as ``.git``; ``""`` when nothing is left (``...`` reads as the folder itself)."""
    kept = name.split(":", 1)[0].rstrip(" .")
    return ".git" if _GIT_SHORT.fullmatch(kept.lower()) else kept


def windows_reading(path: str) -> str:
    """``path`` as Windows reads it (``windows_name`` on every component, ``\\`` a separator).

    A leading ``/`` or ``\\`` is kept; a relative path of no component reads as ``"."``. The case is
    kept: callers compare folded text.
    """
    parts = [kept for part in re.split(r"[\\/]", path) if (kept := windows_name(part))]
    joined = "/".join(parts)
    if path.startswith(("/", "\\")):
        return "/" + joined
    return joined or "."


def dot_git_alias(parts: Iterable[str], fold: Callable[[str], str]) -> str | None:
    """The first of ``parts`` (path components) that Windows or macOS reads as (or through) ``.git``
    without being spelled ``.git`` in some case: ``.git.``, ``.git::$INDEX_ALLOCATION``, ``GIT~1``,
    ``.git\\hooks``, ``.g`` U+200C ``it`` (HFS+ ignores the joiner); None when there is none.

    Args:
        parts: path components as written.
        fold: the secret matcher's folding (``secret_match.fold``), applied before the reading.
    """
    for part in parts:
        read = [windows_name(piece) for piece in fold(part).split("\\")]
        if ".git" in read and part.casefold() != ".git":
            return part
    return None


def short_name_targets(directory: Path, name: str) -> list[str]:
    """The entries of ``directory`` that ``name``, shaped like an 8.3 short name (``ENV~1``,
    ``CREDEN~1.JSO``, ``GI7EBA~1``), may stand for where the file system resolves short names (NTFS
    and FAT: Windows, a WSL ``/mnt/c`` drive, a Windows share).

    Returns:
        The entries' names, in listing order; ``[]`` when ``name`` is not shaped like a short name, is
        itself an entry (in any case), or ``directory`` cannot be listed.
    """
    shape = _SHORT_NAME.fullmatch(name)
    if shape is None:
        return []
    try:
        entries = os.listdir(directory)
    except OSError:
        return []
    if any(entry.casefold() == name.casefold() for entry in entries):
        return []
    base, ext = shape[1].upper(), (shape[3] or "").upper()
    hashed = len(base) == 6 and all(c in "0123456789ABCDEF" for c in base[2:])
    found = []
    for entry in entries:
        long_base, long_ext = _short_form(entry)
        if not long_base.startswith(base[:2] if hashed else base):
            continue
        if long_ext.startswith(ext) and (ext or not long_ext):
            found.append(entry)
    return found


def reserved_device(name: str) -> bool:
    """Whether Windows opens a device for the component ``name`` (``NUL``, ``con.txt``, ``COM1 ``):
    its part before the first dot, without trailing spaces, is a DOS device name (any case)."""
    return name.split(".", 1)[0].split(":", 1)[0].rstrip(" ").casefold() in _DEVICES


def _short_form(name: str) -> tuple[str, str]:
    """The base and extension ``name``'s short name starts with (before ``~N`` is added): upper case,
    spaces and leading dots dropped, the last dot separating the extension, the other dots dropped,
    characters outside the 8.3 set replaced with ``_``."""
    cleaned = name.upper().replace(" ", "").lstrip(".")
    stem, dot, ext = cleaned.rpartition(".")
    if not dot:
        stem, ext = cleaned, ""
    return _NOT_IN_SHORT_NAMES.sub("_", stem.replace(".", "")), _NOT_IN_SHORT_NAMES.sub("_", ext)[:3]
