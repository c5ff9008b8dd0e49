"""Matching paths against the secret list (``secret_files.SECRET_GROUPS`` plus configured patterns).

Secrets are gitignore-style patterns: a pattern without a ``/`` matches any path component, ``**``
spans directories, and a pattern starting with ``/`` or ``~/`` is absolute (``/proc/**/environ``,
``~/.ssh``). The list only grows: each built-in group and the added patterns are compiled apart (a
``!`` line re-includes within its own group only), an added pattern may not start with ``!``, and the
only way out is an exemption from the user (``not_secret``), which never lifts a fixed group or
agent-ls's config directory. A relative pattern is matched against the workspace-relative path inside
a root, and against every tail of the absolute path outside (``/elsewhere/app/.env`` is a secret too);
a rooted group (Composer's ``auth.json``) only against a workspace-relative path.

Paths and patterns are compared after Unicode compatibility folding (``fold``: NFKD, marks and format
characters dropped, NFKC, casefold), so ``.ENV``, fullwidth ``．ｅｎｖ`` and ``.e\\u0301nv`` all count as
``.env``: case-insensitive file systems (macOS, Windows) open the real file under such names, and
elsewhere the look-alike is refused all the same. A path is also matched as Windows reads it
(``windows_names.windows_reading``: ``.env.``, ``.env::$DATA``, ``config\\.env``, ``GIT~1/config``).

Matching runs for every file of a tree the shadow copy scans (tens of thousands in a ``node_modules``),
so a cheap test comes first: a pattern can only match a path when its last segment matches one of the
path's components (``**/.cargo/credentials`` needs a ``credentials``), and the components seen are
remembered. A path none of whose components can end a pattern (nearly all) costs a few dictionary
lookups, whatever the length of the list.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import pwd
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pathspec
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern
from pathspec.patterns.gitwildmatch import GitWildMatchPattern

from agent_ls.workspace.secret_files import SECRET_GROUPS
from agent_ls.workspace.windows_names import may_read_differently, windows_reading

_MAX_REMEMBERED = 50_000
"""Path components whose ``_last_segments`` test is remembered; the memory is emptied past this."""

CONFIG_ADVICE = "is agent-ls's own configuration; ask the user for the setting you need"
OTHER_ADVICE = "is a secret file (configured); ask the user for what you need instead"


def fold(text: str) -> str:
    """``text`` in the form secret matching compares: NFKD, without combining marks (Mn, Me) and
    format characters (Cf, zero-width spaces), then NFKC and ``str.casefold`` (Unicode TR15, TR21)."""
    if text.isascii():  # the common case, and most of the cost of scanning a large tree
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    return unicodedata.normalize("NFKC", kept).casefold()


@dataclass(frozen=True)
class _Group:
    """Secret patterns that match together: relative ones are tried on every tail of a path (a rooted
    one on the workspace-relative path only), absolute ones on the whole path; ``fixed`` groups are not
    lifted by exemptions. Compiled on the first path whose components pass ``Secrets``'s last-segment
    test: compiling the built-in list costs about 30 ms, and most paths never need it (start-up time)."""

    lines: tuple[str, ...]
    absolute: bool
    advice: str
    fixed: bool = False
    rooted: bool = False
    carve_out: pathspec.GitIgnoreSpec | None = None
    """Absolute paths this group never matches (the ``skills`` folder of agent-ls's config dir)."""

    @functools.cached_property
    def spec(self) -> pathspec.GitIgnoreSpec:
        return _spec(self.lines)

    def matches(self, folded_abs: str, tails: Sequence[str], inside: bool) -> bool:
        if self.absolute:
            if self.carve_out is not None and self.carve_out.match_file(folded_abs):
                return False
            return bool(folded_abs) and self.spec.match_file(folded_abs)
        if self.rooted and not inside:
            return False
        return any(self.spec.match_file(tail) for tail in tails)


class Secrets:
    """The secret matcher: a path is secret when a built-in or added group matches it and no exemption
    does (a fixed group matches whatever the exemptions say).

    Each built-in group and the added patterns are separate specs, so no line of one can take a path
    out of another: the list only grows.

    Args:
        added: patterns added to the built-in ones (``permissions.secret_files``).
        exempt: the user's exemptions (``permissions.not_secret_files``).
        home: what ``~`` means in patterns.
        config_dirs: agent-ls's config directory (as given and resolved): secret, except its ``skills``.

    Raises:
        ValueError: an added pattern would re-include (``secret_pattern_problem``).
    """

    def __init__(
        self, added: Sequence[str], exempt: Sequence[str], home: Path, config_dirs: Sequence[Path] = ()
    ) -> None:
        groups = [
            _Group(
                tuple(_anchor(fold(_expand_pattern(line, home)), group.rooted) for line in group.lines),
                _is_absolute(group.lines[0]) and not group.rooted,
                group.advice,
                group.fixed,
                group.rooted,
            )
            for group in SECRET_GROUPS
        ]
        built_in = {line for group in SECRET_GROUPS for line in group.lines}
        extra = [p for p in dict.fromkeys(added) if p not in built_in]
        for pattern in extra:
            problem = _added_problem(fold(_expand_pattern(pattern, home)))
            if problem is not None:
                raise ValueError(f"secret pattern {pattern!r}: {problem}")
        for absolute in (False, True):
            lines = [fold(_expand_pattern(p, home)) for p in extra if _is_absolute(p) == absolute]
            if lines:
                groups.append(_Group(tuple(lines), absolute, OTHER_ADVICE))
        if config_dirs:
            # Literal paths: a "[" or "*" in a directory name is not a wildcard. The user's skills live
            # in <config dir>/skills: their files are instructions the agent must be able to read (the
            # other secret groups still apply to them).
            lines = [fold(_escape_path(d)) for d in config_dirs]
            skills = _spec([fold(_escape_path(d / "skills")) + "/" for d in config_dirs])
            groups.append(_Group(tuple(lines), True, CONFIG_ADVICE, fixed=True, carve_out=skills))
        # Absolute groups first: "~/.ssh/id_rsa" is SSH material before it is a key.
        self._groups = tuple(sorted(groups, key=lambda group: not group.absolute))
        self._last_segment = _last_segments([g.lines for g in self._groups])
        self._components: dict[str, bool] = {}
        # Exemptions come from the user (config or trusted workspace); a "!" there only narrows them.
        self._exempt_relative = _spec([fold(_expand_pattern(p, home)) for p in exempt if not _is_absolute(p)])
        self._exempt_absolute = _spec([fold(_expand_pattern(p, home)) for p in exempt if _is_absolute(p)])

    def advice(self, rel: str | None, absolute: Path) -> str | None:
        """What to do instead, when ``rel`` (inside a root) or ``absolute`` names a secret; else None.

        The path is matched as written and as Windows reads it (module docstring).
        """
        folded_rel = fold(rel) if rel is not None else None
        folded_abs = fold(absolute.as_posix())
        found = self._advice(folded_rel, folded_abs.lstrip("/"))
        if found is not None or not may_read_differently(folded_abs):
            return found
        windows_rel = windows_reading(folded_rel) if folded_rel is not None else None
        windows_abs = windows_reading(folded_abs)
        if windows_rel == folded_rel and windows_abs == folded_abs:
            return None
        return self._advice(windows_rel, windows_abs.lstrip("/"))

    def _advice(self, folded_rel: str | None, folded_abs: str) -> str | None:
        if not any(map(self._may_end_a_pattern, folded_abs.split("/"))):
            return None
        exempt = bool(folded_abs) and self._exempt_absolute.match_file(folded_abs)
        if folded_rel is not None and folded_rel != "." and self._exempt_relative.match_file(folded_rel):
            exempt = True
        inside = folded_rel is not None
        given = [folded_rel] if folded_rel is not None else _tails(folded_abs)
        tails = [tail for tail in given if tail not in ("", ".")]
        for group in self._groups:
            if (group.fixed or not exempt) and group.matches(folded_abs, tails, inside):
                return group.advice
        return None

    def _may_end_a_pattern(self, component: str) -> bool:
        known = self._components.get(component)
        if known is None:
            known = self._last_segment.match(component) is not None
            if len(self._components) >= _MAX_REMEMBERED:
                self._components.clear()
            self._components[component] = known
        return known


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


def _last_segments(groups: Sequence[Sequence[str]]) -> re.Pattern[str]:
    """One expression matching a path component that can end a match of an including line of
    ``groups`` (its last segment: ``credentials`` for ``**/.cargo/credentials``, ``.aws`` for ``.aws/``;
    ``!`` lines, comments and blank lines are left out: the first only take paths out). A gitignore line
    matches a path when it matches the path or a folder above it, so its last segment always matches
    one component. Each line is read as ``GitIgnoreSpec`` reads it, without compiling its expression."""
    regexes = []
    for lines in groups:
        for line in lines:
            if line and GitIgnoreSpecPattern.pattern_to_regex(line)[1]:
                last = line.rstrip("/").rpartition("/")[2]
                # gitignore escapes with "\"; fnmatch has none, but "[x]" is the character x.
                regexes.append(fnmatch.translate(re.sub(r"\\(.)", r"[\1]", last)))
    return re.compile("|".join(f"(?:{r})" for r in regexes) or "(?!)")


def _anchor(line: str, rooted: bool) -> str:
    """A rooted group's line anchored at the workspace folder's root (gitignore: a leading ``/``)."""
    return "/" + line if rooted and not line.startswith("/") else line


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


def default_home() -> Path:
    """The user's home from the password database: the real one, whatever ``HOME`` says."""
    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        return Path(os.path.expanduser("~"))


@functools.cache
def _default_secrets() -> Secrets:
    """The matcher of the built-in patterns, built on first use (compiling them costs start-up time)."""
    return Secrets((), (), default_home())


def is_secret(rel: str) -> bool:
    """True when the workspace-relative POSIX path ``rel`` names a secret by the default patterns.

    Matching is on any path component (``config/.env.prod``, ``keys/server.pem``), and a file under a
    secret directory is secret too (``.ssh/known_hosts``). ``PathPolicy.is_secret`` uses the
    configured patterns instead.
    """
    return rel not in ("", ".") and _default_secrets().advice(rel, Path("/", rel)) is not None
