"""The dispatcher: every error path gives exactly one result with the call's id, and exact events."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from pydantic import BaseModel, Field

from agent_ls.core.errors import ToolError
from agent_ls.core.events import ProposalChanged, ToolCallFinished, ToolCallStarted, VerdictGiven
from agent_ls.core.messages import ToolResultMessage
from agent_ls.core.ports import ApprovalRequest, CommandResult
from agent_ls.policy.engine import SESSION_RULE
from agent_ls.tools import bash, default_tools
from agent_ls.tools.base import Tool, ToolContext, ToolOutput
from agent_ls.tools.registry import truncate_middle
from tests.unit.tools.harness import make_harness

TOOL_NAMES = "bash, edit_file, grep, list_files, read_file, write_file"


class PathArgs(BaseModel):
    path: str = Field(description="A path.")


def _tool(name: str, run: object) -> Tool[PathArgs]:
    return Tool(name=name, description=name, args=PathArgs, run=run, mutates=False, permission="read")  # type: ignore[arg-type]


async def _sleep(args: PathArgs, ctx: ToolContext) -> ToolOutput:
    await asyncio.sleep(10)
    return ToolOutput("slept")


async def _boom(args: PathArgs, ctx: ToolContext) -> ToolOutput:
    raise ValueError("the disk is on fire")


async def _refuse(args: PathArgs, ctx: ToolContext) -> ToolOutput:
    raise ToolError("cannot do that here; try list_files")


async def _inner_timeout(args: PathArgs, ctx: ToolContext) -> ToolOutput:
    raise TimeoutError("upstream timed out")


async def _long(args: PathArgs, ctx: ToolContext) -> ToolOutput:
    return ToolOutput("a" * 30 + "b" * 40 + "c" * 30)


MAKE_LINT_REQUEST = ApprovalRequest(
    "bash",
    "make lint",
    'no rule matches "make lint"',
    rule="fallback: no rule matches",
    no_always="the user config cannot be written",
)


def _allow_read(call_id: str, name: str, subject: str = "x") -> VerdictGiven:
    return VerdictGiven(call_id, name, "allow", "read: ** (built-in)", subject)


async def test_unknown_tool_lists_the_real_ones() -> None:
    h = make_harness()
    result = await h.call("search_code", '{"query": "auth"}', call_id="call_9")
    text = f"Error: no tool named 'search_code'. Available tools: {TOOL_NAMES}."
    assert result == ToolResultMessage("call_9", "search_code", text, is_error=True)
    assert h.events == [
        ToolCallStarted("call_9", "search_code", '{"query": "auth"}'),
        ToolCallFinished("call_9", "search_code", True, text),
    ]


async def test_bad_json_says_how_to_fix_it() -> None:
    h = make_harness()
    result = await h.call("read_file", '{"path": "a.py"', call_id="c2")
    text = (
        "Error: the arguments of read_file are not valid JSON (Expecting ',' delimiter: line 1 column 16 "
        "(char 15)). Send one JSON object matching the tool's schema."
    )
    assert result == ToolResultMessage("c2", "read_file", text, is_error=True)
    assert h.events == [
        ToolCallStarted("c2", "read_file", '{"path": "a.py"'),
        ToolCallFinished("c2", "read_file", True, text),
    ]


async def test_a_json_value_that_is_not_an_object_is_refused() -> None:
    h = make_harness()
    result = await h.call("read_file", '["a.py"]')
    assert result == ToolResultMessage(
        "c1",
        "read_file",
        "Error: the arguments of read_file must be a JSON object, not an array. "
        "Send one JSON object matching the tool's schema.",
        is_error=True,
    )


async def test_empty_arguments_mean_an_empty_object() -> None:
    h = make_harness({"a.py": "x\n"})
    result = await h.call("list_files", "")
    assert result == ToolResultMessage("c1", "list_files", "a.py")
    assert h.events == [
        ToolCallStarted("c1", "list_files", ""),
        _allow_read("c1", "list_files", "."),
        ToolCallFinished("c1", "list_files", False, "a.py"),
    ]


async def test_invalid_arguments_list_each_field_and_the_expected_signature() -> None:
    h = make_harness()
    result = await h.call("read_file", {"file_path": "a.py", "offset": 0})
    text = (
        "Error: invalid arguments for read_file:\n"
        "- path: Field required\n"
        "- offset: Input should be greater than or equal to 1\n"
        "- file_path: Extra inputs are not permitted\n"
        "Expected: read_file(path: string, offset?: integer = 1, limit?: integer = 2000, "
        "column?: integer = 1). "
        "Fix these fields and call read_file again."
    )
    assert result == ToolResultMessage("c1", "read_file", text, is_error=True)
    assert [type(e) for e in h.events] == [ToolCallStarted, ToolCallFinished]


async def test_policy_deny_blocks_without_asking() -> None:
    h = make_harness()
    result = await h.call("bash", {"command": "grep foo | rm -rf /"})
    text = (
        "Blocked by policy (bash: rm * (built-in)): grep foo | rm -rf /. Do not retry it or a variant of it; "
        "suggest an alternative, or ask the user to run it themselves."
    )
    assert result == ToolResultMessage("c1", "bash", text, is_error=True)
    assert h.events == [
        ToolCallStarted("c1", "bash", '{"command": "grep foo | rm -rf /"}'),
        VerdictGiven("c1", "bash", "deny", "bash: rm * (built-in)", "grep foo | rm -rf /"),
        ToolCallFinished("c1", "bash", True, text),
    ]
    assert (h.approver.requests, h.runner.calls) == ([], [])


async def test_allowed_command_runs_without_asking() -> None:
    h = make_harness(results=[CommandResult(exit_code=0, output="a.py\n")])
    result = await h.call("bash", {"command": "ls"})
    assert result == ToolResultMessage("c1", "bash", "exit code 0\na.py\n")
    assert h.events == [
        ToolCallStarted("c1", "bash", '{"command": "ls"}'),
        VerdictGiven("c1", "bash", "allow", "bash: ls* (built-in)", "ls"),
        ToolCallFinished("c1", "bash", False, "exit code 0\na.py\n"),
    ]
    assert (h.approver.requests, h.runner.calls) == ([], [("ls", 50.0)])


async def test_user_denial_is_reported_as_denied_by_user() -> None:
    h = make_harness(replies=["deny"])
    result = await h.call("bash", {"command": "make lint"})
    text = "denied by user: make lint was not run."
    assert result == ToolResultMessage("c1", "bash", text, is_error=True)
    assert h.events == [
        ToolCallStarted("c1", "bash", '{"command": "make lint"}'),
        VerdictGiven("c1", "bash", "deny", "fallback: no rule matches", "make lint", approval="deny"),
        ToolCallFinished("c1", "bash", True, text),
    ]
    assert h.approver.requests == [MAKE_LINT_REQUEST]
    assert h.runner.calls == []


async def test_session_approval_is_asked_once_per_normalized_command() -> None:
    h = make_harness(replies=["session"])
    first = await h.call("bash", {"command": "make lint"}, call_id="c1")
    second = await h.call("bash", {"command": "make   lint "}, call_id="c2")
    assert (first.is_error, second.is_error) == (False, False)
    assert h.approver.requests == [MAKE_LINT_REQUEST]
    assert [e for e in h.events if isinstance(e, VerdictGiven)] == [
        VerdictGiven("c1", "bash", "allow", "fallback: no rule matches", "make lint", approval="session"),
        VerdictGiven("c2", "bash", "allow", SESSION_RULE, "make   lint "),
    ]
    assert h.runner.calls == [("make lint", 50.0), ("make   lint ", 50.0)]


async def test_once_approval_asks_again_next_time() -> None:
    h = make_harness(replies=["once", "deny"])
    first = await h.call("bash", {"command": "make lint"}, call_id="c1")
    second = await h.call("bash", {"command": "make lint"}, call_id="c2")
    assert (first.is_error, second.content) == (False, "denied by user: make lint was not run.")
    assert len(h.approver.requests) == 2
    assert h.runner.calls == [("make lint", 50.0)]


async def test_refused_path_is_a_deny_verdict_and_an_error_result() -> None:
    h = make_harness()
    result = await h.call("read_file", {"path": "../secrets.txt"})
    text = "Error: path '../secrets.txt' is outside the workspace /ws; use a path inside it"
    assert result == ToolResultMessage("c1", "read_file", text, is_error=True)
    assert h.events == [
        ToolCallStarted("c1", "read_file", '{"path": "../secrets.txt"}'),
        VerdictGiven("c1", "read_file", "deny", "workspace: path refused", "../secrets.txt"),
        ToolCallFinished("c1", "read_file", True, text),
    ]


async def _nap(args: PathArgs, ctx: ToolContext) -> ToolOutput:
    await asyncio.sleep(0.2)
    return ToolOutput("rested")


async def test_a_tool_that_bounds_its_own_work_outlives_the_registry_timeout() -> None:
    """bash: making the shadow copy of a large repository first may take longer than the registry's
    catch-all; the command has its own timeout, so the registry's does not cut the call short."""
    own = replace(_tool("napper", _nap), own_timeout=True)
    h = make_harness(tools=[own, _tool("sleepy", _nap)], tool_timeout_s=0.05)
    assert (await h.call("napper", {"path": "x"})).content == "rested"
    assert (await h.call("sleepy", {"path": "x"}, call_id="c2")).content.endswith(
        "timed out after 0.05 s and was stopped."
    )
    assert bash.TOOL.own_timeout


