"""The permission engine: allow, ask or deny for a shell command, a file access or an MCP tool.

Shell commands (``check_command``), in order:

1. parse with tree-sitter-bash (``shell_parse.parse_shell``) into every simple command the input
   would execute, normalized (wrappers unwrapped, ``VAR=x`` prefixes and git global options removed);
2. judge each simple command separately, as the strictest of:
   - the ``bash`` rules on its normalized text (``rules.judge``: deny > ask > allow over all matching
     rules, no match is the fallback ask); deny and ask rules also on each wrapper form it had, and a
     deny for a later word that starts a denied command (``wrapped_rules``);
   - a command word that cannot be resolved statically (``$CMD``): at least ask;
   - a "risky" command (``git -c``, ``--ext-diff``, pager variables, brace expansion...): at least ask;
   - each redirection that touches a file (``2>&1``, ``/dev/null`` and heredocs do not): a target
     that cannot be known is at least ask; one outside the workspace or a secret is deny (read or
     write); a write into the workspace is an edit, at least ask (built-in), and the ``edit`` rules
     apply; a read inside the workspace goes through the ``read`` rules;
   - each operand that looks like a path (``operands.operands``: non-option words, option values,
     the text after each letter of a short-option cluster (``grep -f.env``), git's ``HEAD:path``
     and ``:(top)path``, ``pytest @file``; one that contains ``/``, starts with ``.`` or ``~``,
     names an existing entry, or is a glob matching some; a piece cut out of a word also when it
     has a secret's name): a secret, or a symlink chain that leaves the workspace, is deny; outside
     the workspace is at least ask; inside, the ``read`` rules apply. A glob is expanded against
     the workspace, dotfiles included (stricter than bash), and every match checked; one that
     matches over 1000 entries or cannot be read is at least ask. An argument that cannot be decoded
     statically (``$F``, ``$(...)``, ``<(...)``: ``SimpleCommand.undecoded``) is at least ask: it
     could name any file;
   - each file an option writes (pytest's ``--junitxml``, ``--basetemp``...; ``operands``): like a
     redirect's target, deny outside the workspace or for a secret, else an edit (at least ask);
3. the input's verdict is the strictest over its commands; a parse error adds an unliftable ask
   ("fallback: cannot read: ..."), and an empty input is ask.

After ``cd DIR`` (``pushd``), later relative paths start from DIR; after a ``cd`` whose target is not
static, relative path-like arguments are at least ask, and any argument named like a secret
(``id_rsa``) is deny. The shell's cwd is the workspace root.

Files (``check_path``): the ``read``/``edit`` rules on a workspace-relative path the workspace has
already resolved (outside paths and secrets were refused there). ``check_access`` does both steps,
for ``agent-ls policy check --path``.

Approvals: an ask answered "session" is remembered under ``Decision.key`` and allowed again without
asking. For a command the key is each simple command's argv quoted by ``shlex.join`` (word boundaries
kept: ``echo "hi >x"`` is not ``echo hi >x``) with its redirections; when that would hide part of
what runs (an expansion, a heredoc's text, a risky part such as ``./make``, a ``NAME=x`` prefix, a
parse error) it is the input exactly as written. For a file it is ``read:``/``edit:`` plus the path.
"always" adds ``Decision.always`` (exact allow rules on the quoted form, ``rules.quoted_command``) to
the user config and to this policy. Neither lifts a deny, and "always" is only offered when every ask
came from the fallback.

In ``shell.mode = "workspace"`` (commands run in the real tree), the only ``bash`` allow rules kept
are the built-in read-only ones (``rules.WORKSPACE_MODE_BASH``: ``ls*``, ``cat *``, ``grep *``,
``git status*``, ``git diff*``), so anything else asks, ``pytest`` included.
"""

from __future__ import annotations

