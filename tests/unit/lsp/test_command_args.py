"""Reading an ``agent.*`` command's argument, and the errors a command answers with (``lsp/command_args.py``).
Through a real server: tests/e2e/test_command_arguments.py."""

from __future__ import annotations

from typing import Any

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

from agent_ls.lsp import protocol as p
from agent_ls.lsp.command_args import answering, parse_params
from agent_ls.lsp.state import AgentLanguageServer


@pytest.mark.parametrize("arguments", [(), ({},), (None,), ([],)], ids=["none", "{}", "null", "[]"])
def test_every_empty_shape_is_an_object_without_fields(arguments: tuple[Any, ...]) -> None:
    assert parse_params(p.SessionParams, arguments) == p.SessionParams()
    with pytest.raises(JsonRpcInvalidParams) as raised:
        parse_params(p.RunParams, arguments)
    assert raised.value.message == "invalid arguments: task: Field required"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (({}, {}), "takes one object argument (or none), got 2 arguments"),
        (([1],), "takes one object argument (or none), got an array of 1"),
        (("s",), "takes one object argument (or none), got a string"),
        ((3.5,), "takes one object argument (or none), got a number"),
        ((True,), "takes one object argument (or none), got a boolean"),
        (({"sessionId": 1},), "invalid arguments: sessionId: Input should be a valid string"),
    ],
)
def test_other_shapes_are_refused_saying_what_came(arguments: tuple[Any, ...], message: str) -> None:
    with pytest.raises(JsonRpcInvalidParams) as raised:
        parse_params(p.SessionParams, arguments)
    assert raised.value.message == message


def test_unknown_fields_are_ignored_and_camel_case_is_read() -> None:
    assert parse_params(p.SessionParams, ({"sessionId": "s1", "newerField": 1},)) == p.SessionParams(
        session_id="s1"
    )


async def test_errors_name_the_command_and_a_bug_carries_no_traceback() -> None:
    async def refuses(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
        raise JsonRpcInvalidParams("invalid arguments: task: Field required")

    async def breaks(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
        raise ValueError("line\nbreak " * 100)

    ls = AgentLanguageServer()
    with pytest.raises(JsonRpcException) as refused:
        await answering("agent.run", refuses)(ls)
    assert (refused.value.code, refused.value.message, refused.value.data) == (
        JsonRpcInvalidParams.CODE,
        "agent.run: invalid arguments: task: Field required",
        None,
    )
    with pytest.raises(JsonRpcInternalError) as broken:
        await answering("agent.proposal", breaks)(ls)
    assert broken.value.data is None and "\n" not in broken.value.message
    assert broken.value.message.startswith("agent.proposal failed: ValueError: line break line break")
    assert broken.value.message.endswith("… (a bug in agent-ls; its log has the details)")
    assert isinstance(broken.value.__cause__, ValueError)
