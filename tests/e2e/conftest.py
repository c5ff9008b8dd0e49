"""End-to-end fixtures: a real ``agent-ls serve`` process driven by pytest-lsp's LanguageClient,
against a fake OpenAI-compatible model server on 127.0.0.1 that scripts turns and records requests.

The client plays a capable editor (VS Code's capabilities): it answers permission prompts from
``client.answers``, records every ``workspace/applyEdit`` and applies it with LSP semantics to its
open buffers (then saves them) or to disk. As an editor does, it sends ``didChange`` for each open buffer
an applied edit changed, before it answers. ``client.agent["untick"]``, when set, plays a preview whose
user unticked changes: it gets each wire ``TextDocumentEdit`` and returns the text edits to apply.
"""

from __future__ import annotations

import asyncio
import atexit
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

from agent_ls.demo.edit_applier import EditorFiles
from agent_ls.demo.runner import CAPABILITIES as DEMO_CAPABILITIES
from tests.support.model_server import FakeModelServer

SECRET_KEY = "sk-e2e-secret-must-never-leak-0123456789"

# The sample's bug (stats.mean divides by the wrong count) and its fix, as edit_file strings.
BUGGY = "    return sum(values) / (len(values) - 1)"
FIXED = "    return sum(values) / len(values)"


def fix_step(call_id: str | None = None) -> dict[str, Any]:
    """A scripted model turn that fixes the sample's bug with edit_file."""
    call: dict[str, Any] = {
        "name": "edit_file",
        "arguments": {"path": "stats.py", "old_string": BUGGY, "new_string": FIXED},
    }
    return {"tool_calls": [{"id": call_id, **call} if call_id else call]}


CAPABILITIES = DEMO_CAPABILITIES  # the same capable editor the demo plays (VS Code-like)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A copy of the demo's sample project (a bug in stats.mean and a failing test)."""
    root = tmp_path / "ws"
    sample = Path(str(resources.files("agent_ls.demo").joinpath("sample")))
    shutil.copytree(sample, root, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    return root


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    """An empty user config directory of the test's own, for ``AGENT_LS_CONFIG_DIR``."""
    directory = tmp_path / "user-config"
    directory.mkdir()
    return directory


@pytest.fixture
def model_server() -> Iterator[FakeModelServer]:
    server = FakeModelServer([])
    server.start()
    yield server
    server.stop()


# Wire-API tests configure providers in this user config dir (written per test before the run; the
# server reads its config at each run). Empty by default, so the developer's own config never leaks in.
CONFIG_DIR = Path(tempfile.mkdtemp(prefix="agent-ls-e2e-config-"))

# An empty home too: the developer's own ~/.agents/skills never leak into the servers under test.
HOME_DIR = Path(tempfile.mkdtemp(prefix="agent-ls-e2e-home-"))
for _made in (CONFIG_DIR, HOME_DIR):  # removed when the test run ends (found by a new-user trial)
    atexit.register(shutil.rmtree, _made, True)
SERVER_ENV = {"AGENT_LS_API_KEY": SECRET_KEY, "AGENT_LS_CONFIG_DIR": str(CONFIG_DIR), "HOME": str(HOME_DIR)}


@pytest.fixture
def user_config() -> Iterator[Callable[[str], None]]:
    """Writes the server's user ``agent-ls.toml`` (in ``CONFIG_DIR``) before a run; removed after the test."""
    path = CONFIG_DIR / "agent-ls.toml"
    path.unlink(missing_ok=True)
    yield lambda text: path.write_text(text, encoding="utf-8")
    path.unlink(missing_ok=True)


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "agent_ls", "serve"], server_env=SERVER_ENV
    )
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    prepare_client(lsp_client)
    yield lsp_client
    await lsp_client.shutdown_session()