async def test_timeout_stops_the_tool() -> None:
    h = make_harness(tools=[_tool("sleepy", _sleep)], tool_timeout_s=0.01)
    result = await h.call("sleepy", {"path": "x"})
    text = "Error: sleepy timed out after 0.01 s and was stopped."
    assert result == ToolResultMessage("c1", "sleepy", text, is_error=True)
    assert h.events == [
        ToolCallStarted("c1", "sleepy", '{"path": "x"}'),
        _allow_read("c1", "sleepy"),
        ToolCallFinished("c1", "sleepy", True, text),
    ]


async def test_a_timeout_error_raised_by_the_tool_itself_is_not_our_timeout() -> None:
    h = make_harness(tools=[_tool("slow_upstream", _inner_timeout)])
    result = await h.call("slow_upstream", {"path": "x"})
    assert result.content == "Error: slow_upstream failed: TimeoutError: upstream timed out"


async def test_exception_becomes_an_error_result_without_traceback() -> None:
    h = make_harness(tools=[_tool("boom", _boom)])
    result = await h.call("boom", {"path": "x"}, call_id="c7")
    text = "Error: boom failed: ValueError: the disk is on fire"
    assert result == ToolResultMessage("c7", "boom", text, is_error=True)
    assert h.events == [
        ToolCallStarted("c7", "boom", '{"path": "x"}'),
        _allow_read("c7", "boom"),
        ToolCallFinished("c7", "boom", True, text),
    ]


