"""The permission policy: allow, ask or deny for a shell command or a workspace path, per session.

Commands: the command is split into parts (``shell_split``), each part is judged by the bash rules,
and the strictest verdict wins (deny > ask > allow). A command the splitter cannot fully read is at
least "ask". A command the user allowed "for this session" is allowed again without asking, unless a
rule denies it. Paths: reads and edits inside the workspace are allowed (edits are proposals the user
reviews); the workspace's ``resolve`` has already refused outside paths and secret files.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_ls.policy.rules import DEFAULT_BASH_RULES, Decision, Judgement, Rule, judge_part, strictest
from agent_ls.policy.shell_split import split_command

SESSION_RULE = "session: allowed by the user"
READ_RULE = "read: workspace"
EDIT_RULE = "edit: workspace (proposal)"
GIT_DIR_RULE = "edit: .git/** (never)"


def normalize_command(command: str) -> str:
    """The key of a session approval: the command with runs of whitespace collapsed to one space."""
    return " ".join(command.split())


class PermissionPolicy:
    """Decides tool calls for one session and remembers the commands allowed for the session.

    Args:
        bash_rules: the rules for shell commands; order does not matter (strictest match wins).
    """

    def __init__(self, bash_rules: Sequence[Rule] = DEFAULT_BASH_RULES) -> None:
        self._bash_rules = tuple(bash_rules)
        self._session_commands: set[str] = set()

    def check_command(self, command: str) -> Decision:
        """Judge a shell command: the strictest verdict over its parts.

        Returns:
            A ``Decision`` whose ``rule`` is the label of the rule that decided the strictest part
            (``bash: rm *``), ``fallback: ...`` when no rule matched or the command could not be read,
            or ``SESSION_RULE`` when an "ask" was turned into "allow" by an earlier session approval.
        """
        split = split_command(command)
        judgements = [judge_part(part, self._bash_rules) for part in split.parts]
        if split.problem is not None:
            judgements.append(Judgement("ask", f"fallback: {split.problem}", f"cannot read: {split.problem}"))
        if not judgements:
            judgements.append(Judgement("ask", "fallback: empty command", "the command is empty"))
        decided = strictest(judgements)
        if decided.verdict == "ask" and normalize_command(command) in self._session_commands:
            return Decision("allow", SESSION_RULE, split.parts, command, "allowed earlier for this session")
        return Decision(decided.verdict, decided.rule, split.parts, command, decided.reason)

    def allow_for_session(self, command: str) -> None:
        """Remember the user's "Allow for this session" for ``command`` (whitespace-normalized)."""
        self._session_commands.add(normalize_command(command))

    def check_path(self, rel: str, write: bool) -> Decision:
        """Judge a read (``write=False``) or an edit of a resolved workspace-relative path.

        Reads and edits inside the workspace are allowed (edits are proposals the user reviews), except
        edits inside ``.git/``: hooks and config there run code on the user's next git command, and a
        reviewer rarely reads them.
        """
        if write and (rel.casefold() == ".git" or rel.casefold().startswith(".git/")):
            return Decision("deny", GIT_DIR_RULE, (rel,), rel, "the .git directory is not editable")
        rule = EDIT_RULE if write else READ_RULE
        return Decision("allow", rule, (rel,), rel, "inside the workspace")
