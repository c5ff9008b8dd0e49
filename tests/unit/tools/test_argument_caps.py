"""What a model can put in one call is bounded for the tools whose arguments are kept, shown or re-sent
(new-user trial F11/F12): a 100,000-character todo item would ride in every request's reminder, a plan's
lists are stored and carried into the next run, review_findings reads a file per path. Each over-long
list or string is an argument error the model can fix, and nothing is kept."""

from __future__ import annotations

from agent_ls.core.plan import Plan
from agent_ls.core.todos import TodoList
from agent_ls.tools import submit_plan, todo_write
from tests.unit.tools.harness import make_harness


async def test_a_todo_item_over_the_cap_is_refused_and_the_list_kept() -> None:
    todos = TodoList()
    harness = make_harness({}, tools=[todo_write.todo_tool(todos)])
    long_item = {"content": "x" * 100_000, "status": "pending", "activeForm": "Doing x"}
    result = await harness.call("todo_write", {"todos": [long_item]})
    assert result.is_error and "todos.0.content" in result.content
    assert f"at most {todo_write.MAX_ITEM_CHARS} characters" in result.content
    assert todos.items == ()
    fits = {"content": "x" * todo_write.MAX_ITEM_CHARS, "status": "pending", "activeForm": "Doing x"}
    assert not (await harness.call("todo_write", {"todos": [fits]})).is_error
    assert len(todos.items) == 1


async def test_a_plan_over_the_caps_is_refused() -> None:
    plans: list[Plan] = []
    harness = make_harness({}, tools=[submit_plan.submit_plan_tool(plans.append)])
    plan = {"summary": "s", "files": ["a.py"], "steps": ["do"], "checks": [], "risks": []}
    too_many = plan | {"steps": ["do"] * (submit_plan.MAX_ITEMS + 1)}
    too_long = plan | {"risks": ["r" * (submit_plan.MAX_ITEM_CHARS + 1)]}
    summary = plan | {"summary": "s" * (submit_plan.MAX_SUMMARY_CHARS + 1)}
    files = plan | {"files": ["a.py"] * (submit_plan.MAX_FILES + 1)}
    for bad in (too_many, too_long, summary, files):
        assert (await harness.call("submit_plan", bad)).is_error
    assert plans == []
    assert not (await harness.call("submit_plan", plan)).is_error
    assert len(plans) == 1
