"""What our events, approvals and stored messages are in ACP terms: pure functions, no connection.

The tables (docs/acp.md says the same for users):

- a tool's ``kind`` from its name (``TOOL_KINDS``; an MCP tool or one not listed is ``other``), a title
  naming what it acts on, and its ``locations`` (absolute paths, 1-based lines: ACP's conventions);
- ``RunEnded`` to a ``stopReason`` (``stop_reason``);
- the todo list to ``plan`` entries (``plan_entries``);
- an ``ApprovalRequest`` to ``session/request_permission`` options and the chosen option back to an
  ``Approval`` (``permission_options``, ``approval_for``);
- a stored history to ``user_message_chunk`` / ``agent_message_chunk`` / ``tool_call`` updates
  (``history_updates``) for ``session/load``: the model's text defanged as it was live
  (``core.markdown_defang``), tool results unwrapped to the output the tool gave;
- a tool's output text to a code fence longer than any backtick run in it (``fenced``): ACP clients
  (Zed) render a tool call's text content as Markdown, and output is data, never markup.

Source: the ACP v1 schema of the SDK (``acp.schema``, schema ref ``schema-v1.19.0``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from acp import helpers, schema

from agent_ls.core.events import RunEnded
from agent_ls.core.markdown_defang import defang_markdown
from agent_ls.core.messages import AssistantMessage, Message, ToolResultMessage, UserMessage
from agent_ls.core.ports import Approval, ApprovalReply, ApprovalRequest
from agent_ls.core.todos import TodoItem
from agent_ls.sessions.outputs import unwrap_tool_result

TOOL_KINDS: dict[str, schema.ToolKind] = {
    "read_file": "read",
    "read_output": "read",
    "problems": "read",
    "edit_file": "edit",
    "write_file": "edit",
    "grep": "search",
    "list_files": "search",
    "bash": "execute",
    "todo_write": "think",
    "submit_plan": "think",
    "task": "think",
}
"""ACP ``ToolKind`` per tool name; any other tool (skills, memory, MCP tools) is ``other``."""

ALLOW_ONCE = "allow_once"
ALLOW_SESSION = "allow_session"
ALLOW_ALWAYS = "allow_always"
REJECT_ONCE = "reject_once"
_REPLIES: dict[str, ApprovalReply] = {
    ALLOW_ONCE: "once",
    ALLOW_SESSION: "session",
    ALLOW_ALWAYS: "always",
    REJECT_ONCE: "deny",
}

MAX_TITLE_CHARS = 80
ToolContent = schema.ContentToolCallContent | schema.FileEditToolCallContent | schema.TerminalToolCallContent


def tool_kind(name: str) -> schema.ToolKind:
    """The ACP kind of tool ``name`` (``TOOL_KINDS``), ``other`` for any other."""
    return TOOL_KINDS.get(name, "other")


def parsed_arguments(arguments: str) -> dict[str, Any]:
    """The model's raw JSON arguments as an object; ``{}`` when they are not a JSON object."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def tool_title(name: str, arguments: dict[str, Any]) -> str:
    """One line naming the tool and what it acts on: ``bash: pytest -q``, ``read_file: src/app.py``."""
    subject = next(
        (str(arguments[key]) for key in ("command", "path", "pattern", "description") if arguments.get(key)),
        "",
    )
    subject = " ".join(subject.split())
    if len(subject) > MAX_TITLE_CHARS:
        subject = subject[: MAX_TITLE_CHARS - 1] + "…"
    title = f"{name}: {subject}" if subject else name
    return defang_markdown(title).text  # the model's words; a client may render a title as Markdown


def tool_locations(root: Path, name: str, arguments: dict[str, Any]) -> list[schema.ToolCallLocation]:
    """Where the tool acts, for the editor to follow: the absolute path of a ``path`` argument (a
    relative one is taken from ``root``) and, for ``read_file``, its first line (1-based, ``offset``)."""
    path = arguments.get("path")
    if not isinstance(path, str) or not path or name == "bash":
        return []
    absolute = Path(path) if Path(path).is_absolute() else root / path
    line = arguments.get("offset") if name == "read_file" else None
    return [schema.ToolCallLocation(path=str(absolute), line=line if isinstance(line, int) else None)]


def tool_call_start(root: Path, call_id: str, name: str, arguments: str) -> schema.ToolCallStart:
    """The ``tool_call`` update of a call about to run (status ``in_progress``)."""
    args = parsed_arguments(arguments)
    return helpers.start_tool_call(
        call_id,
        tool_title(name, args),
        kind=tool_kind(name),
        status="in_progress",
        locations=tool_locations(root, name, args) or None,
        raw_input=args or arguments,
    )


