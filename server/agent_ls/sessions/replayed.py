"""``replay:<session.jsonl>``: a recorded session as the model, to re-run it against the current code
(docs/replay-format.md "Replaying a session").

Each model call is answered with the recorded response of the same call, after its request was checked
against the recorded request (``request_diff``: ids, paths, timestamps and durations ignored). The first
request that differs ends the run with ``ReplayMismatch``, whose message says which call, which message,
which field, and shows both texts around the first difference: a change to the system prompt, a tool's
description or a tool result is seen in review, not silently absorbed.

A session of several runs: each run opens the model again, so each replay starts at the first call of the
recorded run whose first request matches the current one (else of the run with as many messages, else of
the first run).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_ls.core.errors import ConfigError, ModelError, ReplayMismatch, ScriptExhausted
from agent_ls.core.events import EventSink
from agent_ls.core.messages import Message, ModelResponse, ToolSpec
from agent_ls.models.openai_chat import chat_request_body
from agent_ls.models.replay import MAX_SCRIPT_BYTES, read_regular, replayed_response
from agent_ls.sessions.exchanges import RecordedCall, recorded_calls, tool_json
from agent_ls.sessions.records import message_json
from agent_ls.sessions.request_diff import Normalizer, first_difference, tools_difference
from agent_ls.sessions.store import SessionFormatError, parse_lines


class SessionReplayModel:
    """A ``ModelClient`` answering with a recorded session's responses, checking each request first.

    Args:
        path: the session file (``.jsonl``), relative to the current directory unless absolute; read once,
            here (a regular file of at most ``models.replay.MAX_SCRIPT_BYTES``).
        root: the current workspace root (ignored in comparisons, like the recorded one).

    Raises:
        ConfigError: the file cannot be read, is not a session file, or holds no model call (one line).
    """

    def __init__(self, path: str, root: Path) -> None:
        self._path = path
        try:
            data = read_regular(path, MAX_SCRIPT_BYTES)
        except OSError as exc:
            raise ConfigError(f"replay session {path} cannot be read: {exc.strerror or exc}") from exc
        try:
            stored = parse_lines(data, path)
        except SessionFormatError as exc:
            raise ConfigError(f"replay session {exc}") from exc
        self._calls = recorded_calls(stored, path)
        recorded_root = str(stored.header.get("workspace", ""))
        self._normalize = Normalizer([recorded_root, str(root), str(root.resolve())])
        self._next: int | None = None
        self._mismatch: ReplayMismatch | None = None

    @property
    def model_name(self) -> str:
        return f"replay:{self._path}"

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse:
        """Check the request against the recorded one, then answer with the recorded response.

        Raises:
            ReplayMismatch: the request differs from the recorded one (one line: where and how); every
                later call raises the first one again, so a difference in a subagent's request (which
                its ``task`` tool turns into a tool error) still ends the run with it.
            ScriptExhausted: the recording has no call left.
            ModelError: the recorded call failed (its message).
        """
        if self._mismatch is not None:
            raise ReplayMismatch(str(self._mismatch))
        current = [message_json(m) for m in messages]
        offered = [tool_json(t) for t in tools]
        index = self._start(current) if self._next is None else self._next
        if index >= len(self._calls):
            raise ScriptExhausted(
                f"replay session {self._path} has no model call left for call {index + 1}: the current "
                "harness makes more calls than the recording"
            )
        self._next = index + 1
        call = self._calls[index]
        where = self._difference(call, current, offered)
        if where is not None:
            self._mismatch = ReplayMismatch(
                f"replay session {self._path}: request {call.number} (run {call.run}) differs from the "
                f"recording at {where}"
            )
            raise self._mismatch
        message = call.answer
        if message is None:
            raise ModelError(call.error or f"recorded call {call.number} failed")
        body = self.encode_request(messages, tools)
        return replayed_response(message, body, emit, usage=call.usage, finish=call.finish)

    def _difference(
        self, call: RecordedCall, current: list[dict[str, Any]], offered: list[dict[str, Any]]
    ) -> str | None:
        where = first_difference(
            self._normalize.messages(call.messages),
            self._normalize.messages(current),
            trailing_note=not call.exact,
        )
        if where is None and call.tools is not None:
            where = tools_difference(
                [self._normalize.value(t) for t in call.tools], [self._normalize.value(t) for t in offered]
            )
        return where

    def _start(self, current: list[dict[str, Any]]) -> int:
        """The first call of the recorded run this replay is (module docstring)."""
        firsts = [i for i, c in enumerate(self._calls) if i == 0 or c.run != self._calls[i - 1].run]
        if len(firsts) == 1:
            return 0
        for index in firsts:
            call = self._calls[index]
            recorded, now = self._normalize.messages(call.messages), self._normalize.messages(current)
            if first_difference(recorded, now, trailing_note=not call.exact) is None:
                return index
        for index in firsts:
            if len(self._calls[index].messages) == len(current):
                return index
        return 0

    def encode_request(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> bytes:
        """The Chat Completions body a wire client would send (what usage is estimated from)."""
        return chat_request_body(self.model_name, messages, tools)

    async def aclose(self) -> None:
        return None
