"""``replay:<path>``: a scripted model for demos, tests and evals, with no network.

The script is a JSON list of steps, one per model call, answered in order (format in
docs/replay-format.md)::

    [{"content": "Let me look.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
     {"content": "Done.", "delay_s": 0.5}]

The requests are not checked against the script; the tests' fake HTTP server (tests/support/model_server.py)
takes the same steps and records the requests.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_ls.core.errors import ConfigError, ScriptExhausted
from agent_ls.core.events import EventSink, MessageDelta
from agent_ls.core.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    RequestSent,
    ToolCall,
    ToolSpec,
    Usage,
)
from agent_ls.core.untrusted_json import loads_bounded
from agent_ls.models.base import estimate_usage
from agent_ls.models.openai_chat import chat_request_body

S = TypeVar("S", bound=BaseModel)


class ReplayToolCall(BaseModel):
    """One scripted tool call; ``arguments`` is sent as JSON text, ``id`` defaults to ``call_<step>_<i>``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = Field(default=None, min_length=1)


class ReplayStep(BaseModel):
    """The answer to one model call: text, tool calls in order, and a delay in seconds before it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    content: str = ""
    tool_calls: list[ReplayToolCall] = Field(default_factory=list)
    delay_s: float = Field(default=0.0, ge=0)


class ReplayModel:
    """A ``ModelClient`` that answers each call with the next step of a script file.

    Args:
        path: the script, relative to the current directory unless absolute; read once, here.

    Raises:
        ConfigError: the file is missing or unreadable, not JSON, or not a list of steps (one line).
    """

    def __init__(self, path: str | Path) -> None:
        self._path = str(path)
        self._steps = load_script(self._path, ReplayStep)
        self._calls = 0

    @property
    def model_name(self) -> str:
        return f"replay:{self._path}"

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse:
        """Answer with the next step, after its ``delay_s`` (cancellable; the step is used up either way).

        The step's text is emitted as one ``MessageDelta``.

        Tool call ids are ``call_<step>_<i>`` when the step gives none (both 1-based). Usage is estimated
        from the bytes of the Chat Completions request and of the reply, divided by 4.

        Raises:
            ScriptExhausted: every step has been used.
        """
        self._calls += 1
        if self._calls > len(self._steps):
            raise ScriptExhausted(f"replay script {self._path} has no step left for model call {self._calls}")
        step = self._steps[self._calls - 1]
        if step.delay_s:
            await asyncio.sleep(step.delay_s)
        calls = tuple(
            ToolCall(
                call_id=call.id or f"call_{self._calls}_{i}",
                name=call.name,
                arguments=json.dumps(call.arguments, ensure_ascii=False),
            )
            for i, call in enumerate(step.tool_calls, start=1)
        )
        message = AssistantMessage(text=step.content, tool_calls=calls)
        return replayed_response(message, self.encode_request(messages, tools), emit)

    def encode_request(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> bytes:
        """The Chat Completions body a wire client would send (what usage is estimated from)."""
        return chat_request_body(self.model_name, messages, tools)

    async def aclose(self) -> None:
        return None


def replayed_response(
    message: AssistantMessage,
    body: bytes,
    emit: EventSink,
    *,
    usage: Usage | None = None,
    finish: str | None = None,
) -> ModelResponse:
    """The response of a replayed call: ``message``'s text emitted as one ``MessageDelta``, the request
    ``body`` measured (size, SHA-256), and ``usage`` (estimated from the bytes when None) and ``finish``
    (``tool_calls`` or ``stop`` from the message when None)."""
    if message.text:
        emit(MessageDelta(text=message.text))
    sent = RequestSent(size_bytes=len(body), sha256=hashlib.sha256(body).hexdigest())
    finish = finish or ("tool_calls" if message.tool_calls else "stop")
    used = usage or estimate_usage(len(body), message)
    return ModelResponse(message=message, usage=used, finish_reason=finish, request=sent)


MAX_SCRIPT_BYTES = 16 * 1024 * 1024
"""The largest replay script read, in bytes; a larger file is refused before it is read."""


def load_script(path: str, step_model: type[S]) -> list[S]:
    """Read a script file as a list of ``step_model``.

    Only a regular file of at most ``MAX_SCRIPT_BYTES`` is read: a FIFO, a device (``/dev/zero``), a
    socket or a directory is refused without blocking, and so is a larger file.

    Raises:
        ConfigError: one line naming ``path`` and the first problem (``step 2: tool_calls.0.name: ...``,
            steps 1-based).
    """
    try:
        text = read_regular(path, MAX_SCRIPT_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"replay script {path} cannot be read: {reason}") from exc
    try:
        raw = loads_bounded(text)  # well-formed strings, bounded nesting: a script is model output too
    except ValueError as exc:
        raise ConfigError(f"replay script {path} is not JSON: {exc}") from exc
    if not isinstance(raw, list):
        raise ConfigError(f"replay script {path} must be a JSON list of steps (see docs/replay-format.md)")
    steps: list[S] = []
    for number, item in enumerate(raw, start=1):
        try:
            steps.append(step_model.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            place = ".".join(str(part) for part in first["loc"]) or "the step"
            message = f"replay script {path}: step {number}: {place}: {first['msg']}"
            raise ConfigError(" ".join(message.split())) from exc
    return steps


def read_regular(path: str, max_bytes: int) -> bytes:
    """The bytes of ``path`` when it is a regular file of at most ``max_bytes``.

    Opened non-blocking, so that a FIFO with no writer cannot hang the server, then checked with
    ``fstat`` on the open descriptor (no window between the check and the read).

    Raises:
        OSError: it cannot be opened, is not a regular file, or is too large (the ``strerror`` says which).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if info.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"{info.st_size:,} bytes, over the {max_bytes:,}-byte limit")
    except OSError:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as file:
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew after the check
        raise OSError(errno.EFBIG, f"over the {max_bytes:,}-byte limit")
    return data
