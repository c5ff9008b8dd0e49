"""The file checks of a shell command: the paths its redirections and its operands name.

The permission engine (``engine.PermissionPolicy.check_command``) judges each simple command by its
rules and guards, then asks ``OperandChecks.judge`` for the files the command touches; it keeps the
strictest of all. This module holds that second part: it resolves words against the shell's cwd, the
workspace and the path policy (``workspace.paths.PathPolicy``: roots, secrets, symlinks), and reads
the file system (a word naming an existing entry, a glob's matches). Which argv words may name files
is decided apart, without the file system, by ``operands``.

For each simple command, in order:

1. each redirection that touches a file (``2>&1``, ``/dev/null`` and heredocs do not): a target that
   cannot be known is at least ask; one outside the workspace or a secret is deny (read or write); a
   write into the workspace is an edit, at least ask (built-in), and the ``edit`` rules apply; a read
   inside the workspace goes through the ``read`` rules;
2. each operand that looks like a path (``operands.operands``: non-option words, option values, the
   text after each letter of a short-option cluster (``grep -f.env``), git's ``HEAD:path`` and
   ``:(top)path``, ``pytest @file``; one that contains ``/``, starts with ``.`` or ``~``, names an
   existing entry, or is a glob matching some; a piece cut out of a word also when it has a secret's
   name): a secret, or a symlink chain that leaves the workspace, is deny; outside the workspace is at
   least ask; inside, a ``.git`` directory or an absolute path into the real tree is at least ask, and
   otherwise the ``read`` rules apply. A glob is expanded against the cwd, dotfiles included (stricter
   than bash), and every match checked; one that matches over 1000 entries or cannot be read is at
   least ask. A word holding an expansion (``$F``) is at least ask: it could name any file;
3. each file an option writes (pytest's ``--junitxml``, ``--basetemp``...; ``operands``): like a
   redirect's target, deny outside the workspace or for a secret, else an edit (at least ask).

The cwd (``Cwd``) starts at the workspace root and follows ``cd``/``pushd``/``popd`` (``follow_cd``):
after ``cd DIR`` later relative paths start from DIR; after a ``cd`` whose target is not static,
relative path-like words are at least ask, and any word named like a secret (``id_rsa``) is deny.
``~user/x`` is expanded here; ``~`` and ``~/x`` are left to the path policy, which knows the home.
"""

from __future__ import annotations

import glob
import itertools
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from agent_ls.policy.operands import Operand, operands
from agent_ls.policy.rules import Judgement, Rule, judge, strictest
from agent_ls.policy.shell_commands import Redirect, SimpleCommand
from agent_ls.workspace.paths import PathCheck, PathPolicy

REDIRECT_RULE = "edit: shell redirect into the workspace (built-in)"
WRITE_OPTION_RULE = "edit: an option writes into the workspace (built-in)"
DYNAMIC_ARGUMENT_RULE = "guard: argument not static"
DYNAMIC_TARGET_RULE = "guard: redirect target not static"
UNKNOWN_CWD_RULE = "guard: relative path after cd"
GLOB_RULE = "guard: glob not expandable"
SECRET_RULE = "paths: secret file"
OUTSIDE_RULE = "paths: outside the workspace"
GIT_DIR_READ_RULE = "paths: inside a .git directory"
REAL_TREE_RULE = "paths: absolute path into the real workspace (use a relative path)"
REFUSED_RULE = "paths: refused"
EXTRA_DIR_RULE = "paths: allowed outside the workspace (a device or an extra directory)"

EXPANSION = re.compile(r"\$[A-Za-z_{(0-9@*#?!$-]|`")
"""An unescaped expansion in a word kept as written: $NAME, ${...}, $(...), $1, $@, or a backtick."""
TEXT_REDIRECTS = frozenset({"<<", "<<-", "<<<"})
"""Heredocs and here-strings: they feed text, not a file."""

_DIRECTORY_CHANGES = frozenset({"cd", "pushd", "popd"})
_GLOB_CHARS = re.compile(r"[*?[]")
_MAX_GLOB_MATCHES = 1000


@dataclass
class Cwd:
    """Where relative paths start: a directory, or None after a ``cd`` to a place not known statically."""

    path: Path | None