async def test_tool_error_message_reaches_the_model() -> None:
    h = make_harness(tools=[_tool("picky", _refuse)])
    result = await h.call("picky", {"path": "x"})
    assert result == ToolResultMessage(
        "c1", "picky", "Error: cannot do that here; try list_files", is_error=True
    )


async def test_cancellation_propagates_and_no_result_is_made() -> None:
    h = make_harness(tools=[_tool("sleepy", _sleep)])
    task = asyncio.create_task(h.call("sleepy", {"path": "x"}))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert h.events == [ToolCallStarted("c1", "sleepy", '{"path": "x"}'), _allow_read("c1", "sleepy")]


async def test_output_is_truncated_centrally_and_the_event_carries_what_the_model_reads() -> None:
    h = make_harness(tools=[_tool("chatty", _long)], max_output_chars=20)
    result = await h.call("chatty", {"path": "x"})
    text = "aaaaaaaaaa\n[... 80 characters omitted: line 1 of 1 ...]\ncccccccccc"
    assert result == ToolResultMessage("c1", "chatty", text)
    assert h.events[-1] == ToolCallFinished("c1", "chatty", False, text)


def test_truncate_middle_keeps_short_text() -> None:
    assert truncate_middle("short", 5) == "short"
    assert truncate_middle("abcdef", 5) == "ab\n[... 1 character omitted: line 1 of 1 ...]\ndef"
    assert truncate_middle("x" * 12_345 + "yz", 2) == "x\n[... 12,345 characters omitted: line 1 of 1 ...]\nz"


