"""``Read(...)`` deny rules hold for grep and list_files too, not only for read_file (review of 2026-11-30).

grep checked only its ``path`` argument against the permission policy, so ``grep KEY`` over the
workspace showed the lines of ``secret/keys.txt`` that ``Read(secret/**)`` denies to read_file. Now both
tools leave out the files whose read is denied, as Claude Code hides them from Grep and Glob. Through the
real registry of an assembled session, with the rule in the user config.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_ls.assembly import assemble_session
from agent_ls.config import load_config
from agent_ls.core.messages import ToolCall
from agent_ls.core.ports import Approval, ApprovalRequest
from agent_ls.runtime import Session
from agent_ls.settings import EnvSnapshot


class Deny:
    async def ask(self, request: ApprovalRequest) -> Approval:
        return Approval("deny")


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    root, config_dir = tmp_path / "ws", tmp_path / "config"
    files = {
        "secret/keys.txt": "KEY=hidden-one\n",
        "secret/deep/more.txt": "KEY=hidden-two\n",
        "Secret/CASE.txt": "KEY=hidden-three\n",  # deny rules match case-folded paths too
        "src/app.py": "KEY = 'public'\n",
        "docs/secret.md": "KEY in the docs\n",  # a file named secret elsewhere is not denied
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    config_dir.mkdir()
    (config_dir / "agent-ls.toml").write_text('[permissions]\ndeny = ["Read(secret/**)"]\n')
    env = EnvSnapshot({"AGENT_LS_CONFIG_DIR": str(config_dir), "HOME": str(tmp_path / "home")})
    config = load_config(env, root)
    environ = {"PATH": os.environ.get("PATH", "")}
    made = assemble_session(root=root, approver=Deny(), environ=environ, config=config)
    made.overlay._detect = False  # the rule is the subject here, not the sandbox
    made.overlay._sandbox = None
    yield made
    made.close()


async def call(session: Session, tool: str, **arguments: object) -> str:
    result = await session.registry.execute(ToolCall("c1", tool, json.dumps(arguments)), lambda _: None)
    return result.content.split("\n", 1)[1].rsplit("\n", 1)[0]


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "grep",
            {"pattern": "KEY"},
            "docs/secret.md:1:1:KEY in the docs\nsrc/app.py:1:1:KEY = 'public'",
        ),
        ("grep", {"pattern": "hidden", "glob": "*.txt"}, "no matches"),
        ("list_files", {"path": "."}, "docs/secret.md\nsrc/app.py"),
        ("list_files", {"path": ".", "pattern": "*.txt"}, "no files match"),
        # "secret/**" denies what the folder holds, not the folder: grep may search it and finds nothing.
        ("grep", {"pattern": "KEY", "path": "secret"}, "no matches"),
        ("read_file", {"path": "secret/keys.txt"}, "Blocked by policy (read: secret/** (user config))"),
    ],
)
async def test_files_denied_to_read_are_left_out_of_grep_and_list_files(
    session: Session, tool: str, arguments: dict[str, object], expected: str
) -> None:
    seen = await call(session, tool, **arguments)
    assert "hidden" not in seen
    assert seen.startswith(expected) if expected.startswith("Blocked") else seen == expected
