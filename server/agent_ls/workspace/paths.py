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
6. refuse a secret by its real path (a symlink ``notes.txt -> .env`` is still ``.env``).

Secrets are gitignore-style patterns (``DEFAULT_SECRET_PATTERNS``, from issue 5): a pattern without a
``/`` matches any path component, ``**`` spans directories, ``!`` re-includes, and a pattern starting
with ``/`` or ``~/`` is absolute (``/proc/**/environ``, ``~/.ssh``). A relative pattern is matched
against the workspace-relative path inside a root, and against every tail of the absolute path
outside (``/elsewhere/app/.env`` is a secret too). Paths and patterns are compared after Unicode
compatibility folding (NFKD, marks and format characters dropped, NFKC, casefold), so ``.ENV``,
fullwidth ``．ｅｎｖ`` and ``.e\u0301nv`` all count as ``.env``: case-insensitive file systems (macOS,
Windows) open the real file under such names, and elsewhere the look-alike is refused all the same.

Reads happen later than the check (the registry checks, then the tool reads), and a file can become a
symlink in between. ``read_bytes`` therefore opens the path again, one component at a time with
``O_NOFOLLOW`` from the root's real path, and resolves it anew when it meets a link: the policy is
enforced at use, not only at check.
"""

from __future__ import annotations

import errno
import os
import pwd
import stat
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

import pathspec

from agent_ls.core.errors import PathRefused, ToolError

_ENV_ADVICE = "may hold secrets; ask the user for the values you need, or read .env.example"
_KEY_ADVICE = "may be a private key; never read keys, ask the user about it instead"
_GIT_ADVICE = "may hold credentials (remote URLs with tokens); ask the user for the setting you need"
_SSH_ADVICE = "is SSH material; never read it, ask the user instead"
_PROC_ADVICE = "holds a process's environment (API keys); never read it, ask the user instead"
_CONFIG_ADVICE = "is agent-ls's own configuration; ask the user for the setting you need"
_OTHER_ADVICE = "is a secret file (configured); ask the user for what you need instead"

# The built-in secret patterns, each with what the model should do instead. A pattern a user adds
# gets _OTHER_ADVICE.
_ADVICE = {
    ".env": _ENV_ADVICE,
    ".env.*": _ENV_ADVICE,
    "!.env.example": _ENV_ADVICE,
    "*.pem": _KEY_ADVICE,
    "id_rsa*": _KEY_ADVICE,
    "id_ed25519*": _KEY_ADVICE,
    "id_ecdsa*": _KEY_ADVICE,
    # A submodule's config lives under .git/modules/<name>/, a worktree's under .git/worktrees/.
    "**/.git/**/config": _GIT_ADVICE,
    "**/.git/**/config.worktree": _GIT_ADVICE,
    # A workspace holding a home directory (or a copy of one) shows it as a component.
    ".ssh": _SSH_ADVICE,
    "~/.ssh": _SSH_ADVICE,
    "/proc/**/environ": _PROC_ADVICE,
}

DEFAULT_SECRET_PATTERNS: tuple[str, ...] = tuple(_ADVICE)
"""Secret files, denied for read and write alike (issue 5): ``.env``, ``.env.*`` except
``.env.example``, ``*.pem``, ``id_rsa*``, ``id_ed25519*``, ``id_ecdsa*``, git configs, ``.ssh``
directories (``~/.ssh`` included), and every process's ``environ``. ``PathPolicy(config_dir=...)`` adds
agent-ls's own user config directory."""

HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"})
"""Paths a shell redirection may name freely (``2>/dev/null``, ``>/dev/stderr``)."""

# Linux's MAXSYMLINKS: more links than this in one resolution fail with ELOOP there too.
_MAX_LINKS = 40


