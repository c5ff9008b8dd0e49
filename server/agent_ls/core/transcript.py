"""Transcript lines: one short human-readable line per event, shared by the LSP log and the CLI.

Streamed deltas are not transcript lines of their own (the completed message is); see ``line_for``.
"""

from __future__ import annotations

from typing import assert_never

from agent_ls.core.events import (
    Event,
    InstructionsLoaded,
    MessageCompleted,
    MessageDelta,
    ModelRetrying,
    ProposalChanged,
    RunEnded,
    RunStarted,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    UsageReported,
    VerdictGiven,
)
from agent_ls.core.messages import Usage

MAX_LINE_CHARS = 400


def _clip(text: str, limit: int = MAX_LINE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def line_for(event: Event) -> str | None:
    """The transcript line for ``event``, or None when the event has no line of its own."""
    match event:
        case RunStarted(session_id=session_id, task=task, model=model, unsandboxed=unsandboxed):
            started = f"▶ run started with {model} (session {session_id}): {_clip(task, 200)}"
            return f"{started}\n  ⚠ {unsandboxed}" if unsandboxed else started
        case TurnStarted(turn=turn, max_turns=max_turns):
            return f"— turn {turn}/{max_turns}"
        case MessageDelta():
            return None
        case ModelRetrying(attempt=attempt, max_attempts=most, wait_s=wait_s, reason=reason, partial=partial):
            void = "; the partial answer above is void" if partial else ""
            return f"↻ retrying in {wait_s:.1f} s (attempt {attempt}/{most}){void}: {_clip(reason, 300)}"
        case MessageCompleted(text=text, reasoning=reasoning):
            if not text:
                return f"model (reasoning): {_clip(reasoning, 300)}"
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
            return f"  usage so far: {usage_text(total)}"
        case ProposalChanged(paths=paths):
            return f"  proposal: {len(paths)} file(s) changed: {', '.join(paths)}"
        case InstructionsLoaded(what="unknown-skill", detail=detail):
            return f"  instructions (unknown skill): {detail}"
        case InstructionsLoaded(what=what, sources=sources, detail=detail):
            shown = ", ".join(sources) or "(none)"
            return f"  instructions ({what}): {_clip(shown, 300)}" + (f" — {detail}" if detail else "")
        case RunEnded(status=status, reason=reason):
            return f"■ run {status}: {reason}"
        case _:
            assert_never(event)


def usage_text(usage: Usage) -> str:
    """``1,234 in (1,000 cached), 56 out, $0.0123``; ``~`` marks estimates; no cost part without prices."""
    approx = "~" if usage.estimated else ""
    cached = f" ({usage.cached_input_tokens:,} cached)" if usage.cached_input_tokens else ""
    text = f"{approx}{usage.input_tokens:,} in{cached}, {approx}{usage.output_tokens:,} out"
    return text if usage.cost_usd is None else f"{text}, {approx}{cost_text(usage.cost_usd)}"


def cost_text(cost_usd: float) -> str:
    """Dollars with 4 decimals under $1 (``$0.0123``), 2 above (``$1.23``)."""
    return f"${cost_usd:.4f}" if cost_usd < 1 else f"${cost_usd:,.2f}"
