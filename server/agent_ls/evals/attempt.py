"""One attempt at one task: a temporary copy of ``repo/``, the agent run on it as ``agent-ls run
--apply`` runs (``assembly.assemble_session`` then ``Session.run``: the one agent loop, recorded to a
session file in the attempt's temporary state dir), the proposal
written to the copy (``workspace.apply.apply_proposal``, all or nothing), then the task's ``check`` run
in the copy. The copy is removed afterwards; the suite's folder is only read.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from agent_ls.assembly import assemble_session
from agent_ls.config import load_config
from agent_ls.core.context import Focus
from agent_ls.core.errors import ConfigError
from agent_ls.core.events import Event, TurnStarted
from agent_ls.core.loop import LoopLimits
from agent_ls.core.ports import Approval, ApprovalRequest
from agent_ls.evals.suite import EvalTask
from agent_ls.policy.apply_check import edit_refusal
from agent_ls.sessions.continuation import start_recording
from agent_ls.sessions.redaction import Redactor
from agent_ls.sessions.store import SessionStore
from agent_ls.settings import EnvSnapshot, process_environ
from agent_ls.workspace.apply import apply_proposal
from agent_ls.workspace.child_env import child_environment

REPLAY_MODEL = "replay"
"""``--model replay``: each task answers with its own ``solution.json`` (``replay:<path>``)."""
MAX_REASON_CHARS = 240


class ModelUnusable(Exception):
    """The model asked for cannot be used at all (no model configured, a bad model string): the whole
    evaluation stops, since every attempt would fail the same way. One line."""


@dataclass(frozen=True)
class AttemptResult:
    """What one attempt did.

    Attributes:
        passed: the run ended ``done``, its proposal was written to the copy and the check exited 0.
        status: the run's status (``done``, ``stopped``, ``error``, ``cancelled``), or ``not_run``.
        turns: model requests the run made (``TurnStarted`` events).
        input_tokens, output_tokens: the run's usage (estimated for ``replay`` models).
        cost_usd: the run's cost in US dollars, None when no price is configured.
        latency_s: wall-clock seconds of the agent's run (the check not included).
        reason: why it failed, one line; None when it passed.
    """

    passed: bool
    status: str
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    reason: str | None = None


class EvalApprover:
    """Answers every "ask" verdict without a person: allow once with ``--yes``, else deny (as
    ``agent-ls run`` does with no terminal)."""

    def __init__(self, *, yes: bool) -> None:
        self._yes = yes

    async def ask(self, request: ApprovalRequest) -> Approval:
        return Approval("once", unasked="--yes") if self._yes else Approval("deny", unasked="headless")


def model_for(task: EvalTask, model: str | None) -> str | None:
    """The model string of ``task``'s attempts: its ``replay:<solution.json>`` for ``replay``, else
    ``model`` (None: ``AGENT_LS_MODEL`` or the config's, as for ``agent-ls run``)."""
    if model != REPLAY_MODEL:
        return model
    return f"replay:{task.solution}" if task.solution is not None else None


async def run_attempt(task: EvalTask, model: str | None, *, yes: bool = False) -> AttemptResult:
    """Run one attempt of ``task`` (module docstring). Never raises for a failing attempt: the result
    says why it failed.

    Raises:
        ModelUnusable: ``model`` (not ``replay``) cannot be opened.
    """
    if model == REPLAY_MODEL and task.solution is None:
        return AttemptResult(False, "not_run", reason="no solution.json for --model replay")
    scratch = Path(tempfile.mkdtemp(prefix="agent-ls-eval-"))
    try:
        copy = scratch / task.name
        await asyncio.to_thread(shutil.copytree, task.repo, copy, symlinks=True)
        return await _attempt_in(copy, task, model_for(task, model), yes=yes, state=scratch / "state")
    finally:
        await asyncio.to_thread(shutil.rmtree, scratch, True)


async def _attempt_in(
    copy: Path, task: EvalTask, model: str | None, *, yes: bool, state: Path
) -> AttemptResult:
    env = EnvSnapshot.from_environ()
    config = load_config(env, copy)
    limits = LoopLimits(max_turns=task.spec.max_turns, max_cost_usd=task.spec.budget_usd)
    session = await asyncio.to_thread(  # blocking: it reads the instruction files
        lambda: assemble_session(
            root=copy,
            approver=EvalApprover(yes=yes),
            environ=process_environ(),
            config=config,
            env=env,
            model=model,
            limits=limits,
        )
    )
    turns = 0

    def count(event: Event) -> None:
        nonlocal turns
        if isinstance(event, TurnStarted):
            turns += 1

    try:
        try:
            client = session.open_model()
        except ConfigError as exc:
            if task.solution is not None and model == f"replay:{task.solution}":
                return AttemptResult(False, "not_run", reason=_one_line(str(exc)))  # this task's script
            raise ModelUnusable(str(exc)) from exc
        # Recorded as `agent-ls run` records a run (in the attempt's own state dir, removed with it): the
        # whole text of a cut tool result is kept and read_output offered, as in the run being measured.
        store = SessionStore(state, Redactor.from_environ(process_environ()))
        recorder, _ = start_recording(store, session, None, count)
        started = time.monotonic()
        prompt = task.spec.prompt
        ended = await session.run(task=prompt, focus=Focus(), open_model=lambda: client, emit=recorder)
        recorder.log.close()
        latency = time.monotonic() - started
        changes = session.proposal()
        judge = edit_refusal(session.policy)
    finally:
        session.close()
        await session.close_mcp()
    measured = AttemptResult(
        False,
        ended.status,
        turns=turns,
        input_tokens=ended.usage.input_tokens,
        output_tokens=ended.usage.output_tokens,
        cost_usd=ended.usage.cost_usd,
        latency_s=latency,
    )
    if ended.status != "done":
        return _failed(measured, f"run {ended.status}: {ended.reason}")
    if changes:
        outcome = await asyncio.to_thread(apply_proposal, copy, changes, edit_refusal=judge)
        if not outcome.applied:
            return _failed(measured, f"proposal not applied: {outcome.message}")
    failure = await run_check(task.spec.check, copy, timeout_s=task.spec.check_timeout_s)
    if failure is not None:
        return _failed(measured, failure)
    return replace(measured, passed=True)


async def run_check(command: str, cwd: Path, *, timeout_s: float) -> str | None:
    """Run ``command`` with ``sh -c`` in ``cwd``; None when it exits 0, else why not (one line: the exit
    status and the last line of its output).

    Its environment is the agent's shell environment (``workspace.child_env``: an allowlist, never a
    key), so ``python`` is the interpreter agent-ls runs on, as for the agent's own commands. A check
    still running after ``timeout_s`` seconds is killed with its process group.
    """
    process = await asyncio.create_subprocess_shell(
        command,
        cwd=cwd,
        env=child_environment(process_environ()),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), timeout_s)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        return f"check timed out after {timeout_s:g} s: {command}"
    if process.returncode == 0:
        return None
    lines = [line for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
    last = f": {lines[-1].strip()}" if lines else ""
    return _one_line(f"check exited {process.returncode}{last}")


def _failed(result: AttemptResult, reason: str) -> AttemptResult:
    return replace(result, reason=_one_line(reason))


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_REASON_CHARS else line[: MAX_REASON_CHARS - 1] + "…"