def fold(text: str) -> str:
    """``text`` in the form secret matching compares: NFKD, without combining marks (Mn, Me) and
    format characters (Cf, zero-width spaces), then NFKC and ``str.casefold`` (Unicode TR15, TR21)."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    return unicodedata.normalize("NFKC", kept).casefold()


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


class _Secrets:
    """Compiled secret patterns: relative ones, absolute ones, and the exemptions (``not_secret``)."""

    def __init__(
        self, patterns: Sequence[str], exempt: Sequence[str], home: Path, advice: Mapping[str, str]
    ) -> None:
        self._home = home
        self._advice = {**_ADVICE, **advice}
        self._relative, self._relative_advice = self._compile([p for p in patterns if not _is_absolute(p)])
        self._absolute, self._absolute_advice = self._compile([p for p in patterns if _is_absolute(p)])
        self._exempt_relative, _ = self._compile([p for p in exempt if not _is_absolute(p)])
        self._exempt_absolute, _ = self._compile([p for p in exempt if _is_absolute(p)])

    def _compile(self, patterns: list[str]) -> tuple[pathspec.GitIgnoreSpec, list[str]]:
        # pathspec implements Git's wildmatch rules (a pattern without "/" matches any path component,
        # "**" spans directories, "!" re-includes), which fnmatch and PurePath.match do not.
        lines = [fold(_expand_pattern(p, self._home)) for p in patterns]
        advice = [self._advice.get(p, _OTHER_ADVICE) for p in patterns]
        return pathspec.GitIgnoreSpec.from_lines(lines), advice

    def advice(self, rel: str | None, absolute: Path) -> str | None:
        """What to do instead, when ``rel`` (inside a root) or ``absolute`` names a secret; else None."""
        folded_abs = fold(absolute.as_posix()).lstrip("/")
        if folded_abs and self._exempt_absolute.match_file(folded_abs):
            return None
        if rel is not None and rel != "." and self._exempt_relative.match_file(fold(rel)):
            return None
        if folded_abs:
            found = self._absolute.check_file(folded_abs)
            if found.include and found.index is not None:
                return self._absolute_advice[found.index]
        tails = [fold(rel)] if rel is not None else _tails(folded_abs)
        for tail in tails:
            if tail in ("", "."):
                continue
            found = self._relative.check_file(tail)
            if found.include and found.index is not None:
                return self._relative_advice[found.index]
        return None


def _is_absolute(pattern: str) -> bool:
    body = pattern.removeprefix("!")
    return body.startswith("/") or body == "~" or body.startswith("~/")


def _expand_pattern(pattern: str, home: Path) -> str:
    negated = pattern.startswith("!")
    body = pattern.removeprefix("!")
    if body == "~" or body.startswith("~/"):
        body = home.as_posix().rstrip("/") + body[1:]
    return ("!" if negated else "") + body


def _tails(posix: str) -> list[str]:
    """``a/b/c`` -> ``["a/b/c", "b/c", "c"]``: a relative pattern may match from any directory down."""
    parts = [p for p in posix.split("/") if p]
    return ["/".join(parts[i:]) for i in range(len(parts))]


def _default_home() -> Path:
    """The user's home from the password database: the real one, whatever ``HOME`` says."""
    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        return Path(os.path.expanduser("~"))


_DEFAULT_SECRETS = _Secrets(DEFAULT_SECRET_PATTERNS, (), _default_home(), {})


def is_secret(rel: str) -> bool:
    """True when the workspace-relative POSIX path ``rel`` names a secret by the default patterns.

    Matching is on any path component (``config/.env.prod``, ``keys/server.pem``), and a file under a
    secret directory is secret too (``.ssh/known_hosts``). ``PathPolicy.is_secret`` uses the
    configured patterns instead.
    """
    return rel not in ("", ".") and _DEFAULT_SECRETS.advice(rel, Path("/", rel)) is not None


