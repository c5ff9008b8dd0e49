"""``agent.clearFindings``: remove review findings (``lsp/review_diagnostics.py``) from the editor."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_ls.lsp import protocol as p
from agent_ls.lsp.command_args import parse_params
from agent_ls.lsp.review_diagnostics import clear_findings as clear
from agent_ls.lsp.state import AgentLanguageServer


async def clear_findings(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """Clear the findings of ``sessionId`` (every session's when left out) on ``uris`` (every file when
    left out), after any publication still under way; returns ``ClearFindingsResult``."""
    params = parse_params(p.ClearFindingsParams, arguments)
    pending = ls.state.review_publishing
    if pending is not None and not pending.done():
        await asyncio.wait([pending])
    return p.ClearFindingsResult(cleared=clear(ls, params.session_id, params.uris)).wire()
