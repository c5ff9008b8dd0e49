"""The shell-command corpus (``../shared/corpus/shell-commands``) against the permission engine.

Every case must get a verdict in its ``acceptable`` set, and none may be allowed when ``expected`` is
ask or deny. The engine runs on a real workspace laid out as the cases assume (``notes.txt``,
``src/app.py``, a ``.env``), with the built-in rules (the README's policy table) only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_ls.policy.engine import PermissionPolicy
from agent_ls.workspace.paths import PathPolicy
from tests.support.corpus import CORPUS, require_corpus

require_corpus()

CASES: list[dict[str, Any]] = [
    json.loads(line)
    for line in (CORPUS / "shell-commands" / "commands.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> PermissionPolicy:
    root = tmp_path_factory.mktemp("ws")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('a && b')\n")
    (root / "notes.txt").write_text("notes\n")
    (root / ".env").write_text("API_KEY=sk-live\n")
    return PermissionPolicy(PathPolicy(root, home=Path("/home/corpus-user")))


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_verdict_is_acceptable(case: dict[str, Any], policy: PermissionPolicy) -> None:
    decision = policy.check_command(case["command"])
    assert decision.verdict in case["acceptable"], (case["reason"], decision)
    if case["expected"] != "allow":
        assert decision.verdict != "allow", case["reason"]


def test_the_corpus_holds_every_verdict() -> None:
    """The table above is not vacuous: the corpus has cases of each expected verdict."""
    assert {case["expected"] for case in CASES} == {"allow", "ask", "deny"}
    assert len(CASES) >= 44
