"""The session's shadow copy of the workspace, and the shell runner that works in it.

``ShadowCopy`` is a per-session copy of the workspace in a temporary directory, so that search and
shell commands see the agent's pending edits and the editor's unsaved text while the user's files
stay untouched. Its life, in order:

1. created on first use (the first search or command), empty;
2. before each search or command (``sync``), brought up to date incrementally:
   a. the workspace is walked (``shadow_tree.walk_workspace``: ``.git``, secrets, caches and special
      files skipped; dependency trees and large gitignored trees linked, not copied, after a scan
      for the secrets inside them: a folder holding some is linked entry by entry around them, one
      too large to scan is left out) and only the entries whose ``lstat`` changed since the last
      sync are copied; entries gone from the workspace are removed; entries a command deleted or
      changed beyond review are copied again;
   b. every pending edit and open buffer is written, byte for byte (in its file's encoding, line
      endings kept; ``Overlay.unsaved_files``),
      unless the copy already holds exactly that text (a hash and the file's ``lstat``, recorded at
      the last write, tell);
   c. a file written earlier that is no longer pending or open is restored from the workspace (or
      removed when it is not there); files commands made are otherwise left alone;
3. ``close`` deletes it. A session killed before it could is cleaned up by the next one to make a
   copy (``owned_temp_dirs``: each copy's directory is locked by its living process).

``ShellRunner`` implements the core ``CommandRunner`` port on top of it. Each command, in order:

1. settles a command that was cancelled (its changes are undone, not proposed);
2. syncs the copy and lists its reviewable files (``shadow_tree.reviewable_files``);
3. runs ``/bin/bash -c`` (else ``/bin/sh -c``) in the copy with ``processes.execute``: inside the
   bubblewrap sandbox where one works (``workspace.sandbox``: no network, only the copy writable, the
   real workspace hidden, linked trees read-only with their secrets masked), an allowlisted
   environment without keys, the
   process group killed on exit, timeout or cancellation, and the output capped head plus tail;
4. brings the files the command changed back into the proposal (``bring_back``) when they are
   reviewable: not gitignored, outside caches, text in the file's own encoding, at most
   ``max_file_bytes``, allowed by the path policy and by ``may_propose`` (the permission engine's
   edit verdict). So a formatter's output becomes part of the diff. Anything else (deletions too: a
   proposal cannot delete a file) is undone at the next sync and named with its reason after the
   output (``[agent-ls: ...]``) and in ``take_left_out`` for the run's end; after a timeout nothing is
   brought back and every change is undone.

Without a sandbox the command runs unisolated, with the same environment, and the first output of the
runner says so in one line (``NO_SANDBOX_NOTE``). In ``workspace`` mode (``shell.mode``) commands run
in the real workspace instead: nothing is synced or brought back, and the sandbox makes the workspace
writable with every secret file masked, found by a walk of the whole tree (``ShadowCopy.secret_files``:
dependency trees, caches, build outputs and ``.git`` included; a folder too large to scan is hidden).
A folder left out or hidden for its size is named once in the output (``left_out_note``).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from agent_ls.core.errors import ToolError
from agent_ls.core.ports import CommandResult
from agent_ls.workspace.sandbox import Sandbox, find_sandbox
from agent_ls.workspace import shadow_tree as tree
from agent_ls.workspace.bring_back import bring_back
from agent_ls.workspace.owned_temp_dirs import OwnedDir, make_owned_dir
from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.processes import execute
from agent_ls.workspace.secret_scan import SCAN_MAX_ENTRIES, SecretScan

if TYPE_CHECKING:
    from agent_ls.workspace.overlay import Overlay

ShellMode = Literal["shadow", "workspace"]

# Environment variables a command inherits (when set), besides every LC_* variable.
ENV_ALLOWLIST = (
    "PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "USER", "LOGNAME", "SHELL", "TZ",
)  # fmt: skip
# Where toolchains installed in the home keep their roots. With HOME on a scratch directory (no
# sandbox), rustup's proxies, pyenv's shims and nvm would not find them; set to the real ones.
TOOLCHAIN_HOMES = {
    "RUSTUP_HOME": ".rustup",
    "CARGO_HOME": ".cargo",
    "PYENV_ROOT": ".pyenv",
    "NVM_DIR": ".nvm",
}
ENV_FIXED = {
    "PYTHONDONTWRITEBYTECODE": "1",
    # Git settings at command-line precedence (git-config(1) GIT_CONFIG_COUNT), over any repository's
    # own config: a repository the agent wrote (a bare "sub/HEAD" + "sub/config") is not discovered
    # implicitly, and no config file can make git run a program through fsmonitor or hooks.
    "GIT_CONFIG_COUNT": "3",
    "GIT_CONFIG_KEY_0": "safe.bareRepository",
    "GIT_CONFIG_VALUE_0": "explicit",
    "GIT_CONFIG_KEY_1": "core.fsmonitor",
    "GIT_CONFIG_VALUE_1": "false",
    "GIT_CONFIG_KEY_2": "core.hooksPath",
    "GIT_CONFIG_VALUE_2": "/dev/null",
}
_ENV_FORBIDDEN_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")
_ENV_FORBIDDEN_PREFIXES = ("AGENT_LS_", "AWS_")

NO_SANDBOX_NOTE = (
    "[agent-ls: no sandbox (bubblewrap not available); the command ran unisolated in the shadow copy]"
)
MAX_FILE_BYTES = 1_000_000
"""The largest file a command's change brings back into the proposal, in bytes."""

