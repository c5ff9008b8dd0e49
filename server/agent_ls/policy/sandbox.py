"""The bubblewrap sandbox a shell command runs in: no network, and only the shadow copy is writable.

A command the policy allows may still name any path (``cat notes > /abs/real/app.py``,
``pytest --basetemp=$HOME``, ``cat /proc/$PPID/environ``). The sandbox makes such paths harmless
instead of trying to recognise them: the command sees the system read-only, the user's real workspace
as an empty directory, the home's credential files unreadable, its own ``/proc``, ``/tmp`` and ``/run``,
no network, and the shadow copy as the only writable place it shares with the host.

Order of use:

1. ``find_sandbox`` (once per process, cached) looks for ``bwrap`` on PATH and probes that it can
   create the namespaces (containers without user namespaces fail the probe); None means no sandbox,
   and the caller runs the command unisolated and says so.
2. ``Sandbox.wrap`` turns a command's argv into a ``bwrap`` argv for one shadow copy.

Option spellings follow bubblewrap 0.8 (``bwrap --help``).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# Namespaces and process settings of every sandboxed command (and of the probe):
NAMESPACE_ARGS = (
    # New user (where possible), mount, pid, network, ipc, uts and cgroup namespaces: no network at all
    # (not even the host's loopback), and the host's processes can be neither seen nor signalled.
    "--unshare-all",
    # As real root, bwrap keeps the capabilities, and CAP_SYS_ADMIN could unmount the masks below.
    "--cap-drop", "ALL",
    # bwrap and everything in the sandbox die when bwrap's parent (the server) dies or kills bwrap.
    "--die-with-parent",
    # A new terminal session: the command cannot push input into a terminal (TIOCSTI).
    "--new-session",
)  # fmt: skip

# Files and directories under the user's home that hold credentials, hidden when they exist (a
# directory becomes an empty tmpfs; a file becomes /dev/null on a nodev mount, so opening it fails with
# "Permission denied"). Shell startup and history files are here because that is where API keys are
# usually exported; a non-interactive ``bash -c`` never reads them.
HOME_CREDENTIALS = (
    ".ssh", ".gnupg", ".netrc", ".git-credentials",
    ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
    ".config/gh", ".config/hub", ".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
    ".bashrc", ".bash_profile", ".bash_login", ".profile", ".bash_history",
    ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zsh_history", ".python_history",
    ".config/fish", ".local/share/fish",
)  # fmt: skip

# Host directories replaced by an empty private tmpfs. /tmp holds other programs' files and agent
# sockets (ssh-agent, X11); /run holds sockets that act outside the sandbox (docker.sock, D-Bus, the
# ssh and gpg agents under /run/user). A read-only mount does not stop connect() on a Unix socket.
PRIVATE_DIRS = (Path("/tmp"), Path("/run"))


@dataclass(frozen=True)
class Sandbox:
    """A working ``bwrap``, and the directories our own interpreter needs inside the sandbox.

    Attributes:
        bwrap: the absolute path of the ``bwrap`` executable.
        tool_dirs: directories re-exposed read-only when a mask would hide them (our venv under
            ``/tmp`` in tests, or inside the workspace): by default ``sys.prefix``, ``sys.base_prefix``
            and the directory of ``sys.executable``.
    """

    bwrap: str
    tool_dirs: tuple[Path, ...] = ()

    def wrap(
        self, argv: Sequence[str], *, shadow: Path, workspace_root: Path, environ: Mapping[str, str]
    ) -> list[str]:
        """The ``bwrap`` argv that runs ``argv`` in ``shadow`` inside the sandbox.

        Mounts come in this order, each covering the ones before it: the system read-only, a private
        ``/dev`` and ``/proc``, empty ``/tmp``, ``/run`` and workspace, the re-exposed tool directories,
        the hidden credentials, and last the writable shadow. Every path is resolved first (symlinks,
        ``..``); paths with spaces need no quoting since this is an argv.

        Args:
            argv: the command to run (``["/bin/bash", "-c", command]``).
            shadow: the shadow copy's root; the only writable host directory, and the working directory.
            workspace_root: the user's real workspace, hidden.
            environ: the command's environment: ``HOME`` names the home whose credentials are hidden,
                and ``PATH`` directories under ``/tmp`` or ``/run`` stay visible (NixOS keeps its
                programs in ``/run/current-system``).

        Returns:
            ``[bwrap, options..., "--", *argv]``; it never fails, and a mount bwrap cannot make makes
            the command exit 1 with bwrap's one-line message as its output.
        """
        shadow = _real(shadow)
        workspace = _real(workspace_root)
        args = [
            self.bwrap,
            *NAMESPACE_ARGS,
            # The whole system, read-only: programs, libraries, /etc, the user's home. HOME keeps
            # pointing there rather than at an empty private one, so tools installed in the home
            # (~/.local, user site-packages, ~/.cargo with ~/.rustup, ~/.pyenv) still run; writing
            # a cache there fails with "Read-only file system".
            "--ro-bind", "/", "/",
            # A minimal /dev (null, zero, random, tty, a private shm): no host devices.
            "--dev", "/dev",
            # A proc of the new pid namespace: no other process's environ (the server's API key).
            "--proc", "/proc",
            # Private and empty (see PRIVATE_DIRS): host temp files and agent sockets are out of reach.
            "--tmpfs", "/tmp",
            "--tmpfs", "/run",
            # The user's real workspace, empty: absolute paths and absolute symlinks into it find nothing.
            "--tmpfs", str(workspace),
        ]  # fmt: skip
        hidden = (*PRIVATE_DIRS, workspace)
        for directory in self._reexposed(hidden, workspace, environ.get("PATH", "")):
            # After the masks: our interpreter and the PATH programs still run where a mask hid them.
            args += ["--ro-bind", str(directory), str(directory)]
        for path in _credentials(environ.get("HOME")):
            # After the re-exposed directories, so none of them can uncover a credential.
            args += ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
        args += [
            # Last, so no mask covers it (it usually lives under the private /tmp).
            "--bind", str(shadow), str(shadow),
            "--chdir", str(shadow),
            # A TMPDIR outside /tmp would be read-only in here; the default /tmp is private and writable.
            "--unsetenv", "TMPDIR",
            "--",
            *argv,
        ]  # fmt: skip
        return args

    def _reexposed(self, hidden: Sequence[Path], workspace: Path, search_path: str) -> list[Path]:
        """Tool directories and PATH directories a mask hides, sorted; none inside another one.

        PATH directories inside the workspace stay hidden; a directory holding the workspace is never
        re-exposed, which would uncover the workspace. Both are judged by their resolved path.
        """
        path_dirs = [Path(entry) for entry in search_path.split(os.pathsep) if os.path.isabs(entry)]
        candidates = {found for d in self.tool_dirs for found in _under(d, hidden)}
        candidates.update(
            found
            for d in path_dirs
            for found in _under(d, PRIVATE_DIRS)
            if not _real(found).is_relative_to(workspace)
        )
        kept = {d for d in candidates if d.is_dir() and not workspace.is_relative_to(_real(d))}
        return sorted(d for d in kept if not any(d != other and d.is_relative_to(other) for other in kept))


def default_tool_dirs() -> tuple[Path, ...]:
    """The directories our interpreter runs from: ``sys.prefix``, ``sys.base_prefix``, the executable's."""
    return (Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent)


