"""A ``ModelClient`` wrapper that hands every exchange (the request it was given, and the response or
the error it ended with) to a recorder: what ``agent-ls run --record`` writes to the session file as
``exchange`` records (``sessions.exchanges``), so ``replay:<session.jsonl>`` can check each request of a
later run against the recorded one and answer with the recorded response (docs/replay-format.md).

The recorder gets the messages and tool specs as the harness built them (the provider-neutral types of
``core.messages``), before any wire encoding: the recording does not depend on the provider and holds
nothing the wire adds (the API key, headers).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_ls.core.errors import ModelError
from agent_ls.core.events import EventSink
from agent_ls.core.messages import Message, ModelResponse, ToolSpec
from agent_ls.core.ports import ModelClient


@dataclass(frozen=True)
class ModelExchange:
    """One model call as recorded.

    Attributes:
        model: the model string of the client that answered (``openai/gpt-4.1``).
        messages: the conversation sent, system message first.
        tools: the tool specs offered with it (empty for a compaction summary).
        response: the response, or None when the call failed.
        error: the ``ModelError``'s one-line message when the call failed, else "".
    """

    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    response: ModelResponse | None
    error: str = ""


class RecordingModel:
    """A ``ModelClient`` that passes every call to ``inner`` and gives the exchange to ``record``.

    ``record`` is called once per ``complete`` that returned or raised a ``ModelError`` (a cancelled call
    is not an exchange) and must not raise. Follows ``core.ports.ModelClient`` otherwise; ``inner`` is
    public so that the request encoder is found through it (``models.request_body.encoder_of``).
    """

    def __init__(self, inner: ModelClient, record: Callable[[ModelExchange], None]) -> None:
        self.inner = inner
        self._record = record

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse:
        sent, offered = tuple(messages), tuple(tools)  # the loop may append to its list afterwards
        try:
            response = await self.inner.complete(messages, tools, emit)
        except ModelError as exc:
            self._record(ModelExchange(self.model_name, sent, offered, None, str(exc)))
            raise
        self._record(ModelExchange(self.model_name, sent, offered, response))
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def recording(
    opener: Callable[[], ModelClient] | None, record: Callable[[ModelExchange], None] | None
) -> Callable[[], ModelClient] | None:
    """``opener`` whose clients record their exchanges with ``record``; ``opener`` itself when either
    is None."""
    if opener is None or record is None:
        return opener
    sink = record
    inner = opener
    return lambda: RecordingModel(inner(), sink)
