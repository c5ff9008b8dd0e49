"""Which entries of the workspace and of its shadow copy changed since the last look: ``TreeWatch``.

The shadow copy (``shadow.py``) used to find what changed by walking both trees whole before and after
every command: seconds on a 50,000-file repository, for a command that changed one file. A
``TreeWatch`` asks the kernel instead (inotify, through ``inotify_simple``), so a sync costs what
changed.

- Only changes are asked for (``_MASK``): created, written, removed, renamed, chmod'ed entries. Not
  opens nor closes after reading: watchfiles (the Rust ``notify`` crate, which asks for
  ``IN_OPEN | IN_CLOSE_NOWRITE`` and drops them itself) made every file read in a watched folder, a
  grep's or a build's, two events for the kernel to queue and our process to read: a ripgrep of
  10,000 files took 1.5-1.9x as long while the workspace was watched (benchmarks/bench_scale.py's
  "later grep"). Nothing reads the events between two ``collect`` calls: no thread, no CPU.
- Directories are watched one by one, not recursively: a recursive watch follows symlinks (the copy's
  links into ``node_modules``, a link to ``/``) and would walk whatever they point to. The caller names
  the directories (those its own walk entered); a watched directory reports its entries' changes.
  A directory created later is not watched: the caller sees its creation, walks it, and adds it
  (``add``), or walks the whole tree again and builds a new watch.
- ``collect`` is a barrier: it creates a file in a private marker directory and reads the events until
  it sees that one. One inotify instance queues its events in order, so every change made before the
  call has been reported by then (a save the editor made just before a command, a command's last write).
- When the kernel could have dropped events, the answer is "unreliable" and the caller walks: a queue
  overflow (``IN_Q_OVERFLOW``: more than ``max_queued_events``, 16,384 by default, since the last
  look), a batch of more than ``MAX_EVENTS`` changes, a barrier not seen within ``BARRIER_TIMEOUT_S``,
  or a watch that cannot be made (no inotify, the ``max_user_watches`` limit): ``start`` returns None.
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

from inotify_simple import INotify, flags

log = logging.getLogger(__name__)

MAX_EVENTS = 4_096
"""More changes than this in one ``collect`` count as unreliable (the caller walks instead: a command
that changes thousands of files costs a walk anyway). A file written is two or three events but one
or two changes here."""
BARRIER_TIMEOUT_S = 5.0
"""How long ``collect`` waits for its marker file to be reported before it gives up (seconds)."""
MAX_WATCHES = 8
"""The most ``add`` calls a watch takes (each adds the folders a walk entered); then it refuses."""
_MASK = (
    flags.CREATE | flags.MODIFY | flags.ATTRIB | flags.CLOSE_WRITE | flags.DELETE | flags.MOVED_FROM
    | flags.MOVED_TO | flags.DELETE_SELF | flags.MOVE_SELF
)  # fmt: skip
_ADDED, _MODIFIED, _DELETED = 1, 2, 3  # the change kinds, as watchfiles.Change numbers them
_GONE = flags.DELETE | flags.MOVED_FROM | flags.DELETE_SELF | flags.MOVE_SELF
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
        self._inotify: INotify | None = None
        self._paths: dict[int, str] = {}  # watch descriptor to the folder's path
        self._adds = 0

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
        if self._adds >= MAX_WATCHES:
            self.close()
            return False
        try:
            self._marker_dir.mkdir(exist_ok=True)
            if self._inotify is None:
                self._inotify = INotify()  # close-on-exec: commands do not inherit it
            for path in (*paths, str(self._marker_dir)):
                with contextlib.suppress(PermissionError):  # a folder the walk could not enter either
                    self._paths[self._inotify.add_watch(path, _MASK)] = path
        except OSError as exc:  # FileNotFoundError (a folder gone), ENOSPC (the watch limit), no inotify
            log.info("file watch unavailable, the caller walks instead: %s", exc)
            self.close()
            return False
        self._adds += 1
        return True

    def collect(self) -> Changes | None:
        """Every change reported since the last call, up to this call (module docstring); None when the
        watch may have missed some (then the caller walks the trees)."""
        inotify = self._inotify
        if inotify is None:
            return None
        marker = str(self._marker_dir / f"barrier-{os.getpid()}-{next(_MARKERS)}")
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o600))
        except OSError:
            return None
        try:
            changes = self._read_until(inotify, marker)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(marker)
        if changes is None or len(changes) > MAX_EVENTS:
            return None
        found = Changes()
        for change, path in changes:
            self._sort(found, change, path)
        return found

    def close(self) -> None:
        """Stop every watch. Idempotent."""
        if self._inotify is not None:
            with contextlib.suppress(OSError):
                self._inotify.close()
        self._inotify = None
        self._paths = {}

    def _read_until(self, inotify: INotify, marker: str) -> set[tuple[int, str]] | None:
        """The (change, path) pairs queued before ``marker`` was created; None when events were lost
        or the marker did not come in time."""
        changes: set[tuple[int, str]] = set()
        deadline = time.monotonic() + BARRIER_TIMEOUT_S
        while True:
            left_ms = int((deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                return None
            seen = False
            for event in inotify.read(timeout=min(left_ms, 500)):
                if event.mask & flags.Q_OVERFLOW:
                    return None
                folder = self._paths.get(event.wd)
                if folder is None or event.mask & flags.IGNORED:
                    continue
                path = f"{folder}/{event.name}" if event.name else folder
                seen = seen or path == marker
                kind = _DELETED if event.mask & _GONE else _ADDED if event.mask & flags.CREATE else _MODIFIED
                changes.add((_ADDED if event.mask & flags.MOVED_TO else kind, path))
            if seen:
                return changes

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