T = TypeVar("T")


@dataclass(frozen=True)
class Snapshot:
    """The copy's reviewable files before a command: copy-relative path to ``lstat`` key."""

    files: Mapping[str, tree.Key]


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


class ShadowCopy:
    """A lazily created, incrementally synced copy of one workspace in a temporary directory.

    Args:
        root: the workspace root to copy (its real path is used).
        temp_parent: where to create the temporary directory; the system default when None.
        paths: the path policy whose secret patterns decide what is never copied; the default
            patterns when None. Share the session's with the ``Overlay``.
        max_scan_entries: the most entries the secret scan of one linked folder looks at before the
            folder is left out (``secret_scan.SCAN_MAX_ENTRIES``).
    """

    def __init__(
        self,
        root: Path,
        *,
        temp_parent: Path | None = None,
        paths: PathPolicy | None = None,
        max_scan_entries: int = SCAN_MAX_ENTRIES,
    ) -> None:
        self._root = Path(os.path.realpath(root))
        self._paths = paths if paths is not None else PathPolicy(self._root)
        self._temp_parent = temp_parent
        self._temp: OwnedDir | None = None
        self._workdir: Path | None = None
        self._seen: dict[str, tuple[tree.Kind, tree.Key]] = {}
        self._written: dict[str, tuple[bytes, tree.Key | None]] = {}
        self._stale: set[str] = set()
        self._lock = asyncio.Lock()
        self._linked_scan = SecretScan(self._root, self._paths.is_secret, max_entries=max_scan_entries)
        self._tree_scan = SecretScan(self._root, self._paths.is_secret, max_entries=max_scan_entries)
        self._linked: tuple[str, ...] = ()
        self._masked: tuple[str, ...] = ()
        self._left_out: tuple[str, ...] = ()

    @property
    def path(self) -> Path | None:
        """The copied workspace root, or None before the first ``sync`` and after ``close``."""
        return self._workdir

    @property
    def linked(self) -> tuple[Path, ...]:
        """The real folders and files the copy links to (dependency trees, ...), sorted; a split folder
        as a whole, not entry by entry (the sandbox mounts these read-only)."""
        return tuple(self._root / rel for rel in self._linked)

    @property
    def masked(self) -> tuple[Path, ...]:
        """The real paths of the secrets inside the ``linked`` folders, sorted (the sandbox masks them)."""
        return tuple(self._root / rel for rel in self._masked)

    @property
    def left_out(self) -> tuple[str, ...]:
        """The folders to link that were too large to scan for secrets at the last sync, so left out of
        the copy. Workspace-relative, sorted."""
        return self._left_out

    async def sync(self, overlay: Overlay) -> Path:
        """Create the copy if needed and bring it up to date (module docstring, step 2).

        The overlay is read on the event loop; the walk and the writes run in a worker thread.

        Returns:
            The copied workspace root, to use as the working directory.

        Raises:
            ToolError: the copy cannot be made or written (disk full, a directory where a file goes).
        """
        texts = overlay.unsaved_files()
        async with self._lock:
            return await self._in_thread(self._sync, texts)

    async def prepare(self, overlay: Overlay) -> tuple[Path, Snapshot]:
        """``sync``, then list the reviewable files, so that ``changes_since`` can tell what a command did."""
        texts = overlay.unsaved_files()
        async with self._lock:
            return await self._in_thread(self._prepare, texts)

    async def changes_since(self, snapshot: Snapshot) -> ShadowChanges:
        """The reviewable files changed (new or modified) and deleted since ``snapshot``."""
        async with self._lock:
            if self._workdir is None:
                return ShadowChanges()
            after = await asyncio.to_thread(tree.reviewable_files, self._workdir)
        changed = sorted(rel for rel, key in after.items() if snapshot.files.get(rel) != key)
        return ShadowChanges(tuple(changed), tuple(sorted(snapshot.files.keys() - after.keys())))

    async def restore(self, rels: Sequence[str]) -> None:
        """Undo a command's change of ``rels`` at the next sync: copied again from the workspace, or
        rewritten from the overlay. A file in neither is left as the command made it."""
        async with self._lock:
            self._stale.update(rels)
            for rel in rels:
                if rel in self._written:
                    self._written[rel] = (b"", None)  # never matches: the text is written again

    def moved_since_sync(self, rel: str, unsaved: bytes | None) -> bool:
        """True when what the last sync copied for ``rel`` is no longer the workspace's version of it: the
        user saved or typed while a command ran, so the command's output rests on an older text.

        Args:
            unsaved: the pending edit's or open buffer's bytes of ``rel`` now (``Overlay.unsaved_file``),
                None when it has neither (then the disk file is compared, by ``lstat``).
        """
        if unsaved is not None:
            written = self._written.get(rel)
            return written is None or written[0] != hashlib.sha256(unsaved).digest()
        seen = self._seen.get(rel)
        now = _lstat_key(self._root / rel)
        if seen is None:
            return now is not None  # not in the workspace at the sync; there now
        return now is None or seen != ("file", now)

    def read_changed(self, rel: str, max_bytes: int) -> bytes | None:
        """The bytes of the copy's regular file ``rel`` when it has at most ``max_bytes``, else None.

        None too when ``rel`` leads through a link (a command may have planted one). Blocks.
        """
        if self._workdir is None:
            return None
        target = self._workdir / rel
        if Path(os.path.realpath(target)) != Path(os.path.realpath(self._workdir)) / rel:
            return None
        return tree.read_regular(target, max_bytes)

    def scratch_home(self) -> Path:
        """A private directory for ``HOME`` of unsandboxed commands; deleted by ``close``."""
        home = self._temp_dir() / "home"
        home.mkdir(mode=0o700, exist_ok=True)
        return home

    def secret_files(self) -> WorkspaceSecrets:
        """What workspace mode hides: every secret file and directory of the workspace, and the folders
        too large to scan for them. Blocks.

        The whole tree is walked (``walk_workspace(everything=True)``): dependency trees, caches,
        build outputs, gitignored folders and ``.git`` directories (but their objects) included.
        Listings are remembered between calls (``SecretScan``).
        """
        found = list(tree.walk_workspace(self._root, self._paths.is_secret, self._tree_scan, everything=True))
        self._tree_scan.forget_unused()
        hidden = sorted(entry.rel for entry in found if entry.kind in ("secret", "unchecked"))
        unchecked = sorted(entry.rel for entry in found if entry.kind == "unchecked")
        return WorkspaceSecrets(tuple(self._root / rel for rel in hidden), tuple(unchecked))

    def close(self) -> None:
        """Delete the copy. Idempotent; a later ``sync`` makes a fresh one."""
        if self._temp is not None:
            self._temp.remove()
        self._temp = None
        self._workdir = None
        self._seen = {}
        self._written = {}
        self._stale = set()
        self._linked = self._masked = self._left_out = ()

    # -- internals (run in a worker thread, under the lock) --------------------------------------

    async def _in_thread(self, work: Callable[[Mapping[str, bytes]], T], texts: Mapping[str, bytes]) -> T:
        try:
            return await asyncio.to_thread(work, texts)
        except OSError as exc:
            raise ToolError(f"cannot prepare the workspace copy: {exc}") from None

    def _prepare(self, texts: Mapping[str, bytes]) -> tuple[Path, Snapshot]:
        workdir = self._sync(texts)
        return workdir, Snapshot(tree.reviewable_files(workdir))

    def _sync(self, texts: Mapping[str, bytes]) -> Path:
        workdir = self._ensure()
        on_disk = self._refresh(workdir, texts)
        for rel, text in texts.items():
            self._write_text(workdir, rel, text)
        for rel in self._written.keys() - texts.keys():
            if rel not in on_disk:
                tree.remove_inside(workdir, rel)
            del self._written[rel]
        return workdir

    def _refresh(self, workdir: Path, texts: Mapping[str, bytes]) -> set[str]:
        """Copy the workspace entries changed since the last sync; returns every entry's path."""
        now: dict[str, tuple[tree.Kind, tree.Key]] = {}
        todo: list[tree.Entry] = []
        splits: set[str] = set()
        linked: list[str] = []
        masked: list[str] = []
        left_out: list[str] = []
        walk = tree.walk_workspace(self._root, self._paths.is_secret, self._linked_scan)
        for entry in tree.split_around(self._root, walk, texts):
            inside_split = entry.rel.rpartition("/")[0] in splits
            if entry.kind == "split":
                splits.add(entry.rel)
            if entry.kind in ("linked", "split") and not inside_split:
                linked.append(entry.rel)
            elif entry.kind == "secret" and inside_split:
                masked.append(entry.rel)
            elif entry.kind == "unchecked":
                left_out.append(entry.rel)
            if entry.kind in ("secret", "unchecked") or entry.rel in texts:
                continue  # a pending or open file is written from the overlay instead
            ident = (entry.kind, entry.key if entry.kind in ("file", "symlink") else (0, 0, 0, 0))
            now[entry.rel] = ident
            if self._seen.get(entry.rel) != ident or entry.rel in self._stale:
                todo.append(entry)
        for rel in sorted(self._seen.keys() - now.keys() - texts.keys(), reverse=True):
            tree.remove_inside(workdir, rel)
        for entry in todo:
            try:
                self._materialize(workdir, entry)
            except OSError:
                del now[entry.rel]  # unreadable now: tried again at the next sync
        self._seen = now
        self._stale = set()
        self._linked_scan.forget_unused()
        self._linked, self._masked, self._left_out = (
            tuple(sorted(linked)),
            tuple(sorted(masked)),
            tuple(sorted(left_out)),
        )
        return set(now)

    def _materialize(self, workdir: Path, entry: tree.Entry) -> None:
        target, source = workdir / entry.rel, self._root / entry.rel
        if entry.kind in ("dir", "split"):
            tree.make_dir(workdir, target)
        elif entry.kind == "file":
            tree.copy_file(workdir, target, source, entry.mode)
        elif entry.kind == "symlink":
            tree.make_symlink(workdir, target, os.readlink(source))
        elif entry.kind == "linked":
            tree.make_symlink(workdir, target, str(source))

    def _write_text(self, workdir: Path, rel: str, data: bytes) -> None:
        digest = hashlib.sha256(data).digest()
        target = workdir / rel
        current = _lstat_key(target)
        if self._written.get(rel) == (digest, current) and current is not None:
            return
        if current is not None and tree.read_regular(target, len(data)) == data:
            self._written[rel] = (digest, current)
            return
        try:
            st = os.lstat(self._root / rel)
            mode = st.st_mode & 0o777 if stat.S_ISREG(st.st_mode) else 0o644
        except OSError:
            mode = 0o644  # keep a script's executable bit; a new file gets the usual mode
        tree.write_file(workdir, target, data, mode)
        self._written[rel] = (digest, _lstat_key(target))

    def _temp_dir(self) -> Path:
        if self._temp is None:  # leftovers of dead sessions are removed first (owned_temp_dirs)
            self._temp = make_owned_dir("agent-ls-shadow-", self._temp_parent)
        return self._temp.path

    def _ensure(self) -> Path:
        if self._workdir is None:
            workdir = self._temp_dir() / (self._root.name or "workspace")
            workdir.mkdir(exist_ok=True)
            self._workdir = workdir
        return self._workdir


