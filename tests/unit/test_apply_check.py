"""The edit rules judged again at apply time (``policy.apply_check``; issue 16, finding F6): a stored
proposal's file the agent could never have edited (a Git hook, a secret file, a path out of the workspace,
a file a deny rule names) refuses the whole apply, naming each file and its rule; ``ask`` passes."""

from __future__ import annotations

from pathlib import Path

from agent_ls.core.proposal import FileChange
from agent_ls.policy.apply_check import edit_refusal
from agent_ls.policy.engine import PermissionPolicy
from agent_ls.policy.rules import BUILTIN_RULES, parse_rule
from agent_ls.workspace.apply import apply_proposal
from agent_ls.workspace.paths import PathPolicy


def _policy(root: Path) -> PermissionPolicy:
    deny = parse_rule("edit: generated/**", "deny", "user config")
    return PermissionPolicy(PathPolicy(root), (*BUILTIN_RULES, deny))


def test_hooks_secrets_outside_paths_and_denied_files_are_refused_and_the_rest_allowed(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    judge = edit_refusal(_policy(tmp_path))
    for path in (".git/hooks/pre-commit", ".git/config", ".env", "../outside.txt", "generated/x.py"):
        assert judge(path), path
    for path in ("src/app.py", "README.md", ".github/workflows/ci.yml"):
        assert judge(path) is None, path


def test_one_refused_file_refuses_the_whole_apply_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    changes = [
        FileChange("a.txt", True, "", None, "new\n"),
        FileChange(".git/hooks/pre-commit", True, "", None, "#!/bin/sh\n"),
    ]
    outcome = apply_proposal(tmp_path, changes, edit_refusal=edit_refusal(_policy(tmp_path)))
    assert not outcome.applied
    assert outcome.message.startswith(
        "not applying, nothing written: the edit rules refuse .git/hooks/pre-commit"
    )
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / ".git" / "hooks" / "pre-commit").exists()
