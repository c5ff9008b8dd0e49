"""The one argument of an ``agent.*`` command (``workspace/executeCommand``), and the errors a command
answers with.

Clients say "no argument" in several ways, and each means an object with no fields:
- no ``arguments`` at all, or ``[]``;
- ``[{}]`` and ``[null]``;
- ``[[]]``: Neovim encodes an empty Lua table as an empty JSON array, so ``arguments = { {} }`` and
  ``{ sessionId = nil }`` arrive that way.
A command whose fields are all optional then runs with its defaults; one with a required field answers
InvalidParams naming it, as does a ``file:`` URI that names no usable path (``lsp.file_uris``).
Anything else that is not one object (two arguments, a string, a non-empty array) is refused with
InvalidParams saying what came.

Every error a command answers with is one line that starts with the command's name; an unexpected
exception (a bug) becomes an InternalError without a traceback (pygls would put one in the response),
and the traceback goes to the server's log only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

from agent_ls.lsp.file_uris import unusable_file_uri
from agent_ls.lsp.state import AgentLanguageServer

P = TypeVar("P", bound=BaseModel)
Command = Callable[..., Awaitable[dict[str, Any]]]

MAX_DETAIL_CHARS = 300


def _kind(value: object) -> str:
    """What a JSON value is, in JSON's words (``an array of 2``, ``a string``)."""
    if isinstance(value, list):
        return f"an array of {len(value)}"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an object" if isinstance(value, dict) else type(value).__name__


def parse_params(model: type[P], arguments: tuple[Any, ...]) -> P:
    """``arguments`` (what pygls passes as ``*arguments``) as ``model``.

    Raises:
        JsonRpcInvalidParams: not one object (or an empty shape), or a field is invalid; the message
            names each field (camelCase, dotted for nested ones) and what is wrong with it.
    """
    if not arguments or (len(arguments) == 1 and arguments[0] in (None, [])):
        argument: object = {}
    elif len(arguments) == 1:
        argument = arguments[0]
    else:
        raise JsonRpcInvalidParams(f"takes one object argument (or none), got {len(arguments)} arguments")
    if not isinstance(argument, dict):
        raise JsonRpcInvalidParams(f"takes one object argument (or none), got {_kind(argument)}")
    if (unusable := unusable_file_uri(argument)) is not None:  # not a ValueError deep in a handler
        raise JsonRpcInvalidParams(f"invalid arguments: {unusable}")
    try:
        return model.model_validate(argument)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'argument'}: {e['msg']}" for e in exc.errors()
        )
        raise JsonRpcInvalidParams(f"invalid arguments: {problems}") from None


def one_line(text: str) -> str:
    """``text`` on one line, cut to ``MAX_DETAIL_CHARS``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_DETAIL_CHARS else flat[: MAX_DETAIL_CHARS - 1] + "…"


def answering(name: str, handler: Command) -> Command:
    """``handler`` whose errors name the command ``name`` and carry no traceback.

    A ``JsonRpcException`` keeps its code, its message prefixed with ``name``; any other exception is a
    bug: it becomes an InternalError (``<name> failed: <type>: <message>``) chained to the original,
    whose traceback pygls logs on stderr.
    """

    async def command(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
        try:
            return await handler(ls, *arguments)
        except JsonRpcException as exc:
            raise JsonRpcException(
                message=one_line(f"{name}: {exc.message}"), code=exc.code, data=exc.data
            ) from None
        except Exception as exc:
            detail = one_line(f"{name} failed: {type(exc).__name__}: {exc}")
            raise JsonRpcInternalError(f"{detail} (a bug in agent-ls; its log has the details)") from exc

    return command
