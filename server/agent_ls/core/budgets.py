"""Run budgets besides the turn limit: tokens and US dollars spent by one run's model calls.

A budget is checked before each model call after the first (``core.loop``): the tool results of the
turn that spent it are in the history, so the run stops cleanly (status ``stopped``) with a reason that
names the budget, and a follow-up can continue from there. Tokens are what the provider reports (input
plus output of every call: each call's input is the whole context again, which is what is billed), or
the bytes / 4 estimate when it reports none. Cost comes from the provider's price table; with a cost
budget and no prices the run stops at the first check rather than run unchecked.
Peers: Codex and Claude Code stop on turn limits; a cost cap follows Claude Code's ``--max-budget-usd``.
"""

from __future__ import annotations

from agent_ls.core.messages import Usage


def budget_spent(
    total: Usage, *, max_tokens: int | None, max_cost_usd: float | None, model_name: str
) -> str | None:
    """The stop reason when a budget is spent by ``total`` (the run's usage so far), else None.

    Reasons: ``token budget of 5,000 spent (5,210 tokens used)``; ``cost budget of $0.50 spent
    ($0.5123 used)``; ``cost budget of $0.50 cannot be checked: model M has no prices (set prices for
    its provider in agent-ls.toml)``.
    """
    used = total.input_tokens + total.output_tokens
    if max_tokens is not None and used >= max_tokens:
        approx = "~" if total.estimated else ""
        return f"token budget of {max_tokens:,} spent ({approx}{used:,} tokens used)"
    if max_cost_usd is None:
        return None
    if total.cost_usd is None:
        return (
            f"cost budget of ${max_cost_usd:g} cannot be checked: model {model_name} has no prices "
            "(set prices for its provider in agent-ls.toml)"
        )
    if total.cost_usd >= max_cost_usd:
        return f"cost budget of ${max_cost_usd:g} spent (${total.cost_usd:.4f} used)"
    return None