@dataclass(frozen=True)
class OperandChecks:
    """The file checks of a session's commands (module docstring).

    Attributes:
        paths: the session's path policy; relative paths start from the cwd, git's top-relative ones
            also from its first root.
        rules: every rule; only the ``read`` and ``edit`` ones apply here.
    """

    paths: PathPolicy
    rules: Sequence[Rule]

    def judge(self, simple: SimpleCommand, cwd: Cwd) -> Iterator[Judgement]:
        """The judgements of the files ``simple`` names from ``cwd``: its redirections in order, then
        its operands in argv order, each giving none or more; never raises."""
        yield from (
            self._judge_redirect(r, cwd)
            for r in simple.redirects
            if not r.harmless and r.op not in TEXT_REDIRECTS
        )
        for operand in operands(simple.argv):
            if operand.write:
                yield self._judge_written(operand.text, cwd, WRITE_OPTION_RULE, operand.text)
            else:
                yield from self._judge_operand(operand, cwd)

    def _judge_redirect(self, redirect: Redirect, cwd: Cwd) -> Judgement:
        target = redirect.target
        if target is None or EXPANSION.search(target):
            return Judgement(
                "ask", DYNAMIC_TARGET_RULE, f"the target of {redirect.op} is not known statically"
            )
        if redirect.write:
            return self._judge_written(target, cwd, REDIRECT_RULE, f"{redirect.op} {target}")
        check = self._checked(target, cwd, write=False)
        if isinstance(check, Judgement):
            return check
        if check.outside:  # a read redirect from outside the workspace: file rules cannot reach it
            return Judgement("deny", OUTSIDE_RULE, f"{redirect.op} {target}: {check.reason}")
        if check.rel is None:  # an allowed extra directory (read only)
            return Judgement("allow", EXTRA_DIR_RULE, check.reason)
        return judge("read", check.rel, self.rules)

    def _judge_written(self, target: str, cwd: Cwd, rule: str, shown: str) -> Judgement:
        """A file the command writes (a redirect's target, an output option's value): deny outside the
        workspace and for a secret; inside it is an edit, at least ask (``rule``), and the ``edit``
        rules apply."""
        if EXPANSION.search(target):
            return Judgement("ask", DYNAMIC_TARGET_RULE, f"{shown}: the file written is not known statically")
        check = self._checked(target, cwd, write=True)
        if isinstance(check, Judgement):
            return check
        if check.rel is None:  # not reached: the path policy refuses every write outside the roots
            return Judgement("deny", OUTSIDE_RULE, f"{shown}: {check.reason}")
        rules = judge("edit", check.rel, self.rules)
        return strictest([rules, Judgement("ask", rule, f"{shown} writes {check.rel} (an edit)")])

    def _checked(self, target: str, cwd: Cwd, *, write: bool) -> PathCheck | Judgement:
        """The path policy's verdict on a redirect's or write option's ``target`` from the shell's
        directory, or the judgement that settles it first: ask when that directory is not known, deny
        when the policy refuses the path."""
        if cwd.path is None and not _absolute(target):
            return Judgement("ask", UNKNOWN_CWD_RULE, f"{target}: the directory after cd is not known")
        check = self.paths.check(expand_user(target), write=write, cwd=cwd.path)
        return refusal(check, target) or check

    def _judge_operand(self, operand: Operand, cwd: Cwd) -> Iterator[Judgement]:
        yield from self._judge_argument(operand.text, cwd.path, derived=operand.derived)
        if operand.top and cwd.path != self.paths.root and not _absolute(operand.text):
            yield from self._judge_argument(operand.text, self.paths.root, derived=True)

    def _judge_argument(self, word: str, base: Path | None, *, derived: bool = False) -> Iterator[Judgement]:
        if not word or word == "-":
            return
        if EXPANSION.search(word):
            yield Judgement("ask", DYNAMIC_ARGUMENT_RULE, f"{word} may name any file once expanded")
            return
        globbed = _GLOB_CHARS.search(word) is not None and not word.startswith("~")
        if base is None and not _absolute(word):
            # Any word may name a file in a directory we cannot know; a secret's name is still one.
            refused = refusal(self.paths.check(word, write=False), word)
            if refused is not None and refused.rule == SECRET_RULE:
                yield refused
            elif _path_like(word, None) or globbed:
                yield Judgement("ask", UNKNOWN_CWD_RULE, f"{word}: the directory after cd is not known")
            return
        if _path_like(word, base):
            yield self._judge_read(word, base)
        else:  # any word, existing or not: a secret's name is enough (the file may appear before the run)
            read = self._judge_read(word, base)
            if read.rule == SECRET_RULE:
                yield read
        if globbed:
            matches = _glob(word, base)
            if matches is None:
                reason = f"{word} matches over {_MAX_GLOB_MATCHES} files, or a directory cannot be read"
                yield Judgement("ask", GLOB_RULE, reason)
            else:
                yield from (self._judge_read(match, base) for match in matches)

    def _judge_read(self, path: str, cwd: Path | None) -> Judgement:
        check = self.paths.check(expand_user(path), write=False, cwd=cwd)
        refused = refusal(check, path)
        if refused is not None:
            return refused
        if check.outside:
            return Judgement("ask", OUTSIDE_RULE, f"{path}: {check.reason}")
        if check.rel is None:
            return Judgement("allow", EXTRA_DIR_RULE, check.reason)
        if ".git" in PurePosixPath(check.rel).parts:
            # Git's internals: config with tokens, hooks. Not in the shadow copy, but readable in
            # workspace mode or without a sandbox (found by an adversarial review: "grep -r url .git/").
            return Judgement("ask", GIT_DIR_READ_RULE, f"{path}: inside a .git directory")
        if expand_user(path).startswith("/"):
            # Commands run in a copy of the workspace; an absolute path names the real tree, which
            # only the sandbox hides (found by an adversarial review: "grep -R x /abs/ws").
            return Judgement("ask", REAL_TREE_RULE, f"{path}: an absolute path into the real workspace")
        return judge("read", check.rel, self.rules)