def test_truncate_middle_says_which_lines_it_omits() -> None:
    text = "".join(f"{n:04}\n" for n in range(1, 5_401))  # 5 characters a line
    cut = truncate_middle(text, 2_000)
    assert cut == (
        text[:1_000] + "\n[... 25,000 characters omitted: lines 201–5,200 of 5,400 ...]\n" + text[-1_000:]
    )
    assert truncate_middle("ab\ncd\nef", 4) == "ab\n[... 4 characters omitted: lines 1–2 of 3 ...]\nef"


async def test_a_changed_proposal_is_announced_after_the_result() -> None:
    h = make_harness({"b.py": "x = 1\n", "a.py": "y = 2\n"})
    await h.call("edit_file", {"path": "b.py", "old_string": "1", "new_string": "2"}, call_id="e1")
    await h.call("write_file", {"path": "a.py", "content": "y = 3\n"}, call_id="e2")
    assert h.events[-4:] == [
        ToolCallStarted("e2", "write_file", '{"path": "a.py", "content": "y = 3\\n"}'),
        VerdictGiven("e2", "write_file", "allow", "edit: ** (built-in)", "a.py"),
        ToolCallFinished(
            "e2", "write_file", False, "Overwrote a.py. The change is a proposal the user reviews."
        ),
        ProposalChanged(("a.py", "b.py")),
    ]


async def test_an_edit_that_leaves_the_proposal_unchanged_announces_nothing() -> None:
    h = make_harness({"a.py": "y = 2\n"})
    await h.call("write_file", {"path": "a.py", "content": "y = 2\n"})
    assert [type(e) for e in h.events] == [ToolCallStarted, VerdictGiven, ToolCallFinished]


async def test_every_call_gets_exactly_one_result_with_its_id() -> None:
    h = make_harness({"a.py": "x\n"}, replies=["deny"])
    calls = [
        ("1", "nope", "{}"),
        ("2", "read_file", "{"),
        ("3", "read_file", '{"path": 3}'),
        ("4", "bash", '{"command": "rm -rf /"}'),
        ("5", "bash", '{"command": "make"}'),
        ("6", "read_file", '{"path": "a.py"}'),
    ]
    results = [await h.call(name, raw, call_id=call_id) for call_id, name, raw in calls]
    assert [(r.call_id, r.is_error) for r in results] == [
        ("1", True),
        ("2", True),
        ("3", True),
        ("4", True),
        ("5", True),
        ("6", False),
    ]
    finished = [e.call_id for e in h.events if isinstance(e, ToolCallFinished)]
    assert finished == ["1", "2", "3", "4", "5", "6"]


def test_specs_follow_the_default_order() -> None:
    h = make_harness()
    names = [spec.name for spec in h.registry.specs()]
    assert names == ["read_file", "list_files", "grep", "edit_file", "write_file", "bash"]


def test_tool_names_must_be_unique() -> None:
    tools = default_tools()
    with pytest.raises(ValueError, match="unique"):
        make_harness(tools=[*tools, tools[0]])


def test_a_tool_must_have_the_argument_its_permission_judges() -> None:
    with pytest.raises(TypeError, match="needs an argument 'command'"):
        Tool(name="shell", description="", args=PathArgs, run=_boom, mutates=False, permission="bash")


async def test_a_plan_mode_refusal_gives_the_policys_reason_and_allows_a_read_only_variant() -> None:
    h = make_harness()
    h.policy.plan_mode = True
    result = await h.call("bash", {"command": "make build"})
    assert result.is_error
    assert "only read-only commands run" in result.content
    assert "no rule matches" in result.content  # the underlying "ask" reason, no longer dropped
    assert "variant" in result.content and "Do not retry it or a variant of it" not in result.content
    assert h.runner.calls == []
