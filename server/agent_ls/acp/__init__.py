"""``agent-ls acp``: the Agent Client Protocol front end (Zed, JetBrains and other ACP clients).

The same core as ``lsp/`` and ``headless.py``: only this package imports the ACP SDK
(``agent-client-protocol``, import name ``acp``; a contract in pyproject.toml says so). ``server.serve_acp``
runs it on stdio; ``agent.AcpAgent`` holds the sessions; docs/acp.md describes it.
"""
