"""The MCP host: one client per configured Model Context Protocol server, on the official ``mcp`` SDK.

- ``config.py``: the servers of ``.mcp.json`` (workspace) and ``mcp.json`` (user config), in Claude Code's
  format;
- ``naming.py``: the names the model sees (``mcp__<server>__<tool>``) and the routing table back;
- ``connection.py``: one server's connection: spawn or connect, initialize, list, call, reconnect;
- ``results.py``: a ``tools/call`` result as the text the model reads;
- ``hub.py``: every server of a workspace, shared by its sessions; trust and approvals;
- ``tools.py``: the servers' tools as registry tools, measured and deferred when they cost too much.

Only this package imports the SDK, and only when a server is configured (``import agent_ls.cli`` must not
load it: start-up time). docs/mcp.md is the user's guide.
"""
