"""Every entry of the workspace a command must not reach, kept current by a file watch: ``SecretIndex``.

Commands that see the real tree through an overlay (``layered_copy``) or run in it (``shell.mode =
"workspace"``) need the list of what to mask before they start. Finding it means looking at every
entry of the workspace: seconds on a monorepo. So the index is built once per workspace, in a
background thread, as soon as the workspace is known (the language server starts it when the editor
opens the folder, ``agent-ls run`` when the run starts, while the model thinks), and then kept current
by a watch of every directory it entered (``tree_watch``): a command costs what changed since the last
one, never a walk.

What it lists (``Masks``), each workspace-relative:

- ``secrets``: entries the path policy calls secret (``PathPolicy.is_secret``: ``.env``, keys,
  credential stores, the user's ``secret_files``), files or folders, wherever they are: inside
  ``node_modules``, ``.venv``, build outputs and gitignored folders too. A secret folder is not entered;
- ``git``: every ``.git`` entry (a repository's, a submodule's, a worktree's pointer), not entered.
  The shadow copy never held them: a command in the copy cannot read the history nor plant a hook;
- ``special``: FIFOs, sockets and device nodes: a socket in the tree would let a command talk to a
  process outside the sandbox (a read-only mount does not stop ``connect()``), a FIFO could block it;
- ``aliases``: regular files with more than one name outside dependency folders (``hard_links``, the
  rule every reader of workspace contents follows): ``ln .env notes.txt`` gives a secret a second name
  no pattern matches.

Symbolic links are not listed: inside the sandbox one resolves to its target, which is masked when it
is a secret of the workspace and hidden when it lies outside it (``workspace.sandbox``).

Limits: a workspace over ``MAX_ENTRIES`` entries, with over ``MAX_MASKS`` entries to mask (bwrap
takes one option per mask), or whose directories the kernel will not watch (``max_user_watches``), is
``too_large``: the caller falls back to the copy, which links such trees rather than looking into
them.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agent_ls.workspace.hard_links import HardLinks
from agent_ls.workspace.owned_temp_dirs import OwnedDir, make_owned_dir
from agent_ls.workspace.tree_watch import TreeWatch

log = logging.getLogger(__name__)

MAX_ENTRIES = 1_000_000
"""The most workspace entries the index looks at before it gives up (``too_large``)."""
MAX_MASKS = 4_000
"""The most entries to mask (each is two or three bwrap arguments) before the index gives up."""

_CHANGES_KEPT = 4_096  # reports kept for ``changed_since`` (one command's worth, many times over)

Why = Literal["secret", "git", "special", "alias"]


@dataclass(frozen=True)
class Masks:
    """What a command must not reach, at one moment.

    Attributes:
        entries: workspace-relative POSIX path to (why, is a directory), sorted by path.
        too_large: the index gave up (``MAX_ENTRIES``, ``MAX_MASKS``): ``entries`` is incomplete.
        generation: moves on each time the index learns of a change in the workspace (``changed_since``).
    """

    entries: tuple[tuple[str, Why, bool], ...] = ()
    too_large: bool = False
    generation: int = 0

    def secret_paths(self) -> tuple[str, ...]:
        """The entries masked because they hold or may hold secrets (not ``.git``, not special files)."""
        return tuple(rel for rel, why, _ in self.entries if why in ("secret", "alias"))


@dataclass
class _State:
    masks: dict[str, tuple[Why, bool]] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    entries: int = 0


class SecretIndex:
    """The masks of one workspace, built in the background and kept current by a file watch.

    Args:
        root: the workspace root (its real path is used).
        is_secret: the session's path policy's test (``PathPolicy.is_secret``), on workspace-relative
            POSIX paths.
        temp_parent: where to make the private folder of the watch's barrier files
            (``TreeWatch.collect``); the system default when None.
        watch: False walks the whole tree at each ``masks`` (tests; a kernel without inotify does too).
    """

    def __init__(
        self,
        root: Path,
        is_secret: Callable[[str], bool],
        *,
        temp_parent: Path | None = None,
        watch: bool = True,
    ) -> None:
        self._root = Path(os.path.realpath(root))
        self._is_secret = is_secret
        self._hard_links = HardLinks(self._root)
        self._temp_parent = temp_parent
        self._temp: OwnedDir | None = None
        self._use_watch = watch
        self._lock = threading.Lock()
        self._state: _State | None = None
        self._watch: TreeWatch | None = None
        self._generation = 0
        self._changed: list[tuple[int, str]] = []  # (generation, rel) reported by the watch
        self._walked_at = 0  # the generation of the last whole walk
        self._forgot_at = 0  # reports of this generation and before may have been dropped
        self._thread: threading.Thread | None = None
        self._closed = False
        self._unwatched = False  # a watch was wanted and could not be made
        self.walks = 0  # whole-tree walks so far, for tests and benchmarks

    @property
    def root(self) -> Path:
        return self._root

    def start(self) -> None:
        """Begin building in a background thread (idempotent); ``masks`` waits for it."""
        with self._lock:
            if self._thread is not None or self._state is not None:
                return
            self._thread = threading.Thread(target=self._build_in_background, name="agent-ls-secret-index")
            self._thread.daemon = True
            self._thread.start()

    def masks(self) -> Masks:
        """The masks now: waits for the first build, then applies what the watch reported. Blocks."""
        self.start()
        thread = self._thread
        if thread is not None:
            thread.join()
        with self._lock:
            if self._closed:
                return Masks(too_large=True)
            state = self._current()
            too_large = state.entries > MAX_ENTRIES or len(state.masks) > MAX_MASKS or self._unwatched
            entries = tuple((rel, why, is_dir) for rel, (why, is_dir) in sorted(state.masks.items()))
            return Masks(entries, too_large, self._generation)

    def changed_since(self, generation: int) -> frozenset[str]:
        """The workspace entries the watch reported after ``Masks.generation`` was ``generation``, up to
        now (a save the user made while a command ran). Everything (``{"."}``) when the index walked
        again since then (no watch, or one that may have missed events). Blocks."""
        with self._lock:
            if self._state is None or self._closed:
                return frozenset({"."})
            self._current()
            if self._walked_at > generation or self._forgot_at > generation:
                return frozenset({"."})
            return frozenset(rel for gen, rel in self._changed if gen > generation)

    def close(self) -> None:
        """Stop the watch; later calls answer ``too_large``. Idempotent."""
        with self._lock:
            self._closed = True
            if self._watch is not None:
                self._watch.close()
            self._watch = None
            if self._temp is not None:
                self._temp.remove()  # a folder holding a marker file or two: no need for a thread
            self._temp = None

    # -- internals --------------------------------------------------------------------------------

    def _build_in_background(self) -> None:
        try:
            with self._lock:
                if self._state is None and not self._closed:
                    self._rebuild()
        except Exception:  # never kill the thread silently: the next masks() rebuilds
            log.exception("the workspace's secret index could not be built")
        finally:
            self._thread = None

    def _current(self) -> _State:
        """The state with the watch's reports applied (under the lock)."""
        if self._state is not None and self._unwatched:
            return self._state  # answered as too_large: not walked again at each command
        if self._state is None or self._watch is None:
            return self._rebuild()
        found = self._watch.collect()
        if found is None:
            return self._rebuild()
        if found.real:
            self._generation += 1
            if len(self._changed) > _CHANGES_KEPT:
                self._forgot_at = self._changed[-_CHANGES_KEPT][0]
                self._changed = self._changed[-_CHANGES_KEPT:]
            self._changed.extend((self._generation, rel) for rel in found.real)
        new_dirs: list[str] = []
        for rel in sorted(found.real):
            self._look(self._state, rel, new_dirs)
        if new_dirs and not self._watch.add(new_dirs, ()):
            self._watch = None
        return self._state

    def _rebuild(self) -> _State:
        """Walk the whole workspace, then watch every directory it entered."""
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self.walks += 1
        self._generation += 1
        self._walked_at = self._generation
        self._changed = []
        state = _State()
        self._walk(state, ".")
        self._state = state
        if self._use_watch and state.entries <= MAX_ENTRIES:
            if self._temp is None:
                self._temp = make_owned_dir("agent-ls-index-", self._temp_parent)
            marker = self._temp.path / "watch"
            self._watch = TreeWatch.start(self._root, sorted(state.dirs), marker, (), marker)
            self._unwatched = self._watch is None  # the kernel refused (max_user_watches): give up
        return state

    def _walk(self, state: _State, top: str, new_dirs: list[str] | None = None) -> None:
        """Add ``top`` (a directory of the workspace, entered whatever its name) and everything under it."""
        stack = [top]
        while stack:
            rel_dir = stack.pop()
            state.dirs.add(rel_dir)
            if new_dirs is not None:
                new_dirs.append(rel_dir)
            try:
                with os.scandir(self._root if rel_dir == "." else self._root / rel_dir) as scan:
                    entries = list(scan)
            except OSError:
                continue
            state.entries += len(entries)
            if state.entries > MAX_ENTRIES:
                return
            for entry in entries:
                rel = entry.name if rel_dir == "." else f"{rel_dir}/{entry.name}"
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if self._judge(state, rel, st) == "enter":
                    stack.append(rel)

    def _judge(self, state: _State, rel: str, st: os.stat_result) -> Literal["enter", "done"]:
        """Record ``rel``'s mask, if any; "enter" when it is a directory to walk into."""
        mode = st.st_mode
        name = rel.rpartition("/")[2]
        is_dir = stat.S_ISDIR(mode)
        why: Why | None = None
        if name == ".git":
            why = "git"
        elif stat.S_ISLNK(mode):
            why = None
        elif self._is_secret(rel):
            why = "secret"
        elif not (is_dir or stat.S_ISREG(mode)):
            why = "special"
        elif self._hard_links.refused(rel, st):
            why = "alias"
        if why is not None:
            state.masks[rel] = (why, is_dir)
            return "done"
        state.masks.pop(rel, None)
        return "enter" if is_dir else "done"

    def _look(self, state: _State, rel: str, new_dirs: list[str]) -> None:
        """Bring ``rel``'s record up to date after the watch reported it."""
        if rel == "." or any(parent in state.masks for parent in _parents(rel)):
            return  # inside a masked folder (.git, a secret one): not looked into
        try:
            st: os.stat_result | None = os.lstat(self._root / rel)
        except OSError:
            st = None
        if st is None or not stat.S_ISDIR(st.st_mode):
            _forget_under(state, rel)
        if st is None:
            state.masks.pop(rel, None)
            return
        known_dir = rel in state.dirs
        if self._judge(state, rel, st) == "enter":
            if not known_dir:
                self._walk(state, rel, new_dirs)
        elif known_dir:
            _forget_under(state, rel)


def _forget_under(state: _State, rel: str) -> None:
    """Drop the records of ``rel``'s subtree (it was removed, or is no longer a directory to enter)."""
    prefix = rel + "/"
    state.dirs.discard(rel)
    for gone in [d for d in state.dirs if d.startswith(prefix)]:
        state.dirs.discard(gone)
    for gone in [m for m in state.masks if m.startswith(prefix)]:
        del state.masks[gone]


def _parents(rel: str) -> Iterable[str]:
    while "/" in rel:
        rel = rel.rpartition("/")[0]
        yield rel
