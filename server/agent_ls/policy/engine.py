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
   - an argument that cannot be decoded statically (``$F``, ``$(...)``, ``<(...)``:
     ``SimpleCommand.undecoded``): at least ask, it could name any file;
   - the files it names (``operand_checks.OperandChecks``): each redirection's target and each
     path-like operand (``operands.operands``), resolved from the cwd against the path policy: a
     secret, or a path outside the workspace that a redirect reads or that is written, is deny; a
     word holding an expansion is at least ask; a write into the workspace is an edit, at least
     ask, under the ``edit`` rules; a read inside it goes through the ``read`` rules;
3. the input's verdict is the strictest over its commands; a parse error adds an unliftable ask
   ("fallback: cannot read: ..."), and an empty input is ask.

The shell's cwd is the workspace root; ``cd DIR`` (``pushd``, ``popd``) moves it for the commands
after it (``operand_checks.follow_cd``).

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

In plan mode (``PermissionPolicy.plan_mode``, set for the length of a plan run, issue 17), edits are
refused by the policy, not by a prompt: an edit of a file (``check_path(write=True)``) and an MCP tool are
"deny" under ``PLAN_RULE``; a command keeps only the same built-in read-only allow rules, and any command
they do not allow (a redirect into a file, ``rm``, ``pytest``, an unknown command) is "deny" under
``PLAN_RULE`` instead of "ask". No approval lifts it: neither "Allow for this session" nor the user's own
allow rules. Reads are judged as in any run.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from agent_ls.core.events import Verdict
from agent_ls.policy.operand_checks import (
    DYNAMIC_ARGUMENT_RULE,
    DYNAMIC_TARGET_RULE,
    EXPANSION,
    GLOB_RULE,
    OUTSIDE_RULE,
    REDIRECT_RULE,
    TEXT_REDIRECTS,
    UNKNOWN_CWD_RULE,
    WRITE_OPTION_RULE,
    Cwd,
    OperandChecks,
    expand_user,
    follow_cd,
    refusal,
)
from agent_ls.policy.project_code import runs_project_code
from agent_ls.policy.rules import (
    BUILT_IN,
    BUILTIN_RULES,
    FALLBACK_RULE,
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
from agent_ls.policy.user_rules import USER_SOURCE, ShellMode
from agent_ls.workspace.paths import PathPolicy

SESSION_RULE = "session: allowed by the user"
EMPTY_RULE = "fallback: empty command"
NOT_STATIC_RULE = "guard: command word not static"
RISKY_RULE = "guard: can execute or write"
NO_SANDBOX_RULE = "guard: no sandbox"
NO_SANDBOX_REASON = "no sandbox: this runs code from the workspace, including the agent's changes"
PLAN_RULE = "plan mode: edits are refused until the plan is approved"
PLAN_COMMAND_REASON = (
    "plan mode: edits are refused until the plan is approved; only read-only commands run "
    "(ls, cat, grep, git status, git diff, without redirects into files)"
)
_ENGINE_ASKS = frozenset(
    {EMPTY_RULE, NOT_STATIC_RULE, RISKY_RULE, DYNAMIC_ARGUMENT_RULE, DYNAMIC_TARGET_RULE, UNKNOWN_CWD_RULE}
    | {GLOB_RULE, OUTSIDE_RULE, REDIRECT_RULE, WRITE_OPTION_RULE, NO_SANDBOX_RULE}
)

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

    Attributes:
        plan_mode: True for the length of a plan run (module docstring); the session sets and clears it.
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
        self.plan_mode = False
        self._session: set[str] = set()

    # -- shell commands ----------------------------------------------------------------------------

    def check_command(self, command: str) -> Decision:
        """Judge a shell command (module docstring); never raises."""
        # The shell parser and the wrapper grammar are loaded by the first command (start-up time).
        from agent_ls.policy.shell_parse import parse_shell

        parsed = parse_shell(command)
        cwd = Cwd(self.paths.root)
        parts: list[str] = []
        exact: list[str] = []
        judgements: list[Judgement] = []
        for simple in parsed.commands:
            parts.append(simple.normalized)
            exact.append(quoted_command(simple.argv))
            judgements.append(self._judge_command(simple, cwd))
            follow_cd(simple, cwd)
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

    def _judge_command(self, simple: SimpleCommand, cwd: Cwd) -> Judgement:
        quoted = quoted_command(simple.argv)
        found = [judge("bash", simple.normalized, self._bash_rules(), quoted=quoted)]
        if not simple.static:
            reason = f"the command word of {simple.text!r} cannot be known before it runs"
            found.append(Judgement("ask", NOT_STATIC_RULE, reason))
        if simple.risky:
            found.append(Judgement("ask", RISKY_RULE, f"{simple.text!r}: {simple.risky}"))
        from agent_ls.policy.wrapped_rules import wrapped_judgements  # loaded by the first command

        found.extend(wrapped_judgements(simple, self.rules))
        if simple.undecoded:
            unknown = simple.argv[simple.undecoded[0]]
            found.append(Judgement("ask", DYNAMIC_ARGUMENT_RULE, f"{unknown} is not known before it runs"))
        if not self.sandboxed and runs_project_code(simple):
            found.append(Judgement("ask", NO_SANDBOX_RULE, f"{NO_SANDBOX_REASON} ({simple.text!r})"))
        found.extend(OperandChecks(self.paths, self.rules).judge(simple, cwd))
        return strictest(found)

    def _bash_rules(self) -> list[Rule]:
        if self.shell_mode == "shadow" and not self.plan_mode:
            return list(self.rules)
        return [r for r in self.rules if not (r.key == "bash" and r.verdict == "allow") or _read_only(r)]

    # -- files and tools ---------------------------------------------------------------------------

    def check_path(self, rel: str, write: bool) -> Decision:
        """Judge a read (``write=False``) or an edit of ``rel``, a path the workspace already resolved.

        Args:
            rel: workspace-relative POSIX path (``"."`` for the root), or an absolute path in an
                allowed extra directory.
        """
        key = "edit" if write else "read"
        if write and self.plan_mode:
            refused = Judgement("deny", PLAN_RULE, f"{PLAN_RULE} (edit of {rel})")
            return Decision("deny", PLAN_RULE, (rel,), rel, refused.reason, (refused,), f"edit:{rel}")
        judgement = judge(key, rel, self.rules)
        return self._decide(rel, (rel,), (judgement,), f"{key}:{rel}", file_key=key)

    def check_access(self, path: str, write: bool) -> Decision:
        """Judge a file access by a path as given (``agent-ls policy check --path``): the path policy
        (secrets, outside, symlinks), then ``check_path``."""
        check = self.paths.check(expand_user(path), write=write)
        refused = refusal(check, path)
        if refused is None and check.outside:
            refused = Judgement("deny", OUTSIDE_RULE, check.reason)
        if refused is not None:
            return Decision(refused.verdict, refused.rule, (path,), path, refused.reason, (refused,))
        decision = self.check_path(check.rel if check.rel is not None else check.path, write)
        return replace(decision, subject=path)

    def read_denied(self) -> Callable[[str], bool] | None:
        """The test of a workspace-relative path whose read is denied, for the tools that show files
        without reading each one (grep's hits, list_files's entries); None when no ``read`` rule denies.

        A path is denied when a ``read`` deny rule matches it (``Rule.matches``): deny is the strictest
        verdict, so no other rule or approval can change ``check_path``'s answer then. Claude Code
        likewise hides the paths its ``Read(...)`` deny rules name from Grep and Glob.
        """
        denying = tuple(rule for rule in self.rules if rule.key == "read" and rule.verdict == "deny")
        if not denying:
            return None
        return lambda rel: any(rule.matches(rel) for rule in denying)

    def check_tool(
        self,
        name: str,
        *,
        read_only: bool | None = None,
        destructive: bool | None = None,
        definition: str = "",
    ) -> Decision:
        """Judge an MCP tool call by the ``mcp__<server>[__<tool>]`` rules (no rule: ask); in plan mode,
        deny (an MCP tool may write anything).

        Args:
            name: the tool's rule name (``mcp__<server>__<tool>``, never cut).
            read_only, destructive: the server's annotations. Hints, not permissions (MCP 2025-11-25,
                "Tool annotations": clients must not rely on them from untrusted servers): they only word
                the question, and a destructive tool gets no "Always allow" (a rule the user writes
                still allows it).
            definition: a digest of the tool's listed definition; the session approval holds for it only,
                so a tool that a listChanged added or changed never inherits an earlier one.
        """
        key = f"tool:{name}#{definition}" if definition else f"tool:{name}"
        if self.plan_mode:
            refused = Judgement("deny", PLAN_RULE, f"{PLAN_RULE} (MCP tools may write)")
            return Decision("deny", PLAN_RULE, (name,), name, refused.reason, (refused,), key)
        judgement = judge(name, name, self.rules)
        if judgement.rule == FALLBACK_RULE:
            hint = "; the server says it only reads (a hint, not checked)" if read_only else ""
            if destructive and not read_only:
                hint = "; the server says it may destroy data"
            judgement = replace(judgement, reason=f"no rule matches {name}{hint}")
        decision = self._decide(name, (name,), (judgement,), key, file_key=name)
        if destructive and not read_only and decision.always:
            why = "the server marks this tool destructive: write an allow rule yourself if you mean it"
            return replace(decision, always=(), no_always=why)
        return decision

    # -- approvals ---------------------------------------------------------------------------------

    def allow_for_session(self, decision: Decision) -> None:
        """Remember the user's "Allow for this session" for ``decision.key``."""
        self._session.add(decision.key)

    def session_approvals(self) -> tuple[str, ...]:
        """The keys allowed for this session so far (sorted), for the session store."""
        return tuple(sorted(self._session))

    def restore_session_approvals(self, keys: Iterable[str]) -> None:
        """Allow ``keys`` for this session again (a session resumed from the store)."""
        self._session.update(keys)

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
        if self.plan_mode and file_key == "bash" and decided.verdict != "allow":
            # Keep the policy's own reason (an absolute path, a .git operand, no rule matches): a read-only
            # variant (``ls .`` for ``ls /abs/path``) may well be allowed, and the model needs to know why.
            underlying = decided.reason or decided.rule
            reason = f"{PLAN_COMMAND_REASON}; {underlying}" if underlying else PLAN_COMMAND_REASON
            refused = Judgement("deny", PLAN_RULE, reason)
            return Decision("deny", PLAN_RULE, parts, subject, reason, (*judgements, refused), key)
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
        and not any(EXPANSION.search(word) for word in simple.argv)
        and all(map(_keyable_redirect, simple.redirects))
        and not _ASSIGNMENT.search(simple.text)
    )


def _keyable_redirect(redirect: Redirect) -> bool:
    if redirect.harmless:
        return redirect.op not in TEXT_REDIRECTS
    return redirect.target is not None and not EXPANSION.search(redirect.target)


def _read_only(rule: Rule) -> bool:
    """A built-in bash allow rule kept in ``shell.mode = "workspace"`` (``rules.WORKSPACE_MODE_BASH``)."""
    return rule.source == BUILT_IN and rule.pattern in WORKSPACE_MODE_BASH
