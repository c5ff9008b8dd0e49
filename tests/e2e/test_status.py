"""``agent.status`` through a real server: the model and sandbox a run would use, and what is missing, as
the VS Code extension's first-start line shows them (docs/protocol.md)."""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from agent_ls.models.resolution import NO_MODEL
from agent_ls.workspace.sandbox import sandbox_status, unsandboxed_reason
from tests.e2e.conftest import SERVER_ENV, command, model_settings, prepare_client, start
from tests.support.model_server import FakeModelServer


def _sandbox() -> tuple[bool, str]:
    """This machine's sandbox as the server reports it (its PATH may find bwrap in another folder)."""
    unsandboxed = unsandboxed_reason(True)
    line = unsandboxed or f"{sandbox_status().detail}: no network, only the shadow copy writable"
    return not unsandboxed, re.sub(r" at \S*/bwrap:", " at …/bwrap:", line)


async def test_a_configured_model_is_ready_and_the_sandbox_is_named(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    await start(client, workspace, model_settings(model_server))
    sandboxed, line = _sandbox()
    status = await command(client, "agent.status", {"uri": (workspace / "stats.py").as_uri()})
    status["sandbox"] = re.sub(r" at \S*/bwrap:", " at …/bwrap:", status["sandbox"])
    assert status == {
        "model": "openai/test-model",
        "baseUrl": model_server.base_url,
        "modelState": "ready",
        "modelDetail": "",
        "sandboxed": sandboxed,
        "sandbox": line,
    }
    assert model_server.requests == []  # found without a model call


async def test_no_model_says_how_to_configure_one(client: LanguageClient, workspace: Path) -> None:
    await start(client, workspace)
    status = await command(client, "agent.status", {})
    assert (status["model"], status["baseUrl"], status["modelState"]) == (None, None, "noModel")
    assert status["modelDetail"] == NO_MODEL


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "agent_ls", "serve"],
        server_env={name: value for name, value in SERVER_ENV.items() if name != "AGENT_LS_API_KEY"},
    )
)
async def keyless(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    prepare_client(lsp_client)
    yield lsp_client
    await lsp_client.shutdown_session()


async def test_a_hosted_model_without_a_key_names_the_variable(
    keyless: LanguageClient, workspace: Path
) -> None:
    await start(keyless, workspace, {"model": "openai/gpt-4.1"})
    status = await command(keyless, "agent.status", {})
    assert (status["model"], status["baseUrl"], status["modelState"]) == (
        "openai/gpt-4.1",
        "https://api.openai.com/v1",
        "noApiKey",
    )
    assert status["modelDetail"] == "openai/gpt-4.1 needs an API key: set OPENAI_API_KEY or AGENT_LS_API_KEY"
