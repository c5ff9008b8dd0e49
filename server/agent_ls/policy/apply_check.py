"""The edit rules again at apply time: which files of a proposal the policy would not let the agent edit.

A proposal is checked file by file when the agent makes it (``tools.registry``, the shell runner's
``may_propose``). A proposal read back from the session store (``agent-ls apply``, ``run --continue
--apply``, ``agent.applyProposal`` of a resumed session) is only as trustworthy as the state dir, which
any local program of the user can write: so every file is judged again before anything is written, as
the agent's edit would be: the path policy (a secret file such as ``.env``, a path leaving the workspace)
and the ``edit`` rules (``edit .git/**`` deny, the user's and the workspace's deny rules). An ``ask``
passes (the user applying is the answer); only a deny refuses. Plan mode and the session's approvals play
no part: they govern the agent's edits, not the user's apply.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_ls.policy.engine import PermissionPolicy
from agent_ls.policy.operand_checks import refusal
from agent_ls.policy.rules import judge


def edit_refusal(policy: PermissionPolicy) -> Callable[[str], str | None]:
    """A judge of workspace-relative paths for ``workspace.apply.apply_proposal``: the deciding rule's
    label (``edit: .git/** (built-in)``, ``paths: secret file``) when ``policy`` denies an edit of the
    path, None when it allows or asks (module docstring)."""

    def refused(rel: str) -> str | None:
        check = policy.paths.check(rel, write=True)
        denied = refusal(check, rel)
        if denied is None:
            judgement = judge("edit", check.rel if check.rel is not None else rel, policy.rules)
            denied = judgement if judgement.verdict == "deny" else None
        return None if denied is None else denied.rule

    return refused
