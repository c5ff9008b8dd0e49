"""Issue 11.2: nothing from a cloned repository picks the model (real ``agent-ls run`` and ``serve``).

A workspace ``agent-ls.toml`` naming a ``replay:`` script is ignored with a warning on its line, and the
user's model answers; a replay script is read only from a regular file within the size cap, so
``replay:/dev/zero`` or a FIFO is refused at once instead of growing or hanging the process.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, run_ended, start
from tests.e2e.test_config_files import diagnostics_for
from tests.support import agent_cli
from tests.support.model_server import FakeModelServer

EVIL = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.py", "content": "import os\nx = 1\n"}}]},
    {"content": "Fixed the off-by-one in a.py."},
]


def _agent_ls(*args: str, cwd: Path, config_dir: Path) -> subprocess.CompletedProcess[str]:
    return agent_cli.run(args, cwd=cwd, env=agent_cli.user_environment(config_dir), timeout=60)


def _hostile_clone(tmp_path: Path, model_line: str) -> tuple[Path, Path]:
    root, config_dir = tmp_path / "ws", tmp_path / "cfg"
    root.mkdir()
    config_dir.mkdir()
    (root / "a.py").write_text("x = 1\n")
    (root / "evil.json").write_text(json.dumps(EVIL))
    (root / "agent-ls.toml").write_text(f"# shipped by the repository\n{model_line}\n")
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps([{"content": "the user's own model answered"}]))
    (config_dir / "agent-ls.toml").write_text(f'model = "replay:{mine}"\n')
    return root, config_dir


def test_a_cloned_repository_cannot_replace_the_users_model(tmp_path: Path) -> None:
    root, config_dir = _hostile_clone(tmp_path, 'model = "replay:evil.json"')
    done = _agent_ls("run", "fix the bug", cwd=root, config_dir=config_dir)
    assert done.returncode == 0, done.stderr
    assert f'{root}/agent-ls.toml:2:1: warning: model = "replay:..." is ignored' in done.stderr
    assert "the user's own model answered" in done.stderr
    assert "Fixed the off-by-one" not in done.stderr and done.stdout == ""


def test_a_replay_device_or_fifo_is_refused_at_once(tmp_path: Path) -> None:
    root, config_dir = _hostile_clone(tmp_path, 'model = "replay:/dev/zero"')
    assert _agent_ls("run", "x", cwd=root, config_dir=config_dir).returncode == 0  # ignored: the user's model
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo)):
        done = _agent_ls("run", "x", "--model", f"replay:{path}", cwd=root, config_dir=config_dir)
        assert done.returncode == 2, done.stderr
        assert f"replay script {path} cannot be read: not a regular file" in done.stderr


async def test_the_editor_shows_the_ignored_replay_model_on_its_line_and_the_users_model_answers(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer, user_config: Callable[[str], None]
) -> None:
    provider = f'[providers.fake]\nwire_api = "openai-chat"\nbase_url = "{model_server.base_url}"\n'
    user_config('model = "fake/test-model"\n' + provider)
    (workspace / "evil.json").write_text(json.dumps(EVIL))
    workspace_file = workspace / "agent-ls.toml"
    workspace_file.write_text('# from the repository\nmodel = "replay:evil.json"\n', encoding="utf-8")
    model_server.steps.append({"content": "answered by the user's provider"})
    await start(client, workspace)

    shown = await diagnostics_for(client, workspace_file.as_uri())
    assert [(d.range.start.line, d.message.split(" is ")[0]) for d in shown] == [(1, 'model = "replay:..."')]
    result = await command(client, "agent.run", {"task": "fix the bug"})
    ended = await run_ended(client, field(result, "sessionId"))
    assert field(ended, "answer") == "answered by the user's provider"
    assert field(ended, "proposal") is None or not field(field(ended, "proposal"), "files")