class PathPolicy:
    """Maps paths to workspace-relative POSIX paths and refuses the forbidden ones (module docstring).

    Args:
        roots: the workspace roots, the first being the primary one (relative paths start there);
            a single ``Path`` is one root. Each is made absolute but its symlinks are kept in
            ``root`` (editor URIs are built from it); containment is checked against real paths.
        extra_dirs: other directories whose files may be read (a skill's own folder); never written.
        secret_patterns: the secret patterns (gitignore-style, see the module docstring); the
            configuration may extend them anywhere, and shrink them only from the user config.
        not_secret: patterns of paths that are not secret even though a secret pattern matches them
            (``tests/fixtures/*.pem``); from the user config only.
        config_dir: agent-ls's user config directory; everything in it is secret.
        home: the user's home for ``~`` (default: the password database's, not ``HOME``).
    """

    def __init__(
        self,
        roots: Sequence[Path] | Path,
        *,
        extra_dirs: Sequence[Path] = (),
        secret_patterns: Sequence[str] = DEFAULT_SECRET_PATTERNS,
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
        self._home = Path(os.path.abspath(home)) if home is not None else _default_home()
        patterns = list(secret_patterns)
        advice = {}
        if config_dir is not None:
            for directory in dict.fromkeys((Path(os.path.abspath(config_dir)), _real(config_dir))):
                patterns.append(directory.as_posix().rstrip("/"))
                advice[patterns[-1]] = _CONFIG_ADVICE
        self._secrets = _Secrets(patterns, list(not_secret), self._home, advice)

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

    def is_secret(self, rel: str) -> bool:
        """True when ``rel``, relative to the first root, names a secret by the configured patterns."""
        if rel in ("", "."):
            return False
        return self._secrets.advice(rel, self.real_root / rel) is not None

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
            ToolError: the path contains a NUL character.
        """
        if "\0" in path:
            raise ToolError(f"path {path!r} contains a NUL character; pass a plain file path")
        candidate = self._absolute(path, self._roots[0])
        advice = self._advice_lexical(candidate)
        if advice is not None:
            raise PathRefused(f"refused: {self._shown(path, candidate)!r} {advice}")
        try:
            real = self._walk(candidate)
        except _Escape as escape:
            raise PathRefused(self._escape_message(path, escape)) from None
        place = self._place(real)
        if place.rel is None and not place.extra:
            raise PathRefused(f"path {path!r} is outside the workspace {self.root}; use a path inside it")
        advice = self._secrets.advice(place.rel, real)
        if advice is not None:
            shown = place.rel if place.rel is not None else real.as_posix()
            raise PathRefused(f"refused: {shown!r} {advice}")
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
        advice = self._advice_lexical(candidate)
        if advice is not None:
            reason = f"{self._shown(path, candidate)} {advice}"
            return PathCheck("deny", reason, secret=True, path=candidate.as_posix())
        try:
            real = self._walk(candidate)
        except _Escape as escape:
            reason = self._escape_message(path, escape)
            return PathCheck("deny", reason, outside=True, path=candidate.as_posix())
        place, where = self._place(real), real.as_posix()
        outside = place.rel is None and not place.extra
        advice = self._secrets.advice(place.rel, real)
        if advice is not None:
            reason = f"{place.rel if place.rel is not None else where} {advice}"
            return PathCheck("deny", reason, place.rel, outside, secret=True, path=where)
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
        try:
            return self._read_nofollow(rel)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
        again = self.resolve(rel if os.path.isabs(rel) else str(self.real_root / rel))
        try:
            return self._read_nofollow(again)
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

    def _advice_lexical(self, candidate: Path) -> str | None:
        lexical = Path(os.path.normpath(candidate))
        for root in (*self._roots, *self._real_roots):
            if lexical.is_relative_to(root):
                return self._secrets.advice(_posix_rel(lexical, root), lexical)
        return self._secrets.advice(None, lexical)

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

    def _read_nofollow(self, rel: str) -> bytes:
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
        with os.fdopen(leaf, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory", rel)
            if not stat.S_ISREG(mode):
                raise OSError(errno.EINVAL, "not a regular file", rel)
            return handle.read()


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
