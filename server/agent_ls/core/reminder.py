"""The reminder: a short status note at the end of each request, outside the cached prefix.

What it holds, in order, each line only when it says something: the turn and the turns left, the
token and cost budgets left, the pending proposal's files, the todo list. It goes to the model as a
final user message of the request only (``core.loop``): it is never stored in the history, so every
request's prefix (system prompt, tools, history) is byte-identical to the one before and a provider's
prompt cache keeps working (behaviour follows Claude Code's ``<system-reminder>`` messages, which also
carry the todo list). The first turn of a run gets one only when there is a proposal or a todo list to
recall: the first request stays as light as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_ls.core.messages import Usage

REMINDER_TAG = "reminder"
PENDING_SHOWN = 10


@dataclass(frozen=True)
class ReminderFacts:
    """What a reminder may say.

    Attributes:
        turn / max_turns: the coming turn (1-based) and the run's limit.
        used: this run's usage so far (tokens; cost in US dollars or None).
        max_tokens / max_cost_usd: the run's budgets, or None.
        pending_files: the proposal's files (workspace-relative, sorted), not applied yet.
        todos: the todo list as ``core.todos.TodoList.render`` writes it ("" for none).
    """

    turn: int
    max_turns: int
    used: Usage
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    pending_files: Sequence[str] = ()
    todos: str = ""


def reminder_text(facts: ReminderFacts) -> str:
    """The reminder's text, or "" when there is nothing worth a message (turn 1 with nothing pending).

    Shape::

        <reminder>
        agent-ls status (not from the user): turn 3 of 15; token budget: 12,000 of 20,000 left.
        Pending proposal (not applied yet): src/a.py, README.md
        Todo list:
        [x] read the code
        [>] fix the bug
        </reminder>
    """
    if facts.turn == 1 and not facts.pending_files and not facts.todos:
        return ""
    status = [f"turn {facts.turn} of {facts.max_turns}"]
    if facts.max_tokens is not None:
        left = max(0, facts.max_tokens - facts.used.input_tokens - facts.used.output_tokens)
        status.append(f"token budget: {left:,} of {facts.max_tokens:,} left")
    if facts.max_cost_usd is not None and facts.used.cost_usd is not None:
        left_usd = max(0.0, facts.max_cost_usd - facts.used.cost_usd)
        status.append(f"cost budget: ${left_usd:.4f} of ${facts.max_cost_usd:g} left")
    lines = [f"agent-ls status (not from the user): {'; '.join(status)}."]
    if facts.pending_files:
        shown = ", ".join(facts.pending_files[:PENDING_SHOWN])
        more = len(facts.pending_files) - PENDING_SHOWN
        lines.append(
            f"Pending proposal (not applied yet): {shown}" + (f", and {more} more" if more > 0 else "")
        )
    if facts.todos:
        lines.append(f"Todo list:\n{facts.todos}")
    return f"<{REMINDER_TAG}>\n" + "\n".join(lines) + f"\n</{REMINDER_TAG}>"
