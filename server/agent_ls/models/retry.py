"""Retries of model calls: which failures, how long to wait, and when to give up plainly.

Retried: the error classes marked ``retryable`` in ``core/errors.py``: HTTP 429, 5xx (529 and in-band
``overloaded_error`` included), connect errors, and streams that broke or ended early. Not retried: auth,
not found, bad request, context overflow, unreadable bodies, timeouts.

The wait before attempt ``n + 1`` is the server's ``retry-after``/``retry-after-ms`` when it sent one,
else exponential backoff with full jitter: ``uniform(0, min(max_wait_s, base_s * 2 ** (n - 1)))``
("Exponential Backoff And Jitter", AWS Architecture Blog, 2015; the same shape as the OpenAI and
Anthropic SDKs). A requested wait longer than ``max_wait_s``, or one that would take the total waiting
over ``max_total_wait_s``, is not slept: the call fails with a message that gives the wait.

Each retry is announced with a ``ModelRetrying`` event (``partial`` when text of the failed attempt
was already streamed), so the user sees why the answer pauses and that the partial text is void.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from agent_ls.core.errors import ModelError, ModelTimeoutError
from agent_ls.core.events import Event, EventSink, MessageDelta, ModelRetrying
from agent_ls.core.messages import Message, ModelResponse, ToolSpec
from agent_ls.core.ports import ModelClient

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    """Caps of retries. Defaults are issue 4's: 4 attempts, at most 60 s per wait and 120 s in total.

    Attributes:
        max_attempts: attempts in all, the first included (1 = never retry).
        max_wait_s: the longest single wait, in seconds.
        max_total_wait_s: the most waiting summed over one call's retries, in seconds.
        base_s: the backoff base, in seconds (the first backoff is at most this).
        attempt_timeout_s: the longest one attempt may take, in seconds (a stream that keeps sending keeps
            the client's idle timeout quiet; this caps it), or None for no cap. Not retried when hit.
    """

    max_attempts: int = 4
    max_wait_s: float = 60.0
    max_total_wait_s: float = 120.0
    base_s: float = 1.0
    attempt_timeout_s: float | None = 600.0


Sleep = Callable[[float], Awaitable[None]]


class RetryingModel:
    """A ``ModelClient`` that retries another one by ``RetryPolicy`` (rules in the module docstring).

    Args:
        inner: the wire client.
        policy: the caps.
        sleep: how to wait (``asyncio.sleep``; tests pass a recorder).
        rng: the jitter source.
    """

    def __init__(
        self,
        inner: ModelClient,
        policy: RetryPolicy | None = None,
        *,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.inner = inner
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._rng = rng or random.Random()

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse:
        """The inner client's answer, retried as the module docstring says.

        Raises:
            ModelError: the last failure when it is not retryable or the caps are reached; when a wait is
                over a cap the message says how long the server asked to wait.
        """
        waited = 0.0
        attempt = 1
        while True:
            streamed = False

            def relay(event: Event) -> None:
                nonlocal streamed
                if isinstance(event, MessageDelta):
                    streamed = True
                emit(event)

            try:
                return await self._attempt(messages, tools, relay)
            except ModelError as exc:
                if not exc.retryable or attempt >= self.policy.max_attempts:
                    raise
                wait = self._wait(exc, attempt)
                over = self._over_cap(exc, wait, waited)
                if over:
                    raise type(exc)(f"{exc}; {over}", retry_after_s=exc.retry_after_s) from exc
                attempt += 1
                log.info("retrying %s in %.1f s (attempt %d): %s", self.model_name, wait, attempt, exc)
                emit(
                    ModelRetrying(
                        attempt=attempt,
                        max_attempts=self.policy.max_attempts,
                        wait_s=round(wait, 3),
                        reason=str(exc),
                        partial=streamed,
                    )
                )
                await self._sleep(wait)
                waited += wait

    async def _attempt(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse:
        timeout = self.policy.attempt_timeout_s
        try:
            async with asyncio.timeout(timeout):
                return await self.inner.complete(messages, tools, emit)
        except TimeoutError:
            raise ModelTimeoutError(f"model {self.model_name} did not answer within {timeout:g} s") from None

    def _wait(self, exc: ModelError, attempt: int) -> float:
        if exc.retry_after_s is not None:
            return exc.retry_after_s
        ceiling = min(self.policy.max_wait_s, self.policy.base_s * 2 ** (attempt - 1))
        return self._rng.uniform(0, ceiling)

    def _over_cap(self, exc: ModelError, wait: float, waited: float) -> str | None:
        """Why ``wait`` may not be slept, or None when it may."""
        if wait > self.policy.max_wait_s:
            return (
                f"the server asked to wait {wait:g} s before retrying, more than the "
                f"{self.policy.max_wait_s:g} s cap (retry.max_wait_s); try again later"
            )
        if waited + wait > self.policy.max_total_wait_s:
            return (
                f"gave up after waiting {waited:g} s in total; the next wait of {wait:g} s would pass the "
                f"{self.policy.max_total_wait_s:g} s cap (retry.max_total_wait_s)"
            )
        return None

    async def aclose(self) -> None:
        await self.inner.aclose()
