"""Watching the instruction and skill files, so that the next turn sees their changes.

What counts (``InstructionWatcher.watches``): a file named ``AGENTS.md``, ``AGENTS.override.md``, a
configured fallback (default ``CLAUDE.md``; a fallback given as a relative path such as
``.claude/CLAUDE.md`` matches by its last components), ``SKILL.md``, or anything below a directory named
``skills`` (a skill folder created, renamed or removed). Paths inside a folder that is a dependency
folder by its name (``workspace.dependency_folders.dependency_name``: ``.git``, ``node_modules``,
``deps``...) never count: nothing there is loaded.

Each batch of relevant changes bumps an integer ``generation`` once. Readers (the session, at each
turn) compare it with the generation they built their prompt prefix from, and rebuild when it moved.
Changes arrive two ways:

- from the editor, ``workspace/didChangeWatchedFiles`` where the client offers to watch for us: the LSP
  layer calls ``bump()``;
- from the file system, through watchfiles (``start``/``aclose``). watchfiles wraps the Rust ``notify``
  crate (inotify, FSEvents, ReadDirectoryChangesW, polling as a fallback), with debouncing and a
  stop event; writing that per OS ourselves would be worse. Known limit: moving away a whole
  directory that holds an ``AGENTS.md`` reports the directory only, which does not count.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

import watchfiles

from agent_ls.workspace.dependency_folders import dependency_name

log = logging.getLogger(__name__)

INSTRUCTION_FILENAMES = ("AGENTS.override.md", "AGENTS.md")
SKILL_FILENAME = "SKILL.md"
SKILLS_DIRNAME = "skills"
DEFAULT_FALLBACK_FILENAMES = ("CLAUDE.md",)


class InstructionWatcher:
    """A generation counter of the instruction and skill files under some roots.

    Args:
        fallback_filenames: the configured fallbacks after ``AGENTS.md`` (names or relative POSIX paths).
        on_change: called on the event loop with the new generation after each bump (the server re-lints
            there); it must not raise (an exception is logged and dropped).
        debounce_ms: watchfiles groups the changes of this many milliseconds into one batch (one bump).

    Not thread-safe: ``bump`` and ``start`` are called on the event loop.
    """

    def __init__(
        self,
        *,
        fallback_filenames: Sequence[str] = DEFAULT_FALLBACK_FILENAMES,
        on_change: Callable[[int], None] | None = None,
        debounce_ms: int = 300,
    ) -> None:
        self._generation = 0
        self._fallbacks: tuple[tuple[str, ...], ...] = ()
        self.fallback_filenames = fallback_filenames
        self.on_change = on_change
        self._debounce_ms = debounce_ms
        self._roots: tuple[Path, ...] = ()
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None

    @property
    def generation(self) -> int:
        """How many batches of relevant changes were seen; starts at 0, only grows."""
        return self._generation

    @property
    def fallback_filenames(self) -> tuple[str, ...]:
        """The configured fallback names that count (settable: the config may change them)."""
        return tuple(PurePosixPath(*parts).as_posix() for parts in self._fallbacks)

    @fallback_filenames.setter
    def fallback_filenames(self, names: Sequence[str]) -> None:
        self._fallbacks = tuple(PurePosixPath(name).parts for name in names if name)

    @property
    def roots(self) -> tuple[Path, ...]:
        """The directories watched from the file system (empty when watchfiles is not running)."""
        return self._roots if self.running else ()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def bump(self) -> int:
        """Count one batch of changes and tell ``on_change``; returns the new generation."""
        self._generation += 1
        if self.on_change is not None:
            try:
                self.on_change(self._generation)
            except Exception:
                log.exception("on_change failed after instruction files changed")
        return self._generation

    def watches(self, path: Path, roots: Sequence[Path] = ()) -> bool:
        """True when a change of ``path`` changes the instructions or the skills (module docstring).

        Args:
            path: an absolute path (it may no longer exist).
            roots: directories ``path`` is judged relative to (the first that holds it); dependency
                folders above them (``.git``, ``node_modules``) do not count. Without one, the whole
                path is judged.
        """
        base = next((root for root in roots if path.is_relative_to(root)), None)
        parts = path.relative_to(base).parts if base is not None else path.parts
        if not parts or any(map(dependency_name, parts)):
            return False
        name = parts[-1]
        if name in INSTRUCTION_FILENAMES or name == SKILL_FILENAME or SKILLS_DIRNAME in parts[:-1]:
            return True
        return any(parts[-len(fallback) :] == fallback for fallback in self._fallbacks if fallback)

    def start(self, roots: Sequence[Path]) -> None:
        """Watch ``roots`` (existing directories; others are left out) from the file system.

        Replaces a previous watch (the old task is stopped in the background). Needs a running event
        loop. Does nothing without an existing root.
        """
        self._halt()
        existing = tuple(dict.fromkeys(root for root in roots if root.is_dir()))
        if not existing:
            self._roots = ()
            return
        self._roots = existing
        self._stop = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._watch(existing, self._stop))

    async def aclose(self) -> None:
        """Stop watching and wait for the watch to end (about watchfiles' 50 ms step)."""
        task = self._task
        self._halt()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _halt(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self._task = None
        self._stop = None

    async def _watch(self, roots: tuple[Path, ...], stop: asyncio.Event) -> None:
        def wanted(_change: watchfiles.Change, path: str) -> bool:
            return self.watches(Path(path), roots)

        try:
            async for _changes in watchfiles.awatch(
                *roots, watch_filter=wanted, debounce=self._debounce_ms, stop_event=stop
            ):
                self.bump()
        except Exception:  # a root removed under us, a watch limit reached: editing still works
            log.exception("watching the instruction files under %s stopped", ", ".join(map(str, roots)))
