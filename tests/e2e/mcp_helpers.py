"""Shared by the MCP e2e tests (test_mcp*.py, issue 18): model steps that call MCP tools, the user
``mcp.json`` of the ``agent-ls serve`` under test, ``agent.mcpStatus`` as plain dicts, and the check that no
MCP server process outlives its test."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from tests.e2e.conftest import CONFIG_DIR, command
from tests.support.mcp_servers import write_servers
from tests.support.processes import command_lines

TAG = "AGENT_LS_MCP_E2E_TAG"
"""A variable in the environment of a test's servers (``McpScene.tagged``): finds their processes."""


def call(call_id: str, tool: str, **arguments: Any) -> dict[str, Any]:
    """A scripted model turn calling ``tool`` with ``arguments``."""
    return {"tool_calls": [{"id": call_id, "name": tool, "arguments": arguments}]}


def tool_names(request: dict[str, Any]) -> list[str]:
    """The names of the tools a recorded model request offered."""
    return [tool["function"]["name"] for tool in request.get("tools") or []]


def tool_schema(request: dict[str, Any], name: str) -> dict[str, Any]:
    """The ``parameters`` of tool ``name`` in a recorded model request."""
    (found,) = [t["function"] for t in request.get("tools") or [] if t["function"]["name"] == name]
    return dict(found.get("parameters") or {})


_WRAPPED = re.compile(
    r'\A<tool_result tool="[^"]*" trust="data"( status="error")?>\n(.*)\n</tool_result>\Z', re.S
)


def result_of(message: dict[str, Any]) -> tuple[str, bool]:
    """(text, is an error) of a tool message: its content without the ``<tool_result>`` wrapper
    (``core.context.wrap_tool_result``)."""
    content = str(message["content"])
    wrapped = _WRAPPED.match(content)
    return (wrapped.group(2), bool(wrapped.group(1))) if wrapped else (content, False)


def last_result(request: dict[str, Any]) -> str:
    """The text of the last tool message of a recorded model request (the newest tool result)."""
    return result_of([m for m in request["messages"] if m["role"] == "tool"][-1])[0]


def last_failed(request: dict[str, Any]) -> bool:
    """Whether the newest tool result of a recorded model request is an error result."""
    return result_of([m for m in request["messages"] if m["role"] == "tool"][-1])[1]


def digest(value: str) -> str:
    """What the probe's ``environ`` tool reports for a value (``probe.py``)."""
    return hashlib.sha256(value.encode()).hexdigest()[:12]


def plain(value: Any) -> Any:
    """A pygls result (nested namedtuples) as plain dicts and lists."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


async def mcp_status(client: LanguageClient, uri: str | None = None) -> dict[str, dict[str, Any]]:
    """``agent.mcpStatus``: each server's entry by name (the ``problems`` under the key ``""``)."""
    result = plain(await command(client, "agent.mcpStatus", {"uri": uri} if uri else {}))
    servers = {server["name"]: server for server in result["servers"]}
    return servers | {"": {"problems": result.get("problems", [])}}


def transcript(client: LanguageClient) -> str:
    """Every ``window/logMessage`` the server sent (the run transcript), joined."""
    return "\n".join(m.message for m in client.log_messages)


class McpScene:
    """One test's MCP servers: ``tag`` for their entries (``tagged``), the user ``mcp.json`` of the
    ``agent-ls serve`` under test (``user_servers``, in ``CONFIG_DIR``), and, on ``close`` (after the
    language server shut down), the check that no MCP server process of the test is left: it waits for
    them to exit (up to 20 s; a child exits once its stdin closes), then kills any left and fails."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.tag = f"mcp-e2e-{tmp_path.name}-{os.getpid()}"
        self._user_file = CONFIG_DIR / "mcp.json"
        self._user_file.unlink(missing_ok=True)

    def tagged(self, entry: dict[str, Any]) -> dict[str, Any]:
        """``entry`` with ``TAG=<tag>`` added to its ``env`` (its process can then be found)."""
        return {**entry, "env": {**entry.get("env", {}), TAG: self.tag}}

    def user_servers(self, servers: dict[str, dict[str, Any]]) -> Path:
        """Write the user ``mcp.json`` the language server reads."""
        return write_servers(self._user_file, servers)

    def close(self) -> None:
        self._user_file.unlink(missing_ok=True)
        deadline = time.monotonic() + 20
        while (left := leftovers(self.tag, self.tmp_path)) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        assert not left, f"MCP server processes left behind: {[command_lines().get(p) for p in left]}"


def leftovers(tag: str, marker_dir: Path) -> list[int]:
    """Processes running with ``TAG=tag`` in their environment or ``marker_dir`` in their command line."""
    found = []
    for pid, line in command_lines().items():
        if pid == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            environ = b""
        if f"{TAG}={tag}".encode() in environ.split(b"\0") or str(marker_dir) in line:
            found.append(pid)
    return found


@contextlib.contextmanager
def mcp_scene(tmp_path: Path) -> Iterator[McpScene]:
    """An ``McpScene`` closed at the end; a test module's autouse fixture (set up first, so torn down
    after its language server)."""
    scene = McpScene(tmp_path)
    try:
        yield scene
    finally:
        scene.close()


def environ_of(result: str) -> dict[str, str]:
    """The probe's ``environ`` result (name to digest) read back from a tool result."""
    start, end = result.index("{"), result.rindex("}") + 1
    return dict(json.loads(result[start:end]))
