"""Budgets are finite numbers above 0 wherever they are read (new-user trial F10): a NaN budget is never
"spent" (every comparison with it is false), an infinite one is no budget; both are refused."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from agent_ls.config.schema import BudgetConfig
from agent_ls.lsp.protocol import RunParams
from agent_ls.settings import EditorSettings


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_cost_budgets_are_refused_everywhere(value: float) -> None:
    settings, problems = EditorSettings.from_client({"agentLs": {"maxCostUsd": value}})
    assert settings.max_cost_usd is None and any("maxCostUsd" in p for p in problems), problems
    with pytest.raises(ValidationError, match="finite"):
        RunParams.model_validate({"task": "x", "maxCostUsd": value})
    with pytest.raises(ValidationError, match="finite"):
        BudgetConfig.model_validate({"max_cost_usd": value})


def test_a_finite_budget_is_kept() -> None:
    settings, problems = EditorSettings.from_client({"agentLs": {"maxCostUsd": 0.5}})
    assert settings.max_cost_usd == 0.5 and problems == []
    assert RunParams.model_validate({"task": "x", "maxCostUsd": 0.5}).max_cost_usd == 0.5
