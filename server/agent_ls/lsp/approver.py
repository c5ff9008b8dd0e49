"""Asking the user through ``window/showMessageRequest`` (LSP 3.17), the editor's own prompt UI.

The prompt offers "Allow once", "Allow for this session", "Always allow" (only when the policy says an
allow rule can lift the ask; otherwise the message says why not) and "Deny". A client may send a
``feedback`` string property on the chosen ``MessageActionItem`` (LSP 3.16
``window.showMessage.messageActionItem.additionalPropertiesSupport``; our VS Code extension asks for
it after "Deny"); it goes back to the model with the refusal. ``approval_converter`` keeps that
property, which lsprotocol's ``MessageActionItem`` has no field for (``action_items.py``).

Clients without showMessageRequest support (Helix) get the headless default
(``agentLs.permissions.headless``, deny unless set to allow), with a log message, so a run never hangs.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types as t

from agent_ls.core.ports import DENIED, Approval, ApprovalReply, ApprovalRequest
from agent_ls.lsp.action_items import FeedbackActionItem

if TYPE_CHECKING:
    from agent_ls.lsp.state import AgentLanguageServer

log = logging.getLogger(__name__)

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
ALLOW_ALWAYS = "Always allow"
DENY = "Deny"
_REPLIES: dict[str, ApprovalReply] = {
    ALLOW_ONCE: "once",
    ALLOW_SESSION: "session",
    ALLOW_ALWAYS: "always",
    DENY: "deny",
}


def prompt_text(request: ApprovalRequest) -> str:
    """The prompt's message: what, why, and, when "Always allow" is not offered, why not."""
    what = f"an {request.purpose} ({request.tool_name})" if request.purpose else request.tool_name
    text = f"agent-ls wants to run {what}: {request.subject}\n({request.reason})"
    if request.always:
        return f'{text}\n"Always allow" {request.always_effect}: {", ".join(request.always)}'
    if request.no_always:
        return f'{text}\nNo "Always allow": {request.no_always}.'
    return text


class LspApprover:
    """Implements the core ``Approver`` port with a modal showMessageRequest."""

    def __init__(self, ls: AgentLanguageServer) -> None:
        self._ls = ls

    async def ask(self, request: ApprovalRequest) -> Approval:
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
            return Approval("deny" if headless == "deny" else "once", unasked="headless")
        titles = [title for title in _REPLIES if title != ALLOW_ALWAYS or request.always]
        try:
            reply = await self._ls.window_show_message_request_async(
                t.ShowMessageRequestParams(
                    type=t.MessageType.Warning,
                    message=prompt_text(request),
                    actions=[t.MessageActionItem(title=title) for title in titles],
                )
            )
        except Exception as exc:  # an error response is a prompt nobody answered: the port must not raise
            log.warning("window/showMessageRequest failed (%s); denied %s", exc, request.subject)
            return DENIED
        if reply is None or reply.title not in titles:
            return DENIED
        answer = _REPLIES[reply.title]
        feedback = reply.feedback if isinstance(reply, FeedbackActionItem) and answer == "deny" else None
        return Approval(answer, feedback=feedback or None)
