"""The shared wire plumbing: history validity before sending, and prices."""

from __future__ import annotations

import pytest

from agent_ls.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from agent_ls.models.base import INTERRUPTED, Prices, valid_history


def _calls(*ids: str) -> AssistantMessage:
    return AssistantMessage(tool_calls=tuple(ToolCall(i, "read_file", "{}") for i in ids))


def _result(call_id: str, content: str = "ok") -> ToolResultMessage:
    return ToolResultMessage(call_id=call_id, name="read_file", content=content)


def test_a_valid_history_is_unchanged() -> None:
    history = [
        SystemMessage("s"),
        UserMessage("u"),
        _calls("a", "b"),
        _result("a"),
        _result("b"),
        AssistantMessage("done"),
    ]
    assert valid_history(history) == history


def test_an_unanswered_call_gets_an_interrupted_result_in_place() -> None:
    history = [UserMessage("u"), _calls("a", "b"), _result("a"), UserMessage("next task")]
    assert valid_history(history) == [
        UserMessage("u"),
        _calls("a", "b"),
        _result("a"),
        ToolResultMessage(call_id="b", name="read_file", content=INTERRUPTED, is_error=True),
        UserMessage("next task"),
    ]


def test_an_unanswered_call_at_the_end_is_answered() -> None:
    fixed = valid_history([UserMessage("u"), _calls("a")])
    assert fixed[-1] == ToolResultMessage(call_id="a", name="read_file", content=INTERRUPTED, is_error=True)


def test_orphan_and_duplicate_results_are_dropped() -> None:
    history = [UserMessage("u"), _result("ghost"), _calls("a"), _result("a"), _result("a", "again")]
    assert valid_history(history) == [UserMessage("u"), _calls("a"), _result("a")]


def test_a_result_for_an_older_assistant_message_is_dropped() -> None:
    history = [_calls("a"), _result("a"), _calls("b"), _result("a", "late"), _result("b")]
    assert valid_history(history) == [_calls("a"), _result("a"), _calls("b"), _result("b")]


@pytest.mark.parametrize(
    ("prices", "usage", "cost"),
    [
        (Prices(input=3, output=15), Usage(input_tokens=1_000_000, output_tokens=100_000), 3 + 1.5),
        (
            Prices(input=3, output=15, cached_input=0.3),
            Usage(input_tokens=1_000_000, output_tokens=0, cached_input_tokens=800_000),
            0.2 * 3 + 0.8 * 0.3,
        ),
        (Prices(input=2), Usage(input_tokens=500_000, cached_input_tokens=500_000), 1.0),  # no cached price
        (Prices(), Usage(input_tokens=10, output_tokens=10), 0.0),
    ],
)
def test_cost_uses_the_cached_price_for_cached_tokens(prices: Prices, usage: Usage, cost: float) -> None:
    assert prices.cost(usage) == pytest.approx(cost)


def test_usage_sums_keep_unknown_costs_unknown() -> None:
    assert (Usage(input_tokens=1) + Usage(output_tokens=2)).cost_usd is None
    assert (Usage(cost_usd=0.25) + Usage(cost_usd=0.5)).cost_usd == 0.75
    assert (Usage(cost_usd=0.25) + Usage()).cost_usd == 0.25
