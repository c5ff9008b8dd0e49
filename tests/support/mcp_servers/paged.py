"""A low-level MCP server whose tools/list comes in pages of 3 (nextCursor), for pagination tests."""

import sys

import anyio
import mcp.server.stdio
import mcp.types as types
from mcp.server.lowlevel import Server

TOOLS = [
    types.Tool(name=f"tool{i}", description=f"Tool number {i}.", input_schema={"type": "object"})
    for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
]


async def list_tools(ctx, params):
    start = int(params.cursor) if params is not None and params.cursor else 0
    page = TOOLS[start : start + 3]
    after = start + 3
    return types.ListToolsResult(tools=page, next_cursor=str(after) if after < len(TOOLS) else None)


async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"called {params.name}")])


server = Server("paged", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with mcp.server.stdio.stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