def _lstat_key(path: Path) -> tree.Key | None:
    try:
        return tree.key_of(os.lstat(path))
    except OSError:
        return None


def child_environment(
    environ: Mapping[str, str], *, venv: Path | None = None, key_names: Sequence[str] = ()
) -> dict[str, str]:
    """The environment of a shell command, built from ``environ`` (the caller passes ``os.environ``).

    Only ``ENV_ALLOWLIST`` names, ``LC_*`` names and ``TOOLCHAIN_HOMES`` names are kept, plus
    ``ENV_FIXED``; never a name containing KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL, starting with
    ``AGENT_LS_`` or ``AWS_``, or in ``key_names`` (the configured ``api_key_env`` names); ``ENV_FIXED``
    (ours) is set last. The
    directory of our interpreter is put first on ``PATH`` so the venv's ``pytest`` and ``rg`` are
    found, and ``venv/bin`` before it when a venv is configured (with ``VIRTUAL_ENV``). ``HOME`` is
    kept as given; ``ShellRunner`` points it at a scratch directory.
    """
    kept = {
        name: value
        for name, value in environ.items()
        if name in ENV_ALLOWLIST or name.startswith("LC_") or name in TOOLCHAIN_HOMES
    }
    search_path = [str(Path(sys.executable).parent), environ.get("PATH", os.defpath)]
    if venv is not None:
        search_path.insert(0, str(venv / "bin"))
        kept["VIRTUAL_ENV"] = str(venv)
    kept["PATH"] = os.pathsep.join(search_path)
    forbidden = {name.upper() for name in key_names}
    # ENV_FIXED last: ours, never from the parent (GIT_CONFIG_KEY_n would fail the KEY filter).
    return {name: value for name, value in kept.items() if not _forbidden(name, forbidden)} | ENV_FIXED


