"""What the shadow copy (``shadow.py``) hands out: a command's snapshot and changes, the secrets to hide
in workspace mode, and the trace of what its last sync did."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class Snapshot:
    """The copy's state before a command (``prepare``): what ``changes_since`` compares with is the
    copy's index of reviewable files as it was then, which only ``changes_since`` moves on."""

    sync: int


@dataclass
class SyncTrace:
    """What the shadow copy last did, for tests and benchmarks (how its cost follows the change).

    Attributes:
        walked_workspace: the last sync walked the whole workspace (the first one, after a change that
            reshapes the tree, or without a working file watch), instead of looking at what changed.
        copied: the workspace entries the last sync copied, linked or made in the copy, in order.
        walked_copy: the last ``prepare`` or ``changes_since`` walked the whole copy to find its
            reviewable files, instead of looking at what changed.
    """

    walked_workspace: bool = False
    copied: tuple[str, ...] = ()
    walked_copy: bool = False


@dataclass(frozen=True)
class ShadowChanges:
    """What a command did to the copy's reviewable files, each sorted by path."""

    changed: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()


@dataclass(frozen=True)
class WorkspaceSecrets:
    """What the sandbox hides in workspace mode (``ShadowCopy.secret_files``).

    Attributes:
        paths: the real paths to make unreadable, sorted: secret files and directories, and the
            ``unchecked`` folders (an empty tmpfs over each).
        unchecked: the folders too large to scan for secrets, workspace-relative, sorted.
    """

    paths: tuple[Path, ...]
    unchecked: tuple[str, ...]


class CommandTree(Protocol):
    """What ``bring_back`` needs of the tree a command ran in: the shadow copy (``ShadowCopy``) or the
    overlay view (``LayeredCopy``)."""

    async def changes_since(self, snapshot: Snapshot) -> ShadowChanges: ...

    async def restore(self, rels: Sequence[str]) -> None: ...

    def read_changed(self, rel: str, max_bytes: int) -> bytes | None: ...

    def moved_since_sync(self, rel: str, unsaved: bytes | None) -> bool: ...
