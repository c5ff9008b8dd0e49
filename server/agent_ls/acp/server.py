"""``agent-ls acp``: the ACP agent on stdio, newline-delimited JSON-RPC 2.0 (ACP v1 transport).

Stdout carries the protocol only; logs go to stderr (the client shows them in its log). The sessions are
closed (shadow copies deleted, MCP servers stopped) when the client closes the connection.
"""

from __future__ import annotations

import asyncio
import logging
from typing import cast

from acp import run_agent
from acp.interfaces import Agent

from agent_ls.acp.agent import AcpAgent


def serve_acp() -> None:
    """Serve ACP on stdin/stdout until the client closes stdin."""
    logging.basicConfig(level=logging.WARNING, format="agent-ls acp: %(levelname)s %(message)s")
    asyncio.run(_serve())


async def _serve() -> None:
    agent = AcpAgent()
    try:
        # The SDK routes the methods an agent has; AcpAgent leaves out the unstable ones (docs/acp.md).
        await run_agent(cast(Agent, agent))
    finally:
        await agent.close()
