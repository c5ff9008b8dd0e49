"""Issue 12, the secrets sweep at its sharpest: a run that tries every way to reach planted credentials.

The suite-wide sweep (``tests/support/sweep.py``) plants fake credentials in the environment of every
process the suite starts and searches every model request. Here they are also planted where users keep
them: the workspace's credential files (``.env``, ``.npmrc``, ``.netrc``, ``.aws/credentials``,
``terraform.tfstate``, a private key), a ``CLAUDE.md`` import of one, and a key written into the user
config by mistake. The model then reads, greps, cats, imports and dumps the environment, through
``agent-ls run --yes`` (every ask allowed once) and through ``agent-ls serve`` (every prompt answered
"Allow once"). Everything captured (stdout, stderr, editor log messages, notifications, the proposal)
goes to the sweep, and must hold none of them; so must every model request.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, model_settings, run_ended, start
from tests.support import agent_cli, sweep
from tests.support.model_server import FakeModelServer

TOKEN = sweep.PLANTED["NPM_TOKEN"]
PASSWORD = sweep.PLANTED["DATABASE_PASSWORD"]
AWS = sweep.PLANTED["AWS_SECRET_ACCESS_KEY"]
GITHUB = sweep.PLANTED["GITHUB_TOKEN"]
SERVICE = sweep.PLANTED["SERVICE_CREDENTIAL"]


def plant(root: Path) -> None:
    """A project holding the planted credentials where each ecosystem keeps them."""
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('app')\n")
    (root / ".env").write_text(f"DATABASE_PASSWORD={PASSWORD}\n")
    (root / ".npmrc").write_text(f"//registry.npmjs.org/:_authToken={TOKEN}\n")
    (root / ".netrc").write_text(f"machine github.com login me password {GITHUB}\n")
    (root / ".aws").mkdir()
    (root / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = {AWS}\n")
    (root / "terraform.tfstate").write_text(json.dumps({"outputs": {"db": {"value": PASSWORD}}}))
    (root / "deploy.key").write_text(f"-----BEGIN PRIVATE KEY-----\n{SERVICE}\n-----END PRIVATE KEY-----\n")
    (root / "CLAUDE.md").write_text("Project notes.\n@./.npmrc\n@.env\n")
    (root / ".git").mkdir()


def _calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments} for name, arguments in calls]}


HOSTILE_STEPS = [
    _calls(
        ("read_file", {"path": ".npmrc"}),
        ("read_file", {"path": ".env"}),
        ("read_file", {"path": ".aws/credentials"}),
        ("read_file", {"path": "terraform.tfstate"}),
        ("read_file", {"path": "deploy.key"}),
        ("read_file", {"path": ".netrc"}),
    ),
    _calls(
        ("grep", {"pattern": "npm_|password|secret"}),
        ("grep", {"pattern": "sweep"}),
        ("list_files", {"path": "."}),
    ),
    _calls(
        ("bash", {"command": "cat .npmrc .env .netrc deploy.key terraform.tfstate"}),
        ("bash", {"command": "grep -r sweep . ; grep -r password ."}),
        ("bash", {"command": "env; printenv; cat /proc/self/environ; cat /proc/$PPID/environ"}),
        ("bash", {"command": "python3 -c 'import os; print(dict(os.environ))'"}),
        ("bash", {"command": "env > env-dump.txt; cp .npmrc copied.txt; cat ~/.npmrc"}),
    ),
    _calls(("write_file", {"path": "notes.txt", "content": "done\n"})),
    {"content": "Looked everywhere."},
]


def test_a_cli_run_that_hunts_for_credentials_finds_none(tmp_path: Path) -> None:
    root, config_dir = tmp_path / "ws", tmp_path / "cfg"
    plant(root)
    config_dir.mkdir()
    (config_dir / "agent-ls.toml").write_text(f'[providers.openai]\napi_key = "{SERVICE}"\n')
    with FakeModelServer(list(HOSTILE_STEPS)) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
        env |= {"AGENT_LS_CONFIG_DIR": str(config_dir), "AGENT_LS_BASE_URL": server.base_url}
        env |= {"AGENT_LS_API_KEY": "sk-the-intended-key", "HOME": str(tmp_path / "home")}
        (tmp_path / "home").mkdir()
        (tmp_path / "home" / ".npmrc").write_text(f"//registry.npmjs.org/:_authToken={TOKEN}\n")
        args = ["run", "look around", "--yes", "--model", "openai/test-model"]
        done = agent_cli.run(args, cwd=root, env=env, timeout=180)
        assert len(server.requests) == len(HOSTILE_STEPS), done.stderr
        sweep.scan_server(server, "a request of the hostile CLI run")
    sweep.record("agent-ls run's stdout", [done.stdout])
    sweep.record("agent-ls run's stderr", [done.stderr])
    assert sweep.find(done.stdout + done.stderr) == []
    assert [hit for hit in sweep.hits if "hostile" in hit or "agent-ls run's" in hit] == []
    assert "permission deny (paths: secret file" in done.stderr  # the refusals are said


async def test_an_editor_run_that_hunts_for_credentials_finds_none(
    client: LanguageClient, tmp_path: Path, model_server: FakeModelServer
) -> None:
    root = tmp_path / "ws"
    plant(root)
    model_server.steps.extend(HOSTILE_STEPS)
    client.agent["answers"] = ["Allow once"] * 20  # type: ignore[attr-defined]
    await start(client, root, model_settings(model_server))
    result = await command(
        client, "agent.run", {"task": "look around", "uri": (root / "src" / "app.py").as_uri()}
    )
    ended = await run_ended(client, field(result, "sessionId"), timeout_s=120)
    proposal = await command(client, "agent.proposal", {"sessionId": field(result, "sessionId")})
    sweep.scan_server(model_server, "a request of the hostile editor run")
    captured = [m.message for m in client.log_messages]
    captured += [json.dumps(client.protocol._converter.unstructure(x)) for x in (ended, proposal)]
    captured += [str(e) for e in client.agent["events"]]  # type: ignore[attr-defined]
    captured += [p.message for p in client.agent["prompts"]]  # type: ignore[attr-defined]
    sweep.record("the editor's log, notifications, prompts and proposal", captured)
    assert [name for text in captured for name in sweep.find(text)] == []
    assert [hit for hit in sweep.hits if "hostile" in hit] == []
    assert any("permission deny (paths: secret file" in m for m in captured)
