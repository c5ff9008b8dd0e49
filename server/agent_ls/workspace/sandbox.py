"""The bubblewrap sandbox a shell command runs in: no network, and only the shadow copy is writable.

A command the policy allows may still name any path (``cat notes > /abs/real/app.py``,
``grep -r . ~/projects``, ``pytest --basetemp=$HOME``, ``cat /proc/$PPID/environ``). The sandbox makes
such paths harmless instead of trying to recognise them: the command sees the system read-only, the
user's real workspace as an empty directory, the user's home as an empty private directory in which only
the toolchains installed there reappear (read-only), the other homes (``/home``, ``/root``) and the
workspace's neighbours (the other checkouts beside it, see ``SYSTEM_TOPS``) hidden too, credential files
unreadable wherever they are still visible, its own ``/proc``, ``/tmp`` and ``/run``, no network, and
the shadow copy as the only writable place it shares with the host. The folders the shadow copy links
to come back read-only, with the secret files inside them masked (``masked``). The rest of the system
stays readable: ``/opt``, ``/srv``, ``/mnt``, a project in ``/data``; docs/permissions.md says so.

In ``shell.mode = "workspace"`` the writable place is the real workspace, with every secret file in it
masked, except the git configuration, which git cannot run without (issue 5's review, finding 9c):
there a git ``config`` that holds no credentials (``git_config_holds_credentials``) stays readable,
mounted read-only over itself, and so does the ``hooks`` directory, so that a command can neither plant
``core.fsmonitor``, ``core.hooksPath`` or an alias nor a hook that the user's own git would run later,
outside the sandbox. A config holding credentials is masked and git fails there ("Permission denied"):
the user opted into the real workspace, not into showing their token to the model.

Order of use:

1. ``sandbox_status`` (once per process, cached; ``find_sandbox`` gives its sandbox) looks for
   ``bwrap`` on PATH and probes that it can create the namespaces (containers without user namespaces
   fail the probe); no sandbox means the caller runs the command unisolated and says so, and this
   module logs it once as a warning (``agent-ls doctor`` reports it too).
2. ``Sandbox.wrap`` turns a command's argv into a ``bwrap`` argv for one shadow copy (or, in
   ``shell.mode = "workspace"``, for the real workspace, then writable with its secrets masked).

Option spellings follow bubblewrap 0.8 (``bwrap --help``).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_ls.workspace.regular_files import open_regular
from agent_ls.workspace.secret_files import HOME_CREDENTIALS as CREDENTIAL_STORES

log = logging.getLogger(__name__)

# Namespaces and process settings of every sandboxed command (and of the probe):
NAMESPACE_ARGS = (
    # New user (where possible), mount, pid, network, ipc, uts and cgroup namespaces: no network at all
    # (not even the host's loopback), and the host's processes can be neither seen nor signalled.
    # --unshare-all includes --unshare-net (bwrap(1)); tests/e2e/test_sandbox.py proves it.
    "--unshare-all",
    # As real root, bwrap keeps the capabilities, and CAP_SYS_ADMIN could unmount the masks below.
    "--cap-drop", "ALL",
    # bwrap and everything in the sandbox die when bwrap's parent (the server) dies or kills bwrap.
    "--die-with-parent",
    # A new terminal session: the command cannot push input into a terminal (TIOCSTI).
    "--new-session",
)  # fmt: skip

# Directories under the user's home that tools installed there run from, re-exposed read-only when they
# exist. The home is otherwise hidden, and PATH directories under it come back on their own, but their
# programs are often links, proxies or shims into these roots.
HOME_TOOLCHAINS = (
    ".pyenv",                  # pyenv: its shims, and the Python versions they run
    ".rustup",                 # the Rust toolchains that ~/.cargo/bin's proxies run
    ".cargo",                  # cargo-installed programs and the crate registry (credentials masked)
    ".nvm",                    # nvm: Node versions and their global packages
    ".local/bin",              # entry points of pip --user, pipx and uv tool
    ".local/lib",              # user site-packages (pip install --user)
    ".local/share/pipx",       # the venvs that pipx's entry points link into
    ".local/share/uv/python",  # uv-managed interpreters that venvs link to
    ".local/share/uv/tools",   # the venvs that uv tool's entry points link into
    ".deno",                   # Deno and the programs deno install puts in ~/.deno/bin
    ".bun",                    # Bun and its global packages
    ".sdkman",                 # SDKMAN: JDKs, Gradle, Maven
)  # fmt: skip

# Files and directories under the user's home that hold credentials, masked where visible: inside a
# re-exposed toolchain, outside the home through a symlink, or anywhere when the home is not hidden (a
# directory becomes an empty tmpfs; a file becomes /dev/null on a nodev mount, so opening it fails with
# "Permission denied"). The credential stores come from the secret list's catalogue
# (``workspace.secret_files``). Shell startup and history files are added here because that is where API
# keys are usually exported (a non-interactive ``bash -c`` never reads them); in a workspace they are
# ordinary files. A ``*`` matches one path component.
HOME_CREDENTIALS = (
    *CREDENTIAL_STORES,
    ".bashrc", ".bash_profile", ".bash_login", ".profile", ".bash_history",
    ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zsh_history", ".python_history",
    ".config/fish", ".local/share/fish",
)  # fmt: skip

# Password hashes (and their backups), readable when the server runs as root: masked when they exist.
SYSTEM_CREDENTIALS = (Path("/etc/shadow"), Path("/etc/gshadow"), Path("/etc/shadow-"), Path("/etc/gshadow-"))

# The files of a git directory that hold remote URLs with tokens and credential settings. The
# workspace's own are hidden with it, but a worktree's ``.git`` file points to a main repository that
# may lie anywhere, and a submodule's superproject lies around it.
GIT_CONFIGS = ("config", "config.worktree")

# Host directories replaced by an empty private tmpfs. /tmp holds other programs' files and agent
# sockets (ssh-agent, X11); /run holds sockets that act outside the sandbox (docker.sock, D-Bus, the
# ssh and gpg agents under /run/user). A read-only mount does not stop connect() on a Unix socket.
PRIVATE_DIRS = (Path("/tmp"), Path("/run"))

# Other users' homes (and root's, when the server runs as root with another HOME), hidden like the
# user's: other projects and their .env files, keys, shell histories. PATH directories and our
# interpreter under them come back; Homebrew on Linux lives in a home of its own and comes back whole.
OTHER_HOMES = (Path("/home"), Path("/root"))
SHARED_HOMES = (Path("/home/linuxbrew"),)

# The workspace's parent directory is hidden too (other checkouts beside it, with their .env files:
# /work/app beside /work/other), unless it is / or a top-level directory named in SYSTEM_TOPS, or lies
# inside SYSTEM_TREES or a tree already hidden: hiding /opt or /usr/src could hide toolchains.
SYSTEM_TOPS = frozenset(
    {
        "bin", "boot", "dev", "etc", "gnu", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt",
        "nix", "opt", "proc", "root", "run", "sbin", "snap", "srv", "sys", "tmp", "usr", "var",
    }
)  # fmt: skip
SYSTEM_TREES = tuple(
    Path(p) for p in ("/bin", "/boot", "/dev", "/etc", "/gnu", "/lib", "/lib32", "/lib64", "/libx32",
                      "/nix", "/proc", "/sbin", "/snap", "/sys", "/usr")
)  # fmt: skip

# What makes a git config hold credentials (git-config(1), gitcredentials(7)): a user and token in an
# HTTP(S) or FTP remote URL (``https://user:token@``, ``https://ghp_x@``, in ``url`` or an ``insteadOf``
# section name), a password in any URL, an ``http.extraHeader`` (what CI checkouts write their token
# to), a ``[credential]`` section (a helper may print a password inline), and included files (which we
# do not follow).
_GIT_CREDENTIALS = re.compile(
    r"""\b(?:https?|ftps?)://[^\s/@"]+@
      | ://[^\s/@:"]*:[^\s/@"]*@
      | extraheader
      | ^\s*\[\s*(?:credential|include)""",
    re.IGNORECASE | re.MULTILINE | re.VERBOSE,
)
_GIT_CONFIG_BYTES = 1024 * 1024
REEXPOSED_TTL_S = 10.0  # seconds the re-exposed directories are reused (``Sandbox._reexposed_now``)
_REEXPOSED: dict[tuple[object, ...], tuple[float, tuple[Path, ...]]] = {}


@dataclass(frozen=True)
class Sandbox:
    """A working ``bwrap``, and the directories our own interpreter needs inside the sandbox.

    Attributes:
        bwrap: the absolute path of the ``bwrap`` executable.
        tool_dirs: directories re-exposed read-only when a hidden tree would hide them (our venv under
            ``/tmp`` in tests, our Python under the home, or inside the workspace): by default
            ``sys.prefix``, ``sys.base_prefix`` and the directory of ``sys.executable`` as given and
            resolved.
    """

    bwrap: str
    tool_dirs: tuple[Path, ...] = ()

    def wrap(
        self,
        argv: Sequence[str],
        *,
        shadow: Path,
        workspace_root: Path,
        environ: Mapping[str, str],
        readonly: Sequence[Path] = (),
        masked: Sequence[Path] = (),
        masked_inside: Sequence[tuple[str, bool]] = (),
        view_at: Path | None = None,
    ) -> list[str]:
        """The ``bwrap`` argv that runs ``argv`` in ``shadow`` inside the sandbox.

        Mounts come in this order, each covering the ones before it: the system read-only; a private
        ``/dev`` and ``/proc``; empty ``/tmp`` and ``/run``; the empty other homes, workspace parent,
        workspace and home; the re-exposed directories (tool directories, PATH directories, the
        virtual environments holding PATH directories, and ``HOME_TOOLCHAINS``); the ``readonly``
        entries; the masked credentials and secrets; the writable shadow; and last the masks inside
        the shadow (the ``masked`` ones there, and the workspace's git config when the shadow is the
        workspace). Every path is resolved first (symlinks, ``..``); paths with spaces need no quoting
        since this is an argv.

        Args:
            argv: the command to run (``["/bin/bash", "-c", command]``).
            shadow: the shadow copy's root; the only writable host directory, and the working directory.
                When it is ``workspace_root`` itself (workspace mode), git configs without credentials
                and git hooks inside it are mounted read-only instead of masked (module docstring).
            workspace_root: the user's real workspace, hidden with its parent directory's other
                entries; the config of the git repositories holding it is masked too.
            environ: the command's environment. ``HOME`` names the home to hide (unless unset, relative,
                missing or ``/``) and whose credentials to mask; it keeps its value, and inside the
                sandbox is an empty writable tmpfs, discarded afterwards. ``PATH`` directories under
                a hidden tree other than the workspace stay visible (NixOS keeps its programs in
                ``/run/current-system``), with the virtual environment holding them when there is one.
            readonly: real paths mounted read-only at their own path, over the hidden trees: the
                workspace entries the shadow links to (``node_modules``, ``.venv``). A missing one is
                skipped.
            masked: files and directories made unreadable wherever the command can reach them: the
                secrets inside the ``readonly`` folders, or, in workspace mode, every secret of the
                workspace. A directory becomes an empty tmpfs; a missing path is skipped.
            masked_inside: entries of ``shadow`` to mask after it, as (path relative to it, is a
                directory), taken as given: an overlay view (``workspace.layers``) is not mounted on
                the host, so its entries cannot be looked at here.
            view_at: where to mount ``shadow`` and run, instead of its own path: the workspace's path,
                for an overlay view, so that absolute paths into the workspace (a venv script's
                ``#!`` line, a config naming the project) reach the view, never the real tree.

        Returns:
            ``[bwrap, options..., "--", *argv]``; it never fails, and a mount bwrap cannot make makes
            the command exit 1 with bwrap's one-line message as its output.
        """
        shadow = _real(shadow)
        workspace = _real(workspace_root)
        in_workspace = shadow == workspace
        homes = _hidden_home(environ.get("HOME"))
        args = [
            self.bwrap,
            *NAMESPACE_ARGS,
            # The whole system, read-only: programs, libraries, /etc.
            "--ro-bind", "/", "/",
            # A minimal /dev (null, zero, random, tty, a private shm): no host devices.
            "--dev", "/dev",
            # A proc of the new pid namespace: no other process's environ (the server's API key).
            "--proc", "/proc",
            # Private and empty (see PRIVATE_DIRS): host temp files and agent sockets are out of reach.
            "--tmpfs", "/tmp",
            "--tmpfs", "/run",
        ]  # fmt: skip
        others = _other_homes(homes)
        neighbours = _hidden_parent(workspace, (*PRIVATE_DIRS, *others, *homes))
        for tree in (*others, *neighbours):
            # Other users' homes and the checkouts beside the workspace: their .env files and keys.
            args += ["--tmpfs", str(tree)]
        # The user's real workspace, empty: absolute paths and absolute symlinks into it find nothing.
        args += ["--tmpfs", str(workspace)]
        for home in homes:
            # Empty, private and writable (caches land here and vanish): other projects' .env files,
            # tool configs with keys, and sockets under ~/.local/share are out of reach.
            args += ["--tmpfs", str(home)]
        hidden = (*PRIVATE_DIRS, *others, *neighbours, workspace, *homes)
        reexposed = self._reexposed_now(hidden, workspace, homes, environ.get("PATH", ""))
        for directory in reexposed:
            # After the hidden trees: our interpreter, the PATH programs and the home's toolchains run.
            args += ["--ro-bind", str(directory), str(directory)]
        linked = [_real(path) for path in readonly]
        for path in linked:
            # Where the shadow's links point: dependency trees, read-only over the hidden workspace.
            args += ["--ro-bind-try", str(path), str(path)]
        git_configs = _git_configs(workspace)
        secrets = [
            *_home_credentials(environ.get("HOME")),
            *_existing(SYSTEM_CREDENTIALS),
            *git_configs,
            *_existing(masked),
        ]
        # In workspace mode git must keep working: a git config without credentials stays readable.
        readable = {
            path
            for path in secrets
            if in_workspace and _is_git_config(path, git_configs) and not git_config_holds_credentials(path)
        }
        # The shadow is mounted last, over whatever hides it (the private /tmp, or the workspace itself
        # in workspace mode): a secret inside it is masked after it.
        visible = _visible(secrets, hidden, [*reexposed, *linked, shadow])
        inside = [p for p in visible if p.is_relative_to(shadow)]
        for path in (p for p in visible if p not in inside and _real(p) not in readable):
            # After the re-exposed directories and linked folders, so none of them can uncover a secret.
            args += _mask(path)
        mount = _real(view_at) if view_at is not None else shadow
        args += [
            # Last but the masks inside it, so no other mask covers it (it usually lives under the
            # private /tmp).
            "--bind", str(shadow), str(mount),
        ]  # fmt: skip
        for path in inside:
            # Read-only over itself: git reads it, and no command can plant settings the user's git runs.
            args += ["--ro-bind", str(path), str(path)] if _real(path) in readable else _mask(path)
        for rel, is_dir in masked_inside:
            inside_path = str(mount / rel)
            args += ["--tmpfs", inside_path] if is_dir else ["--ro-bind", "/dev/null", inside_path]
        if in_workspace:
            for hooks in _git_hooks((p for p in secrets if _is_git_config(p, git_configs)), shadow):
                args += ["--ro-bind", str(hooks), str(hooks)]  # no hook planted for the user's git
        args += [
            "--chdir", str(mount),
            # A TMPDIR outside /tmp would be read-only in here; the default /tmp is private and writable.
            "--unsetenv", "TMPDIR",
            "--",
            *argv,
        ]  # fmt: skip
        return args

    def _reexposed_now(
        self, hidden: Sequence[Path], workspace: Path, homes: Sequence[Path], search_path: str
    ) -> list[Path]:
        """``_reexposed``, remembered ``REEXPOSED_TTL_S`` per arguments: it stats a hundred paths, the same
        for every command; a directory created or removed meanwhile is seen within that time."""
        key = (self, tuple(hidden), workspace, tuple(homes), search_path)
        now = time.monotonic()
        cached = _REEXPOSED.get(key)
        if cached is not None and now - cached[0] < REEXPOSED_TTL_S:
            return list(cached[1])
        found = self._reexposed(hidden, workspace, homes, search_path)
        if len(_REEXPOSED) > 64:
            _REEXPOSED.clear()
        _REEXPOSED[key] = (now, tuple(found))
        return found

    def _reexposed(
        self, hidden: Sequence[Path], workspace: Path, homes: Sequence[Path], search_path: str
    ) -> list[Path]:
        """Directories a hidden tree hides that the command needs, sorted; none inside another one.

        Tool directories and ``SHARED_HOMES`` come back from any hidden tree; PATH directories (or
        the virtual environment holding one: its ``bin`` alone would run without its packages) and
        the home's toolchains from any hidden tree but the workspace, never from inside the
        workspace. A directory holding the workspace or the home is never re-exposed, which would
        uncover it. Both are judged by their resolved path.
        """
        path_dirs = [
            _venv_root(Path(entry)) for entry in search_path.split(os.pathsep) if os.path.isabs(entry)
        ]
        toolchains = [home / name for home in homes for name in HOME_TOOLCHAINS]
        opened = [tree for tree in hidden if tree != workspace]
        candidates = {found for d in (*self.tool_dirs, *SHARED_HOMES) for found in _under(d, hidden)}
        candidates.update(
            found
            for d in (*path_dirs, *toolchains)
            for found in _under(d, opened)
            if not _real(found).is_relative_to(workspace)
        )
        kept = {
            d
            for d in candidates
            if d.is_dir() and not any(h.is_relative_to(_real(d)) for h in (workspace, *homes))
        }
        return sorted(d for d in kept if not any(d != other and d.is_relative_to(other) for other in kept))


def default_tool_dirs() -> tuple[Path, ...]:
    """The directories our interpreter runs from: ``sys.prefix``, ``sys.base_prefix``, the executable's.

    The executable's directory as given and resolved: a venv's ``python`` links to an interpreter
    elsewhere (``~/.pyenv/versions/…/bin``).
    """
    executable = Path(sys.executable)
    dirs = (Path(sys.prefix), Path(sys.base_prefix), executable.parent, _real(executable).parent)
    return tuple(dict.fromkeys(dirs))


@dataclass(frozen=True)
class SandboxStatus:
    """Whether commands run sandboxed on this machine, for the log and ``agent-ls doctor``.

    Attributes:
        sandbox: the working sandbox, or None.
        detail: one line: the bubblewrap version and path, or why there is no sandbox.
    """

    sandbox: Sandbox | None
    detail: str


UNISOLATED = "shell commands run unisolated (in the shadow copy, with a scrubbed environment)"


@functools.cache
def sandbox_status() -> SandboxStatus:
    """Look for ``bwrap`` on PATH and ``probe`` it; logs one warning when there is no sandbox.

    Cached: the probe runs once per process (it takes a few milliseconds). Blocks; call it from a
    worker thread when on the event loop.
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        status = SandboxStatus(None, f"bubblewrap (bwrap) is not installed: {UNISOLATED}")
    else:
        sandbox, problem = _probe(bwrap)
        if sandbox is None:
            status = SandboxStatus(None, f"{bwrap} cannot make a sandbox here ({problem}): {UNISOLATED}")
        else:
            status = SandboxStatus(sandbox, f"{_version(bwrap)} at {bwrap}")
    if status.sandbox is None:
        log.warning("no sandbox: %s", status.detail)
    return status


def unsandboxed_reason(enabled: bool) -> str:
    """``""`` when shell commands run in a sandbox here; else one line saying why not and what follows.

    Args:
        enabled: the config's ``[sandbox] enabled`` (False: switched off, whatever this machine has).

    Blocks the first time (``sandbox_status`` probes bubblewrap once per process): call it from a
    worker thread on the event loop.
    """
    if not enabled:
        detail = "[sandbox] enabled = false in agent-ls.toml"
    else:
        status = sandbox_status()
        if status.sandbox is not None:
            return ""
        detail = status.detail
    return f"no sandbox: {detail}; commands that run workspace code ask first"


def find_sandbox() -> Sandbox | None:
    """The sandbox of this machine: ``bwrap`` on PATH that passes ``probe``; None otherwise (cached)."""
    return sandbox_status().sandbox


def probe(bwrap: str) -> Sandbox | None:
    """Run ``true`` in a sandbox made by ``bwrap``; the ``Sandbox`` when it exits 0, else None.

    Fails where user namespaces are disabled (many containers, some hardened kernels) or ``/proc``
    cannot be mounted; never raises.
    """
    return _probe(bwrap)[0]


def _probe(bwrap: str) -> tuple[Sandbox | None, str]:
    """``probe``, with bwrap's first line of error output (or the reason it did not start)."""
    mounts = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    command = [bwrap, *NAMESPACE_ARGS, *mounts, "--", "true"]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, str(exc)
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, lines[0] if lines else f"exit code {done.returncode}"
    return Sandbox(bwrap, default_tool_dirs()), ""


def _version(bwrap: str) -> str:
    """``bwrap --version``'s line (``bubblewrap 0.8.0``), or ``bubblewrap`` when it prints none."""
    try:
        done = subprocess.run([bwrap, "--version"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "bubblewrap"
    return done.stdout.decode("utf-8", "replace").strip() or "bubblewrap"


def git_config_holds_credentials(config: Path) -> bool:
    """Whether the git config file ``config`` holds credentials (``_GIT_CREDENTIALS``); True when it
    cannot be read. Reads at most its first MiB. Blocks."""
    try:  # never blocks: a FIFO named config is refused (regular_files), so it counts as holding some
        with open_regular(config) as stream:
            text = stream.read(_GIT_CONFIG_BYTES).decode("utf-8", "replace")
    except OSError:
        return True
    return _GIT_CREDENTIALS.search(text) is not None


def _is_git_config(path: Path, git_configs: Sequence[Path]) -> bool:
    """``path`` is a config of the repositories holding the workspace, or a ``config`` or
    ``config.worktree`` inside a ``.git`` directory (a submodule's, a nested repository's)."""
    return path in git_configs or (path.name in GIT_CONFIGS and ".git" in path.parts)


def _git_hooks(configs: Iterable[Path], tree: Path) -> list[Path]:
    """The ``hooks`` directories beside the git ``configs`` that lie in ``tree``, sorted."""
    found = {config.parent / "hooks" for config in configs}
    return sorted(d for d in found if d.is_relative_to(tree) and d.is_dir() and not d.is_symlink())


def _other_homes(homes: Sequence[Path]) -> tuple[Path, ...]:
    """The existing ``OTHER_HOMES``, resolved, but the user's own home (hidden on its own)."""
    found = dict.fromkeys(_real(h) for h in OTHER_HOMES if h.is_dir())
    return tuple(h for h in found if h not in homes and h != Path("/"))


def _hidden_parent(workspace: Path, hidden: Sequence[Path]) -> tuple[Path, ...]:
    """The workspace's parent directory, alone, when it can be hidden (see ``SYSTEM_TOPS``); else none."""
    parent = workspace.parent
    if parent == workspace or parent == Path("/") or (len(parent.parts) == 2 and parent.name in SYSTEM_TOPS):
        return ()
    if any(parent.is_relative_to(tree) for tree in (*SYSTEM_TREES, *hidden)) or not parent.is_dir():
        return ()
    return (parent,)


def _venv_root(directory: Path) -> Path:
    """The virtual environment holding the ``bin`` directory ``directory`` (its ``pyvenv.cfg`` is in the
    parent, PEP 405), else ``directory`` itself."""
    return directory.parent if (directory.parent / "pyvenv.cfg").is_file() else directory


def _mask(path: Path) -> list[str]:
    """The bwrap options that make ``path`` unreadable: an empty tmpfs on a directory, /dev/null on a file.

    /dev/null is mounted from the nodev ``/`` bind, so opening it fails with "Permission denied".
    """
    return ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _hidden_home(home: str | None) -> tuple[Path, ...]:
    """The resolved home to hide, alone; none when ``home`` is unset, relative, not a directory, or ``/``.

    A missing home is left alone: there is nothing to hide, and bwrap could not make the mount point
    on the read-only system.
    """
    if not home or not os.path.isabs(home):
        return ()
    real = _real(Path(home))
    return (real,) if real.is_dir() and real != Path("/") else ()


def _under(directory: Path, hidden: Iterable[Path]) -> list[Path]:
    """``directory`` as given and resolved, each kept when it lies strictly inside a ``hidden`` tree.

    Both spellings: a script's ``#!`` line names the path as given, which may run through a symlink.
    """
    spellings = {Path(os.path.normpath(directory)), _real(directory)}
    return [d for d in spellings for h in hidden if d != h and d.is_relative_to(h)]


def _existing(paths: Iterable[Path]) -> list[Path]:
    """The resolved paths of the ``paths`` that exist, in order.

    Resolved, because bwrap cannot mount on a symlink whose target is absolute (dotfile managers
    link ``~/.bashrc`` into a repository), and masking the target hides it under every name that
    reaches it through symlinks.
    """
    return [_real(path) for path in paths if os.path.exists(path)]


def _home_credentials(home: str | None) -> list[Path]:
    """The resolved paths of the existing ``HOME_CREDENTIALS`` under ``home``, in that order."""
    if not home or not os.path.isabs(home):
        return []
    root = Path(home)
    return _existing(
        found
        for name in HOME_CREDENTIALS
        for found in (sorted(root.glob(name)) if "*" in name else [root / name])
    )


def _git_configs(workspace: Path) -> list[Path]:
    """The existing ``GIT_CONFIGS`` of every git repository holding ``workspace``, resolved, nearest first.

    Repositories are found as git finds them, by a ``.git`` in the workspace or above (a submodule's
    superproject holds it too). A ``.git`` file (a worktree, a submodule) names the git directory after
    ``gitdir:``, and a worktree's git directory names the main repository's in ``commondir``; both are
    searched. A pointer that cannot be read is skipped.
    """
    git_dirs: dict[Path, None] = {}
    for directory in (workspace, *workspace.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            git_dirs[dot_git] = None
        elif dot_git.is_file() and (git_dir := _pointer(dot_git, "gitdir: ")):
            git_dirs[git_dir] = None
            if (git_dir / "commondir").is_file() and (common := _pointer(git_dir / "commondir", "")):
                git_dirs[common] = None
    return _existing(d / name for d in git_dirs for name in GIT_CONFIGS if (d / name).is_file())


def _pointer(file: Path, prefix: str) -> Path | None:
    """The path after ``prefix`` on the first line of ``file``, relative to the file's directory.

    None when the file cannot be read or does not start with ``prefix`` (git's ``.git`` file and
    ``commondir`` formats).
    """
    try:  # never blocks on a FIFO planted as .git or commondir (regular_files)
        with open_regular(file) as stream:
            line = stream.read(4096).decode("utf-8").partition("\n")[0].rstrip("\r")
    except (OSError, UnicodeDecodeError):
        return None
    target = line.removeprefix(prefix)
    return _real(file.parent / target) if line.startswith(prefix) and target else None


def _visible(secrets: Iterable[Path], hidden: Sequence[Path], reexposed: Sequence[Path]) -> list[Path]:
    """Where the resolved ``secrets`` can be reached in the sandbox, in order, without repeats.

    A secret is reached at its own path unless a hidden tree covers it, and through every re-exposed
    directory whose resolved path holds it (a bind mount is a second name a mask on the first does not
    cover). One inside a hidden tree and no re-exposed directory needs no mask.
    """
    found = []
    for secret in secrets:
        if not any(secret.is_relative_to(h) for h in hidden):
            found.append(secret)
        for directory in reexposed:
            real = _real(directory)
            if secret.is_relative_to(real):
                found.append(directory / secret.relative_to(real))
    return list(dict.fromkeys(found))
