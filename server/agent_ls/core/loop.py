"""The ReAct loop: the one place that sequences a run.

Order, per turn:
1. emit ``TurnStarted``; send the whole history and the tool specs to the model, which emits
   ``MessageDelta`` (and ``ModelRetrying``) as its answer streams in;
2. append the assistant message as the model wrote it; emit ``MessageCompleted`` (then
   ``RemoteContentDefanged`` when it held images or loading HTML) and ``UsageReported``;
3. no tool call: the run is ``done`` and the text is the answer;
4. otherwise run each tool call in order through the ``ToolExecutor`` (which never raises) and append
   exactly one result per call, then go to the next turn.

Stops, each with a one-line reason: the model answers without a tool call (``done``; an empty reply,
an answer cut off at the output token limit or stopped by a content filter is ``stopped``, never a
silent ``done``; so is a reply without a tool call whose text still holds special-token or tool-call
markup, ``core.model_markup``: the model meant something that neither ran nor reads as an answer);
a tool call that ends the run (``ended_by`` gives a reason after a turn's calls: plan mode's
``submit_plan``; ``done``); ``max_turns`` turns used (``stopped``, "maximum of 15 turns exceeded", as
in the seed harness); a token or
cost budget spent, checked before each model call after the first (``stopped``, ``core.budgets``; a
subagent's model calls, reported as ``SubagentEvent`` of ``UsageReported``, count in the run's usage); a model
error, or a model call over ``model_timeout_s`` when it is set (``error``; the model stack has its own
per-request timeouts and retries, see ``models/retry.py``); cancellation of the task (``cancelled``).
After a stop in the middle of a turn, every unanswered tool call gets a synthetic "interrupted"
error result, so the history stays valid for the next request.

Compaction (``core.compaction``), when the session gives a ``Compactor``: before each model request the
history is compacted when it is over the threshold; a context-overflow error from the provider compacts it
(forced summary) and the request is sent once more; a second overflow ends the run with the error.

The model's prose leaves the loop defanged (``core.markdown_defang``): streamed deltas through a
``Defanger`` per kind that holds back what is not decided yet (flushed when the call returns), the
completed message and the answer whole. The history keeps the text as written.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from agent_ls.core.budgets import budget_spent
from agent_ls.core.checks import (
    CHECK_FEEDBACK_ROUNDS,
    CheckResult,
    claims_done_reason,
    feedback_message,
    not_verified,
)
from agent_ls.core.compaction import Compactor
from agent_ls.core.errors import ModelContextOverflowError, ModelError
from agent_ls.core.events import (
    ChecksRan,
    ContextCompacted,
    Event,
    EventSink,
    MessageCompleted,
    MessageDelta,
    ModelCall,
    ModelRetrying,
    ModelRole,
    RemoteContentDefanged,
    RunEnded,
    RunStarted,
    RunStatus,
    SubagentEvent,
    TurnStarted,
    UsageReported,
)
from agent_ls.core.markdown_defang import Defanger, defang_markdown
from agent_ls.core.messages import (
    NO_USAGE,
    AssistantMessage,
    Message,
    ModelResponse,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from agent_ls.core.model_markup import leftover_markup
from agent_ls.core.ports import ModelClient, ToolExecutor, Verifier

log = logging.getLogger(__name__)

# Finish reasons that mean the answer is incomplete, as each wire API names them: Chat Completions
# ``length``/``content_filter``, Anthropic ``max_tokens``/``refusal``, Responses ``max_output_tokens``
# (``incomplete_details.reason``)/``content_filter``.
CUT_OFF = frozenset({"length", "max_tokens", "max_output_tokens"})
FILTERED = frozenset({"content_filter", "refusal"})

INTERRUPTED = "interrupted: the run stopped before this tool call finished; it may not have run."


@dataclass(frozen=True)
class LoopLimits:
    """Stop conditions. ``max_turns`` follows the seed harness (15).

    ``model_timeout_s`` caps one whole model call, retries included, in seconds; None (the default)
    leaves timeouts to the model stack (120 s per request, as in the seed harness).
    ``max_tokens`` (input plus output tokens of the run's model calls) and ``max_cost_usd`` (US dollars)
    are the run's budgets (``core.budgets``); None: no budget.
    """

    max_turns: int = 15
    model_timeout_s: float | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None


async def run_loop(
    *,
    session_id: str,
    task: str,
    history: list[Message],
    model: ModelClient,
    tools: ToolExecutor,
    emit: EventSink,
    limits: LoopLimits,
    session_usage: Usage = NO_USAGE,
    before_turn: Callable[[list[Message]], None] | None = None,
    unsandboxed: str = "",
    left_out: Callable[[], Sequence[str]] | None = None,
    compactor: Compactor | None = None,
    reminder: Callable[[int, Usage], str] | None = None,
    ended_by: Callable[[], str | None] | None = None,
    verifier: Verifier | None = None,
    after_answer: Callable[[], Awaitable[str | None]] | None = None,
) -> RunEnded:
    """Run the agent until a stop condition, appending to ``history`` in place.

    Args:
        history: the conversation so far, ending with the user's task; the loop appends assistant
            messages and tool results to it.
        emit: receives every event in order; the last one is the returned ``RunEnded``.
        session_usage: the usage of the session's earlier runs; events report it plus this run's.
        before_turn: called with ``history`` before each model call; it may rewrite the stable prefix
            (instruction files changed on disk) but must keep every tool call paired with its result.
            The tool specs are read again after it, so it may change the tool set too.
        unsandboxed: why commands run without a sandbox, for ``RunStarted`` ("" when they are sandboxed).
        left_out: called once at the end: the changes commands made that did not come into the proposal
            (``path (why)``); ``RunEnded.reason`` names them, so none is dropped silently.
        reminder: called before each model call with the turn (1-based) and the run's usage so far; a
            non-empty text is sent as a last user message of that request only, never stored in
            ``history`` (``core.reminder``), so the prefix of the next request is byte-identical.
        compactor: keeps each request under the model's window (``core.compaction``), or None.
        ended_by: called after each turn's tool calls; a reason ends the run ``done`` with it (plan mode:
            the plan was submitted), None goes on.
        verifier: the task's acceptance checks (``core.checks``), or None. When the model answers without a
            tool call they run; a failure goes back to the model as a user message (``CHECK_FEEDBACK_ROUNDS``
            times), then ends the run ``stopped`` with "claims done, checks fail: …". ``RunEnded.checks``
            holds the results the run ended on; ``not_verified`` each check not run at the end, and why.
        after_answer: called when the model answers without a tool call, before the checks; a text goes
            back to the model as a user message and the run goes on (the editor's new problems in the
            edited files, ``core.problems.AnswerRecheck``), None lets the answer stand.

    Returns:
        The ``RunEnded`` event (also emitted). Never raises: cancellation of the calling task ends the
        run with status ``cancelled`` and the cancellation is not propagated further.
    """
    emit(RunStarted(session_id=session_id, task=task, model=model.model_name, unsandboxed=unsandboxed))
    run = _RunState(before=session_usage)
    status: RunStatus
    try:
        status, reason = await _turns(
            run,
            history,
            model,
            tools,
            emit,
            limits,
            before_turn,
            compactor,
            reminder,
            ended_by,
            verifier,
            after_answer,
        )
    except asyncio.CancelledError as exc:  # the front end may say why (``terminal_text.OUTPUT_CLOSED``)
        status, reason = "cancelled", str(exc.args[0]) if exc.args else "cancelled by the user"
    except ModelError as exc:
        status, reason = "error", str(exc)
    except Exception as exc:  # an invariant broke: report it rather than lose the session
        log.exception("run %s failed", session_id)
        status, reason = "error", f"internal error: {type(exc).__name__}: {exc}"
    _answer_orphans(history)
    ended = RunEnded(
        status=status,
        reason=_with_left_out(reason, left_out() if left_out is not None else ()),
        answer=defang_markdown(run.answer).text,
        usage=run.total,
        session_usage=session_usage + run.total,
        usage_by_role=dict(run.by_role),
        checks=run.checks,
        not_verified=_not_verified(run, verifier, status),
    )
    emit(ended)
    return ended


def _not_verified(run: _RunState, verifier: Verifier | None, status: RunStatus) -> tuple[str, ...]:
    """The checks not run at the end: those the last round could not run, or every one when the run
    ended before a round it could end on (the model never said it was done, or went on after one)."""
    if run.checks:
        return not_verified(run.checks)
    commands = verifier.commands() if verifier is not None else ()
    why = f"the run ended ({status}) before the model said it was done"
    return tuple(f"{' '.join(command.split())}: not run: {why}" for command in commands)


_LEFT_OUT_SHOWN = 10


def _with_left_out(reason: str, left_out: Sequence[str]) -> str:
    """``reason``, then the changes commands made that are not in the proposal, when there are any."""
    if not left_out:
        return reason
    shown = ", ".join(left_out[:_LEFT_OUT_SHOWN])
    more = f", and {len(left_out) - _LEFT_OUT_SHOWN} more" if len(left_out) > _LEFT_OUT_SHOWN else ""
    count = "1 change" if len(left_out) == 1 else f"{len(left_out)} changes"
    return f"{reason}; {count} made by commands not in the proposal: {shown}{more}"


@dataclass
class _RunState:
    """What must survive an exception in the middle of a turn: the usage so far, in total and by role."""

    before: Usage
    total: Usage = field(default_factory=Usage)
    by_role: dict[ModelRole, Usage] = field(default_factory=dict)
    checks: tuple[CheckResult, ...] = ()
    """The acceptance checks' results, while the run may end on them (cleared when the model goes on)."""
    check_rounds: int = 0
    answer: str = ""
    """The text of this run's last model reply that had one: never an earlier run's (a run whose model
    never replied has none, though the session's history holds the answers of its earlier runs)."""

    def add(self, role: ModelRole, usage: Usage) -> None:
        """Count one model call of ``role``."""
        self.total = self.total + usage
        self.by_role[role] = self.by_role.get(role, NO_USAGE) + usage


