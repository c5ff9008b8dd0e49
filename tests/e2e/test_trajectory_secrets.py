"""No secret in a trajectory (issue 19, docs/sessions.md "Redaction"): a real ``agent-ls run`` and a real
``agent-ls serve`` run with planted secrets in every place one can come from (an API key in the
environment that is sent as the ``Authorization`` header, a secret-named variable, key-shaped strings in a
file the model reads and in a command's output), then every session file, kept output, log, transcript
and ``agent-ls trace`` output those runs wrote is searched, and none of the secrets is there. The
redaction is seen to have acted (``[redacted]`` in the session file) and the key to have been sent (the
model server got it in ``Authorization``), so the absence is not an accident of a run that did nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import HOME_DIR, command, field, model_settings, prepare_client, run_ended, start
from tests.support import agent_cli
from tests.support.model_server import FakeModelServer

API_KEY = "sk-proj-PLANTEDapiKeyForTrajectories0123456789"
DEPLOY_TOKEN = "plantedDeployToken-9f8e7d6c5b4a3210"  # no key shape: known only by its variable's name
IN_FILE = {
    "github": "ghp_PLANTEDfileGithubToken0123456789abcdefgh",
    "aws": "AKIAPLANTEDFILE12345",
    "bearer": "plantedBearerInFile0123456789abcdef",
}
IN_OUTPUT = {  # printed in two pieces, so only the command's output holds them whole
    "slack": ("xoxb-", "1234567890-PLANTEDslackOutput0123"),
    "anthropic": ("sk-ant-", "PLANTEDtoolOutputKey0123456789abcdef"),
}
SECRETS = [API_KEY, DEPLOY_TOKEN, *IN_FILE.values(), *("".join(pair) for pair in IN_OUTPUT.values())]

SETTINGS = (
    "[deploy]\n"
    f"github_token = {IN_FILE['github']}\n"
    f"aws_access_key_id = {IN_FILE['aws']}\n"
    f"header = Authorization: Bearer {IN_FILE['bearer']}\n"
    f"deploy_token = {DEPLOY_TOKEN}\n"
    f"api_key = {API_KEY}\n"
)
PRINT = "; ".join(f"printf '%s%s\\n' '{head}' '{tail}'" for head, tail in IN_OUTPUT.values())
STEPS: list[dict[str, Any]] = [
    {"tool_calls": [{"id": "c_read", "name": "read_file", "arguments": {"path": "settings.ini"}}]},
    {"tool_calls": [{"id": "c_bash", "name": "bash", "arguments": {"command": PRINT}}]},
    {
        "tool_calls": [
            {"id": "c_write", "name": "write_file", "arguments": {"path": "n.txt", "content": "x\n"}}
        ]
    },
    {"content": "Read the settings and printed the keys."},
]


def _workspace(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "settings.ini").write_text(SETTINGS)


def _leaks(where: str, text: str) -> list[str]:
    return [f"{secret[:12]}… in {where}" for secret in SECRETS if secret in text]


def _files_leaks(folder: Path) -> list[str]:
    """Every file under ``folder`` searched, as bytes decoded leniently."""
    found: list[str] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        found += _leaks(str(path), path.read_bytes().decode("utf-8", "replace"))
    return found


def _sent_and_redacted(server: FakeModelServer, state: Path) -> None:
    """The key went out as the Authorization header, and the session file shows redactions."""
    assert all(h.get("authorization") == f"Bearer {API_KEY}" for h in server.request_headers)
    sessions = list(state.glob("sessions/*/*.jsonl"))
    assert sessions and all("[redacted]" in s.read_text() for s in sessions)
    assert any(json.loads(line).get("kind") == "tool" for line in sessions[0].read_text().splitlines())


def test_a_cli_run_writes_no_planted_secret_to_its_session_logs_transcript_or_trace(tmp_path: Path) -> None:
    root, state, temp = tmp_path / "ws", tmp_path / "state", tmp_path / "tmp"
    _workspace(root)
    temp.mkdir()
    with FakeModelServer(list(STEPS)) as server:
        env = agent_cli.environment(
            temp,
            AGENT_LS_STATE_DIR=str(state),
            AGENT_LS_BASE_URL=server.base_url,
            AGENT_LS_API_KEY=API_KEY,
            PLANTED_DEPLOY_TOKEN=DEPLOY_TOKEN,
        )
        args = ["run", "read the settings", "--model", "openai/test-model", "--yes", "--debug"]
        done = agent_cli.run(args, cwd=root, env=env, timeout=180)
        assert done.returncode == 0, done.stderr
        assert len(server.requests) == len(STEPS)
    _sent_and_redacted(server, state)
    shown = agent_cli.run(["trace", "show"], cwd=root, env=env)
    page = tmp_path / "trace.html"
    written = agent_cli.run(["trace", "html", "-o", str(page)], cwd=root, env=env)
    assert shown.returncode == 0 and written.returncode == 0, shown.stderr + written.stderr
    assert "bash printf" in shown.stdout and "[redacted]" in page.read_text()  # the results are there
    leaks = _files_leaks(state) + _files_leaks(temp) + _leaks("trace.html", page.read_text())
    leaks += _leaks("run's stdout", done.stdout) + _leaks("run's stderr (transcript, --debug)", done.stderr)
    leaks += _leaks("trace show", shown.stdout + shown.stderr)
    assert leaks == []


async def test_an_editor_run_writes_no_planted_secret_to_its_session_or_logs(
    tmp_path: Path, model_server: FakeModelServer
) -> None:
    root, state, log = tmp_path / "ws", tmp_path / "state", tmp_path / "server.log"
    _workspace(root)
    model_server.steps.extend(STEPS)
    env = {"AGENT_LS_API_KEY": API_KEY, "PLANTED_DEPLOY_TOKEN": DEPLOY_TOKEN, "HOME": str(HOME_DIR)}
    env |= {"AGENT_LS_CONFIG_DIR": str(tmp_path / "cfg"), "AGENT_LS_STATE_DIR": str(state)}
    (tmp_path / "cfg").mkdir()
    serve = f"exec {sys.executable} -m agent_ls serve 2>{log}"  # the server's own log, kept to search
    config = ClientServerConfig(server_command=["sh", "-c", serve], server_env=env)
    client = await config.start()
    assert isinstance(client, LanguageClient)
    prepare_client(client)
    client.agent["answers"] = ["Allow once"] * 10  # type: ignore[attr-defined]
    try:
        await start(client, root, model_settings(model_server, trace="verbose"))
        result = await command(client, "agent.run", {"task": "read the settings"})
        session_id = field(result, "sessionId")
        ended = await run_ended(client, session_id, timeout_s=120)
        assert field(ended, "status") == "done"
        history = await command(client, "agent.sessionHistory", {"sessionId": session_id})
        await client.shutdown_session()
    finally:
        await client.stop()
    _sent_and_redacted(model_server, state)
    captured = [m.message for m in client.log_messages]
    captured += [json.dumps(client.protocol._converter.unstructure(x)) for x in (ended, history)]
    captured += [str(event) for event in client.agent["events"]]  # type: ignore[attr-defined]
    assert any("request:" in m for m in captured)  # the verbose trace printed the requests
    leaks = _files_leaks(state) + _leaks("the server's stderr log", log.read_text())
    leaks += [leak for text in captured for leak in _leaks("the editor's log and notifications", text)]
    assert leaks == []
