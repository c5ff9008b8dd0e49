"""The session's shadow copy of the workspace, and the shell runner that works in it.

``ShadowCopy`` is a per-session copy of the workspace in a temporary directory, so that search and
shell commands see the agent's pending edits and the editor's unsaved text while the user's files
stay untouched. Its life, in order:

1. created on first use (``sync``): the workspace is copied with symlinks kept as symlinks, without
   ``.git``, ``node_modules``, ``.venv``, ``__pycache__``, secret files (``paths.is_secret``) and
   special files (FIFOs, sockets, devices, which would block or fail a copy);
2. before each search or command, ``sync`` writes every pending edit and every open buffer's text
   into it, byte for byte (UTF-8, line endings kept); a file it wrote earlier that is no longer
   pending or open is restored from disk (or removed when it is not on disk); nothing else is removed;
3. ``close`` deletes it.

Scope of this step: files a command changes in the shadow (a formatter, a snapshot update) do not
come back into the proposal; the shadow is also not refreshed from disk after it was created. Both
are later steps.

``ShellRunner`` implements the core ``CommandRunner`` port on top of it: ``/bin/bash -c`` (else
``/bin/sh -c``) in the shadow directory, inside the bubblewrap sandbox where one works
(``policy.sandbox``: no network, only the shadow writable, the real workspace hidden), a new process
group, stdin from ``/dev/null``, stdout and stderr merged, an allowlisted environment without keys, and
the output capped head plus tail. Without a sandbox the command runs unisolated and the first output
of the runner says so in one line (``NO_SANDBOX_NOTE``).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agent_ls.core.errors import ToolError
from agent_ls.core.ports import CommandResult
from agent_ls.policy.sandbox import Sandbox, find_sandbox
from agent_ls.workspace.paths import is_secret

if TYPE_CHECKING:
    from agent_ls.workspace.overlay import Overlay

SKIPPED_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__"})

# Environment variables a command inherits (when set), and those we always set.
ENV_ALLOWLIST = (
    "PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "USER", "LOGNAME", "SHELL", "TZ",
)  # fmt: skip
ENV_FIXED = {"PYTHONDONTWRITEBYTECODE": "1"}
_ENV_FORBIDDEN_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")

# After the shell exited, how long background children may keep the output pipe open.
_DRAIN_GRACE_S = 1.0

NO_SANDBOX_NOTE = (
    "[agent-ls: no sandbox (bubblewrap not available); the command ran unisolated in the shadow copy]"
)


class ShadowCopy:
    """A lazily created copy of one workspace in a temporary directory.

    Args:
        root: the workspace root to copy (its real path).
        temp_parent: where to create the temporary directory; the system default when None.
    """

    def __init__(self, root: Path, *, temp_parent: Path | None = None) -> None:
        self._root = Path(os.path.realpath(root))
        self._temp_parent = temp_parent
        self._temp: Path | None = None
        self._workdir: Path | None = None
        self._written: set[str] = set()
        self._lock = asyncio.Lock()

    @property
    def path(self) -> Path | None:
        """The copied workspace root, or None before the first ``sync`` and after ``close``."""
        return self._workdir

    async def sync(self, overlay: Overlay) -> Path:
        """Create the copy if needed and write the overlay's pending edits and buffers into it.

        The overlay is read on the event loop; copying and writing run in a worker thread.

        Returns:
            The copied workspace root, to use as the working directory.

        Raises:
            ToolError: the copy cannot be made or written (disk full, a directory where a file goes).
        """
        texts = overlay.unsaved_texts()
        async with self._lock:
            try:
                return await asyncio.to_thread(self._sync, texts)
            except OSError as exc:
                raise ToolError(f"cannot prepare the workspace copy: {exc}") from None

    def close(self) -> None:
        """Delete the copy. Idempotent; a later ``sync`` makes a fresh one."""
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
        self._temp = None
        self._workdir = None
        self._written = set()

    def _sync(self, texts: Mapping[str, str]) -> Path:
        workdir = self._ensure()
        for rel, text in texts.items():
            self._write(workdir, workdir / rel, text.encode("utf-8"))
        for rel in self._written - texts.keys():
            self._restore(workdir, workdir / rel, self._root / rel)
        self._written = set(texts)
        return workdir

    def _ensure(self) -> Path:
        if self._workdir is not None:
            return self._workdir
        self._temp = Path(tempfile.mkdtemp(prefix="agent-ls-shadow-", dir=self._temp_parent))
        workdir = self._temp / (self._root.name or "workspace")
        try:
            shutil.copytree(self._root, workdir, symlinks=True, ignore=self._skipped)
        except shutil.Error:
            pass  # unreadable files are left out; everything else was copied
        workdir.mkdir(exist_ok=True)
        self._workdir = workdir
        return workdir

    def _skipped(self, directory: str, names: list[str]) -> set[str]:
        rel_dir = os.path.relpath(directory, self._root)
        skipped = set()
        for name in names:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            if name in SKIPPED_DIRS or is_secret(rel):
                skipped.add(name)
                continue
            try:
                mode = os.lstat(os.path.join(directory, name)).st_mode
            except OSError:
                skipped.add(name)
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                skipped.add(name)
        return skipped

    @staticmethod
    def _write(workdir: Path, target: Path, data: bytes) -> None:
        _make_parents(workdir, target)
        if _regular(target):
            with contextlib.suppress(OSError):
                if target.read_bytes() == data:
                    return
        else:
            _remove(target)
        # O_NOFOLLOW: a command may have raced a link into place; never write through it.
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)

    @staticmethod
    def _restore(workdir: Path, target: Path, source: Path) -> None:
        with contextlib.suppress(OSError):
            _make_parents(workdir, target)
            _remove(target)
            if source.is_file():
                shutil.copy2(source, target)


# Commands run in the copy and can plant links, FIFOs and devices in it. Writing the proposal into the
# copy happens outside the sandbox, so it must never follow a link (into the user's home or real
# workspace) nor open a FIFO (which blocks forever): parents that are not real directories and targets
# that are not regular files are removed first; they are the copy's own, never the user's.


def _make_parents(workdir: Path, target: Path) -> None:
    """Make every directory between ``workdir`` (the copy's root) and ``target`` a real directory."""
    current = workdir
    for part in target.relative_to(workdir).parts[:-1]:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            current.mkdir()
            continue
        if not stat.S_ISDIR(mode):
            current.unlink()
            current.mkdir()


def _regular(target: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(target).st_mode)
    except FileNotFoundError:
        return False


def _remove(target: Path) -> None:
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(target)
    else:
        target.unlink()


def child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of a shell command, built from ``environ`` (the caller passes ``os.environ``).

    Only ``ENV_ALLOWLIST`` names are kept, plus ``ENV_FIXED``; a name containing KEY, TOKEN, SECRET
    or PASSWORD, or starting with ``AGENT_LS_``, is never passed. The directory of our interpreter
    is put first on ``PATH`` so the venv's ``pytest`` and ``rg`` are found.
    """
    env = {name: environ[name] for name in ENV_ALLOWLIST if name in environ}
    env.update(ENV_FIXED)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), environ.get("PATH", os.defpath)])
    return {name: value for name, value in env.items() if not _forbidden(name)}


def _forbidden(name: str) -> bool:
    upper = name.upper()
    return upper.startswith("AGENT_LS_") or any(word in upper for word in _ENV_FORBIDDEN_WORDS)


class ShellRunner:
    """Runs shell commands in the session's shadow copy (the core ``CommandRunner`` port).

    Args:
        shadow: the session's shadow copy (share it with the ``Overlay``, so search and commands see
            the same copy); synced from ``overlay`` before each command.
        overlay: the session's overlay (pending edits and open buffers).
        environ: the environment to pick the allowlisted variables from (see ``child_environment``).
        head_chars: characters kept from the start of the output (code points).
        tail_chars: characters kept from the end of the output (code points).
        sandbox: the sandbox to run commands in; ``"detect"`` (the default) uses ``find_sandbox()``,
            probed on the first command; None runs them unisolated, with ``NO_SANDBOX_NOTE`` as the
            first line of the first output.
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
    ) -> None:
        self._shadow = shadow
        self._overlay = overlay
        self._env = child_environment(environ)
        self._shell = "/bin/bash" if Path("/bin/bash").exists() else "/bin/sh"
        self._head_chars = head_chars
        self._tail_chars = tail_chars
        self._detect = sandbox == "detect"
        self._sandbox = None if isinstance(sandbox, str) else sandbox
        self._noted = False

    async def run(self, command: str, timeout_s: float) -> CommandResult:
        """Run ``command`` in the shadow copy and return its exit code and capped output.

        Returns:
            ``exit_code`` is the shell's (negative for a signal), None when it timed out. ``output`` is
            stdout and stderr interleaved, decoded as UTF-8 (invalid bytes replaced) and capped to
            ``head_chars`` + ``tail_chars`` with an ``[... N characters omitted ...]`` line between.

        Raises:
            asyncio.CancelledError: after the process group was killed. A failing or timed-out command
                is a normal result, never an exception.
            ToolError: the shadow copy cannot be prepared or the shell cannot be started.
        """
        cwd = await self._shadow.sync(self._overlay)
        if self._detect:
            self._sandbox = await asyncio.to_thread(find_sandbox)
            self._detect = False
        note = None
        if self._sandbox is None and not self._noted:
            self._noted, note = True, NO_SANDBOX_NOTE
        return await execute(
            [self._shell, "-c", command],
            cwd=cwd,
            env=self._env,
            sandbox=self._sandbox,
            workspace_root=self._overlay.root,
            timeout_s=timeout_s,
            head_chars=self._head_chars,
            tail_chars=self._tail_chars,
            note=note,
        )