async def _turns(
    run: _RunState,
    history: list[Message],
    model: ModelClient,
    tools: ToolExecutor,
    emit: EventSink,
    limits: LoopLimits,
    before_turn: Callable[[list[Message]], None] | None,
    compactor: Compactor | None = None,
    reminder: Callable[[int, Usage], str] | None = None,
    ended_by: Callable[[], str | None] | None = None,
    verifier: Verifier | None = None,
    after_answer: Callable[[], Awaitable[str | None]] | None = None,
) -> tuple[RunStatus, str]:
    for turn in range(1, limits.max_turns + 1):
        if turn > 1 and (spent := _budget(run, limits, model)) is not None:
            return "stopped", spent
        emit(TurnStarted(turn=turn, max_turns=limits.max_turns))
        if before_turn is not None:
            before_turn(history)
        specs = list(tools.specs())
        note = reminder(turn, run.total) if reminder is not None else ""
        if compactor is not None and compactor.needed(_with_note(history, note), specs):
            await _compact(compactor, history, specs, model, emit, "auto", note, run)
        try:
            sent = time.monotonic()
            response = await _complete(model, _with_note(history, note), specs, emit, limits)
        except ModelContextOverflowError:
            if compactor is None:
                raise
            await _compact(compactor, history, specs, model, emit, "overflow", note, run)
            sent = time.monotonic()
            response = await _complete(model, _with_note(history, note), specs, emit, limits)
        measured = ModelCall(model.model_name, time.monotonic() - sent, response.request)
        message = response.message
        history.append(message)
        if message.text:
            run.answer = message.text
        if compactor is not None:
            compactor.observe(len(history), response.usage)
        run.add("main", response.usage)
        if message.text or message.reasoning:
            text, reasoning = defang_markdown(message.text), defang_markdown(message.reasoning)
            emit(MessageCompleted(text=text.text, reasoning=reasoning.text))
            if text.targets or reasoning.targets:
                emit(RemoteContentDefanged(tuple(dict.fromkeys(text.targets + reasoning.targets))))
        emit(UsageReported(response.usage, run.total, run.before + run.total, call=measured))
        if not message.tool_calls and response.finish_reason in CUT_OFF:
            return "stopped", (
                f"model {model.model_name} hit its output token limit (finish reason "
                f"{response.finish_reason}): the answer is cut off; raise max_output_tokens for this provider"
            )
        if not message.tool_calls and response.finish_reason in FILTERED:
            return "stopped", (
                f"model {model.model_name} stopped its answer (finish reason {response.finish_reason}): "
                "the provider filtered or refused it"
            )
        if not message.tool_calls and not message.text.strip():
            # Nothing said, nothing done (seen with small local models): never a silent "done".
            return "stopped", f"model {model.model_name} returned an empty reply (no text and no tool call)"
        markup = [] if message.tool_calls else leftover_markup(message.text)
        if markup:
            return "stopped", (
                f"model {model.model_name} emitted markup that was not understood ({', '.join(markup)}): "
                "no tool ran and the text is not an answer; the server's chat template or tool-call parser "
                "does not match this model"
            )
        if not message.tool_calls:
            if after_answer is not None and (feedback := await after_answer()) is not None:
                history.append(UserMessage(feedback))
                continue
            if verifier is None or not verifier.commands():
                return "done", "the model answered"
            verdict = await _check(run, history, verifier, emit)
            if verdict is not None:
                return verdict
            continue  # the failures went back to the model
        for call in message.tool_calls:
            history.append(await tools.execute(call, lambda event: _count_subagent(run, event, emit)))
        if ended_by is not None and (ended := ended_by()) is not None:
            return "done", ended
    turns = "turn" if limits.max_turns == 1 else "turns"
    return "stopped", f"clean stop: maximum of {limits.max_turns} {turns} exceeded"