import glob
import itertools
import os
import re
import shlex
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from agent_ls.core.events import Verdict
from agent_ls.policy.operands import Operand, operands
from agent_ls.policy.project_code import runs_project_code
from agent_ls.policy.rules import (
    BUILT_IN,
    BUILTIN_RULES,
    WORKSPACE_MODE_BASH,
    Judgement,
    Rule,
    exact_bash_pattern,
    exact_path_pattern,
    judge,
    quoted_command,
    strictest,
)
from agent_ls.policy.shell_commands import ParsedShell, Redirect, SimpleCommand
from agent_ls.policy.shell_parse import parse_shell
from agent_ls.policy.user_rules import USER_SOURCE, ShellMode
from agent_ls.policy.wrapped_rules import wrapped_judgements
from agent_ls.workspace.paths import PathCheck, PathPolicy

SESSION_RULE = "session: allowed by the user"
REDIRECT_RULE = "edit: shell redirect into the workspace (built-in)"
WRITE_OPTION_RULE = "edit: an option writes into the workspace (built-in)"
EMPTY_RULE = "fallback: empty command"
NOT_STATIC_RULE = "guard: command word not static"
RISKY_RULE = "guard: can execute or write"
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
NO_SANDBOX_RULE = "guard: no sandbox"
NO_SANDBOX_REASON = "no sandbox: this runs code from the workspace, including the agent's changes"
_ENGINE_ASKS = frozenset(
    {EMPTY_RULE, NOT_STATIC_RULE, RISKY_RULE, DYNAMIC_ARGUMENT_RULE, DYNAMIC_TARGET_RULE, UNKNOWN_CWD_RULE}
    | {GLOB_RULE, OUTSIDE_RULE, REDIRECT_RULE, WRITE_OPTION_RULE, NO_SANDBOX_RULE}
)

# An unescaped expansion in a word kept as written: $NAME, ${...}, $(...), $1, $@, or a backtick.
_EXPANSION = re.compile(r"\$[A-Za-z_{(0-9@*#?!$-]|`")
# Heredocs and here-strings feed text, not a file.
_TEXT_REDIRECTS = frozenset({"<<", "<<-", "<<<"})
_DIRECTORY_CHANGES = frozenset({"cd", "pushd", "popd"})
_GLOB_CHARS = re.compile(r"[*?[]")
_MAX_GLOB_MATCHES = 1000
# An assignment word (``NAME=``, ``NAME+=``): a prefix one changes what the command does unseen in argv.
_ASSIGNMENT = re.compile(r"(?:^|[\s;&|(])[A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?\+?=")

WriteRules = Callable[[Sequence[str]], None]
"""Appends allow rule strings to the user config (``approvals.append_allow_rules``); raises OSError
or ValueError when it cannot."""


@dataclass(frozen=True)
class Decision:
    """The policy's answer for one tool call.

    Attributes:
        verdict: allow, ask or deny.
        rule: the deciding label: a rule's (``bash: rm * (built-in)``), ``fallback: no rule matches``,
            or an engine check's (``paths: secret file``, ``guard: command word not static``).
        parts: what was judged, in order: the normalized simple commands (with the raw input last when
            it could not be fully read), or the one path.
        subject: the command or the path, as given.
        reason: one line for the user (``no rule matches "make build"``).
        judgements: the verdict of each part, in the order of ``parts``.
        key: the session-approval key: the normalized commands and their redirections, or
            ``read:<path>`` / ``edit:<path>``.
        always: for an ask that only the fallback caused, the exact allow rules an "Always allow"
            adds; empty otherwise.
        no_always: for an ask that "always" cannot lift, why (for the prompt); "" otherwise.
    """

    verdict: Verdict
    rule: str
    parts: tuple[str, ...]
    subject: str
    reason: str = ""
    judgements: tuple[Judgement, ...] = ()
    key: str = ""
    always: tuple[Rule, ...] = ()
    no_always: str = ""


@dataclass
class _Cwd:
    """Where relative paths start: a directory, or None after a ``cd`` to a place not known statically."""

    path: Path | None