async def execute(
    argv: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    sandbox: Sandbox | None,
    workspace_root: Path,
    timeout_s: float,
    head_chars: int,
    tail_chars: int,
    note: str | None = None,
) -> CommandResult:
    """Run ``argv`` in the shadow copy ``cwd``, inside ``sandbox`` when there is one.

    Shared by the shell tool and ripgrep, so both get the same isolation, the same process-group kill
    (on success, timeout and cancellation: background children die too) and the same output cap.

    Returns:
        ``exit_code`` (negative for a signal; None when it timed out) and stdout plus stderr
        interleaved, decoded as UTF-8 (invalid bytes replaced), capped to ``head_chars`` +
        ``tail_chars`` characters with an ``[... N characters omitted ...]`` line between; ``note``
        comes first, outside the cap. Memory stays bounded whatever the process prints.

    Raises:
        asyncio.CancelledError: after the process group was killed.
        ToolError: the process cannot be started.
    """
    if sandbox is not None:
        argv = sandbox.wrap(argv, shadow=cwd, workspace_root=workspace_root, environ=env)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        raise ToolError(f"cannot start {argv[0]}: {exc}") from None
    output = _CappedOutput(head_chars, tail_chars)
    if note is not None:
        output.note(note)
    assert proc.stdout is not None
    pump = asyncio.create_task(_pump(proc.stdout, output))
    timed_out = False
    try:
        async with asyncio.timeout(timeout_s):
            await proc.wait()
            await asyncio.wait({pump}, timeout=_DRAIN_GRACE_S)
    except TimeoutError:
        timed_out = True
    finally:
        # In the sandbox, the group is bwrap's (the command has its own session): killing bwrap
        # kills the sandbox's pid 1 (--die-with-parent), and with it the whole pid namespace.
        _kill_group(proc.pid)
        if proc.returncode is None:
            await proc.wait()
        await asyncio.wait({pump}, timeout=_DRAIN_GRACE_S)
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump
    return CommandResult(None if timed_out else proc.returncode, output.text(), timed_out)


