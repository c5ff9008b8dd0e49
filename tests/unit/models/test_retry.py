"""RetryingModel: which failures are retried, the waits, the caps and the events, against a fake client."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence

import pytest

from agent_ls.core.errors import (
    ModelAuthError,
    ModelConnectionError,
    ModelContextOverflowError,
    ModelError,
    ModelOverloadedError,
    ModelRateLimitError,
    ModelRequestError,
    ModelServerError,
    ModelStreamError,
    ModelTimeoutError,
)
from agent_ls.core.events import Event, EventSink, MessageDelta, ModelRetrying
from agent_ls.core.messages import AssistantMessage, Message, ModelResponse, ToolSpec, Usage, UserMessage
from agent_ls.models.retry import RetryingModel, RetryPolicy

OK = ModelResponse(message=AssistantMessage(text="ok"), usage=Usage(input_tokens=1, output_tokens=1))


class FlakyModel:
    """A ModelClient that fails with the listed errors first (streaming ``partial`` text before a failure
    when the entry is a tuple), then answers OK; "hang" waits forever."""

    def __init__(self, failures: list[ModelError | tuple[str, ModelError] | str]) -> None:
        self.failures = list(failures)
        self.calls = 0

    @property
    def model_name(self) -> str:
        return "fake/flaky"

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse:
        self.calls += 1
        if self.failures:
            failure = self.failures.pop(0)
            if failure == "hang":
                await asyncio.Event().wait()
            if isinstance(failure, tuple):
                emit(MessageDelta(text=failure[0]))
                raise failure[1]
            assert isinstance(failure, ModelError)
            raise failure
        emit(MessageDelta(text="ok"))
        return OK

    async def aclose(self) -> None:
        return None


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


async def _complete(
    model: FlakyModel, policy: RetryPolicy | None = None
) -> tuple[ModelResponse | ModelError, list[Event], list[float]]:
    sleeps = Sleeps()
    events: list[Event] = []
    retrying = RetryingModel(model, policy, sleep=sleeps, rng=random.Random(7))
    try:
        result: ModelResponse | ModelError = await retrying.complete([UserMessage("hi")], [], events.append)
    except ModelError as exc:
        result = exc
    return result, events, sleeps.waits


@pytest.mark.parametrize(
    "error",
    [
        ModelRateLimitError("429"),
        ModelServerError("503"),
        ModelOverloadedError("overloaded"),
        ModelConnectionError("refused"),
        ModelStreamError("reset"),
    ],
    ids=lambda e: type(e).__name__,
)
async def test_retryable_errors_are_retried_then_succeed(error: ModelError) -> None:
    model = FlakyModel([error])
    result, events, waits = await _complete(model)
    assert result == OK
    assert model.calls == 2
    assert len(waits) == 1 and 0 <= waits[0] <= 1.0  # full jitter under the first ceiling (base 1 s)
    retrying = [e for e in events if isinstance(e, ModelRetrying)]
    assert retrying == [
        ModelRetrying(attempt=2, max_attempts=4, wait_s=round(waits[0], 3), reason=str(error))
    ]


@pytest.mark.parametrize(
    "error",
    [
        ModelAuthError("401"),
        ModelRequestError("400"),
        ModelContextOverflowError("too long"),
        ModelTimeoutError("silent"),
        ModelError("other"),
    ],
    ids=lambda e: type(e).__name__,
)
async def test_other_errors_are_not_retried(error: ModelError) -> None:
    model = FlakyModel([error])
    result, events, waits = await _complete(model)
    assert result is error
    assert model.calls == 1 and waits == []
    assert not [e for e in events if isinstance(e, ModelRetrying)]


async def test_retry_after_is_honoured_exactly() -> None:
    model = FlakyModel(
        [ModelRateLimitError("429", retry_after_s=2.5), ModelServerError("503", retry_after_s=0)]
    )
    result, _, waits = await _complete(model)
    assert result == OK
    assert waits == [2.5, 0]


async def test_backoff_grows_exponentially_under_the_per_wait_cap() -> None:
    policy = RetryPolicy(max_attempts=6, base_s=10, max_wait_s=25, max_total_wait_s=1000)
    model = FlakyModel([ModelServerError("503")] * 5)
    rng = random.Random(7)  # the seed _complete gives the client
    expected = [rng.uniform(0, ceiling) for ceiling in (10, 20, 25, 25, 25)]
    result, _, waits = await _complete(model, policy)
    assert result == OK
    assert waits == expected


async def test_attempts_are_capped_and_the_last_error_is_raised() -> None:
    errors = [ModelServerError(f"503 #{n}") for n in range(1, 6)]
    model = FlakyModel(list(errors))
    result, events, waits = await _complete(model)
    assert result is errors[3]  # 4 attempts by default
    assert model.calls == 4 and len(waits) == 3
    assert [e.attempt for e in events if isinstance(e, ModelRetrying)] == [2, 3, 4]


async def test_a_retry_after_over_the_cap_is_a_clear_error_not_a_long_sleep() -> None:
    model = FlakyModel([ModelRateLimitError("rate limited (HTTP 429)", retry_after_s=3600)])
    result, _events, waits = await _complete(model)
    assert isinstance(result, ModelRateLimitError)
    assert waits == [] and model.calls == 1
    assert str(result) == (
        "rate limited (HTTP 429); the server asked to wait 3600 s before retrying, more than the 60 s cap "
        "(retry.max_wait_s); try again later"
    )
    assert result.retry_after_s == 3600


async def test_the_total_wait_is_capped() -> None:
    policy = RetryPolicy(max_attempts=10, max_total_wait_s=100)
    model = FlakyModel([ModelRateLimitError("429", retry_after_s=40)] * 5)
    result, _, waits = await _complete(model, policy)
    assert isinstance(result, ModelRateLimitError)
    assert waits == [40, 40]
    assert "gave up after waiting 80 s in total; the next wait of 40 s would pass the 100 s cap" in str(
        result
    )


async def test_partial_text_of_a_failed_attempt_is_flagged_void() -> None:
    model = FlakyModel([("Hello wor", ModelOverloadedError("overloaded"))])
    result, events, _ = await _complete(model)
    assert result == OK
    assert [type(e).__name__ for e in events] == ["MessageDelta", "ModelRetrying", "MessageDelta"]
    retry = events[1]
    assert isinstance(retry, ModelRetrying) and retry.partial


async def test_an_attempt_over_its_timeout_fails_plainly() -> None:
    model = FlakyModel(["hang"])
    result, _, waits = await _complete(model, RetryPolicy(attempt_timeout_s=0.05))
    assert isinstance(result, ModelTimeoutError)
    assert str(result) == "model fake/flaky did not answer within 0.05 s"
    assert waits == []


async def test_cancelling_during_a_wait_stops_at_once() -> None:
    model = FlakyModel([ModelServerError("503", retry_after_s=30)])
    retrying = RetryingModel(model)
    call = asyncio.create_task(retrying.complete([UserMessage("hi")], [], lambda _: None))
    await asyncio.sleep(0.05)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(call, timeout=2)
    assert model.calls == 1
