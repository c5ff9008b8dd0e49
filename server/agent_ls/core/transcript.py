"""Transcript lines: one short human-readable line per event, shared by the LSP log and the CLI.

Model text deltas are not transcript lines of their own (the completed message is); see ``line_for``.
"""

from __future__ import annotations

from typing import assert_never

from agent_ls.core.events import (
    Event,
    MessageDelta,
    ProposalChanged,
    RunEnded,
    RunStarted,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    UsageReported,
    VerdictGiven,
)

MAX_LINE_CHARS = 400


def _clip(text: str, limit: int = MAX_LINE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def line_for(event: Event) -> str | None:
    """The transcript line for ``event``, or None when the event has no line of its own."""
    match event:
        case RunStarted(session_id=session_id, task=task, model=model):
            return f"▶ run started with {model} (session {session_id}): {_clip(task, 200)}"
        case TurnStarted(turn=turn, max_turns=max_turns):
            return f"— turn {turn}/{max_turns}"
        case MessageDelta(text=text):
            return f"model: {_clip(text)}"
        case ToolCallStarted(name=name, arguments=arguments):
            return f"→ {name} {_clip(arguments, 300)}"
        case VerdictGiven(verdict=verdict, rule=rule, subject=subject, approval=approval):
            asked = f", user answered {approval}" if approval else ""
            return f"  permission {verdict} ({rule}{asked}): {_clip(subject, 200)}"
        case ToolCallFinished(name=name, is_error=is_error, output=output):
            first = output.strip().splitlines()[0] if output.strip() else "(no output)"
            more = len(output.strip().splitlines()) - 1
            suffix = f" (+{more} lines)" if more > 0 else ""
            return f"  {'✗' if is_error else '✓'} {name}: {_clip(first, 300)}{suffix}"
        case UsageReported(total=total):
            approx = "~" if total.estimated else ""
            return f"  tokens so far: {approx}{total.input_tokens} in, {approx}{total.output_tokens} out"
        case ProposalChanged(paths=paths):
            return f"  proposal: {len(paths)} file(s) changed: {', '.join(paths)}"
        case RunEnded(status=status, reason=reason):
            return f"■ run {status}: {reason}"
        case _:
            assert_never(event)
