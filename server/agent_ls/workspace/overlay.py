"""The agent's view of one workspace: pending agent edits over open editor buffers over disk.

``Overlay`` implements the core ``Workspace`` port. A read looks, in order, at:

1. the pending agent edit of the file (``propose``),
2. the open editor buffer (unsaved text, through a ``BufferSource``),
3. the disk file, in its own encoding (``file_encoding``: UTF-8, a BOM's, or a legacy code page found
   by a detector) with line endings kept byte for byte (no newline translation); at most
   ``disk_text.MAX_TEXT_BYTES`` are read whole, larger files only in streamed pages (``read_page``).

The agent's reads are remembered: ``propose`` refuses a file that changed (in the editor or on disk)
since the agent last read it, so a write built on a stale read cannot undo the user's change, and the
proposal's base is the version the agent read. Nothing here writes the user's files.

``search`` runs ripgrep on the real tree and, apart, on the pending edits and unsaved buffers
(``tree_search.py``: no copy is made); ``list_files`` asks ``rg --files`` (``ripgrep_files.py``), or
walks the tree itself (``listing.py``) without ripgrep. Disk reads go through
``PathPolicy.open_binary`` (``disk_text.py``), which resolves the path again at use: a file
replaced by a symlink after the permission check is not followed out of the workspace. Edits are
proposed inside the first root only; other roots and extra directories are read-only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Literal, Protocol

from agent_ls.core.errors import EditFailed, PathRefused, ToolError
from agent_ls.core.file_views import PageRequest, SearchResult, TextPage
from agent_ls.core.proposal import UTF8, FileChange, TextEncoding
from agent_ls.workspace import disk_text, file_encoding
from agent_ls.workspace.child_env import child_environment
from agent_ls.workspace.listing import Selection, walk_files
from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.ripgrep_files import list_with_ripgrep
from agent_ls.workspace.sandbox import Sandbox
from agent_ls.workspace.search import SearchSpec
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.text_pages import page_of
from agent_ls.workspace.tree_search import RipgrepRun, search_tree

CHANGED_SINCE_READ = "{rel} changed since you read it; read it again"


@dataclass(frozen=True)
class OpenBuffer:
    """An editor buffer: its full text (line endings as the editor holds them) and LSP version."""

    text: str
    version: int


class BufferSource(Protocol):
    """The editor's open documents, as the overlay sees them.

    Contract:
        - ``get`` returns the buffer of an absolute file path, or None when it is not open; it never
          raises and never touches the disk.
        - ``open_paths`` lists the absolute paths of all open buffers (any order).
        - Paths are absolute and built on the workspace root as given to ``Overlay`` (symlinks not
          resolved), like the paths in the editor's ``file://`` URIs.
    """

    def get(self, path: Path) -> OpenBuffer | None: ...

    def open_paths(self) -> list[Path]: ...


class Overlay:
    """Pending agent edits over editor buffers over disk, for one workspace root and one session.

    Args:
        root: the workspace root.
        buffers: the editor's open buffers; None when there is no editor (the CLI).
        shadow: the session's shadow copy, shared with its ``ShellRunner`` (the overlay gives it the
            pending texts; it never searches it); a new (lazily created) one by default. ``close``
            deletes it.
        environ: the environment ripgrep's allowlisted one is built from (``child_environment``).
        sandbox: unused, kept for the callers that pass the shell's: ripgrep runs outside the sandbox
            (``tree_search`` says why).
        paths: the session's path policy (configured secrets, extra directories, more roots); by
            default one with the built-in secrets and ``root`` as the only root. Its first root must
            be ``root``.
    """

    def __init__(
        self,
        root: Path,
        buffers: BufferSource | None = None,
        *,
        shadow: ShadowCopy | None = None,
        environ: Mapping[str, str] | None = None,
        sandbox: Sandbox | Literal["detect"] | None = "detect",
        paths: PathPolicy | None = None,
    ) -> None:
        self._paths = paths if paths is not None else PathPolicy(root)
        self._buffers = buffers
        self._pending: dict[str, FileChange] = {}
        # What the agent last read of each file (from a buffer or the disk): a digest of its text.
        self._seen: dict[str, bytes] = {}
        # The encoding found for each disk file, with the lstat it was found at.
        self._encodings: dict[str, tuple[tuple[int, int], TextEncoding]] = {}
        self.shadow = shadow if shadow is not None else ShadowCopy(self._paths.real_root, paths=self._paths)
        self._env = child_environment(environ or {})

    @property
    def root(self) -> Path:
        """The absolute workspace root as given (symlinks kept); ``FileChange.path`` is relative to it."""
        return self._paths.root

    def resolve(self, path: str) -> str:
        """See ``PathPolicy.resolve``: raises ``PathRefused`` outside the root or for a secret file."""
        return self._paths.resolve(path)

    def exists(self, rel: str) -> bool:
        """True for a pending file, an open buffer, a disk file or directory, or a pending new directory."""
        return (
            rel in self._pending
            or self._buffer(rel) is not None
            or self._disk(rel).exists()
            or (self._is_pending_dir(rel))
        )

    def is_dir(self, rel: str) -> bool:
        """True for a directory on disk or one that only pending new files create."""
        if rel in self._pending:
            return False
        return self._disk(rel).is_dir() or self._is_pending_dir(rel)

    def read_text(self, rel: str) -> str:
        """The current text of ``rel``: pending edit, else unsaved buffer, else the disk file.

        Raises:
            ToolError: the file does not exist, is a directory, cannot be read, is binary or in no
                encoding that reads back exactly, or is over ``disk_text.MAX_TEXT_BYTES``
                (``disk_text.TooLarge``). The message is one line and names ``rel``.
        """
        pending = self._pending.get(rel)
        if pending is not None:
            return pending.new_text
        buffer = self._buffer(rel)
        if buffer is not None:
            return buffer.text
        return self._read_disk(rel).text

    def read_page(self, rel: str, request: PageRequest) -> TextPage:
        """A page of the current text of ``rel`` (``text_pages.page_of``), remembered as read.

        A disk file over ``disk_text.MAX_TEXT_BYTES`` is streamed: only a chunk and the page are held.

        Raises:
            ToolError: as ``read_text`` (but not for the size), or the line or column is past the end.
        """
        pending = self._pending.get(rel)
        if pending is not None:
            return page_of([pending.new_text], request, name=rel, encoding=_shown(pending.encoding))
        buffer = self._buffer(rel)
        if buffer is not None:
            self._seen[rel] = _digest(buffer.text)
            return page_of([buffer.text], request, name=rel)
        try:
            whole = self._read_disk(rel)
        except disk_text.TooLarge:
            self._seen.pop(rel, None)  # it cannot be edited anyway
            with disk_text.text_chunks(self._paths, rel) as (encoding, chunks):
                return page_of(chunks, request, name=rel, encoding=_shown(encoding))
        except ToolError:
            self._seen.pop(rel, None)  # gone: a write creates it anew
            raise
        self._seen[rel] = _digest(whole.text)
        return page_of([whole.text], request, name=rel, encoding=_shown(whole.encoding))

    def propose(
        self, rel: str, text: str, *, based_on: str | None = None, encoding: TextEncoding | None = None
    ) -> bool:
        """Record ``text`` as the proposed content of ``rel``; nothing is written to disk.

        The base (``base_text``/``base_version``/``is_new``/``encoding``) is captured the first time
        ``rel`` is proposed, from the open buffer, else the disk; a file found in neither is new. It is
        the version the agent read: when the agent read ``rel`` (``read_page``) and the file changed
        since, or the text differs from ``based_on`` (what the caller computed ``text`` from), the
        proposal is refused. ``encoding`` is a new file's (UTF-8 by default); an existing file keeps its own.

        Returns:
            True when ``proposal()`` changed (the file's proposed text differs from before).

        Raises:
            EditFailed: ``rel`` changed since the agent read it ("read it again"), or ``text`` holds a
                character the file's encoding cannot write.
            ToolError: ``rel`` is a directory, a parent of it is a file, the base cannot be read, or
                ``rel`` is outside the first root (another root or an extra directory).
        """
        if os.path.isabs(rel):
            raise ToolError(f"{rel} is outside the workspace root {self.root}; edits go inside it")
        previous = self._pending.get(rel)
        base = previous if previous is not None else self._base_of(rel)
        if base.is_new and encoding is not None:
            base = replace(base, encoding=encoding)
        current = base.new_text if previous is not None else base.base_text
        seen = self._seen.get(rel) if previous is None else None
        stale = seen is not None and (base.is_new or _digest(base.base_text) != seen)
        if stale or (based_on is not None and current != based_on):
            raise EditFailed(CHANGED_SINCE_READ.format(rel=rel))
        problem = file_encoding.encodable(text, base.encoding)
        if problem is not None:
            raise EditFailed(f"cannot write {rel}: {problem}; leave that character out or spell it in ASCII")
        before = None if previous is None else _visible(previous)
        changed = replace(base, new_text=text)
        self._pending[rel] = changed
        return before != _visible(changed)

    def rebase(self, change: FileChange) -> None:
        """Replace the pending edit of ``change.path`` with ``change``, its form re-based onto the user's
        newer text (``workspace.rebase``); the agent's later edits build on the merged text.

        Raises:
            KeyError: nothing is pending for that path.
        """
        if change.path not in self._pending:
            raise KeyError(change.path)
        self._pending[change.path] = change

    def restore(self, change: FileChange) -> None:
        """Make ``change`` the pending edit of ``change.path`` as it was stored (a session resumed from the
        session store), its base kept: applying it checks that base against the files then."""
        self._pending[change.path] = change

    def encoding_of(self, rel: str) -> TextEncoding:
        """The encoding ``rel`` is written in: its pending edit's, else the disk file's (found once per
        change of the file), else UTF-8 (a new file, or one that cannot be read)."""
        pending = self._pending.get(rel)
        if pending is not None:
            return pending.encoding
        return self._disk_encoding(rel)

    def discard(self) -> None:
        """Drop every pending edit (after the proposal was applied or rejected).

        The agent's last read of each such file becomes what it proposed: applied, the file is what the
        agent knows; rejected, it differs, and a later write is refused until the agent reads it again.
        """
        self.drop(list(self._pending))

    def drop(self, paths: Iterable[str]) -> None:
        """Drop the pending edits of ``paths`` (part of the proposal applied or discarded), as ``discard``
        drops them all; the other files stay pending. A path with nothing pending is ignored."""
        for rel in paths:
            change = self._pending.pop(rel, None)
            if change is not None:
                self._seen[rel] = _digest(change.new_text)

    def proposal(self) -> list[FileChange]:
        """The pending edits sorted by path, without those whose new text equals their base.

        A new file is kept even when its text is empty.
        """
        return [change for _, change in sorted(self._pending.items()) if _visible(change) is not None]

    def unsaved_files(self) -> dict[str, bytes]:
        """Workspace-relative path to bytes, for every open buffer and pending edit (pending wins).

        This is what the shadow copy must hold on top of the disk: each text in its file's encoding
        (a buffer's text that encoding cannot write, in UTF-8). Buffers outside the root or on a secret
        path are left out.
        """
        files: dict[str, bytes] = {}
        if self._buffers is not None:
            for path in self._buffers.open_paths():
                try:
                    rel = self._paths.resolve(str(path))
                except ToolError:
                    continue
                buffer = self._buffers.get(path)
                if buffer is not None and rel != ".":
                    files[rel] = _encoded(buffer.text, self._disk_encoding(rel))
        files.update((rel, change.encoding.encode(change.new_text)) for rel, change in self._pending.items())
        return files

    def unsaved_file(self, rel: str) -> bytes | None:
        """The bytes ``unsaved_files`` gives for ``rel`` (its pending edit, else its open buffer), or None."""
        pending = self._pending.get(rel)
        if pending is not None:
            return pending.encoding.encode(pending.new_text)
        buffer = self._buffer(rel)
        return None if buffer is None else _encoded(buffer.text, self._disk_encoding(rel))

    def list_files(self, rel_dir: str, pattern: str | None, limit: int) -> tuple[list[str], int]:
        """Files under ``rel_dir``, recursively: the first ``limit`` sorted paths and the total count.

        ``.git/`` is always skipped, gitignored entries too (the root ``.gitignore`` and nested ones);
        hidden entries (name starting with ``.``) are skipped unless a component of ``pattern``
        starts with ``.`` (``.github/**``). ``pattern`` is a gitignore-style glob matched against the
        workspace-relative path or the path relative to ``rel_dir`` (``*.py`` matches at any depth).
        Pending new files are included (gitignore does not hide them). Symlinked directories are not
        followed; symlinks leaving the root are left out. ``rg --files`` lists them (``ripgrep_files.py``),
        else ``listing.walk_files``; both read the same rules.

        Raises:
            ToolError: ``rel_dir`` does not exist or is a file.
        """
        pending = list(self._pending)  # first, in one step: the list_files tool calls this in a thread
        if rel_dir in pending or self._disk(rel_dir).is_file():
            raise ToolError(f"{rel_dir!r} is a file, not a directory; read it instead")
        if not (self._disk(rel_dir).is_dir() or _holds_pending(rel_dir, pending)):
            raise ToolError(f"directory not found: {rel_dir!r}")
        selection = Selection.of(rel_dir, pattern)
        rg = find_ripgrep()
        listed = None
        if rg is not None:
            root = self._paths.real_root
            listed = list_with_ripgrep(rg, root, selection, env=self._env, stays_inside=self._stays_inside)
        if listed is None:
            listed = list(walk_files(self._paths.real_root, selection, self._stays_inside))
        found = set(listed)
        found.update(rel for rel in pending if selection.covers(rel) and selection.wants(rel))
        ordered = sorted(found)
        return ordered[: max(limit, 0)], len(ordered)

    async def search(
        self, pattern: str, rel: str, glob: str | None, *, max_line_chars: int = 500, window: int = 150
    ) -> SearchResult:
        """ripgrep ``pattern`` over the current view of ``rel`` (pending edits and buffers included).

        Returns:
            The hits, bounded (``search.RipgrepStream``): a line of at most ``max_line_chars``
            characters whole, a longer one as ``window`` characters each side of each match; a line
            in a legacy encoding decoded in it. Gitignored and hidden files are skipped unless ``glob``
            names hidden ones.

        ripgrep runs through ``processes.execute``, outside the sandbox (``tree_search`` says why), with
        the command environment, killed with its process group on cancel. It searches the real tree and
        the pending texts apart (``tree_search``); a secret file, or a file reached through a symbolic
        link, is never in the hits.

        Raises:
            ToolError: ripgrep is missing, it failed (an invalid regex: the message is rg's), it took
                more than ``search.SEARCH_TIMEOUT_S`` seconds, ``rel`` is outside the workspace root
                (another root or an extra directory: list and read those), or ``rel`` was replaced by a
                link since it was resolved.
        """
        rg = _ripgrep()

        def decode_line(path: str, raw: bytes) -> str:
            return raw.decode(self.encoding_of(path).codec, "replace")

        run = RipgrepRun(rg, self._env, self.root, max_line_chars, window, decode_line)
        return await search_tree(run, SearchSpec(pattern, rel, glob), self._paths, self.unsaved_files())

    def close(self) -> None:
        """Delete the shadow copy. Pending edits are kept until ``discard``."""
        self.shadow.close()

    # -- internals -------------------------------------------------------------------------------

    def _disk(self, rel: str) -> Path:
        return self._paths.real_root / rel

    def _buffer(self, rel: str) -> OpenBuffer | None:
        if self._buffers is None:
            return None
        return self._buffers.get(self._paths.root / rel)

    def _is_pending_dir(self, rel: str) -> bool:
        return _holds_pending(rel, self._pending)

    def _read_disk(self, rel: str) -> disk_text.DiskText:
        if self._is_pending_dir(rel) and not self._disk(rel).exists():
            raise ToolError(f"{rel!r} is a directory, not a file; list it instead")
        whole = disk_text.read_whole(self._paths, rel)
        key = _stat_key(self._disk(rel))
        if key is not None:
            self._encodings[rel] = (key, whole.encoding)
        return whole

    def _disk_encoding(self, rel: str) -> TextEncoding:
        key = _stat_key(self._disk(rel))
        if key is None:
            return UTF8
        cached = self._encodings.get(rel)
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            encoding = self._read_disk(rel).encoding
        except disk_text.TooLarge:
            try:
                with disk_text.text_chunks(self._paths, rel) as (encoding, _):
                    pass
            except ToolError:
                encoding = UTF8
        except ToolError:
            encoding = UTF8
        self._encodings[rel] = (key, encoding)
        return encoding

    def _base_of(self, rel: str) -> FileChange:
        if rel == "." or self.is_dir(rel):
            raise ToolError(f"{rel!r} is a directory; give a file path")
        for parent in PurePosixPath(rel).parents:
            if str(parent) != "." and (str(parent) in self._pending or self._disk(str(parent)).is_file()):
                raise ToolError(f"cannot create {rel!r}: {str(parent)!r} is a file")
        buffer = self._buffer(rel)
        if buffer is not None:
            encoding = self._disk_encoding(rel)
            if file_encoding.encodable(buffer.text, encoding) is not None:
                encoding = UTF8
            return FileChange(rel, False, buffer.text, buffer.version, buffer.text, encoding)
        if self._disk(rel).exists():
            whole = self._read_disk(rel)
            return FileChange(rel, False, whole.text, None, whole.text, whole.encoding)
        return FileChange(rel, True, "", None, "")

    def _stays_inside(self, path: str) -> bool:
        try:
            self._paths.resolve(path)
        except PathRefused:
            return False
        return True


def _visible(change: FileChange) -> str | None:
    """The text a change contributes to the proposal, or None when it changes nothing.

    A new file always counts, even when empty (an empty ``__init__.py`` is a real change).
    """
    if change.is_new:
        return change.new_text
    return None if change.new_text == change.base_text else change.new_text


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _shown(encoding: TextEncoding) -> str:
    """The encoding's label for the model, "" for plain UTF-8 (said only when it is something else)."""
    return "" if encoding == UTF8 else encoding.label


def _encoded(text: str, encoding: TextEncoding) -> bytes:
    try:
        return encoding.encode(text)
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _stat_key(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size) if stat.S_ISREG(st.st_mode) else None


def find_ripgrep() -> str | None:
    """The ripgrep binary: the one installed next to our interpreter (the ``ripgrep`` wheel), else PATH."""
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file():
        return str(beside)
    return shutil.which("rg")


def _ripgrep() -> str:
    found = find_ripgrep()
    if found is None:
        raise ToolError("search is unavailable: ripgrep (rg) is not installed; use list_files and read_file")
    return found


def _holds_pending(rel: str, pending: Iterable[str]) -> bool:
    """Whether ``rel`` is a directory that pending new files create (the root always is)."""
    prefix = rel + "/"
    return rel == "." or any(path.startswith(prefix) for path in pending)