async def _check(
    run: _RunState, history: list[Message], verifier: Verifier, emit: EventSink
) -> tuple[RunStatus, str] | None:
    """The model said it was done: run the checks. Returns how the run ends, or None when the failures
    went back to the model (appended to ``history``) and the run goes on."""
    results = await verifier.run(emit)
    run.check_rounds += 1
    run.checks = results
    emit(ChecksRan(results, run.check_rounds))
    failed = [result for result in results if result.failed]
    if not failed:
        passed = sum(result.passed for result in results)
        unrun = len(results) - passed
        return "done", f"the model answered; acceptance checks: {passed} passed" + (
            f", {unrun} not run" if unrun else ""
        )
    if run.check_rounds > CHECK_FEEDBACK_ROUNDS:
        return "stopped", claims_done_reason(failed)
    run.checks = ()  # the model goes on: these results no longer describe the proposal
    history.append(UserMessage(feedback_message(failed)))
    return None


def _count_subagent(run: _RunState, event: Event, emit: EventSink) -> None:
    """Forward a tool call's event; a subagent's model call (``task``) counts in this run's usage."""
    if isinstance(event, SubagentEvent) and isinstance(event.event, UsageReported):
        run.add("subagent", event.event.usage)
    emit(event)


def _with_note(history: list[Message], note: str) -> list[Message]:
    """The messages sent: ``history``, then the reminder as a last user message (never stored)."""
    return [*history, UserMessage(note)] if note else history