def tool_call_end(
    call_id: str, is_error: bool, output: str, diff: tuple[str, str | None, str] | None = None
) -> schema.ToolCallProgress:
    """The ``tool_call_update`` of a finished call: ``completed`` or ``failed``, its output as text content,
    and for an edit the file's whole proposed change as ``diff`` content (absolute path, the text the
    agent read, None for a new file, and the proposed text)."""
    content: list[ToolContent] = []
    locations: list[schema.ToolCallLocation] = []
    if diff is not None:
        path, old_text, new_text = diff
        content.append(helpers.tool_diff_content(path, new_text, old_text))
        locations.append(
            schema.ToolCallLocation(path=path, line=first_changed_line(old_text or "", new_text))
        )
    if output:
        content.append(helpers.tool_content(helpers.text_block(fenced(output))))
    return helpers.update_tool_call(
        call_id,
        status="failed" if is_error else "completed",
        content=content or None,
        locations=locations or None,
        raw_output=output,
    )


def fenced(text: str) -> str:
    """``text`` inside a backtick code fence longer than any backtick run in it (at least three, CommonMark
    section 4.5), so a Markdown renderer shows it verbatim: no image, link or HTML in it can load."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def first_changed_line(old_text: str, new_text: str) -> int:
    """The 1-based number of the first line that differs between the two texts (where the editor follows
    an edit to)."""
    old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
    for number, (old, new) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if old != new:
            return number
    return min(len(old_lines), len(new_lines)) + 1


def stop_reason(ended: RunEnded) -> schema.StopReason:
    """The ``session/prompt`` answer for how the run ended: ``cancelled``; a run stopped at its turn cap
    ``max_turn_requests``, at the model's output limit ``max_tokens``, by the provider's content filter
    ``refusal``; any other end (done, an error, a budget, failed checks) ``end_turn``, its reason having
    been sent as a message."""
    if ended.status == "cancelled":
        return "cancelled"
    if ended.status == "stopped":
        if "maximum of" in ended.reason and "turn" in ended.reason:
            return "max_turn_requests"
        if "output token limit" in ended.reason:
            return "max_tokens"
        if "stopped its answer (finish reason" in ended.reason:
            return "refusal"
    return "end_turn"


def plan_entries(items: Sequence[TodoItem]) -> list[schema.PlanEntry]:
    """The todo list as ACP plan entries, in order (priority ``medium``: the list has none)."""
    return [
        helpers.plan_entry(defang_markdown(item.content).text, priority="medium", status=item.status)
        for item in items
    ]


def permission_options(request: ApprovalRequest) -> list[schema.PermissionOption]:
    """The options of the question, as the LSP front end offers them (``lsp/approver.py``): allow once,
    allow for this session, always allow only when the policy can write an allow rule for it
    (``request.always``), reject."""
    options = [
        schema.PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
        schema.PermissionOption(option_id=ALLOW_SESSION, name="Allow for this session", kind="allow_always"),
    ]
    if request.always:
        name = f"Always allow ({request.always_effect}: {', '.join(request.always)})"
        options.append(schema.PermissionOption(option_id=ALLOW_ALWAYS, name=name, kind="allow_always"))
    options.append(schema.PermissionOption(option_id=REJECT_ONCE, name="Deny", kind="reject_once"))
    return options


def approval_for(response: schema.RequestPermissionResponse, request: ApprovalRequest) -> Approval:
    """The ``Approval`` of the client's answer: the option chosen; a cancelled outcome (``session/cancel``),
    an unknown option, or ``always`` when it was not offered are a deny or once, never more."""
    outcome = response.outcome
    if not isinstance(outcome, schema.AllowedOutcome) or outcome.option_id not in _REPLIES:
        return Approval("deny")
    reply = _REPLIES[outcome.option_id]
    if reply == "always" and not request.always:
        return Approval("once")
    return Approval(reply)


def history_updates(root: Path, messages: Sequence[Message]) -> Iterator[Any]:
    """The updates that replay a stored history (``session/load``): each user message as a
    ``user_message_chunk`` (defanged: it holds attached files), each answer's reasoning as an
    ``agent_thought_chunk`` and its text as an ``agent_message_chunk`` (both defanged, as the loop sends
    them live), each tool call as a
    ``tool_call`` completed by the ``tool_call_update`` of its result (the tool's output, as live)."""
    for message in messages:
        if isinstance(message, UserMessage):
            # defanged too: the task holds attached files' text, not only what the user typed
            yield helpers.update_user_message_text(defang_markdown(message.text).text)
        elif isinstance(message, AssistantMessage):
            if message.reasoning:
                yield helpers.update_agent_thought_text(defang_markdown(message.reasoning).text)
            if message.text:
                yield helpers.update_agent_message_text(defang_markdown(message.text).text)
            for call in message.tool_calls:
                yield tool_call_start(root, call.call_id, call.name, call.arguments)
        elif isinstance(message, ToolResultMessage):
            yield tool_call_end(message.call_id, message.is_error, tool_output(message.content))


_NEUTRALIZED = re.compile(r"&lt;(?=\s*/?\s*(?:tool_result|instructions))", re.IGNORECASE)


def tool_output(stored: str) -> str:
    """The output a tool gave, from the stored result the model read: ``core.context.wrap_tool_result``'s
    element taken off and its neutralized tag openers (``&lt;tool_result``) shown as ``<`` again."""
    return _NEUTRALIZED.sub("<", unwrap_tool_result(stored))