class PermissionPolicy:
    """Decides tool calls for one session and keeps its approvals (module docstring).

    Args:
        paths: the path policy of the session's workspace (secrets, roots, symlinks); relative paths
            in commands start from its first root.
        rules: every rule, from every source (built-in first, then user config, workspace config,
            editor settings); order does not change any verdict.
        shell_mode: ``shadow`` or ``workspace`` (see the module docstring).
        write_rules: how "always" reaches the user config, or None when it cannot (then "always" is
            not offered).
        sandboxed: False when commands run without a sandbox: a command that may run workspace code
            (``project_code.runs_project_code``) is then never allowed by a rule, only by the user. The
            session sets it once the sandbox has been looked for; until then commands count as
            sandboxed only if the caller said so.
    """

    def __init__(
        self,
        paths: PathPolicy,
        rules: Iterable[Rule] = BUILTIN_RULES,
        *,
        shell_mode: ShellMode = "shadow",
        write_rules: WriteRules | None = None,
        sandboxed: bool = True,
    ) -> None:
        self.paths = paths
        self.rules = list(rules)
        self.shell_mode = shell_mode
        self.write_rules = write_rules
        self.sandboxed = sandboxed
        self._session: set[str] = set()

    # -- shell commands ----------------------------------------------------------------------------

    def check_command(self, command: str) -> Decision:
        """Judge a shell command (module docstring); never raises."""
        parsed = parse_shell(command)
        cwd = _Cwd(self.paths.root)
        parts: list[str] = []
        exact: list[str] = []
        judgements: list[Judgement] = []
        for simple in parsed.commands:
            parts.append(simple.normalized)
            exact.append(quoted_command(simple.argv))
            judgements.append(self._judge_command(simple, cwd))
            _follow_cd(simple, cwd)
        if parsed.error is not None:
            parts.append(command)
            judgements.append(
                Judgement("ask", f"fallback: cannot read: {parsed.error}", f"cannot read: {parsed.error}")
            )
        if not parts:
            parts.append(command)
            judgements.append(Judgement("ask", EMPTY_RULE, "the command is empty"))
        key = _session_key(parsed, command)
        return self._decide(command, tuple(parts), tuple(judgements), key, exact=tuple(exact))

    def _judge_command(self, simple: SimpleCommand, cwd: _Cwd) -> Judgement:
        quoted = quoted_command(simple.argv)
        found = [judge("bash", simple.normalized, self._bash_rules(), quoted=quoted)]
        if not simple.static:
            reason = f"the command word of {simple.text!r} cannot be known before it runs"
            found.append(Judgement("ask", NOT_STATIC_RULE, reason))
        if simple.risky:
            found.append(Judgement("ask", RISKY_RULE, f"{simple.text!r}: {simple.risky}"))
        found.extend(wrapped_judgements(simple, self.rules))
        if simple.undecoded:
            unknown = simple.argv[simple.undecoded[0]]
            found.append(Judgement("ask", DYNAMIC_ARGUMENT_RULE, f"{unknown} is not known before it runs"))
        if not self.sandboxed and runs_project_code(simple):
            found.append(Judgement("ask", NO_SANDBOX_RULE, f"{NO_SANDBOX_REASON} ({simple.text!r})"))
        found.extend(
            self._judge_redirect(r, cwd)
            for r in simple.redirects
            if not r.harmless and r.op not in _TEXT_REDIRECTS
        )
        for operand in operands(simple.argv):
            if operand.write:
                found.append(self._judge_written(operand.text, cwd, WRITE_OPTION_RULE, operand.text))
            else:
                found.extend(self._judge_operand(operand, cwd))
        return strictest(found)

    def _bash_rules(self) -> list[Rule]:
        if self.shell_mode == "shadow":
            return list(self.rules)
        return [r for r in self.rules if not (r.key == "bash" and r.verdict == "allow") or _read_only(r)]

    def _judge_redirect(self, redirect: Redirect, cwd: _Cwd) -> Judgement:
        target = redirect.target
        if target is None or _EXPANSION.search(target):
            return Judgement(
                "ask", DYNAMIC_TARGET_RULE, f"the target of {redirect.op} is not known statically"
            )
        if redirect.write:
            return self._judge_written(target, cwd, REDIRECT_RULE, f"{redirect.op} {target}")
        if cwd.path is None and not _absolute(target):
            return Judgement("ask", UNKNOWN_CWD_RULE, f"{target}: the directory after cd is not known")
        check = self.paths.check(_expand_user(target), write=False, cwd=cwd.path)
        refused = _refusal(check, target)
        if refused is not None:
            return refused
        if check.outside:  # a read redirect from outside the workspace: file rules cannot reach it
            return Judgement("deny", OUTSIDE_RULE, f"{redirect.op} {target}: {check.reason}")
        if check.rel is None:  # an allowed extra directory (read only)
            return Judgement("allow", EXTRA_DIR_RULE, check.reason)
        return judge("read", check.rel, self.rules)

    def _judge_written(self, target: str, cwd: _Cwd, rule: str, shown: str) -> Judgement:
        """A file the command writes (a redirect's target, an output option's value): deny outside the
        workspace and for a secret; inside it is an edit, at least ask (``rule``), and the ``edit``
        rules apply."""
        if _EXPANSION.search(target):
            return Judgement("ask", DYNAMIC_TARGET_RULE, f"{shown}: the file written is not known statically")
        if cwd.path is None and not _absolute(target):
            return Judgement("ask", UNKNOWN_CWD_RULE, f"{target}: the directory after cd is not known")
        check = self.paths.check(_expand_user(target), write=True, cwd=cwd.path)
        refused = _refusal(check, target)
        if refused is not None:
            return refused
        if check.rel is None:  # not reached: the path policy refuses every write outside the roots
            return Judgement("deny", OUTSIDE_RULE, f"{shown}: {check.reason}")
        rules = judge("edit", check.rel, self.rules)
        return strictest([rules, Judgement("ask", rule, f"{shown} writes {check.rel} (an edit)")])

    def _judge_operand(self, operand: Operand, cwd: _Cwd) -> Iterator[Judgement]:
        yield from self._judge_argument(operand.text, cwd.path, derived=operand.derived)
        if operand.top and cwd.path != self.paths.root and not _absolute(operand.text):
            yield from self._judge_argument(operand.text, self.paths.root, derived=True)

    def _judge_argument(self, word: str, base: Path | None, *, derived: bool = False) -> Iterator[Judgement]:
        if not word or word == "-":
            return
        if _EXPANSION.search(word):
            yield Judgement("ask", DYNAMIC_ARGUMENT_RULE, f"{word} may name any file once expanded")
            return
        globbed = _GLOB_CHARS.search(word) is not None and not word.startswith("~")
        if base is None and not _absolute(word):
            # Any word may name a file in a directory we cannot know; a secret's name is still one.
            refused = _refusal(self.paths.check(word, write=False), word)
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
        check = self.paths.check(_expand_user(path), write=False, cwd=cwd)
        refused = _refusal(check, path)
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
        if _expand_user(path).startswith("/"):
            # Commands run in a copy of the workspace; an absolute path names the real tree, which
            # only the sandbox hides (found by an adversarial review: "grep -R x /abs/ws").
            return Judgement("ask", REAL_TREE_RULE, f"{path}: an absolute path into the real workspace")
        return judge("read", check.rel, self.rules)

    # -- files and tools ---------------------------------------------------------------------------

    def check_path(self, rel: str, write: bool) -> Decision:
        """Judge a read (``write=False``) or an edit of ``rel``, a path the workspace already resolved.

        Args:
            rel: workspace-relative POSIX path (``"."`` for the root), or an absolute path in an
                allowed extra directory.
        """
        key = "edit" if write else "read"
        judgement = judge(key, rel, self.rules)
        return self._decide(rel, (rel,), (judgement,), f"{key}:{rel}", file_key=key)

    def check_access(self, path: str, write: bool) -> Decision:
        """Judge a file access by a path as given (``agent-ls policy check --path``): the path policy
        (secrets, outside, symlinks), then ``check_path``."""
        check = self.paths.check(_expand_user(path), write=write)
        refused = _refusal(check, path)
        if refused is None and check.outside:
            refused = Judgement("deny", OUTSIDE_RULE, check.reason)
        if refused is not None:
            return Decision(refused.verdict, refused.rule, (path,), path, refused.reason, (refused,))
        decision = self.check_path(check.rel if check.rel is not None else check.path, write)
        return replace(decision, subject=path)

    def check_tool(self, name: str) -> Decision:
        """Judge an MCP tool call by the ``mcp__<server>__<tool>`` rules."""
        judgement = judge(name, name, self.rules)
        return self._decide(name, (name,), (judgement,), f"tool:{name}", file_key=name)

    # -- approvals ---------------------------------------------------------------------------------

    def allow_for_session(self, decision: Decision) -> None:
        """Remember the user's "Allow for this session" for ``decision.key``."""
        self._session.add(decision.key)

    def allow_always(self, decision: Decision) -> str | None:
        """Add ``decision.always`` to the user config and to this policy.

        Returns:
            None when written; else one line saying why not (the rules still apply for this session).
        """
        if not decision.always:
            return decision.no_always or "there is no rule to write"
        self.rules.extend(decision.always)
        self._session.add(decision.key)
        if self.write_rules is None:
            return "the user config cannot be written"
        try:
            self.write_rules([rule.text for rule in decision.always])
        except (OSError, ValueError) as exc:
            return f"the user config could not be written: {exc}"
        return None

    def _decide(
        self,
        subject: str,
        parts: tuple[str, ...],
        judgements: tuple[Judgement, ...],
        key: str,
        *,
        file_key: str = "bash",
        exact: tuple[str, ...] = (),
    ) -> Decision:
        decided = strictest(judgements)
        if decided.verdict == "ask" and key in self._session:
            return Decision(
                "allow", SESSION_RULE, parts, subject, "allowed earlier for this session", judgements, key
            )
        decision = Decision(decided.verdict, decided.rule, parts, subject, decided.reason, judgements, key)
        if decided.verdict != "ask":
            return decision
        blocking = [j for j in judgements if j.verdict == "ask" and not j.liftable]
        if blocking:
            return replace(decision, no_always=_no_always(blocking[0]))
        if self.shell_mode == "workspace" and file_key == "bash":
            reason = 'in shell.mode = "workspace" only the built-in read-only rules allow commands'
            return replace(decision, no_always=reason)
        if self.write_rules is None:
            return replace(decision, no_always="the user config cannot be written")
        # Exact rules match the quoted form of a command (``exact``), so a word keeps its boundaries.
        subjects = exact + parts[len(exact) :]
        asked = dict.fromkeys(p for p, j in zip(subjects, judgements, strict=True) if j.verdict == "ask")
        always = tuple(_exact_rule(file_key, part) for part in asked)
        return replace(decision, always=always)


