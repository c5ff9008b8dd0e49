"""Every ``agent.*`` command with every way a client says "no argument" (issue 12.14), through a real
server and pytest-lsp's client.

Neovim encodes an empty Lua table as ``[]``, so ``arguments = { {} }`` arrives as ``[[]]``; other
clients leave ``arguments`` out, or send ``[]``, ``[{}]`` or ``[null]``. All mean an object with no
fields: a command whose fields are all optional answers as it does for ``{}``, one with a required
field answers InvalidParams naming it. Wrong shapes and wrong types answer InvalidParams naming what is
wrong. No error carries a traceback, in the response or in the editor's log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.e2e.conftest import start

NO_ARGUMENT: dict[str, list[Any] | None] = {
    "no arguments": None,
    "[]": [],
    "[{}]": [{}],
    "[null]": [None],
    "[[]] (Neovim's empty table)": [[]],
}
OPTIONAL_ONLY = [
    "agent.cancel",
    "agent.proposal",
    "agent.applyProposal",
    "agent.discardProposal",
    "agent.listSkills",
    "agent.instructions",
]
REQUIRED = {"agent.run": "task", "agent.runSkill": "skill"}
INVALID_PARAMS = -32602


async def _call(client: LanguageClient, command: str, arguments: list[Any] | None) -> Any:
    """The result, or ``("error", code, message)``; an error with data (a traceback) fails the test."""
    try:
        return await client.workspace_execute_command_async(
            t.ExecuteCommandParams(command=command, arguments=arguments)
        )
    except JsonRpcException as exc:
        assert exc.data is None, f"{command} {arguments}: error data reached the editor: {exc.data}"
        return ("error", exc.code, exc.message)


async def test_every_way_of_saying_no_argument_is_one_empty_object(
    client: LanguageClient, workspace: Path
) -> None:
    await start(client, workspace)
    expected: dict[tuple[str, str], Any] = {}
    actual: dict[tuple[str, str], Any] = {}
    for command in OPTIONAL_ONLY:
        with_empty_object = await _call(client, command, [{}])
        assert not isinstance(with_empty_object, tuple), with_empty_object
        for shape, arguments in NO_ARGUMENT.items():
            expected[command, shape] = with_empty_object
            actual[command, shape] = await _call(client, command, arguments)
    for command, name in REQUIRED.items():
        for shape, arguments in NO_ARGUMENT.items():
            expected[command, shape] = (
                "error",
                INVALID_PARAMS,
                f"{command}: invalid arguments: {name}: Field required",
            )
            actual[command, shape] = await _call(client, command, arguments)
    assert actual == expected
    # The answers for no session yet, as the user reads them.
    assert expected["agent.proposal", "[]"] == {"files": []}
    assert expected["agent.cancel", "[]"] == {"cancelled": False}
    assert expected["agent.discardProposal", "[]"] == {"discarded": False, "keptFiles": []}
    assert expected["agent.applyProposal", "[]"] == {
        "applied": False,
        "failureReason": "no agent run yet",
        "message": None,
        "changesApplied": 0,
        "changesKept": 0,
        "keptFiles": [],
    }
    _assert_no_traceback(client)


async def test_wrong_shapes_and_types_name_what_is_wrong(client: LanguageClient, workspace: Path) -> None:
    await start(client, workspace)
    shapes: dict[str, list[Any]] = {
        "two objects": [{}, {}],
        "a number": [1],
        "a string": ["s1"],
        "a non-empty array": [[1]],
        "a boolean": [False],
    }
    got = {(c, s): await _call(client, c, a) for c in [*OPTIONAL_ONLY, *REQUIRED] for s, a in shapes.items()}
    what = {
        "two objects": "got 2 arguments",
        "a number": "got a number",
        "a string": "got a string",
        "a non-empty array": "got an array of 1",
        "a boolean": "got a boolean",
    }
    assert got == {
        (c, s): ("error", INVALID_PARAMS, f"{c}: takes one object argument (or none), {what[s]}")
        for c in [*OPTIONAL_ONLY, *REQUIRED]
        for s in shapes
    }
    wrong_types = {
        "agent.cancel": ({"sessionId": 5}, "sessionId: Input should be a valid string"),
        "agent.proposal": ({"sessionId": ""}, "sessionId: String should have at least 1 character"),
        "agent.applyProposal": ({"sessionId": ["s1"]}, "sessionId: Input should be a valid string"),
        "agent.discardProposal": ({"sessionId": {}}, "sessionId: Input should be a valid string"),
        "agent.listSkills": ({"uri": 7}, "uri: Input should be a valid string"),
        "agent.instructions": ({"uri": True}, "uri: Input should be a valid string"),
        "agent.run": ({"task": "t", "range": {"start": {"line": -1}}}, None),
        "agent.runSkill": ({"skill": "s", "args": 3}, "args: Input should be a valid string"),
    }
    for command, (argument, problem) in wrong_types.items():
        kind, code, message = await _call(client, command, [argument])
        assert (kind, code) == ("error", INVALID_PARAMS), message
        if problem is not None:
            assert message == f"{command}: invalid arguments: {problem}"
    run_error = (await _call(client, "agent.run", [wrong_types["agent.run"][0]]))[2]
    assert run_error == (
        "agent.run: invalid arguments: range.start.line: Input should be greater than or equal to 0; "
        "range.start.character: Field required; range.end: Field required"
    )
    _assert_no_traceback(client)


def _assert_no_traceback(client: LanguageClient) -> None:
    shown = [m.message for m in client.log_messages] + [m.message for m in client.messages]
    assert not [m for m in shown if "Traceback" in m or 'File "' in m], shown
