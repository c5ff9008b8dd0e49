"""The agent's view of one workspace: pending agent edits over open editor buffers over disk.

``Overlay`` implements the core ``Workspace`` port. A read looks, in order, at:

1. the pending agent edit of the file (``propose``),
2. the open editor buffer (unsaved text, through a ``BufferSource``),
3. the disk file, decoded as UTF-8 with line endings kept byte for byte (no newline translation).

Nothing here writes the user's files. ``search`` runs ripgrep in the session's shadow copy after
writing the current view into it (``shadow.py``), so it sees pending edits and unsaved buffers.
Disk reads go through ``PathPolicy.read_bytes``, which resolves the path again at use: a file
replaced by a symlink after the permission check is not followed out of the workspace. Edits are
proposed inside the first root only; other roots and extra directories are read-only.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Literal, Protocol

from agent_ls.core.errors import PathRefused, ToolError
from agent_ls.core.proposal import FileChange
from agent_ls.policy.sandbox import Sandbox, find_sandbox
from agent_ls.workspace.listing import Selection, names_hidden, walk_files
from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.processes import execute
from agent_ls.workspace.shadow import ShadowCopy, child_environment

# ripgrep gets less than the registry's 60 s, so it is stopped here and the model reads why.
SEARCH_TIMEOUT_S = 50.0
# Characters of ripgrep output kept in memory; the grep tool shows far less.
SEARCH_MAX_CHARS = 200_000


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
        shadow: the session's shadow copy, shared with its ``ShellRunner``; a new (lazily created) one
            by default. ``close`` deletes it.
        environ: the environment ripgrep's allowlisted one is built from (``child_environment``).
        sandbox: where ripgrep runs, as for ``ShellRunner``.
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
        self.shadow = shadow if shadow is not None else ShadowCopy(self._paths.real_root, paths=self._paths)
        self._env = child_environment(environ or {})
        self._detect = sandbox == "detect"
        self._sandbox = None if isinstance(sandbox, str) else sandbox

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
            ToolError: the file does not exist, is a directory, cannot be read, or is binary or not
                UTF-8. The message is one line and names ``rel``.
        """
        pending = self._pending.get(rel)
        if pending is not None:
            return pending.new_text
        buffer = self._buffer(rel)
        if buffer is not None:
            return buffer.text
        return self._read_disk(rel)

    def propose(self, rel: str, text: str) -> bool:
        """Record ``text`` as the proposed content of ``rel``; nothing is written to disk.

        The base (``base_text``/``base_version``/``is_new``) is captured the first time ``rel`` is
        proposed, from the open buffer, else the disk; a file found in neither is new.

        Returns:
            True when ``proposal()`` changed (the file's proposed text differs from before).

        Raises:
            ToolError: ``rel`` is a directory, a parent of it is a file, the base cannot be read, or
                ``rel`` is outside the first root (another root or an extra directory).
        """
        if os.path.isabs(rel):
            raise ToolError(f"{rel} is outside the workspace root {self.root}; edits go inside it")
        previous = self._pending.get(rel)
        before = None if previous is None else _visible(previous)
        current = replace(previous or self._base_of(rel), new_text=text)
        self._pending[rel] = current
        return before != _visible(current)

    def discard(self) -> None:
        """Drop every pending edit (after the proposal was applied or rejected)."""
        self._pending.clear()

    def proposal(self) -> list[FileChange]:
        """The pending edits sorted by path, without those whose new text equals their base.

        A new file is kept even when its text is empty.
        """
        return [change for _, change in sorted(self._pending.items()) if _visible(change) is not None]

    def unsaved_texts(self) -> dict[str, str]:
        """Workspace-relative path to text, for every open buffer and pending edit (pending wins).

        This is what the shadow copy must hold on top of the disk. Buffers outside the root or on a
        secret path are left out.
        """
        texts: dict[str, str] = {}
        if self._buffers is not None:
            for path in self._buffers.open_paths():
                try:
                    rel = self._paths.resolve(str(path))
                except ToolError:
                    continue
                buffer = self._buffers.get(path)
                if buffer is not None and rel != ".":
                    texts[rel] = buffer.text
        texts.update((rel, change.new_text) for rel, change in self._pending.items())
        return texts

    def list_files(self, rel_dir: str, pattern: str | None, limit: int) -> tuple[list[str], int]:
        """Files under ``rel_dir``, recursively: the first ``limit`` sorted paths and the total count.

        ``.git/`` is always skipped, gitignored entries too (the root ``.gitignore`` and nested ones);
        hidden entries (name starting with ``.``) are skipped unless a component of ``pattern``
        starts with ``.`` (``.github/**``). ``pattern`` is a gitignore-style glob matched against the
        workspace-relative path or the path relative to ``rel_dir`` (``*.py`` matches at any depth).
        Pending new files are included (gitignore does not hide them). Symlinked directories are not
        followed; symlinks leaving the root are left out. See ``listing.py``.

        Raises:
            ToolError: ``rel_dir`` does not exist or is a file.
        """
        if rel_dir in self._pending or self._disk(rel_dir).is_file():
            raise ToolError(f"{rel_dir!r} is a file, not a directory; read it instead")
        if not self.is_dir(rel_dir):
            raise ToolError(f"directory not found: {rel_dir!r}")
        selection = Selection.of(rel_dir, pattern)
        found = set(walk_files(self._paths.real_root, selection, self._stays_inside))
        found.update(rel for rel in self._pending if selection.covers(rel) and selection.wants(rel))
        ordered = sorted(found)
        return ordered[: max(limit, 0)], len(ordered)

    async def search(self, pattern: str, rel: str, glob: str | None) -> str:
        """ripgrep ``pattern`` over the current view of ``rel`` (pending edits and buffers included).

        Returns:
            ``path:line:text`` lines (workspace-relative paths, 1-based lines) sorted by path, uncapped,
            each ending with ``\\n`` (a CRLF file's lines keep their ``\\r``); ``""`` when
            nothing matched. Gitignored and hidden files are skipped unless ``glob`` names hidden ones.

        ripgrep runs like a shell command (``shadow.execute``): in the sandbox, with the command
        environment, killed with its process group on cancel, its output capped at
        ``SEARCH_MAX_CHARS`` characters in memory.

        Raises:
            ToolError: ripgrep is missing, it failed (an invalid regex: the message is rg's), it took
                more than ``SEARCH_TIMEOUT_S`` seconds, or ``rel`` leads out of the copy through a link
                a command planted.
        """
        rg = _ripgrep()
        cwd = await self.shadow.sync(self)
        if not (cwd / rel).resolve().is_relative_to(cwd.resolve()):
            # A command may have replaced a directory of the copy with a link to elsewhere.
            raise ToolError(f"{rel} leads outside the workspace copy; search a real directory")
        # --sort path: the same search gives the same output (replays, tests), at the cost of threads.
        args = [rg, "--no-heading", "--line-number", "--with-filename", "--color", "never", "--sort", "path"]
        # The shadow has no .git directory; without this rg would ignore .gitignore files there.
        # --no-messages: unreadable files are skipped silently, so the output holds matches or one error.
        args += ["--no-require-git", "--no-messages"]
        if glob:
            args += ["--glob", glob]
            if names_hidden(glob):
                args.append("--hidden")
        args += ["--regexp", pattern]
        if rel != ".":
            args += ["--", rel]
        if self._detect:
            self._sandbox = await asyncio.to_thread(find_sandbox)
            self._detect = False
        # ripgrep runs like a shell command: sandboxed, killed with its group, its output capped.
        result = await execute(
            args,
            cwd=cwd,
            env=self._env,
            sandbox=self._sandbox,
            workspace_root=self.root,
            timeout_s=SEARCH_TIMEOUT_S,
            head_chars=SEARCH_MAX_CHARS,
            tail_chars=0,
        )
        if result.timed_out:
            raise ToolError(f"search timed out after {SEARCH_TIMEOUT_S:g} s; narrow it with path or glob")
        if result.exit_code == 1:
            return ""
        if result.exit_code == 2 and not _looks_like_matches(result.output):
            if not result.output.strip():  # nothing searchable (an empty folder): not an error
                return ""
            raise ToolError(_search_error(pattern, result.output))
        return result.output

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
        if rel == ".":
            return True
        prefix = rel + "/"
        return any(path.startswith(prefix) for path in self._pending)

    def _read_disk(self, rel: str) -> str:
        try:
            data = self._paths.read_bytes(rel)
        except FileNotFoundError:
            if self._is_pending_dir(rel):
                raise ToolError(f"{rel!r} is a directory, not a file; list it instead") from None
            raise ToolError(f"file not found: {rel!r}") from None
        except IsADirectoryError:
            raise ToolError(f"{rel!r} is a directory, not a file; list it instead") from None
        except NotADirectoryError:
            raise ToolError(f"file not found: {rel!r}") from None
        except OSError as exc:
            raise ToolError(f"cannot read {rel!r}: {exc.strerror or exc}") from None
        # Decoding bytes ourselves keeps "\r\n" and lone "\r" as they are (no universal newlines).
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{rel!r} is a binary or non-UTF-8 file; it cannot be read as text") from None

    def _base_of(self, rel: str) -> FileChange:
        if rel == "." or self.is_dir(rel):
            raise ToolError(f"{rel!r} is a directory; give a file path")
        for parent in PurePosixPath(rel).parents:
            if str(parent) != "." and (str(parent) in self._pending or self._disk(str(parent)).is_file()):
                raise ToolError(f"cannot create {rel!r}: {str(parent)!r} is a file")
        buffer = self._buffer(rel)
        if buffer is not None:
            return FileChange(rel, False, buffer.text, buffer.version, buffer.text)
        if self._disk(rel).exists():
            text = self._read_disk(rel)
            return FileChange(rel, False, text, None, text)
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


def _looks_like_matches(output: str) -> bool:
    return bool(output) and not output.startswith(("rg: ", "regex parse error", "No files were searched"))


def _search_error(pattern: str, stderr: str) -> str:
    """One line for the model from ripgrep's error output (exit code 2, nothing found)."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    if any("regex parse error" in line for line in lines):
        reason = next((line for line in reversed(lines) if line.startswith("error:")), "invalid syntax")
        return (
            f"invalid regex {pattern!r}: {reason.removeprefix('error:').strip()}; "
            "fix the pattern or escape special characters with a backslash"
        )
    return f"search failed: {lines[0].removeprefix('rg: ') if lines else 'ripgrep exited with code 2'}"


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
