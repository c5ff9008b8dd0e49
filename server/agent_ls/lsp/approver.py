"""Asking the user through ``window/showMessageRequest`` (LSP 3.17), the editor's own prompt UI.

Clients without showMessageRequest support (Helix) get the headless default
(``agentLs.permissions.headless``, deny unless set to allow), with a log message, so a run never hangs.
"""

from __future__ import annotations

import logging

from lsprotocol import types as t

from agent_ls.core.ports import ApprovalReply, ApprovalRequest
from agent_ls.lsp.state import AgentLanguageServer

log = logging.getLogger(__name__)

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
DENY = "Deny"
_REPLIES: dict[str, ApprovalReply] = {ALLOW_ONCE: "once", ALLOW_SESSION: "session", DENY: "deny"}


class LspApprover:
    """Implements the core ``Approver`` port with a modal showMessageRequest."""

    def __init__(self, ls: AgentLanguageServer) -> None:
        self._ls = ls

    async def ask(self, request: ApprovalRequest) -> ApprovalReply:
        if not self._ls.state.flags.show_message_request:
            headless = self._ls.state.settings.permissions.headless
            verb = "denied" if headless == "deny" else "allowed"
            self._ls.window_log_message(
                t.LogMessageParams(
                    type=t.MessageType.Warning,
                    message=f"agent-ls: {verb} {request.tool_name} '{request.subject}' (the editor cannot "
                    f"show permission prompts; headless default is {headless}: agentLs.permissions.headless)",
                )
            )
            return "deny" if headless == "deny" else "once"
        reply = await self._ls.window_show_message_request_async(
            t.ShowMessageRequestParams(
                type=t.MessageType.Warning,
                message=f"agent-ls wants to run {request.tool_name}: {request.subject}\n({request.reason})",
                actions=[t.MessageActionItem(title=title) for title in _REPLIES],
            )
        )
        return _REPLIES.get(reply.title, "deny") if reply is not None else "deny"