async def _pump(stream: asyncio.StreamReader, output: _CappedOutput) -> None:
    while chunk := await stream.read(65536):
        output.feed(chunk)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


class _CappedOutput:
    """Decodes a byte stream incrementally and keeps its first and last characters only."""

    def __init__(self, head_chars: int, tail_chars: int) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head_chars = head_chars
        self._tail_chars = tail_chars
        self._head = ""
        self._tail = ""
        self._omitted = 0
        self._note = ""

    def note(self, line: str) -> None:
        """Put ``line`` before the output, outside the cap."""
        self._note = f"{line}\n"

    def feed(self, chunk: bytes) -> None:
        self._add(self._decoder.decode(chunk))

    def text(self) -> str:
        self._add(self._decoder.decode(b"", final=True))
        self._trim(0)
        if not self._omitted:
            return self._note + self._head + self._tail
        return f"{self._note}{self._head}\n[... {self._omitted} characters omitted ...]\n{self._tail}"

    def _add(self, text: str) -> None:
        room = self._head_chars - len(self._head)
        if room > 0:
            self._head += text[:room]
            text = text[room:]
        self._tail += text
        self._trim(self._tail_chars)  # in batches: slicing on every chunk would be quadratic

    def _trim(self, slack: int) -> None:
        excess = len(self._tail) - self._tail_chars
        if excess > slack:
            self._tail = self._tail[excess:]
            self._omitted += excess