def _no_always(judgement: Judgement) -> str:
    if judgement.rule in _ENGINE_ASKS or judgement.rule.startswith("fallback:"):
        return f"an allow rule cannot lift this ask ({judgement.reason})"
    return f"an explicit rule asks ({judgement.rule}), and 'always' never lifts an ask or deny rule"


def _exact_rule(key: str, subject: str) -> Rule:
    if key == "bash":
        return Rule("bash", exact_bash_pattern(subject), "allow", USER_SOURCE)
    if key in ("read", "edit"):
        return Rule(key, exact_path_pattern(subject), "allow", USER_SOURCE)
    return Rule(key, "*", "allow", USER_SOURCE)


def _refusal(check: PathCheck, path: str) -> Judgement | None:
    """The deny for a path the path policy refuses (a secret, a symlink leaving, a write outside)."""
    if check.verdict == "allow":
        return None
    if check.secret:
        return Judgement("deny", SECRET_RULE, check.reason)
    if check.outside:
        return Judgement("deny", OUTSIDE_RULE, check.reason)
    return Judgement("deny", REFUSED_RULE, check.reason or f"{path} is refused")


def _session_key(parsed: ParsedShell, command: str) -> str:
    """What "Allow for this session" remembers: each command's argv, quoted (``shlex.join``, so
    ``find . -name "*.tmp -delete"`` is not ``find . -name *.tmp -delete``), with its redirections
    (operator and quoted target); or, when that would hide part of what runs (module docstring), the
    input exactly as written, in its own namespace."""
    if parsed.error is not None or not parsed.commands or not all(map(_keyable, parsed.commands)):
        return "bash-text:" + command
    described = (
        shlex.join(simple.argv)
        + "".join(f" {r.op}{shlex.quote(r.target or '')}" for r in simple.redirects if not r.harmless)
        for simple in parsed.commands
    )
    return "bash:" + "\n".join(described)


