"""Which entries of the workspace and of its shadow copy changed since the last look: ``TreeWatch``.

The shadow copy (``shadow.py``) used to find what changed by walking both trees whole before and after
every command: seconds on a 50,000-file repository, for a command that changed one file. A
``TreeWatch`` asks the kernel instead (inotify, through watchfiles' binding of the Rust ``notify``
crate, which the project already uses for instruction files), so a sync costs what changed.

- Directories are watched one by one, not recursively: a recursive watch follows symlinks (the copy's
  links into ``node_modules``, a link to ``/``) and would walk whatever they point to. The caller names
  the directories (those its own walk entered); a watched directory reports its entries' changes.
  A directory created later is not watched: the caller sees its creation, walks it, and adds it
  (``add``), or walks the whole tree again and builds a new watch.
- ``collect`` is a barrier: it creates a file in a private marker directory and waits until the watch
  reports it. One watch reads its events in order, so every change made before the call has been
  reported by then (a save the editor made just before a command, a command's last write).
- When the kernel could have dropped events (a queue overflow shows no event in watchfiles), the
  answer is "unreliable" and the caller walks: a batch of more than ``MAX_EVENTS`` changes, a barrier
  not seen within ``BARRIER_TIMEOUT_S``, or a watch that cannot be made (no inotify, the
  ``max_user_watches`` limit): ``start`` returns None.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from watchfiles._rust_notify import RustNotify

log = logging.getLogger(__name__)

MAX_EVENTS = 4_096
"""More changes than this in one ``collect`` count as unreliable: inotify's queue holds 16,384 events
by default, an overflow is not reported through watchfiles, and a file written is two or three
events but one or two changes here. The caller walks instead (a command that changes thousands of
files costs a walk anyway)."""
BARRIER_TIMEOUT_S = 5.0
"""How long ``collect`` waits for its marker file to be reported before it gives up (seconds)."""
MAX_WATCHES = 8
"""The most watches ``add`` keeps (each is a thread and an inotify descriptor); then it refuses."""
_DELETED = 3  # watchfiles.Change.deleted
_MARKERS = itertools.count(1)  # each marker file is new, whichever watch made it


@dataclass
class Changes:
    """What ``collect`` found: root-relative POSIX paths per tree, and those removed at some point."""

    real: set[str] = field(default_factory=set)
    copy: set[str] = field(default_factory=set)
    copy_removed: set[str] = field(default_factory=set)


class TreeWatch:
    """Watches named directories of the workspace and of its copy, and a private marker directory.

    Args:
        real_root: the workspace's real path.
        copy_root: the copy's root.
        marker_dir: an empty directory of the server's own, outside both trees.
    """

    def __init__(self, real_root: Path, copy_root: Path, marker_dir: Path) -> None:
        self._real = str(real_root)
        self._copy = str(copy_root)
        self._marker_dir = marker_dir
        self._notifies: list[RustNotify] = []

    @classmethod
    def start(
        cls,
        real_root: Path,
        real_dirs: Iterable[str],
        copy_root: Path,
        copy_dirs: Iterable[str],
        marker_dir: Path,
    ) -> TreeWatch | None:
        """A watch of ``real_dirs`` (relative to ``real_root``) and ``copy_dirs`` (to ``copy_root``); None
        when the kernel refuses one (then the caller walks)."""
        watch = cls(real_root, copy_root, marker_dir)
        if not watch.add(real_dirs, copy_dirs):
            return None
        return watch

    def add(self, real_dirs: Iterable[str], copy_dirs: Iterable[str]) -> bool:
        """Watch more directories; False (and the watch closed) when they cannot be watched."""
        paths = [_join(self._real, rel) for rel in real_dirs] + [_join(self._copy, rel) for rel in copy_dirs]
        if len(self._notifies) >= MAX_WATCHES:
            self.close()
            return False
        try:
            self._marker_dir.mkdir(exist_ok=True)
            notify = RustNotify([*paths, str(self._marker_dir)], False, False, 50, False, True)
        except (OSError, RuntimeError) as exc:  # FileNotFoundError (a folder gone), the watch limit
            log.info("file watch unavailable, the shadow copy walks instead: %s", exc)
            self.close()
            return False
        self._notifies.append(notify)
        return True

    def collect(self) -> Changes | None:
        """Every change reported since the last call, up to this call (module docstring); None when the
        watch may have missed some (then the caller walks the trees)."""
        marker = self._marker_dir / f"barrier-{os.getpid()}-{next(_MARKERS)}"
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o600))
        except OSError:
            return None
        found = Changes()
        total = 0
        deadline = time.monotonic() + BARRIER_TIMEOUT_S
        for notify in self._notifies:
            seen = False
            while not seen:
                got = notify.watch(500, 1, 20, None)
                if isinstance(got, str):
                    if time.monotonic() > deadline:
                        return None
                    continue
                total += len(got)
                for change, path in got:
                    seen = seen or path == str(marker)
                    self._sort(found, change, path)
        with contextlib.suppress(OSError):
            marker.unlink()
        return found if total <= MAX_EVENTS else None

    def close(self) -> None:
        """Stop every watch. Idempotent."""
        for notify in self._notifies:
            with contextlib.suppress(Exception):
                notify.close()
        self._notifies = []

    def _sort(self, found: Changes, change: int, path: str) -> None:
        for root, into in ((self._copy, found.copy), (self._real, found.real)):
            if path == root or path.startswith(root + "/"):
                rel = path[len(root) + 1 :] or "."
                into.add(rel)
                if into is found.copy and change == _DELETED:
                    found.copy_removed.add(rel)
                return


def _join(root: str, rel: str) -> str:
    return root if rel == "." else f"{root}/{rel}"
