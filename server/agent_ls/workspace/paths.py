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
``/`` matches any path component, ``**`` spans directories, and a pattern starting with ``/`` or ``~/``
is absolute (``/proc/**/environ``, ``~/.ssh``). The list only grows: each built-in group and the added
patterns are compiled apart (a ``!`` line re-includes within its own group only), an added pattern may
not start with ``!``, and the only way out is an exemption from the user (``not_secret``), which
never lifts ``~/.ssh``, ``/proc/**/environ`` or agent-ls's config directory. A relative pattern is matched
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

import pathspec
from pathspec.patterns.gitwildmatch import GitWildMatchPattern

from agent_ls.core.errors import PathRefused, ToolError

_ENV_ADVICE = "may hold secrets; ask the user for the values you need, or read .env.example"
_KEY_ADVICE = "may be a private key; never read keys, ask the user about it instead"
_GIT_ADVICE = "may hold credentials (remote URLs with tokens); ask the user for the setting you need"
_SSH_ADVICE = "is SSH material; never read it, ask the user instead"
_PROC_ADVICE = "holds a process's environment (API keys); never read it, ask the user instead"
_CONFIG_ADVICE = "is agent-ls's own configuration; ask the user for the setting you need"
_OTHER_ADVICE = "is a secret file (configured); ask the user for what you need instead"


@dataclass(frozen=True)
class _BuiltIn:
    """One group of built-in secret patterns: gitignore lines, what to do instead, and whether an
    exemption (``not_secret``) may lift it. A ``!`` line re-includes within its own group only."""

    lines: tuple[str, ...]
    advice: str
    fixed: bool = False


_BUILT_INS = (
    _BuiltIn((".env",), _ENV_ADVICE),
    # .env.example is the template without values; its "!" only takes it out of ".env.*".
    _BuiltIn((".env.*", "!.env.example"), _ENV_ADVICE),
    # Docker Compose's env_file convention (db.env, prod.env; OpenCode's default read rule is "*.env"
    # too) and editor copies of any of those: Emacs's backup "x.env~" and auto-save "#x.env#" ("\#":
    # a leading "#" would be a comment), Vim's swap ".x.env.swp" (".env.swp" is under ".env.*"). No
    # language uses ".env" as a source extension, so "*.env" does not hide code; "*.env.*" would
    # (config.env.ts), and is left out.
    _BuiltIn(("*.env", "*.env~", "\\#*.env#", "*.env.sw?"), _ENV_ADVICE),
    # Public CA bundles are .pem files too (certifi's cacert.pem in every virtualenv): hiding them
    # breaks any TLS client a test creates, and they hold no secret.
    _BuiltIn(("*.pem", "!**/certifi/cacert.pem", "!**/pip/_vendor/certifi/cacert.pem"), _KEY_ADVICE),
    _BuiltIn(("id_rsa*",), _KEY_ADVICE),
    _BuiltIn(("id_ed25519*",), _KEY_ADVICE),
    _BuiltIn(("id_ecdsa*",), _KEY_ADVICE),
    # A submodule's config lives under .git/modules/<name>/, a worktree's under .git/worktrees/.
    _BuiltIn(("**/.git/**/config",), _GIT_ADVICE),
    _BuiltIn(("**/.git/**/config.worktree",), _GIT_ADVICE),
    # A workspace holding a home directory (or a copy of one) shows it as a component.
    _BuiltIn((".ssh",), _SSH_ADVICE),
    # Never workspace files, so no fixture needs them: no exemption lifts these two.
    _BuiltIn(("~/.ssh",), _SSH_ADVICE, fixed=True),
    _BuiltIn(("/proc/**/environ",), _PROC_ADVICE, fixed=True),
)

DEFAULT_SECRET_PATTERNS: tuple[str, ...] = tuple(line for group in _BUILT_INS for line in group.lines)
"""Secret files, denied for read and write alike (issue 5): ``.env``, ``.env.*`` except
``.env.example``, ``*.env`` and editor copies of those (``.env~``, ``#.env#``, ``.prod.env.swp``),
``*.pem``, ``id_rsa*``, ``id_ed25519*``, ``id_ecdsa*``, git configs, ``.ssh`` directories (``~/.ssh``
included), and every process's ``environ``. These always apply: ``PathPolicy(secret_patterns=...)``
adds to them, ``PathPolicy(config_dir=...)`` adds agent-ls's own user config directory, and only
``not_secret`` (the user's exemptions) takes paths out, never those of ``~/.ssh``, ``/proc`` or the
config directory."""

HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"})
"""Paths a shell redirection may name freely (``2>/dev/null``, ``>/dev/stderr``)."""

# Linux's MAXSYMLINKS: more links than this in one resolution fail with ELOOP there too.
_MAX_LINKS = 40


def fold(text: str) -> str:
    """``text`` in the form secret matching compares: NFKD, without combining marks (Mn, Me) and
    format characters (Cf, zero-width spaces), then NFKC and ``str.casefold`` (Unicode TR15, TR21)."""
    if text.isascii():  # the common case, and most of the cost of scanning a large tree
        return text.lower()
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


@dataclass(frozen=True)
class _Group:
    """Compiled secret patterns that match together: relative ones are tried on every tail of a path,
    absolute ones on the whole path; ``fixed`` groups are not lifted by exemptions."""

    spec: pathspec.GitIgnoreSpec
    absolute: bool
    advice: str
    fixed: bool = False
    carve_out: pathspec.GitIgnoreSpec | None = None
    """Absolute paths this group never matches (the ``skills`` folder of agent-ls's config dir)."""

    def matches(self, folded_abs: str, tails: Sequence[str]) -> bool:
        if self.absolute:
            if self.carve_out is not None and self.carve_out.match_file(folded_abs):
                return False
            return bool(folded_abs) and self.spec.match_file(folded_abs)
        return any(self.spec.match_file(tail) for tail in tails)