def _keyable(simple: SimpleCommand) -> bool:
    """Whether the quoted argv and redirections say all ``simple`` does: not for a command word or an
    argument known only when it runs, a heredoc's or here-string's text, a risky part (``./make``,
    ``LD_PRELOAD=``), or an assignment (a prefix ``NAME=x`` is dropped from argv)."""
    return (
        simple.static
        and simple.risky is None
        and not simple.undecoded
        and not any(_EXPANSION.search(word) for word in simple.argv)
        and all(map(_keyable_redirect, simple.redirects))
        and not _ASSIGNMENT.search(simple.text)
    )


def _keyable_redirect(redirect: Redirect) -> bool:
    if redirect.harmless:
        return redirect.op not in _TEXT_REDIRECTS
    return redirect.target is not None and not _EXPANSION.search(redirect.target)


def _read_only(rule: Rule) -> bool:
    """A built-in bash allow rule kept in ``shell.mode = "workspace"`` (``rules.WORKSPACE_MODE_BASH``)."""
    return rule.source == BUILT_IN and rule.pattern in WORKSPACE_MODE_BASH


def _path_like(word: str, cwd: Path | None) -> bool:
    if not word or word == "-":
        return False
    if "/" in word or word.startswith((".", "~")):
        return True
    return cwd is not None and os.path.lexists(cwd / word)


