"""The shell-command corpus (``../shared/corpus/shell-commands``) against the slice's simple policy.

Cases with ``needs_hardening: false`` must get a verdict in ``acceptable``. Cases with
``needs_hardening: true`` need a real parser (wrappers, ``bash -c``, redirections, secret files);
for them the simple engine guarantees only that nothing expected to be denied or asked comes out
"allow". The cases where it still does are listed in ``KNOWN_GAPS``; a gap that closes fails the test
so that the set only shrinks.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_ls.policy.engine import PermissionPolicy
from tests.support.corpus import CORPUS as SHARED_CORPUS

CORPUS = SHARED_CORPUS
CASES: list[dict[str, Any]] = [
    json.loads(line)
    for line in (CORPUS / "shell-commands" / "commands.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]

# issue 5: real parser (tree-sitter-bash) with redirection targets and the file policy for arguments.
KNOWN_GAPS = {
    "sh57",  # cat notes.txt > ~/.bashrc: the write redirect outside the workspace is not seen
    "sh63",  # cat .env: a secret file read through an allowed command
    "sh65",  # cat ~/.ssh/id_rsa: a secret file outside the workspace read through an allowed command
}


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_verdict(case: dict[str, Any]) -> None:
    verdict = PermissionPolicy().check_command(case["command"]).verdict
    if not case["needs_hardening"]:
        assert verdict in case["acceptable"], case["reason"]
    elif case["id"] in KNOWN_GAPS:
        assert verdict == "allow", f"{case['id']} is no longer allowed: remove it from KNOWN_GAPS"
    elif "allow" not in case["acceptable"]:
        assert verdict != "allow", case["reason"]


def test_known_gaps_are_corpus_cases_that_need_hardening() -> None:
    hardening = {case["id"] for case in CASES if case["needs_hardening"]}
    assert KNOWN_GAPS <= hardening
