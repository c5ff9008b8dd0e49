"""Transcript lines: one short human-readable line per event, shared by the LSP log and the CLI.

Streamed deltas are not transcript lines of their own (the completed message is); see ``line_for``.
A todo list is shown whole, one item per line, and so are review findings (``path:line: severity: message``);
a subagent's events are indented under ``⤷ [description]``.

Text from the model, the workspace or a tool is shown through ``core.visible_text.visible``: escape
sequences, carriage returns and bidi or zero-width characters appear as ``^[``, ``^M``, ``<U+202E>``, so a
line cannot act on the terminal or log viewer that shows it. Names, commands, arguments and reasons also
show a line feed as ``^J``, so each stays on its event's line; the model's text keeps its line breaks.
"""

from __future__ import annotations

from typing import assert_never

from agent_ls.core.checks import check_line
from agent_ls.core.events import (
    ChecksRan,
    ContextCompacted,
    Event,
    FindingsReported,
    InstructionsLoaded,
    McpServerStatus,
    MessageCompleted,
    MessageDelta,
    ModelRetrying,
    ProposalChanged,
    RemoteContentDefanged,
    RunEnded,
    RunStarted,
    SubagentEvent,
    TodosChanged,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    UsageReported,
    VerdictGiven,
)
from agent_ls.core.messages import Usage
from agent_ls.core.todos import STATUS_MARKS
from agent_ls.core.visible_text import visible

MAX_LINE_CHARS = 400


def _clip(text: str, limit: int = MAX_LINE_CHARS, *, newlines: bool = False) -> str:
    # Cut before escaping: ``visible`` maps each character to one or more, so the first ``limit``
    # characters of the escaped text come from the first ``limit`` of the text. Escaping a 400 KB
    # write_file argument whole took 8 ms on the event loop, for a line of 300 characters.
    text = visible(text.strip()[: limit + 1], newlines=newlines)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _names(names: tuple[str, ...]) -> str:
    return ", ".join(visible(name, newlines=False) for name in names)


def line_for(event: Event) -> str | None:
    """The transcript line for ``event``, or None when the event has no line of its own."""
    match event:
        case RunStarted(session_id=session_id, task=task, model=model, unsandboxed=unsandboxed):
            task_line = _clip(task, 200, newlines=True)
            started = f"▶ run started with {_clip(model)} (session {session_id}): {task_line}"
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
                return f"model (reasoning): {_clip(reasoning, 300, newlines=True)}"
            return f"model: {_clip(text, newlines=True)}"
        case RemoteContentDefanged(targets=targets):
            shown = _names(targets)
            return f"  ⚠ not loaded: images or embeds in the model's text, from {shown} (shown as text)"
        case ToolCallStarted(name=name, arguments=arguments):
            return f"→ {_clip(name)} {_clip(arguments, 300)}"
        case VerdictGiven(verdict=verdict, rule=rule, subject=subject, approval=approval, unasked=unasked):
            if unasked:
                asked = f", no one to ask: {'denied' if verdict == 'deny' else 'allowed'} ({unasked})"
            else:
                asked = f", user answered {approval}" if approval else ""
            return f"  permission {verdict} ({_clip(rule)}{asked}): {_clip(subject, 200)}"
        case ToolCallFinished(name=name, is_error=is_error, output=output):
            first = output.strip().splitlines()[0] if output.strip() else "(no output)"
            more = len(output.strip().splitlines()) - 1
            suffix = f" (+{more} lines)" if more > 0 else ""
            return f"  {'✗' if is_error else '✓'} {_clip(name)}: {_clip(first, 300)}{suffix}"
        case UsageReported(total=total):
            return f"  usage so far: {usage_text(total)}"
        case ProposalChanged(paths=paths):
            return f"  proposal: {len(paths)} file(s) changed: {_names(paths)}"
        case InstructionsLoaded(what="unknown-skill", detail=detail):
            return f"  instructions (unknown skill): {_clip(detail)}"
        case InstructionsLoaded(what=what, sources=sources, detail=detail):
            shown = _names(sources) or "(none)"
            return f"  instructions ({what}): {_clip(shown, 300)}" + (f" — {_clip(detail)}" if detail else "")
        case ContextCompacted(reason=why, how=how, tokens_before=before, tokens_after=after, pruned=pruned):
            results = f", {pruned} tool result(s) pruned" if pruned else ""
            return f"  context compacted ({why}, {how}{results}): ~{before:,} → ~{after:,} tokens"
        case TodosChanged(items=items):
            todo_lines = (f"\n    {STATUS_MARKS[item.status]} {_clip(item.content, 200)}" for item in items)
            return "  todos:" + "".join(todo_lines)
        case FindingsReported(findings=findings, files=files):
            finding_lines = (f"\n    {_clip(str(finding), 300)}" for finding in findings)
            covered = _names(files) or "(no file)"
            return f"  review findings: {len(findings)} in {covered}" + "".join(finding_lines)
        case SubagentEvent(description=description, event=inner):
            line = line_for(inner)
            if line is None:
                return None
            prefix = f"  ⤷ [{_clip(description, 60)}] "
            return prefix + line.strip().replace("\n", "\n" + " " * len(prefix))
        case McpServerStatus(server=server, state=state, detail=detail):
            if not detail:
                return f"  mcp {_clip(server, 60)}: {state}"
            shown = f" ({_clip(detail, 300)})" if state == "connected" else f": {_clip(detail, 300)}"
            return f"  mcp {_clip(server, 60)}: {state}{shown}"
        case ChecksRan(results=results, round=round_):
            check_lines = (f"\n    {_clip(check_line(result), 300)}" for result in results)
            return f"  acceptance checks (round {round_}):" + "".join(check_lines)
        case RunEnded(status=status, reason=reason):
            return f"■ run {status}: {_clip(reason)}"
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