def _absolute(word: str) -> bool:
    return word.startswith(("/", "~"))


def _expand_user(path: str) -> str:
    """``~user/x`` expanded from the password database; ``~`` and ``~/x`` are left to the path
    policy (it knows the user's home). An unknown user's stays as written, which the path policy
    then reads as relative to the workspace and a missing file there."""
    if path.startswith("~") and not (path == "~" or path.startswith("~/")):
        return os.path.expanduser(path)
    return path


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


def _follow_cd(simple: SimpleCommand, cwd: _Cwd) -> None:
    """Move ``cwd`` after ``cd``/``pushd``/``popd``.

    It becomes unknown (None) for a target that is not a static path (``cd``, ``cd -``, ``popd``,
    ``cd ~/x``, ``cd $D``), and for a relative target when it was already unknown.
    """
    if not simple.argv or simple.argv[0] not in _DIRECTORY_CHANGES:
        return
    targets = [w for w in simple.argv[1:] if not w.startswith("-")]
    target = targets[0] if targets else None
    if target is None or simple.undecoded or _EXPANSION.search(target) or target.startswith("~"):
        cwd.path = None
    elif os.path.isabs(target):
        cwd.path = Path(os.path.normpath(target))
    elif cwd.path is not None:
        cwd.path = Path(os.path.normpath(cwd.path / target))