def _budget(run: _RunState, limits: LoopLimits, model: ModelClient) -> str | None:
    return budget_spent(
        run.total, max_tokens=limits.max_tokens, max_cost_usd=limits.max_cost_usd, model_name=model.model_name
    )


async def _complete(
    model: ModelClient, history: list[Message], specs: list[ToolSpec], emit: EventSink, limits: LoopLimits
) -> ModelResponse:
    deltas = _DefangedDeltas(emit)
    try:
        async with asyncio.timeout(limits.model_timeout_s):
            return await model.complete(history, specs, deltas)
    except TimeoutError:
        raise ModelError(
            f"model {model.model_name} did not answer within {limits.model_timeout_s:g} s"
        ) from None
    finally:
        deltas.flush()


async def _compact(
    compactor: Compactor,
    history: list[Message],
    specs: list[ToolSpec],
    model: ModelClient,
    emit: EventSink,
    reason: Literal["auto", "overflow"],
    note: str,
    run: _RunState,
) -> None:
    """Compact ``history``; a summary's model call counts in the run's usage as ``compaction``, reported
    after ``ContextCompacted``."""
    trailing = [UserMessage(note)] if note else []
    done = await compactor.compact(history, specs, model, force=reason == "overflow", trailing=trailing)
    emit(ContextCompacted(reason, done.how, done.tokens_before, done.tokens_after, done.pruned))
    if done.usage is not None:
        run.add("compaction", done.usage)
        emit(UsageReported(done.usage, run.total, run.before + run.total, role="compaction"))


class _DefangedDeltas:
    """The ``EventSink`` a model call gets: ``MessageDelta`` text goes out defanged, the rest as it is.

    A ``ModelRetrying`` drops what is held back (the failed attempt's text is void); ``flush`` sends the
    rest once the call is over.
    """

    def __init__(self, emit: EventSink) -> None:
        self._emit = emit
        self._streams = {"text": Defanger(), "reasoning": Defanger()}

    def __call__(self, event: Event) -> None:
        if isinstance(event, MessageDelta):
            shown = self._streams[event.kind].feed(event.text)
            if shown:
                self._emit(MessageDelta(text=shown, kind=event.kind))
            return
        if isinstance(event, ModelRetrying):
            self._streams = {"text": Defanger(), "reasoning": Defanger()}
        self._emit(event)

    def flush(self) -> None:
        for kind, stream in self._streams.items():
            rest = stream.flush()
            if rest:
                self._emit(MessageDelta(text=rest, kind="text" if kind == "text" else "reasoning"))


def _answer_orphans(history: list[Message]) -> None:
    """Give every unanswered tool call of the last assistant message an "interrupted" result."""
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if isinstance(message, AssistantMessage):
            answered = {m.call_id for m in history[index + 1 :] if isinstance(m, ToolResultMessage)}
            for call in message.tool_calls:
                if call.call_id not in answered:
                    history.append(
                        ToolResultMessage(
                            call_id=call.call_id, name=call.name, content=INTERRUPTED, is_error=True
                        )
                    )
            return
