"""tools/list in pages (MCP 2025-11-25 "Pagination"): the host asks for every page, following ``nextCursor``,
against a real SDK server that answers 3 tools a page (tests/support/mcp_servers/paged.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent_ls.mcp_client.config import load_servers
from agent_ls.mcp_client.hub import McpHub
from agent_ls.mcp_client.tools import tool_set
from agent_ls.settings import EnvSnapshot

PAGED = Path(__file__).resolve().parents[1] / "support" / "mcp_servers" / "paged.py"


async def test_every_page_of_tools_list_is_read_and_offered(tmp_path: Path) -> None:
    user_dir = tmp_path / "config"
    user_dir.mkdir()
    entry = {"command": sys.executable, "args": [str(PAGED), "8"]}
    (user_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"paged": entry}}))
    hub = McpHub(tmp_path, load_servers(None, user_dir), EnvSnapshot.from_environ({}))
    try:
        await hub.prepare(None)
        names = [tool.name for tool in hub.tools()]
        offered = tool_set(hub)
    finally:
        await hub.aclose()

    assert names == [f"mcp__paged__tool{i}" for i in range(8)]  # three pages: 3 + 3 + 2
    assert [tool.name for tool in offered.sent] == names
    assert [connection.state for connection in hub.connections()] == ["not started"]  # stopped
