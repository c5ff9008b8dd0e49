"""``agent-ls acp``: the ACP agent on stdio, newline-delimited JSON-RPC 2.0 (ACP v1 transport).

Stdout carries the protocol only; logs go to stderr (the client shows them in its log). The sessions are
closed (shadow copies deleted, MCP servers stopped) when the client closes the connection. A line that is
not a JSON object is answered with a JSON-RPC error and the agent goes on (``line_filter.py``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import cast

from acp import run_agent
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
from acp.interfaces import Agent
from acp.stdio import stdio_streams

from agent_ls.acp.agent import AcpAgent
from agent_ls.acp.line_filter import LineFilter


def serve_acp() -> None:
    """Serve ACP on stdin/stdout until the client closes stdin."""
    logging.basicConfig(level=logging.WARNING, format="agent-ls acp: %(levelname)s %(message)s")
    asyncio.run(_serve())


async def _serve() -> None:
    agent = AcpAgent()
    stdin, stdout = await stdio_streams(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    lines = LineFilter(stdin, stdout, DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    try:
        # The SDK routes the methods an agent has; AcpAgent leaves out the unstable ones (docs/acp.md).
        # run_agent's "input_stream" is the stream it writes to (stdout), "output_stream" the one it reads.
        await run_agent(cast(Agent, agent), stdout, lines.reader)
    finally:
        await lines.close()
        await agent.close()
