"""Asking the user through ``session/request_permission`` (ACP v1), the editor's own permission UI.

The options are the LSP front end's (``lsp/approver.py``): allow once, allow for this session (kind
``allow_always``: for the session, as ACP clients read "always"), always allow (kind ``allow_always``)
only when the policy can write an allow rule for it, and deny (``reject_once``). The question carries the
tool call it is about (its id, title, kind and input), so the editor shows it next to that call.
A cancelled outcome (the client's answer after ``session/cancel``), an error answer or a connection that
went away is a deny: the port never raises and never hangs on a closed connection.
"""

from __future__ import annotations

import logging

from acp import schema
from acp.interfaces import Client

from agent_ls.acp.mapping import approval_for, permission_options, tool_kind
from agent_ls.core.ports import DENIED, Approval, ApprovalRequest

log = logging.getLogger(__name__)


class AcpApprover:
    """Implements the core ``Approver`` port for one ACP session. ``call_id`` is the id of the tool call
    running when the question is asked (set by the event stream: ``ToolCallStarted``), or "" for one the
    harness asks for itself (an acceptance check, an MCP server's start)."""

    def __init__(self, client: Client, session_id: str) -> None:
        self._client = client
        self.session_id = session_id
        self.call_id = ""

    async def ask(self, request: ApprovalRequest) -> Approval:
        what = f"{request.purpose} ({request.tool_name})" if request.purpose else request.tool_name
        tool_call = schema.ToolCallUpdate(
            tool_call_id=self.call_id or f"ask-{id(request):x}",
            title=f"{what}: {request.subject} ({request.reason})",
            kind=tool_kind(request.tool_name),
            status="pending",
            raw_input={"subject": request.subject, "reason": request.reason, "rule": request.rule},
        )
        try:
            response = await self._client.request_permission(
                session_id=self.session_id, tool_call=tool_call, options=permission_options(request)
            )
        except Exception as exc:  # an error answer is a question nobody answered: the port must not raise
            log.warning("session/request_permission failed (%s); denied %s", exc, request.subject)
            return DENIED
        return approval_for(response, request)