class _Secrets:
    """The secret matcher: a path is secret when a built-in or added group matches it and no exemption
    does (a fixed group matches whatever the exemptions say).

    Each built-in group and the added patterns are separate specs, so no line of one can take a path
    out of another: the list only grows. Added patterns may not re-include at all (``ValueError``).
    """

    def __init__(
        self, added: Sequence[str], exempt: Sequence[str], home: Path, config_dirs: Sequence[Path] = ()
    ) -> None:
        groups = [
            _Group(
                _spec([fold(_expand_pattern(line, home)) for line in group.lines]),
                _is_absolute(group.lines[0]),
                group.advice,
                group.fixed,
            )
            for group in _BUILT_INS
        ]
        extra = [p for p in dict.fromkeys(added) if p not in DEFAULT_SECRET_PATTERNS]
        for pattern in extra:
            problem = _added_problem(fold(_expand_pattern(pattern, home)))
            if problem is not None:
                raise ValueError(f"secret pattern {pattern!r}: {problem}")
        for absolute in (False, True):
            lines = [fold(_expand_pattern(p, home)) for p in extra if _is_absolute(p) == absolute]
            if lines:
                groups.append(_Group(_spec(lines), absolute, _OTHER_ADVICE))
        if config_dirs:
            # Literal paths: a "[" or "*" in a directory name is not a wildcard. The user's skills live
            # in <config dir>/skills: their files are instructions the agent must be able to read (the
            # other secret groups still apply to them).
            lines = [fold(_escape_path(d)) for d in config_dirs]
            skills = _spec([fold(_escape_path(d / "skills")) + "/" for d in config_dirs])
            groups.append(_Group(_spec(lines), True, _CONFIG_ADVICE, fixed=True, carve_out=skills))
        # Absolute groups first: "~/.ssh/id_rsa" is SSH material before it is a key.
        self._groups = tuple(sorted(groups, key=lambda group: not group.absolute))
        # Exemptions come from the user (config or trusted workspace); a "!" there only narrows them.
        self._exempt_relative = _spec([fold(_expand_pattern(p, home)) for p in exempt if not _is_absolute(p)])
        self._exempt_absolute = _spec([fold(_expand_pattern(p, home)) for p in exempt if _is_absolute(p)])

    def advice(self, rel: str | None, absolute: Path) -> str | None:
        """What to do instead, when ``rel`` (inside a root) or ``absolute`` names a secret; else None."""
        folded_abs = fold(absolute.as_posix()).lstrip("/")
        exempt = bool(folded_abs) and self._exempt_absolute.match_file(folded_abs)
        if rel is not None and rel != "." and self._exempt_relative.match_file(fold(rel)):
            exempt = True
        tails = [t for t in ([fold(rel)] if rel is not None else _tails(folded_abs)) if t not in ("", ".")]
        for group in self._groups:
            if (group.fixed or not exempt) and group.matches(folded_abs, tails):
                return group.advice
        return None


def secret_pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be added to the secret list (``permissions.secret_files``), or None.

    Refused: what does not compile as a gitignore pattern, what matches nothing (blank, a comment), and
    a negation (``!.env``), which would take files off the list instead of adding. The check is on the
    folded pattern, the one matched, so a fullwidth ``！`` or a zero-width space before ``!`` is a
    negation too.
    """
    if not pattern.strip():
        return "an empty pattern matches nothing"
    return _added_problem(fold(pattern))


def _added_problem(folded: str) -> str | None:
    try:
        compiled = pathspec.GitIgnoreSpec.from_lines([folded]).patterns
    except ValueError as exc:  # pathspec's GitIgnorePatternError
        return str(exc)
    # pathspec's own reading decides: include is False for a negation, None for a comment or blank.
    include = compiled[0].include if compiled else None
    if include is None:
        return "this pattern matches nothing (a line starting with '#' is a comment: write '\\#')"
    if include is False:
        return (
            "a '!' pattern would take files off the secret list, which can only grow; to exempt a "
            "path, list it in not_secret_files in your user config"
        )
    return None


def _spec(lines: Sequence[str]) -> pathspec.GitIgnoreSpec:
    # pathspec implements Git's wildmatch rules (a pattern without "/" matches any path component,
    # "**" spans directories, "!" re-includes), which fnmatch and PurePath.match do not.
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _is_absolute(pattern: str) -> bool:
    body = pattern.removeprefix("!")
    return body.startswith("/") or body == "~" or body.startswith("~/")


def _expand_pattern(pattern: str, home: Path) -> str:
    negated = pattern.startswith("!")
    body = pattern.removeprefix("!")
    if body == "~" or body.startswith("~/"):
        body = _escape_path(home).rstrip("/") + body[1:]
    return ("!" if negated else "") + body


def _escape_path(path: Path) -> str:
    """``path`` as a gitignore pattern matching it literally (``[``, ``*``, ``!`` escaped)."""
    # GitWildMatchPattern.escape is in every pathspec since 0.9 (only building one warns in 1.x).
    escaped: str = GitWildMatchPattern.escape(path.as_posix())
    return escaped


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


_DEFAULT_SECRETS = _Secrets((), (), _default_home())


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
        self._home = Path(os.path.abspath(home)) if home is not None else _default_home()
        config_dirs = (
            list(dict.fromkeys((Path(os.path.abspath(config_dir)), _real(config_dir))))
            if config_dir is not None
            else []
        )
        self._secrets = _Secrets(secret_patterns, not_secret, self._home, config_dirs)

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
        """The secret files and folders inside ``directory`` (an extra directory), for the sandbox to mask;
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
                if self._secrets.advice(None, path) is not None:
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
