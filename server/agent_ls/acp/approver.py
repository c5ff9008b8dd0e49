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

from acp import helpers, schema
from acp.interfaces import Client
from acp.schema import ToolCallStatus

from agent_ls.acp.mapping import approval_for, permission_options, tool_kind
from agent_ls.acp.update_stream import UpdateStream
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
        self.stream: UpdateStream | None = None
        """Where a question about no running tool call announces its own ``tool_call`` first (a client
        correlates a question with a call it knows)."""
        self._asked = 0

    async def ask(self, request: ApprovalRequest) -> Approval:
        what = f"{request.purpose} ({request.tool_name})" if request.purpose else request.tool_name
        call_id = self.call_id
        if call_id and self.stream is not None:  # the running call's tool_call goes out before the question
            await self.stream.drain()
        if not call_id:
            self._asked += 1
            call_id = f"ask-{self._asked}"
            if self.stream is not None:
                title = f"{what}: {request.subject}"
                self.stream.send(
                    helpers.start_tool_call(
                        call_id, title, kind=tool_kind(request.tool_name), status="pending"
                    )
                )
                await self.stream.drain()
        approval = await self._ask(request, what, call_id)
        if call_id != self.call_id and self.stream is not None:  # its own call: ended by the answer
            status: ToolCallStatus = "failed" if approval.reply == "deny" else "completed"
            self.stream.send(helpers.update_tool_call(call_id, status=status))
        return approval

    async def _ask(self, request: ApprovalRequest, what: str, call_id: str) -> Approval:
        tool_call = schema.ToolCallUpdate(
            tool_call_id=call_id,
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
