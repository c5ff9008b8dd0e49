"""The loop alone, with fakes that implement the core ports (no HTTP, no LSP)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from agent_ls.core.errors import ModelServerError
from agent_ls.core.events import (
    Event,
    EventSink,
    MessageCompleted,
    MessageDelta,
    RunEnded,
    RunStarted,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    UsageReported,
)
from agent_ls.core.loop import INTERRUPTED, LoopLimits, run_loop
from agent_ls.core.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)

U = Usage(input_tokens=10, output_tokens=2)


class ScriptedModel:
    """A ModelClient that answers from a list; an Exception in the list is raised; "hang" waits forever."""

    def __init__(self, answers: list[AssistantMessage | Exception | str]) -> None:
        self.answers = answers
        self.seen: list[list[Message]] = []

    @property
    def model_name(self) -> str:
        return "fake/model"

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse:
        self.seen.append(list(messages))
        answer = self.answers.pop(0)
        if answer == "hang":
            await asyncio.Event().wait()
        if isinstance(answer, Exception):
            raise answer
        assert isinstance(answer, AssistantMessage)
        if answer.text:
            emit(MessageDelta(text=answer.text))
        return ModelResponse(message=answer, usage=U)

    async def aclose(self) -> None:
        return None


class EchoTools:
    """A ToolExecutor that echoes the arguments; "slow" tool calls wait forever."""

    def specs(self) -> Sequence[ToolSpec]:
        return [ToolSpec(name="echo", description="echo", parameters={"type": "object"})]

    async def execute(self, call: ToolCall, emit: EventSink) -> ToolResultMessage:
        emit(ToolCallStarted(call_id=call.call_id, name=call.name, arguments=call.arguments))
        if call.name == "slow":
            await asyncio.Event().wait()
        emit(ToolCallFinished(call_id=call.call_id, name=call.name, is_error=False, output=call.arguments))
        return ToolResultMessage(call_id=call.call_id, name=call.name, content=call.arguments)


async def _run(
    model: ScriptedModel, limits: LoopLimits | None = None
) -> tuple[RunEnded, list[Event], list[Message]]:
    events: list[Event] = []
    history: list[Message] = [UserMessage("task")]
    ended = await run_loop(
        session_id="s1",
        task="task",
        history=history,
        model=model,
        tools=EchoTools(),
        emit=events.append,
        limits=limits or LoopLimits(),
    )
    return ended, events, history


def _call(call_id: str, name: str = "echo", arguments: str = "{}") -> ToolCall:
    return ToolCall(call_id=call_id, name=name, arguments=arguments)


async def test_tool_call_then_answer_gives_the_exact_event_sequence() -> None:
    model = ScriptedModel(
        [
            AssistantMessage(text="looking", tool_calls=(_call("c1", arguments='{"a":1}'),)),
            AssistantMessage(text="done"),
        ]
    )
    ended, events, history = await _run(model)
    total1, total2 = U, U + U
    assert events == [
        RunStarted(session_id="s1", task="task", model="fake/model"),
        TurnStarted(turn=1, max_turns=15),
        MessageDelta(text="looking"),
        MessageCompleted(text="looking"),
        UsageReported(usage=U, total=total1, session=total1),
        ToolCallStarted(call_id="c1", name="echo", arguments='{"a":1}'),
        ToolCallFinished(call_id="c1", name="echo", is_error=False, output='{"a":1}'),
        TurnStarted(turn=2, max_turns=15),
        MessageDelta(text="done"),
        MessageCompleted(text="done"),
        UsageReported(usage=U, total=total2, session=total2),
        RunEnded(
            status="done",
            reason="the model answered",
            answer="done",
            usage=total2,
            session_usage=total2,
            usage_by_role={"main": total2},  # the run's own calls only
        ),
    ]
    assert ended == events[-1]
    assert history[2] == ToolResultMessage(call_id="c1", name="echo", content='{"a":1}')
    assert model.seen[1][-1] == history[2]


async def test_max_turns_is_a_clean_stop() -> None:
    model = ScriptedModel([AssistantMessage(tool_calls=(_call(f"c{i}"),)) for i in range(3)])
    ended, _, _ = await _run(model, LoopLimits(max_turns=2))
    assert (ended.status, ended.reason) == ("stopped", "clean stop: maximum of 2 turns exceeded")
    assert len(model.seen) == 2


async def test_model_error_ends_the_run_with_its_message() -> None:
    ended, _, _ = await _run(ScriptedModel([ModelServerError("model server http://x failed (HTTP 500)")]))
    assert (ended.status, ended.reason) == ("error", "model server http://x failed (HTTP 500)")


async def test_model_timeout_is_an_error_with_a_reason() -> None:
    ended, _, _ = await _run(ScriptedModel(["hang"]), LoopLimits(model_timeout_s=0.05))
    assert ended.status == "error"
    assert ended.reason == "model fake/model did not answer within 0.05 s"


async def test_cancel_during_a_tool_call_answers_the_orphans() -> None:
    model = ScriptedModel([AssistantMessage(tool_calls=(_call("c1"), _call("c2", name="slow"), _call("c3")))])
    task = asyncio.create_task(_run(model))
    await asyncio.sleep(0.05)
    task.cancel()
    ended, events, history = await task
    assert ended.status == "cancelled" and events[-1] == ended
    results = [m for m in history if isinstance(m, ToolResultMessage)]
    assert [r.call_id for r in results] == ["c1", "c2", "c3"]
    assert results[1] == ToolResultMessage(call_id="c2", name="slow", content=INTERRUPTED, is_error=True)


async def test_unexpected_exception_is_reported_not_raised() -> None:
    ended, _, _ = await _run(ScriptedModel([RuntimeError("boom")]))
    assert (ended.status, ended.reason) == ("error", "internal error: RuntimeError: boom")


async def test_a_run_whose_model_never_replied_has_no_answer_not_the_last_runs() -> None:
    # Found by a new-user trial: a follow-up whose model call failed printed (and stored) the earlier
    # run's answer as its own.
    history: list[Message] = [UserMessage("1st"), AssistantMessage(text="earlier answer"), UserMessage("go")]
    model = ScriptedModel([ModelServerError("model server http://x failed (HTTP 500)")])
    ended = await run_loop(
        session_id="s1", task="go", history=history, model=model, tools=EchoTools(), emit=[].append,
        limits=LoopLimits(),
    )  # fmt: skip
    assert (ended.status, ended.answer) == ("error", "")


async def test_session_usage_adds_the_earlier_runs() -> None:
    before = Usage(input_tokens=100, output_tokens=7, cost_usd=0.5)
    model = ScriptedModel([AssistantMessage(text="done")])
    events: list[Event] = []
    ended = await run_loop(
        session_id="s1",
        task="task",
        history=[UserMessage("task")],
        model=model,
        tools=EchoTools(),
        emit=events.append,
        limits=LoopLimits(),
        session_usage=before,
    )
    assert ended.usage == U
    assert ended.session_usage == before + U
    assert ended.session_usage.cost_usd == 0.5  # a call without a price leaves the known cost as it is
    usage_events = [e for e in events if isinstance(e, UsageReported)]
    assert [e.session for e in usage_events] == [before + U]


@pytest.mark.parametrize("text", ["", "  \n"])
async def test_an_empty_reply_is_a_plain_stop_not_a_silent_done(text: str) -> None:
    ended, _, _ = await _run(ScriptedModel([AssistantMessage(text=text)]))
    assert (ended.status, ended.reason) == (
        "stopped",
        "model fake/model returned an empty reply (no text and no tool call)",
    )


class FinishingModel(ScriptedModel):
    """Answers with ``text`` and the given provider finish reason."""

    def __init__(self, text: str, finish_reason: str) -> None:
        super().__init__([AssistantMessage(text=text)])
        self.finish_reason = finish_reason

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse:
        response = await super().complete(messages, tools, emit)
        return ModelResponse(message=response.message, usage=response.usage, finish_reason=self.finish_reason)


@pytest.mark.parametrize("finish_reason", ["length", "max_tokens", "max_output_tokens"])
async def test_an_answer_cut_off_at_the_token_limit_is_not_done(finish_reason: str) -> None:
    ended, _, _ = await _run(FinishingModel("The fix is to change line", finish_reason))
    assert ended.status == "stopped"
    assert ended.reason == (
        f"model fake/model hit its output token limit (finish reason {finish_reason}): "
        "the answer is cut off; raise max_output_tokens for this provider"
    )
    assert ended.answer == "The fix is to change line"


@pytest.mark.parametrize("finish_reason", ["content_filter", "refusal"])
async def test_a_filtered_answer_is_not_done(finish_reason: str) -> None:
    ended, _, _ = await _run(FinishingModel("I can't", finish_reason))
    assert ended.status == "stopped" and "filtered or refused" in ended.reason


@pytest.mark.parametrize("finish_reason", ["stop", "end_turn", "tool_calls", "unknown"])
async def test_other_finish_reasons_with_text_are_done(finish_reason: str) -> None:
    ended, _, _ = await _run(FinishingModel("All good.", finish_reason))
    assert ended.status == "done"


HARMONY_LEAK = '<|channel|>commentary to=browser.search <|constrain|>json<|message|>{"query": "x"}<|call|>'


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (HARMONY_LEAK, "<|channel|>, <|constrain|>, <|message|>"),
        ('<tool_call>{"name": "read_file", "arguments": {"path": "a.py"', "<tool_call>"),
        ("Done.\n<｜tool▁calls▁begin｜>", "<｜tool▁calls▁begin｜>"),
        ("[TOOL_CALLS]", "[TOOL_CALLS]"),
    ],
    ids=["harmony", "hermes-unclosed", "deepseek", "mistral"],
)
async def test_leftover_markup_in_a_final_answer_is_a_stop_that_says_so(text: str, shown: str) -> None:
    ended, events, _ = await _run(ScriptedModel([AssistantMessage(text=text)]))
    assert (ended.status, ended.reason) == (
        "stopped",
        f"model fake/model emitted markup that was not understood ({shown}): no tool ran and the text is "
        "not an answer; the server's chat template or tool-call parser does not match this model",
    )
    assert ended.answer == text
    assert [e for e in events if isinstance(e, RunEnded)] == [ended]


async def test_markup_quoted_as_code_in_an_answer_is_done() -> None:
    text = "Calls end with `<|call|>`:\n```\n<|channel|>commentary to=functions.f<|message|>{}<|call|>\n```"
    ended, _, _ = await _run(ScriptedModel([AssistantMessage(text=text)]))
    assert (ended.status, ended.answer) == ("done", text)


async def test_markup_beside_structured_tool_calls_does_not_stop_the_run() -> None:
    model = ScriptedModel(
        [AssistantMessage(text="<|im_end|>", tool_calls=(_call("c1"),)), AssistantMessage("ok")]
    )
    ended, _, _ = await _run(model)
    assert (ended.status, ended.answer) == ("done", "ok")