@functools.cache
def find_sandbox() -> Sandbox | None:
    """The sandbox of this machine: ``bwrap`` on PATH that passes ``probe``; None otherwise.

    Cached: the probe runs once per process (it takes a few milliseconds). Blocks; call it from a
    worker thread when on the event loop.
    """
    bwrap = shutil.which("bwrap")
    return probe(bwrap) if bwrap else None


def probe(bwrap: str) -> Sandbox | None:
    """Run ``true`` in a sandbox made by ``bwrap``; the ``Sandbox`` when it exits 0, else None.

    Fails where user namespaces are disabled (many containers, some hardened kernels) or ``/proc``
    cannot be mounted; never raises.
    """
    mounts = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    command = [bwrap, *NAMESPACE_ARGS, *mounts, "--", "true"]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return Sandbox(bwrap, default_tool_dirs()) if done.returncode == 0 else None


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _under(directory: Path, hidden: Iterable[Path]) -> list[Path]:
    """``directory`` as given and resolved, each kept when it lies strictly inside a ``hidden`` tree.

    Both spellings: a script's ``#!`` line names the path as given, which may run through a symlink.
    """
    spellings = {Path(os.path.normpath(directory)), _real(directory)}
    return [d for d in spellings for h in hidden if d != h and d.is_relative_to(h)]


def _credentials(home: str | None) -> list[Path]:
    """The resolved paths of the existing ``HOME_CREDENTIALS``, in that order, without repeats.

    Resolved, because bwrap cannot mount on a symlink whose target is absolute (dotfile managers
    link ``~/.bashrc`` into a repository), and masking the target hides it under every name.
    """
    if not home or not os.path.isabs(home):
        return []
    found = (_real(Path(home) / name) for name in HOME_CREDENTIALS if os.path.exists(Path(home) / name))
    return list(dict.fromkeys(found))
