"""``agent-ls run``: one task, no editor. Imports neither pygls nor lsprotocol.

Order: build a session on the workspace, run the task with the transcript on stderr, print the
proposal's unified diff on stdout, the answer on stderr followed by the review findings it does not list
(``path:line: severity: message``) and, after a plan run (``--plan``) that ended with its plan, how to
implement or revise it (``PLAN_NEXT``), then with ``--apply`` write it to disk (every file checked for
staleness first, then all or nothing: ``workspace/apply_files.py``). An apply a kill interrupted is
finished first (``recover_interrupted_apply``).

What reaches the terminal goes through ``terminal_text`` (installed by ``cli.main``): control characters
are shown escaped on stderr, and in the diff when stdout is a terminal, with a note before each file
whose lines hold some; a piped diff keeps the exact bytes (names quoted as git quotes them) and the note
goes to stderr. ``--apply`` writes the exact text the proposal holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from agent_ls.assembly import assemble_session
from agent_ls.config import load_config
from agent_ls.core.checks import report_text
from agent_ls.core.context import Focus
from agent_ls.core.errors import ConfigError
from agent_ls.core.events import Event, FindingsReported, RunEnded
from agent_ls.core.loop import LoopLimits
from agent_ls.core.plan import RunMode
from agent_ls.core.ports import (
    DENIED,
    MCP_SERVER_START,
    Approval,
    ApprovalReply,
    ApprovalRequest,
    ModelClient,
)
from agent_ls.core.review import RunFindings
from agent_ls.core.transcript import line_for, usage_text
from agent_ls.core.visible_text import visible
from agent_ls.instructions.agent_context import marker_above
from agent_ls.policy.apply_check import edit_refusal
from agent_ls.runtime import CONTEXT_COMMAND, Session
from agent_ls.sessions.continuation import find_saved, recorded_model, start_recording
from agent_ls.sessions.exchanges import ExchangeWriter, record_target_problem, save_recording
from agent_ls.sessions.pending import record_rebase
from agent_ls.sessions.run_lock import RunLock, SessionBusy
from agent_ls.sessions.saved import SavedSession
from agent_ls.sessions.store import SessionFormatError, SessionNotFound, SessionStore
from agent_ls.sessions.telemetry import Telemetry
from agent_ls.settings import EnvSnapshot, process_environ
from agent_ls.terminal_text import Transcript, diff_notes, escapes
from agent_ls.workspace.apply import apply_proposal, recover_interrupted_apply, refused_edits
from agent_ls.workspace.diffs import quote_path, unified_diff

TERMINAL_REPLIES: dict[str, ApprovalReply] = {
    "y": "once",
    "yes": "once",
    "o": "once",
    "once": "once",
    "s": "session",
    "session": "session",
    "a": "always",
    "always": "always",
    "n": "deny",
    "no": "deny",
    "d": "deny",
    "deny": "deny",
}
# The first word of the answer, then (after "n") what the user wants the model to know.
_ANSWER = re.compile(r"\s*(\w+)\W*(.*)", re.DOTALL)
EXIT_USAGE = 2
EXIT_OUTPUT_CLOSED = 128 + 13  # as SIGPIPE would end a shell tool (cli.main for a closed stdout)
MAX_UNREADABLE_ANSWERS = 3
EXIT_BY_STATUS = {"done": 0, "stopped": 1, "error": 1, "cancelled": 130}
PLAN_NEXT = (
    'agent-ls: plan ready. Implement it: agent-ls run --continue "go"; revise it: '
    'agent-ls run --continue --plan "<what to change>"'
)
"""What ``agent-ls run --plan`` prints after the plan (the answer): the next step, in the same session."""


class TerminalApprover:
    """Asks on the terminal when stdin is a TTY; otherwise denies, unless ``--yes`` allows once.

    Answers: ``y`` (once), ``s`` (this session), ``a`` (always: the allow rule goes to the user config;
    offered only when the policy allows it, else read as once), ``n`` (deny; any text after it goes
    to the model as the user's feedback: ``n use make test instead``). An empty line (or the end of
    input) denies. Anything else is not an answer: the question is asked again, up to
    ``MAX_UNREADABLE_ANSWERS`` times, then denied; such text never reaches the model.
    """

    def __init__(self, *, yes: bool) -> None:
        self._yes = yes

    async def ask(self, request: ApprovalRequest) -> Approval:
        subject = visible(request.subject, newlines=False)
        if self._yes:  # never starts a workspace's MCP server: only a user's answer does (mcp_client.hub)
            return Approval("once", unasked="--yes")
        if not sys.stdin.isatty():
            hint = (
                "not started; trust the workspace (trusted_workspaces) or answer in a terminal or editor"
                if request.purpose == MCP_SERVER_START
                else "--yes allows it"
            )
            print(f"  (no terminal to ask about {request.tool_name}: {subject}; {hint})", file=sys.stderr)
            return Approval("deny", unasked="headless")
        print(f"\n{terminal_prompt(request)}", file=sys.stderr)
        always = " / [a]lways" if request.always else ""
        for _ in range(MAX_UNREADABLE_ANSWERS):
            approval = parse_answer(
                await _read_line(f"  [y]es once / [s]ession{always} / [n]o (then why)? "), request
            )
            if approval is not None:
                return approval
            print(
                "  (not an answer: type y, s"
                + (", a" if always else "")
                + " or n; 'n <why>' tells the model why)",
                file=sys.stderr,
            )
        return DENIED


def terminal_prompt(request: ApprovalRequest) -> str:
    """The question's lines (without the answer line): what, why, and what "always" would do.

    A subject of several lines (a script) shows its further lines after ``  │ ``, so no line of it can
    pass for a line of the question.
    """
    subject = "\n  │ ".join(visible(request.subject).split("\n"))
    what = f"an {request.purpose} ({request.tool_name})" if request.purpose else request.tool_name
    lines = [f"agent-ls wants to run {what}: {subject}", f"  ({request.reason})"]
    if request.always:
        lines.append(f"  [a]lways {request.always_effect}: {', '.join(request.always)}")
    elif request.no_always:
        lines.append(f"  (no [a]lways: {request.no_always})")
    return "\n".join(lines)


def parse_answer(answer: str, request: ApprovalRequest) -> Approval | None:
    """Read a terminal answer (see ``TerminalApprover``): "" (or the end of input) denies; an answer
    whose first word is not a reply is None (asked again, never passed to the model as a reason)."""
    found = _ANSWER.match(answer)
    if found is None:
        return None if answer.strip() else DENIED
    if found[1].lower() not in TERMINAL_REPLIES:
        return None
    reply = TERMINAL_REPLIES[found[1].lower()]
    if reply == "always" and not request.always:
        print("  (always is not available here; allowing once)", file=sys.stderr)
        return Approval("once")
    if reply == "deny":
        return Approval("deny", feedback=found[2].strip() or None)
    return Approval(reply)


async def _read_line(prompt: str) -> str:
    """One line from the terminal; "" on end of input.

    A daemon thread rather than ``asyncio.to_thread``: on Ctrl-C the run ends at once instead of
    waiting in the executor's shutdown for a line that never comes.
    """
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        try:
            line = input(prompt)
        except (EOFError, OSError):
            line = ""
        loop.call_soon_threadsafe(_resolve, answer, line)

    threading.Thread(target=read, name="agent-ls-prompt", daemon=True).start()
    return await answer


def _resolve(future: asyncio.Future[str], value: str) -> None:
    if not future.done():  # the run may have been cancelled meanwhile
        future.set_result(value)


def _show_request(text: str) -> None:
    print(f"agent-ls: --debug: {text}", file=sys.stderr, flush=True)


async def run_headless(
    *,
    task: str,
    model: str | None,
    workspace: Path,
    max_turns: int | None,
    max_tokens: int | None = None,
    max_cost_usd: float | None = None,
    yes: bool,
    apply: bool,
    file: Path | None = None,
    debug: bool = False,
    session_id: str | None = None,
    continue_latest: bool = False,
    mode: RunMode = "default",
    checks: Sequence[str] = (),
    resources: Sequence[str] = (),
    record: Path | None = None,
) -> int:
    """Run ``task`` in ``workspace`` (resolved), with ``file`` (resolved, inside it) in focus when given:
    its AGENTS.md chain and ``.agents/skills`` folders apply, and the task message names it. A task
    starting with ``/skill-name args`` runs that skill explicitly; ``/context`` prints what the next request
    holds, without a model call. With ``debug``, each request is printed on stderr before it is sent.

    Returns:
        The process exit code: 0 done, 1 stopped or failed, 2 a model that cannot be used (no
        model, a bad model string, a missing replay script) or a session that cannot be continued,
        130 cancelled.

    ``session_id`` (``--session``) or ``continue_latest`` (``--continue``) continue a stored session of
    ``workspace`` (docs/sessions.md): its history, pending proposal (``--apply`` applies the whole of
    it), approvals and skills. Every run is written to the session store.

    ``checks`` (``--check``) are acceptance commands run when the model says it is done (``core.checks``);
    their results and what was not verified are printed after the answer, and a run stopped because its
    model claimed done while a check failed exits 1. ``resources`` (``--resource``) are MCP resources
    attached to the task (docs/mcp.md); the run's MCP servers are stopped when it ends.
    ``record`` (``--record FILE``): every model call is written whole to the session file (``exchange``
    records, ``sessions.exchanges``), and the file is copied to ``record`` when the run ends: a fixture
    that ``replay:<FILE>`` replays, redacted like every session file. A target that is a link, not a
    regular file, or inside the workspace is refused before the run (exit 2); a copy that fails makes a
    run that was done exit 1.
    ``mode`` ``plan`` (``--plan``): read-only tools, edits refused by the policy, the run ends with a plan
    (printed as the answer, then ``PLAN_NEXT``); the session's next default run implements it.
    """
    root = workspace  # resolved by the CLI
    # Before anything is read: an apply cut short is finished or undone first (its config or AGENTS.md too).
    if (recovered := recover_interrupted_apply(root)) is not None:
        print(f"agent-ls: {recovered}", file=sys.stderr)
    env = EnvSnapshot.from_environ()
    config = load_config(env, root)
    for diagnostic in config.diagnostics:
        print(f"agent-ls: {diagnostic}", file=sys.stderr)
    telemetry = Telemetry(process_environ())  # AGENT_LS_OTEL=1: spans over OTLP (docs/telemetry.md)
    if (problem := telemetry.open()) is not None:
        print(f"agent-ls: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if record is not None and (problem := record_target_problem(record, root)) is not None:
        print(f"agent-ls: {problem}", file=sys.stderr)
        return EXIT_USAGE
    store = SessionStore.from_environ(process_environ())
    try:  # --session ID / --continue: a stored session goes on
        saved = find_saved(store, root, session_id=session_id, latest=continue_latest)
    except (SessionNotFound, SessionFormatError) as exc:
        print(f"agent-ls: {exc}", file=sys.stderr)
        return EXIT_USAGE
    configured = bool(env.get("AGENT_LS_MODEL") or config.model)
    if model is None and saved is not None and (recorded := recorded_model(saved, configured=configured)):
        print(f"agent-ls: model {recorded}, as in the session's last run (--model: another)", file=sys.stderr)
        model = recorded
    session = assemble_session(
        root=root,
        approver=TerminalApprover(yes=yes),
        environ=process_environ(),
        config=config,
        env=env,
        focus=file,
        model=model,
        session_id=saved.session_id if saved is not None else None,
        limits=LoopLimits(
            max_turns=max_turns or LoopLimits.max_turns, max_tokens=max_tokens, max_cost_usd=max_cost_usd
        ),
    )
    if debug:
        session.show_request = _show_request
    context_only = task.strip() == CONTEXT_COMMAND  # measured without a model call, and not stored
    try:  # a model that cannot be used ends the run before any model call or tool runs
        client = None if context_only else session.open_model()
    except ConfigError as exc:
        session.close()
        print(f"agent-ls: {exc}", file=sys.stderr)
        return EXIT_USAGE
    focus = Focus(path=file.relative_to(root).as_posix()) if file is not None else Focus()
    above = marker_above(root, config)
    if above is not None:
        print(
            f"agent-ls: note: {above} holds a project marker; its AGENTS.md files and skills apply only "
            f"with --workspace {above}",
            file=sys.stderr,
        )
    for diagnostic in session.context.skills.skipped:
        print(f"agent-ls: {diagnostic}", file=sys.stderr)
    lock = RunLock(store.path(root, session.session_id))
    try:  # a run of this session in another process (an editor's server, another terminal) goes first
        if not context_only:  # /context only reads
            lock.acquire()
    except SessionBusy as exc:
        session.close()
        print(f"agent-ls: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        code = await _run_locked(
            session, store, saved, task, focus, client, apply, mode, checks, resources, record, telemetry
        )
    finally:
        lock.release()
        telemetry.shutdown()  # the queued spans are sent before the process ends
    if record is not None and code != EXIT_OUTPUT_CLOSED:  # the session file as closed, apply included
        stored = store.path(root, session.session_id)
        saved_it, line = save_recording(stored, record) if stored.is_file() else (False, "nothing to record")
        print(f"agent-ls: {line}", file=sys.stderr)
        if not saved_it and code == 0:
            return 1
    return code


async def _run_locked(
    session: Session,
    store: SessionStore,
    saved: SavedSession | None,
    task: str,
    focus: Focus,
    client: ModelClient | None,
    apply: bool,
    mode: RunMode = "default",
    checks: Sequence[str] = (),
    resources: Sequence[str] = (),
    record: Path | None = None,
    telemetry: Telemetry | None = None,
) -> int:
    """The run of ``run_headless`` once the session's lock is held: recorded, shown, applied."""
    findings = RunFindings()
    transcript = Transcript()  # a reader that goes away stops the run (terminal_text.Transcript)
    if session.show_request is not None:  # --debug's request dumps go the same way
        session.show_request = lambda text: transcript.line(f"agent-ls: --debug: {text}")

    def render(event: Event) -> None:
        if isinstance(event, FindingsReported):
            findings.add(event.findings, event.files)
        if (line := line_for(event)) is not None:
            transcript.line(line, stop_run=not isinstance(event, RunEnded))

    recorder, notes = start_recording(
        store, session, saved, telemetry.traced(render) if telemetry else render
    )
    if record is not None:
        session.record_exchange = ExchangeWriter(recorder.log)
    for note in notes:
        print(f"agent-ls: proposed files {note}", file=sys.stderr)
    try:
        opener = (lambda: client) if client is not None else None
        ended = await session.run(
            task=task,
            focus=focus,
            open_model=opener,
            emit=recorder,
            mode=mode,
            checks=checks,
            resources=resources,
        )
    except asyncio.CancelledError:
        if not transcript.closed:
            raise
        return EXIT_OUTPUT_CLOSED  # closed after the loop's last wait: the run's record is written
    finally:
        session.close()
        await session.close_mcp()
    if transcript.closed:  # the record says how the run ended; no one reads the rest
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0)  # the stop came after the run's last wait: take it here
        return EXIT_OUTPUT_CLOSED
    sid = session.session_id
    recorder.log.flush()
    if recorder.log.path.is_file():  # not for a run that stored nothing (/context, /compact of nothing)
        print(f"agent-ls: session {sid} (go on with --continue, or --session {sid})", file=sys.stderr)
    changes = session.proposal()
    for change in changes:
        diff = unified_diff(change)
        before, note = diff_notes(diff, quote_path(change.path), terminal=escapes(sys.stdout))
        sys.stdout.write(before + diff)
        if note:
            print(note, file=sys.stderr)
    sys.stdout.flush()
    for path, labels in session.governed_by(changes).items():
        print(f"agent-ls: {quote_path(path)} is governed by {', '.join(labels)}", file=sys.stderr)
    if ended.answer:
        print(f"\n{ended.answer}", file=sys.stderr)
    if ended.plan is not None:
        print(PLAN_NEXT, file=sys.stderr)
    missing = findings.lines_missing_from(ended.answer)  # problem matchers read these lines: all of them
    if missing:
        print("\nreview findings:\n" + "\n".join(visible(line) for line in missing), file=sys.stderr)
    if report := report_text(ended.checks, ended.not_verified):  # acceptance checks (docs/modes.md)
        print(f"\n{visible(report)}", file=sys.stderr)
    print(f"agent-ls: usage: {usage_text(ended.usage)}", file=sys.stderr)
    if len(ended.usage_by_role) > 1:  # which model spent what: a line per role
        for role, used in ended.usage_by_role.items():
            print(f"agent-ls: usage ({role}): {usage_text(used)}", file=sys.stderr)
    if apply and changes:
        if ended.status != "done":
            print(f"agent-ls: not applying: the run ended {ended.status}", file=sys.stderr)
            return EXIT_BY_STATUS[ended.status]
        if ended.not_verified:  # "done" must not be written as if checked (docs/modes.md)
            count = len(ended.not_verified)
            print(
                f"agent-ls: not applying: {count} acceptance check(s) not verified (above); "
                "`agent-ls apply` writes the proposal anyway",
                file=sys.stderr,
            )
            recorder.log.close()
            return 1
        judge = edit_refusal(session.policy)
        if refused_edits(changes, judge) is None and (
            rebased := record_rebase(recorder.log, session.root, changes)
        ):
            print(f"agent-ls: {rebased}", file=sys.stderr)  # re-based onto the user's edit, or refused
            recorder.log.close()
            return 1
        # All or nothing (workspace/apply_files.py); a resumed proposal's files judged again.
        outcome = apply_proposal(session.root, changes, edit_refusal=judge)
        for line in filter(None, (outcome.recovered, outcome.message)):
            print(f"agent-ls: {line}", file=sys.stderr)
        recorder.log.append("apply", {"applied": outcome.applied, "failureReason": outcome.message or None})
        if not outcome.applied:
            recorder.log.close()
            return 1
        recorder.log.append("proposal_cleared", {"why": "applied"})
        recorder.log.close()
    return EXIT_BY_STATUS[ended.status]