def prepare_client(lsp_client: LanguageClient) -> None:
    """Record agent notifications, answer prompts from ``agent["answers"]`` and apply edits like an editor."""
    state: dict[str, Any] = {
        "answers": [],
        "prompts": [],
        "edits": [],
        "events": [],
        "ended": [],
        "todos": [],
        "apply": True,
        "untick": None,
        # Seconds after answering workspace/applyEdit that didChange is sent (VS Code sometimes answers
        # first); 0: before answering.
        "did_change_after_s": 0.0,
    }
    lsp_client.agent = state  # type: ignore[attr-defined]
    lsp_client.files = EditorFiles()  # type: ignore[attr-defined]

    @lsp_client.feature(t.WINDOW_SHOW_MESSAGE_REQUEST)
    def _ask(params: t.ShowMessageRequestParams) -> t.MessageActionItem | dict[str, Any] | None:
        """An answer is a title, or a whole JSON object (``{"title": ..., "feedback": ...}``) as the VS
        Code extension sends it with messageActionItem.additionalPropertiesSupport."""
        state["prompts"].append(params)
        answer = state["answers"].pop(0) if state["answers"] else None
        if isinstance(answer, dict):
            return answer
        return t.MessageActionItem(title=answer) if answer else None

    @lsp_client.feature(t.WORKSPACE_APPLY_EDIT)
    def _apply(params: t.ApplyWorkspaceEditParams) -> t.ApplyWorkspaceEditResult:
        state["edits"].append(params)
        if not state["apply"]:
            return t.ApplyWorkspaceEditResult(
                applied=False, failure_reason="the user cancelled the refactoring"
            )
        edit = lsp_client.protocol._converter.unstructure(params.edit)
        if state["untick"] is not None:
            for change in edit.get("documentChanges") or []:
                if "edits" in change:
                    change["edits"] = state["untick"](change)
        before = dict(lsp_client.files.buffers)
        outcome = lsp_client.files.apply(edit)
        changed = [
            t.DidChangeTextDocumentParams(
                text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=document.version or 0),
                content_changes=[t.TextDocumentContentChangeWholeDocument(text=document.text)],
            )
            for uri, document in lsp_client.files.buffers.items()
            if uri in before and document != before[uri]
        ]
        if state["did_change_after_s"]:
            loop = asyncio.get_running_loop()
            for params in changed:
                loop.call_later(state["did_change_after_s"], lsp_client.text_document_did_change, params)
        else:
            for params in changed:
                lsp_client.text_document_did_change(params)
        return t.ApplyWorkspaceEditResult(applied=outcome.applied, failure_reason=outcome.failure_reason)

    @lsp_client.feature("agent/event")
    def _event(params: Any) -> None:
        state["events"].append(params)

    @lsp_client.feature("agent/runEnded")
    def _ended(params: Any) -> None:
        state["ended"].append(params)

    @lsp_client.feature("agent/todos")
    def _todos(params: Any) -> None:
        state["todos"].append(params)


async def start(
    client: LanguageClient,
    root: Path,
    settings: dict[str, Any] | None = None,
    capabilities: t.ClientCapabilities = CAPABILITIES,
) -> None:
    await client.initialize_session(
        t.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options={"agentLs": settings or {}},
        )
    )


def model_settings(server: FakeModelServer, **extra: Any) -> dict[str, Any]:
    return {"model": "openai/test-model", "baseUrl": server.base_url, **extra}


async def command(client: LanguageClient, name: str, argument: dict[str, Any]) -> Any:
    return await client.workspace_execute_command_async(
        t.ExecuteCommandParams(command=name, arguments=[argument])
    )


def field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name)


async def run_ended(client: LanguageClient, session_id: str, timeout_s: float = 30.0) -> Any:
    """Wait for ``agent/runEnded`` of ``session_id`` (polling the recorded notifications)."""
    async with asyncio.timeout(timeout_s):
        while True:
            for ended in client.agent["ended"]:  # type: ignore[attr-defined]
                if field(ended, "sessionId") == session_id:
                    return ended
            await asyncio.sleep(0.02)


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


async def first_event(client: LanguageClient, kind: str, timeout_s: float = 10.0) -> Any:
    """Wait for the first ``agent/event`` of ``kind`` (polling the recorded notifications)."""
    async with asyncio.timeout(timeout_s):
        while True:
            for event in client.agent["events"]:  # type: ignore[attr-defined]
                if field(event, "kind") == kind:
                    return event
            await asyncio.sleep(0.01)