def refusal(check: PathCheck, path: str) -> Judgement | None:
    """The deny for a path the path policy refuses (a secret, a symlink leaving, a write outside);
    None when it allows ``path``."""
    if check.verdict == "allow":
        return None
    if check.secret:
        return Judgement("deny", SECRET_RULE, check.reason)
    if check.outside:
        return Judgement("deny", OUTSIDE_RULE, check.reason)
    return Judgement("deny", REFUSED_RULE, check.reason or f"{path} is refused")


def expand_user(path: str) -> str:
    """``~user/x`` expanded from the password database; ``~`` and ``~/x`` are left to the path
    policy (it knows the user's home). An unknown user's stays as written, which the path policy
    then reads as relative to the workspace and a missing file there."""
    if path.startswith("~") and not (path == "~" or path.startswith("~/")):
        return os.path.expanduser(path)
    return path


def follow_cd(simple: SimpleCommand, cwd: Cwd) -> None:
    """Move ``cwd`` after ``cd``/``pushd``/``popd``; other commands leave it.

    It becomes unknown (None) for a target that is not a static path (``cd``, ``cd -``, ``popd``,
    ``cd ~/x``, ``cd $D``), and for a relative target when it was already unknown.
    """
    if not simple.argv or simple.argv[0] not in _DIRECTORY_CHANGES:
        return
    targets = [w for w in simple.argv[1:] if not w.startswith("-")]
    target = targets[0] if targets else None
    if target is None or simple.undecoded or EXPANSION.search(target) or target.startswith("~"):
        cwd.path = None
    elif os.path.isabs(target):
        cwd.path = Path(os.path.normpath(target))
    elif cwd.path is not None:
        cwd.path = Path(os.path.normpath(cwd.path / target))


def _path_like(word: str, cwd: Path | None) -> bool:
    if not word or word == "-":
        return False
    if "/" in word or word.startswith((".", "~")):
        return True
    return cwd is not None and os.path.lexists(cwd / word)


def _absolute(word: str) -> bool:
    return word.startswith(("/", "~"))


def _glob(pattern: str, cwd: Path | None) -> list[str] | None:
    """What the shell's pathname expansion could give, relative to ``cwd``; None when there are more
    than ``_MAX_GLOB_MATCHES`` matches or a directory cannot be read.

    Stricter than bash: a wildcard also matches a leading dot (as with ``shopt -s dotglob`` or a
    ``GLOBIGNORE``), and a first component matching ``..`` (``.*``, as bash before 5.2 reads it) adds
    ``..``. Python's ``glob`` with ``include_hidden`` (3.11) does the matching.
    """
    try:
        if os.path.isabs(pattern):
            found: Iterable[str] = glob.iglob(pattern, include_hidden=True)
        elif cwd is not None:
            found = glob.iglob(pattern, root_dir=cwd, include_hidden=True)
        else:
            return None
        matches = list(itertools.islice(found, _MAX_GLOB_MATCHES + 1))
    except (OSError, ValueError, re.error):
        return None
    if len(matches) > _MAX_GLOB_MATCHES:
        return None
    first, slash, rest = pattern.partition("/")
    if first.startswith(".") and first not in (".", "..") and fnmatchcase("..", first):
        matches.append(".." + slash + rest)
    return matches
