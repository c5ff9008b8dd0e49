"""The path policy: which paths the model, its shell commands and MCP file roots may name.

One ``PathPolicy`` serves the file tools (``resolve``: raises), shell redirections and path-like
arguments (``check``: never raises, returns a verdict), and reads at use (``read_bytes``).

``resolve`` and ``check`` run these steps, in order:

1. refuse a NUL character; expand a leading ``~`` to the user's home (``check`` also maps the
   harmless devices ``/dev/null``, ``/dev/stdout``, ``/dev/stderr``, ``/dev/tty`` to allow);
2. join a relative path to the first root (``check``: to ``cwd``);
3. refuse a secret by its lexical path (``config/.env.prod``), before touching the disk;
4. resolve ``..`` and symlinks one component at a time (``_Walk``), and refuse a chain in which a
   symlink that lies inside the workspace points out of it, even when a later link points back in;
5. find the place of the real path: the first root that holds it (a path belongs to one root only),
   else an extra directory (a skill's own folder, read-only), else outside;
6. refuse a secret by its real path (a symlink ``notes.txt -> .env`` is still ``.env``);
7. refuse a regular file with more than one name outside dependency folders: a hard link
   ``notes.txt`` to ``.env`` is ``.env`` under a name no pattern matches (``hard_links``).

Secrets are the built-in list (``secret_files``: environment files, keys, and the credential files
of package registries, VCS, cloud CLIs, clusters and infrastructure state) plus the configured
patterns, matched by ``secret_match`` (gitignore-style, Unicode- and case-folded, the list only grows,
exemptions from the user only).

Names that Windows reads differently (``windows_names``) are read its way on every platform: a secret
matches as written and as Windows reads it (``.env.``, ``.env::$DATA``, ``config\\.env``), a
component that Windows or macOS reads as ``.git`` without spelling it (``.git.``, ``GIT~1``,
``.git::$INDEX_ALLOCATION``) is refused in steps 3 and 6, and so is a short name (``ENV~1``) that may
stand for a secret beside it; on Windows a DOS device name (``NUL``, ``con.txt``) is refused too.

Reads happen later than the check (the registry checks, then the tool reads), and a file can become a
symlink in between. ``read_bytes`` therefore opens the path again, one component at a time with
``O_NOFOLLOW`` from the root's real path, and resolves it anew when it meets a link: the policy is
enforced at use, not only at check.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Literal

from agent_ls.core.errors import PathRefused, ToolError
from agent_ls.workspace import hard_links, windows_names
from agent_ls.workspace.secret_files import DEFAULT_SECRET_PATTERNS
from agent_ls.workspace.secret_match import Secrets, default_home, fold, is_secret, secret_pattern_problem
from agent_ls.workspace.unicode_names import AmbiguousName, match_path

__all__ = [
    "DEFAULT_SECRET_PATTERNS",
    "HARMLESS_DEVICES",
    "PathCheck",
    "PathPolicy",
    "fold",
    "is_secret",
    "secret_pattern_problem",
]

HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"})
"""Paths a shell redirection may name freely (``2>/dev/null``, ``>/dev/stderr``)."""

# Linux's MAXSYMLINKS: more links than this in one resolution fail with ELOOP there too.
_MAX_LINKS = 40
# Short names resolved in one path (``ENV~1/SECRET~1``); a path needs no more to reach a secret.
_MAX_SHORT_NAMES = 4


@dataclass(frozen=True)
class PathCheck:
    """The path policy's verdict on one path a shell command names (``PathPolicy.check``).

    Attributes:
        verdict: ``allow`` or ``deny``; a read outside the workspace is ``allow`` with ``outside``
            set, and the permission engine decides whether to ask.
        reason: one line saying why, for the log and, on deny, for the model.
        rel: the path relative to the root that holds it (POSIX, ``"."`` for the root), or None
            when it is in no root.
        outside: in no root and no extra directory (or led there by a symlink).
        secret: it names a secret file (then ``verdict`` is ``deny``).
        path: the absolute path judged: the real path when it could be resolved, else as written.
    """

    verdict: Literal["allow", "deny"]
    reason: str
    rel: str | None = None
    outside: bool = False
    secret: bool = False
    path: str = ""


@dataclass(frozen=True)
class _Refusal:
    """Why a name is refused (``PathPolicy._refusal``): what to say, and whether it is a secret."""

    advice: str
    secret: bool = False


@dataclass(frozen=True)
class _Place:
    """Where a real path lies: its root and path relative to it, or an extra directory, or nowhere."""

    root: Path | None = None
    rel: str | None = None
    extra: bool = False


class _Escape(Exception):
    """A symlink chain leaves the allowed places (``link``), or loops."""

    def __init__(self, link: Path | None) -> None:
        super().__init__(str(link))
        self.link = link


class PathPolicy:
    """Maps paths to workspace-relative POSIX paths and refuses the forbidden ones (module docstring).

    Args:
        roots: the workspace roots, the first being the primary one (relative paths start there);
            a single ``Path`` is one root. Each is made absolute but its symlinks are kept in
            ``root`` (editor URIs are built from it); containment is checked against real paths.
        extra_dirs: other directories whose files may be read (a skill's own folder); never written.
        secret_patterns: secret patterns added to the built-in ones (gitignore-style, see the module
            docstring); ``DEFAULT_SECRET_PATTERNS`` always apply, and an entry equal to one of them is
            already there.
        not_secret: patterns of paths that are not secret even though a secret pattern matches them
            (``tests/fixtures/*.pem``); from the user config or a trusted workspace only. They never
            lift ``~/.ssh``, ``/proc/**/environ`` or ``config_dir``.
        config_dir: agent-ls's user config directory; everything in it is secret.
        home: the user's home for ``~`` (default: the password database's, not ``HOME``).

    Raises:
        ValueError: no root, or a ``secret_patterns`` entry that would re-include (``!.env``, see
            ``secret_pattern_problem``); the config loader drops those first, with a diagnostic.
    """

    def __init__(
        self,
        roots: Sequence[Path] | Path,
        *,
        extra_dirs: Sequence[Path] = (),
        secret_patterns: Sequence[str] = (),
        not_secret: Sequence[str] = (),
        config_dir: Path | None = None,
        home: Path | None = None,
    ) -> None:
        given = [roots] if isinstance(roots, Path) else list(roots)
        if not given:
            raise ValueError("PathPolicy needs at least one root")
        self._roots = [Path(os.path.abspath(r)) for r in given]
        self._real_roots = [_real(r) for r in given]
        self._extra = [_real(d) for d in extra_dirs]
        self._home = Path(os.path.abspath(home)) if home is not None else default_home()
        config_dirs = (
            list(dict.fromkeys((Path(os.path.abspath(config_dir)), _real(config_dir))))
            if config_dir is not None
            else []
        )
        self._secrets = Secrets(secret_patterns, not_secret, self._home, config_dirs)

    @property
    def root(self) -> Path:
        """The first (primary) root as given (symlinks not resolved)."""
        return self._roots[0]

    @property
    def real_root(self) -> Path:
        """The first root with symlinks resolved; ``resolve`` returns paths relative to it."""
        return self._real_roots[0]

    @property
    def roots(self) -> tuple[Path, ...]:
        """Every root as given, the primary first."""
        return tuple(self._roots)

    @property
    def extra_dirs(self) -> tuple[Path, ...]:
        """The extra directories (real paths): read, never written."""
        return tuple(self._extra)

    def secrets_under(self, directory: Path, limit: int = 2_000) -> list[Path] | None:
        """The secret files and folders inside ``directory`` (an extra directory; hard-linked files too, step
        7), for the sandbox to mask;
        None when it holds more than ``limit`` entries (too large to check: leave it out of the sandbox).
        Symbolic links are not followed (the sandbox does not follow them out either)."""
        found: list[Path] = []
        seen = 0
        for top, dirs, files in os.walk(directory, followlinks=False):
            for name in [*dirs, *files]:
                seen += 1
                if seen > limit:
                    return None
                path = Path(top, name)
                if self._secrets.advice(None, path) is not None or (
                    name in files and self._hard_link(path) is not None
                ):
                    found.append(path)
            dirs[:] = [d for d in dirs if Path(top, d) not in found]
        return found

    def allow_reading(self, dirs: Sequence[Path]) -> None:
        """Add ``dirs`` to the extra directories (read, never written): the folders of skills found after
        the session started. Secret files in them stay refused."""
        for directory in dirs:
            real = _real(directory)
            if real not in self._extra:
                self._extra.append(real)

    def is_secret(self, rel: str) -> bool:
        """True when ``rel``, relative to the first root, names a secret by the configured patterns, as
        written, as Windows reads it, or through a short name (``ENV~1``) standing for one."""
        if rel in ("", "."):
            return False
        refusal = self._refusal(self.real_root / rel, rel)
        return refusal is not None and refusal.secret

    def resolve(self, path: str) -> str:
        """Map ``path`` (relative to the first root, absolute, or starting with ``~``) to a workspace path.

        Args:
            path: what the model wrote: ``src/app.py``, ``./src/../src/app.py``, ``/abs/ws/src/app.py``.
                An empty path means the first root.

        Returns:
            Inside the first root: the path relative to its real path, with ``/`` separators, ``..``
            and symlinks resolved; ``"."`` for the root itself. In another root or an extra directory:
            the absolute real path (POSIX); edits there are refused by the overlay.

        Raises:
            PathRefused: the path leaves the roots and extra directories (``..``, an absolute path
                elsewhere, a symlink in the chain pointing out), loops, or names a secret file; the
                message says what to do instead.
            ToolError: the path contains a NUL character, or names two entries that differ only in Unicode
                normalization (``unicode_names``: a name that equals one existing entry after NFC
                normalization resolves to that entry).
        """
        if "\0" in path:
            raise ToolError(f"path {path!r} contains a NUL character; pass a plain file path")
        candidate = self._absolute(path, self._roots[0])
        refusal = self._refusal_lexical(candidate)
        if refusal is not None:
            raise PathRefused(f"refused: {self._shown(path, candidate)!r} {refusal.advice}")
        try:
            candidate = match_path(candidate)  # a composed name finds its decomposed entry (NFC/NFD)
        except AmbiguousName as exc:
            raise ToolError(f"{exc}; they look alike in every listing: ask the user to rename one") from None
        try:
            real = self._walk(candidate)
        except _Escape as escape:
            raise PathRefused(self._escape_message(path, escape)) from None
        place = self._place(real)
        if place.rel is None and not place.extra:
            raise PathRefused(f"path {path!r} is outside the workspace {self.root}; use a path inside it")
        refusal = self._refusal(real, place.rel) or self._hard_link(real)
        if refusal is not None:
            shown = place.rel if place.rel is not None else real.as_posix()
            raise PathRefused(f"refused: {shown!r} {refusal.advice}")
        if place.rel is not None and place.root == self._real_roots[0]:
            return place.rel
        return real.as_posix()

    def check(self, path: str, *, write: bool, cwd: Path | None = None) -> PathCheck:
        """Judge a path a shell command names (a redirection target, a path-like argument). Never raises.

        Args:
            path: as written in the command, after the shell's quote removal (``out.txt``, ``~/x``,
                ``../other/file``, ``/dev/null``).
            write: the command writes it (``>``, ``>>``, ``tee``); otherwise it reads it.
            cwd: the directory a relative path starts from; the first root by default.

        Returns:
            ``deny`` for a secret (``secret``), a symlink chain that leaves the workspace, a NUL or empty
            path, a write outside the roots (``outside``) or into an extra directory; ``allow`` otherwise,
            with ``outside`` set for a read outside every root and extra directory. The harmless
            devices (``HARMLESS_DEVICES``) are allowed and not outside.
        """
        if "\0" in path or not path.strip():
            return PathCheck("deny", f"path {path!r} is empty or contains a NUL character", path=path)
        if path in HARMLESS_DEVICES:
            return PathCheck("allow", f"{path} is a harmless device", path=path)
        base = Path(os.path.abspath(cwd)) if cwd is not None else self._roots[0]
        candidate = self._absolute(path, base)
        refusal = self._refusal_lexical(candidate)
        if refusal is not None:
            reason = f"{self._shown(path, candidate)} {refusal.advice}"
            return PathCheck("deny", reason, secret=refusal.secret, path=candidate.as_posix())
        try:
            real = self._walk(candidate)
        except _Escape as escape:
            reason = self._escape_message(path, escape)
            return PathCheck("deny", reason, outside=True, path=candidate.as_posix())
        place, where = self._place(real), real.as_posix()
        outside = place.rel is None and not place.extra
        refusal = self._refusal(real, place.rel) or (None if outside else self._hard_link(real))
        if refusal is not None:
            reason = f"{place.rel if place.rel is not None else where} {refusal.advice}"
            return PathCheck("deny", reason, place.rel, outside, secret=refusal.secret, path=where)
        if place.rel is not None:
            return PathCheck("allow", f"{place.rel} is inside the workspace", place.rel, path=where)
        if place.extra and write:
            reason = f"{where} is in a read-only extra directory; write inside the workspace"
            return PathCheck("deny", reason, path=where)
        if place.extra:
            return PathCheck("allow", f"{where} is in an allowed extra directory", path=where)
        if write:
            reason = f"{where} is outside the workspace {self.root}; write inside it"
            return PathCheck("deny", reason, outside=True, path=where)
        return PathCheck("allow", f"{where} is outside the workspace", outside=True, path=where)

    def read_bytes(self, rel: str) -> bytes:
        """The bytes of the file ``rel`` (as ``resolve`` returned it), resolved again at use.

        Opens each component with ``O_NOFOLLOW`` from the real root (or ``/`` for an absolute ``rel``),
        so a component replaced by a symlink since the check fails instead of being followed; such a
        path is then resolved anew, and read only when it still resolves inside (to its new real path).

        Raises:
            PathRefused: the path now leaves the workspace or names a secret.
            FileNotFoundError, IsADirectoryError, OSError: as ``open`` would; a FIFO, socket or device
                raises ``OSError`` (EINVAL) instead of blocking.
        """
        with self.open_binary(rel) as handle:
            return handle.read()

    def open_binary(self, rel: str) -> BinaryIO:
        """The regular file ``rel`` open for reading in binary, resolved again at use as ``read_bytes``
        does; for reads that must stay bounded (the caller reads what it needs and closes it).

        Raises:
            As ``read_bytes``.
        """
        try:
            return self._open_nofollow(rel)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
        again = self.resolve(rel if os.path.isabs(rel) else str(self.real_root / rel))
        try:
            return self._open_nofollow(again)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathRefused(f"{rel!r} changed while it was being read; read it again") from None
            raise

    # -- internals -------------------------------------------------------------------------------

    def _absolute(self, path: str, base: Path) -> Path:
        if path == "~" or path.startswith("~/"):
            path = self._home.as_posix() + path[1:]
        return Path(path) if os.path.isabs(path) else base / path

    def _shown(self, path: str, candidate: Path) -> str:
        """The path as the refusal names it: relative to the first root when lexically inside."""
        lexical = Path(os.path.normpath(candidate))
        for root in (*self._roots, *self._real_roots):
            if lexical.is_relative_to(root):
                return _posix_rel(lexical, root)
        return path

    def _refusal_lexical(self, candidate: Path) -> _Refusal | None:
        lexical = Path(os.path.normpath(candidate))
        return self._refusal(lexical, self._lexical_rel(lexical))

    def _lexical_rel(self, lexical: Path) -> str | None:
        for root in (*self._roots, *self._real_roots):
            if lexical.is_relative_to(root):
                return _posix_rel(lexical, root)
        return None

    def _refusal(self, path: Path, rel: str | None, depth: int = 0) -> _Refusal | None:
        """Why the name of ``path`` (absolute, normalized; ``rel`` when inside a root) is refused: a
        secret, a spelling of ``.git`` that Windows or macOS reads as ``.git``, a DOS device name on
        Windows, or a short name that may stand for one of those (module docstring); else None."""
        advice = self._secrets.advice(rel, path)
        if advice is not None:
            return _Refusal(advice, secret=True)
        written = rel if rel is not None else path.as_posix()
        if not windows_names.ON_WINDOWS and not windows_names.may_read_differently(written):
            return None
        parts = PurePosixPath(rel).parts if rel is not None else path.parts[1:]
        alias = windows_names.dot_git_alias(parts, fold)
        if alias is not None:
            read = f"they read {alias!r} as .git"
            return _Refusal(f"is .git on Windows or macOS ({read}); refused on every platform")
        if windows_names.ON_WINDOWS and any(map(windows_names.reserved_device, parts)):
            return _Refusal("names a device on Windows (CON, NUL, COM1, ...); use another file name")
        if depth >= _MAX_SHORT_NAMES:
            return None
        for index in range(len(path.parts) - len(parts), len(path.parts)):
            parent, part = Path(*path.parts[:index]), path.parts[index]
            for target in windows_names.short_name_targets(parent, part):
                other = parent.joinpath(target, *path.parts[index + 1 :])
                found = self._refusal(other, self._lexical_rel(other), depth + 1)
                if found is not None:
                    note = f" ({part!r} may be the Windows short name of {target!r})"
                    return _Refusal(found.advice + note, found.secret)
        return None

    def _hard_link(self, real: Path, st: os.stat_result | None = None) -> _Refusal | None:
        """Step 7 for ``real`` (``st``: its ``fstat``, else it is ``lstat``-ed; a missing file passes)."""
        if st is None:
            try:
                st = os.lstat(real)
            except OSError:
                return None
        if not hard_links.has_other_names(st):
            return None
        base = next((d for d in (*self._real_roots, *self._extra) if real.is_relative_to(d)), Path("/"))
        advice = hard_links.refusal(base, _posix_rel(real, base), st)
        return None if advice is None else _Refusal(advice, secret=True)

    def _place(self, real: Path) -> _Place:
        for root in self._real_roots:
            if real.is_relative_to(root):
                return _Place(root, _posix_rel(real, root))
        return _Place(extra=any(real.is_relative_to(d) for d in self._extra))

    def _allowed(self, real: Path) -> bool:
        return any(real.is_relative_to(d) for d in (*self._real_roots, *self._extra))

    def _walk(self, candidate: Path) -> Path:
        """The real path of ``candidate``, following symlinks as the kernel does (``_Walk``).

        Raises:
            _Escape: a symlink lying in an allowed place resolves outside them, a symlink outside them
                is reached through one inside, or there are more than ``_MAX_LINKS`` links.
        """
        return _Walk(self._allowed).run(candidate)

    def _escape_message(self, path: str, escape: _Escape) -> str:
        if escape.link is None:
            return f"path {path!r} has too many levels of symbolic links; use the file's real path"
        return (
            f"path {path!r} leads outside the workspace {self.root} through the symlink {escape.link}; "
            "use a path inside the workspace"
        )

    def _open_nofollow(self, rel: str) -> BinaryIO:
        if os.path.isabs(rel):
            base, parts = Path("/"), PurePosixPath(rel).parts[1:]
        else:
            base, parts = self.real_root, PurePosixPath(rel).parts
        if not parts or rel == ".":
            raise IsADirectoryError(errno.EISDIR, "is a directory", rel)
        # O_NOFOLLOW makes a symlink fail with ELOOP (with O_DIRECTORY it would be an ambiguous
        # ENOTDIR); O_NONBLOCK keeps a FIFO from blocking the open until a writer comes.
        flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
        fd = os.open(base, os.O_RDONLY | os.O_CLOEXEC | os.O_DIRECTORY)
        try:
            for part in parts[:-1]:
                inner = os.open(part, flags, dir_fd=fd)
                os.close(fd)
                fd = inner
            leaf = os.open(parts[-1], flags, dir_fd=fd)
        finally:
            os.close(fd)
        handle = os.fdopen(leaf, "rb")
        st = os.fstat(handle.fileno())
        mode = st.st_mode
        if stat.S_ISREG(mode):
            refusal = self._hard_link(base.joinpath(*parts), st)
            if refusal is None:
                return handle
            handle.close()
            raise PathRefused(f"refused: {rel!r} {refusal.advice}")
        handle.close()
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", rel)
        raise OSError(errno.EINVAL, "not a regular file", rel)


class _Walk:
    """Resolves a path one component at a time, like ``os.path.realpath``, watching every symlink.

    ``realpath`` only gives the end of a chain; the policy also needs each hop, so that a link inside
    the workspace pointing out of it is refused even when a second link, outside, points back in (the
    outside link is not the user's to vouch for, and can be changed between check and use). Links met
    before the walk enters an allowed place (``/home -> /usr/home``, a root given through a link) are
    followed freely. Components after a missing one are taken as written (``..`` lexically), as
    ``realpath(strict=False)`` does.
    """

    def __init__(self, allowed: Callable[[Path], bool]) -> None:
        self._allowed = allowed

    def run(self, candidate: Path) -> Path:
        # A stack of components still to walk; None marks the end of an inside link's target, where
        # the walk must be back in an allowed place.
        pending: list[str | None] = list(reversed(candidate.parts[1:]))
        current = Path("/")
        links = 0
        in_chain = False
        missing = False
        while pending:
            part = pending.pop()
            if part is None:
                if not self._allowed(current):
                    raise _Escape(current)
                continue
            if part in ("", "."):
                continue
            if part == "..":
                current = current.parent
                continue
            step = current / part
            if missing:
                current = step
                continue
            try:
                mode = os.lstat(step).st_mode
            except OSError:
                missing, current = True, step
                continue
            if not stat.S_ISLNK(mode):
                current = step
                continue
            links += 1
            if links > _MAX_LINKS:
                raise _Escape(None)
            inside = self._allowed(current)
            if in_chain and not inside:
                raise _Escape(step)
            try:
                target = os.readlink(step)
            except OSError:
                missing, current = True, step
                continue
            if inside:
                in_chain = True
                pending.append(None)
            target_path = PurePosixPath(target)
            if target_path.is_absolute():
                current = Path("/")
                pending.extend(reversed(target_path.parts[1:]))
            else:
                pending.extend(reversed(target_path.parts))
        return current


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _posix_rel(path: Path, root: Path) -> str:
    if path == root:
        return "."
    return PurePosixPath(*path.relative_to(root).parts).as_posix()
