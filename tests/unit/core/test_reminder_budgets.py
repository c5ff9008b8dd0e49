"""The reminder's text and the budgets' stop reasons (``core/reminder.py``, ``core/budgets.py``)."""

from __future__ import annotations

from agent_ls.core.budgets import budget_spent
from agent_ls.core.messages import Usage
from agent_ls.core.reminder import ReminderFacts, reminder_text


def test_turn_one_with_nothing_pending_has_no_reminder() -> None:
    assert reminder_text(ReminderFacts(turn=1, max_turns=15, used=Usage())) == ""


def test_the_reminder_says_turn_budgets_proposal_and_todos() -> None:
    facts = ReminderFacts(
        turn=3,
        max_turns=15,
        used=Usage(input_tokens=7_000, output_tokens=1_000, cost_usd=0.12),
        max_tokens=20_000,
        max_cost_usd=0.5,
        pending_files=[f"f{i}.py" for i in range(12)],
        todos="[x] read\n[>] fix",
    )
    assert reminder_text(facts) == (
        "<reminder>\n"
        "agent-ls status (not from the user): turn 3 of 15; token budget: 12,000 of 20,000 left; "
        "cost budget: $0.3800 of $0.5 left.\n"
        "Pending proposal (not applied yet): f0.py, f1.py, f2.py, f3.py, f4.py, f5.py, f6.py, f7.py, f8.py, "
        "f9.py, and 2 more\n"
        "Todo list:\n[x] read\n[>] fix\n"
        "</reminder>"
    )


def test_turn_one_of_a_follow_up_recalls_the_pending_proposal() -> None:
    facts = ReminderFacts(turn=1, max_turns=15, used=Usage(), pending_files=["a.py"])
    assert reminder_text(facts) == (
        "<reminder>\nagent-ls status (not from the user): turn 1 of 15.\n"
        "Pending proposal (not applied yet): a.py\n</reminder>"
    )


def test_budgets_name_what_was_spent() -> None:
    used = Usage(input_tokens=900, output_tokens=200, estimated=True)
    assert budget_spent(used, max_tokens=1_000, max_cost_usd=None, model_name="m") == (
        "token budget of 1,000 spent (~1,100 tokens used)"
    )
    assert budget_spent(used, max_tokens=2_000, max_cost_usd=None, model_name="m") is None
    priced = Usage(input_tokens=10, output_tokens=1, cost_usd=0.6)
    assert budget_spent(priced, max_tokens=None, max_cost_usd=0.5, model_name="m") == (
        "cost budget of $0.5 spent ($0.6000 used)"
    )
    assert budget_spent(used, max_tokens=None, max_cost_usd=0.5, model_name="openai/x") == (
        "cost budget of $0.5 cannot be checked: model openai/x has no prices "
        "(set prices for its provider in agent-ls.toml)"
    )