def _forbidden(name: str, key_names: set[str]) -> bool:
    upper = name.upper()
    return (
        upper in key_names
        or upper.startswith(_ENV_FORBIDDEN_PREFIXES)
        or any(word in upper for word in _ENV_FORBIDDEN_WORDS)
    )


SKILL_DIR_MAX_ENTRIES = 2_000
"""A skill folder with more entries is not mounted in the sandbox (too large to check for secrets)."""


class ShellRunner:
    """Runs shell commands in the session's shadow copy (the core ``CommandRunner`` port).

    Args:
        shadow: the session's shadow copy (share it with the ``Overlay``, so search and commands see
            the same copy); synced from ``overlay`` before each command.
        overlay: the session's overlay (pending edits and open buffers); a command's reviewable
            changes are proposed to it.
        environ: the environment to pick the allowlisted variables from (see ``child_environment``);
            its ``HOME`` is the user's home, hidden by the sandbox.
        head_chars: characters kept from the start of the output (code points).
        tail_chars: characters kept from the end of the output (code points).
        sandbox: the sandbox to run commands in; ``"detect"`` (the default) uses ``find_sandbox()``,
            probed on the first command; None runs them unisolated, with ``NO_SANDBOX_NOTE`` as the
            first line of the first output.
        mode: ``shadow`` (the default) or ``workspace``: run in the real workspace (``shell.mode``).
        venv: a virtual environment whose ``bin`` goes first on ``PATH`` (read-only in the sandbox).
        key_names: environment variable names that hold keys (``api_key_env``); never passed on.
        max_file_bytes: the largest changed file brought back into the proposal, in bytes.
        may_propose: whether a command's change of a workspace-relative path may enter the proposal
            (wire the permission engine's edit verdict: a path whose edit is denied stays out);
            every reviewable path when None.
        paths: the session's path policy: it finds the secrets to mask in ``skill_dirs``.
        skill_dirs: the folders of the activated skills outside the workspace (asked before each
            command), mounted read-only in the sandbox so that their scripts run, their secrets masked;
            a folder over ``SKILL_DIR_MAX_ENTRIES`` entries is left out, with a note.
    """

    def __init__(
        self,
        shadow: ShadowCopy,
        overlay: Overlay,
        environ: Mapping[str, str],
        *,
        head_chars: int = 8_000,
        tail_chars: int = 12_000,
        sandbox: Sandbox | Literal["detect"] | None = "detect",
        mode: ShellMode = "shadow",
        venv: Path | None = None,
        key_names: Sequence[str] = (),
        max_file_bytes: int = MAX_FILE_BYTES,
        may_propose: Callable[[str], bool] | None = None,
        paths: PathPolicy | None = None,
        skill_dirs: Callable[[], Sequence[Path]] = tuple,
    ) -> None:
        self._shadow = shadow
        self._paths = paths
        self._skill_dirs = skill_dirs
        self._skill_scans: dict[Path, tuple[int, list[Path] | None]] = {}
        self._may_propose = may_propose
        self._overlay = overlay
        self._env = child_environment(environ, venv=venv, key_names=key_names)
        home = environ.get("HOME")
        # The home a sandbox can hide (see workspace.sandbox._hidden_home); None for "/", relative or missing.
        usable = home and os.path.isabs(home) and os.path.isdir(home) and os.path.realpath(home) != "/"
        self._home = home if usable else None
        self._real_root = Path(os.path.realpath(overlay.root))
        self._shell = "/bin/bash" if Path("/bin/bash").exists() else "/bin/sh"
        self._head_chars = head_chars
        self._tail_chars = tail_chars
        self._detect = sandbox == "detect"
        self._sandbox = None if isinstance(sandbox, str) else sandbox
        self._mode = mode
        self._venv = Path(os.path.realpath(venv)) if venv is not None else None
        self._max_file_bytes = max_file_bytes
        self._noted = False
        self._left_out_noted: tuple[str, ...] = ()
        self._unsettled: Snapshot | None = None
        self._left_out: list[str] = []

    async def run(self, command: str, timeout_s: float) -> CommandResult:
        """Run ``command`` in the shadow copy (or the workspace) and return its exit code and output.

        Returns:
            ``exit_code`` is the shell's (negative for a signal), None when it timed out. ``output`` is
            stdout and stderr interleaved, decoded as UTF-8 (invalid bytes replaced) and capped to
            ``head_chars`` + ``tail_chars`` with an ``[... N characters omitted ...]`` line between,
            then the ``[agent-ls: ...]`` lines about files brought back, refused or deleted.

        Raises:
            asyncio.CancelledError: after the process group was killed. A failing or timed-out command
                is a normal result, never an exception.
            ToolError: the shadow copy cannot be prepared or the shell cannot be started.
        """
        if self._detect:
            self._sandbox = await asyncio.to_thread(find_sandbox)
            self._detect = False
        sandbox = self._sandbox
        if self._mode == "workspace":
            return await self._run_in_workspace(command, timeout_s, sandbox)
        if self._unsettled is not None:
            cancelled = await self._shadow.changes_since(self._unsettled)
            await self._shadow.restore([*cancelled.changed, *cancelled.deleted])
            self._unsettled = None
        cwd, before = await self._shadow.prepare(self._overlay)
        self._unsettled = before  # until the changes are brought back: a cancellation leaves it set
        extra, extra_secrets, too_big = await asyncio.to_thread(self._extra_mounts)
        result = await execute(
            [self._shell, "-c", command],
            cwd=cwd,
            env=self._environment(sandbox),
            sandbox=sandbox,
            workspace_root=self._overlay.root,
            timeout_s=timeout_s,
            head_chars=self._head_chars,
            tail_chars=self._tail_chars,
            note=self._notes(sandbox, self._shadow.left_out, too_big),
            readonly=[*self._readonly(), *extra],
            masked=[*self._shadow.masked, *extra_secrets],
        )
        self._unsettled = None
        back = await bring_back(
            self._shadow,
            self._overlay,
            before,
            timed_out=result.timed_out,
            max_file_bytes=self._max_file_bytes,
            may_propose=self._may_propose,
        )
        self._left_out.extend(back.left_out)
        if not back.notes:
            return result
        separator = "\n" if result.output and not result.output.endswith("\n") else ""
        output = f"{result.output}{separator}{back.notes}"
        return replace(result, output=output, changed_paths=tuple(sorted(back.proposed)))

    async def _run_in_workspace(
        self, command: str, timeout_s: float, sandbox: Sandbox | None
    ) -> CommandResult:
        root = self._real_root
        hidden = await asyncio.to_thread(self._shadow.secret_files) if sandbox is not None else None
        venv = self._venv
        return await execute(
            [self._shell, "-c", command],
            cwd=root,
            env=self._environment(sandbox),
            sandbox=sandbox,
            workspace_root=root,
            timeout_s=timeout_s,
            head_chars=self._head_chars,
            tail_chars=self._tail_chars,
            note=self._notes(sandbox, hidden.unchecked if hidden is not None else ()),
            readonly=[venv] if venv is not None and not venv.is_relative_to(root) else [],
            masked=hidden.paths if hidden is not None else (),
        )

    def _notes(
        self, sandbox: Sandbox | None, left_out: tuple[str, ...], too_big: Sequence[Path] = ()
    ) -> str | None:
        """The lines to put before a command's output: ``NO_SANDBOX_NOTE`` the first time, the folders
        ``left_out`` (or hidden) for their size whenever that list changes, and the skill folders too big
        to mount; None for none."""
        notes = [
            f"[agent-ls: the skill folder {d} holds over {SKILL_DIR_MAX_ENTRIES:,} entries: it is not in the "
            "sandbox, so its scripts cannot run here]"
            for d in too_big
        ]
        if sandbox is None and not self._noted:
            self._noted = True
            notes.append(NO_SANDBOX_NOTE)
        if left_out != self._left_out_noted:
            self._left_out_noted = left_out
            if left_out:
                notes.append(left_out_note(left_out, self._mode))
        return "\n".join(notes) or None

    def _environment(self, sandbox: Sandbox | None) -> dict[str, str]:
        """The command's environment with ``HOME`` on a scratch directory.

        In the sandbox, the user's home path is already an empty private tmpfs with only the toolchains
        re-exposed (``Sandbox.wrap``), so ``HOME`` keeps its value (``/tmp``, private too, when the home
        cannot be hidden). Without it, ``HOME`` is the session's scratch directory, and the roots of
        toolchains installed in the real home are named explicitly (``TOOLCHAIN_HOMES``).
        """
        env = dict(self._env)
        home = self._home
        if sandbox is not None:
            env["HOME"] = home or "/tmp"
            return env
        env["HOME"] = str(self._shadow.scratch_home())
        for name, directory in TOOLCHAIN_HOMES.items():
            if home and name not in env and os.path.isdir(os.path.join(home, directory)):
                env[name] = os.path.join(home, directory)
        return env

    def _extra_mounts(self) -> tuple[list[Path], list[Path], list[Path]]:
        """The activated skills' folders to mount read-only, the secrets in them to mask, and the folders
        too large to check (left out). Each folder is scanned once, again only when it changed."""
        mounts: list[Path] = []
        secrets: list[Path] = []
        too_big: list[Path] = []
        if self._paths is None:
            return mounts, secrets, too_big
        for directory in self._skill_dirs():
            try:
                stamp = directory.stat().st_mtime_ns
            except OSError:
                continue
            cached = self._skill_scans.get(directory)
            if cached is None or cached[0] != stamp:
                cached = (stamp, self._paths.secrets_under(directory, SKILL_DIR_MAX_ENTRIES))
                self._skill_scans[directory] = cached
            if cached[1] is None:
                too_big.append(directory)
            else:
                mounts.append(directory)
                secrets.extend(cached[1])
        return mounts, secrets, too_big

    def _readonly(self) -> list[Path]:
        """Real paths the sandbox mounts read-only: what the copy links to, and the venv when it lies
        outside the workspace (one inside is linked, or left out with its secrets unchecked)."""
        mounts = list(self._shadow.linked)
        if self._venv is not None and not self._venv.is_relative_to(self._real_root):
            mounts.append(self._venv)
        return mounts

    def take_left_out(self) -> tuple[str, ...]:
        """The changes commands made since the last call that did not come into the proposal, as
        ``path (why)`` lines in the order they happened; the list is then emptied (once per run)."""
        taken, self._left_out = tuple(self._left_out), []
        return taken


def left_out_note(rels: Sequence[str], mode: ShellMode) -> str:
    """The line naming the folders too large to check for secret files (``ShadowCopy.left_out``,
    ``WorkspaceSecrets.unchecked``)."""
    where = "hidden from commands" if mode == "workspace" else "left out of the workspace copy"
    return f"[agent-ls: {where} (too many files to check for secret files): {', '.join(rels)}]"
