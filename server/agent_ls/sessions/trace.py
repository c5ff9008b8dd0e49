"""A stored session read back as a timeline, for ``agent-ls trace show`` and ``agent-ls trace html``
(docs/sessions.md, "Reading a trajectory").

``build_trace`` walks the lines of one session file (``store.StoredFile``) in order and groups them:
runs (``run_start`` … ``run_end``), in each run its turns (one model call: the ``usage`` line with its
model, latency and request facts, and the assistant ``message`` it answered with), in each turn its tool
calls (the call, its ``verdict`` line with the rule, its ``tool`` line with the duration, its result
``message``), and between turns the compactions and acceptance checks. The final proposal is the last
state of the ``proposal`` lines, kept (and marked) when it was applied or discarded.

Session files are the user's state and may be hand-edited: every field is read defensively (a missing or
mistyped one reads as absent), and nothing here trusts the text it shows; the renderers escape it.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_ls.sessions.outputs import unwrap_tool_result
from agent_ls.sessions.store import SessionNotFound, SessionStore, StoredFile, check_id

RESULT_CHARS = 100
"""How much of a tool result's first line a timeline shows."""


@dataclass
class ToolStep:
    """One tool call of a turn. ``duration_s`` None: not recorded (a file written before issue 19)."""

    call_id: str
    name: str
    arguments: str = ""
    subject: str = ""
    verdict: str = ""
    rule: str = ""
    approval: str = ""
    duration_s: float | None = None
    is_error: bool = False
    result: str = ""

    @property
    def about(self) -> str:
        """What the call was about: the verdict's subject (the command, the path), else the ``path``,
        ``command``, ``pattern`` or ``query`` argument, else the arguments as sent."""
        if self.subject:
            return self.subject
        try:
            arguments = json.loads(self.arguments)
        except ValueError:
            return self.arguments
        if isinstance(arguments, dict):
            for key in ("path", "command", "pattern", "query", "url"):
                if isinstance(arguments.get(key), str):
                    return str(arguments[key])
        return self.arguments


@dataclass
class Turn:
    """One model call of a run and what came of it (``usage`` is the line's ``usage`` object)."""

    number: int
    model: str = ""
    provider: str = ""
    latency_s: float | None = None
    request_bytes: int | None = None
    request_sha256: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    reasoning: str = ""
    tools: list[ToolStep] = field(default_factory=list)
    has_message: bool = False


@dataclass
class Note:
    """A line of the timeline between turns: a compaction, acceptance checks, a plan, a subagent's call."""

    kind: str
    text: str


@dataclass
class Run:
    number: int
    task: str = ""
    model: str = ""
    status: str = "interrupted"
    reason: str = ""
    answer: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    items: list[Turn | Note] = field(default_factory=list)

    @property
    def turns(self) -> list[Turn]:
        return [item for item in self.items if isinstance(item, Turn)]


@dataclass
class ProposedFile:
    """A file of the final proposal: both texts, and the unified diff between them."""

    path: str
    is_new: bool
    base_text: str
    new_text: str

    def diff(self) -> list[str]:
        """The unified diff lines (``difflib``, no line endings), from ``a/path`` to ``b/path``."""
        before = "/dev/null" if self.is_new else f"a/{self.path}"
        return list(
            difflib.unified_diff(
                self.base_text.splitlines(),
                self.new_text.splitlines(),
                before,
                f"b/{self.path}",
                lineterm="",
            )
        )

    def counts(self) -> tuple[int, int]:
        """Lines added and removed."""
        lines = self.diff()[2:]
        return (
            sum(line.startswith("+") for line in lines),
            sum(line.startswith("-") for line in lines),
        )


@dataclass
class Trace:
    session_id: str
    workspace: str
    harness: str
    created_at: str
    runs: list[Run] = field(default_factory=list)
    proposal: dict[str, ProposedFile] = field(default_factory=dict)
    proposal_state: str = "pending"
    """``pending``, ``applied`` or ``discarded``: what became of the final proposal."""
    skipped: int = 0


def load_trace(store: SessionStore, workspace: Path, session_id: str | None) -> Trace:
    """The timeline of ``workspace``'s session ``session_id`` (its most recently written one when None).

    Raises:
        SessionNotFound: no such session (or none at all), or an id that cannot be one.
        SessionFormatError: as ``SessionStore.read``.
    """
    if session_id is None:
        ids = store.session_ids(workspace)
        if not ids:
            raise SessionNotFound(f"no session in {workspace}")
        session_id = ids[0]
    return build_trace(store.read(workspace, check_id(session_id)))


def build_trace(stored: StoredFile) -> Trace:
    """The timeline of ``stored`` (module docstring). Never raises for a line it cannot use."""
    header = stored.header
    trace = Trace(
        session_id=_str(header, "sessionId"),
        workspace=_str(header, "workspace"),
        harness=_str(header, "harness"),
        created_at=_str(header, "createdAt"),
        skipped=stored.skipped,
    )
    walker = _Walker(trace)
    for record in stored.records:
        walker.take(record)
    return trace


class _Walker:
    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.steps: dict[str, ToolStep] = {}
        self.last: Turn | None = None  # the latest turn, and the run it belongs to
        self.last_of: Run | None = None

    def run(self) -> Run:
        if not self.trace.runs:  # lines before any run_start (a hand-made file): run 1
            self.trace.runs.append(Run(number=1))
        return self.trace.runs[-1]

    def turn(self, *, wants: str) -> Turn:
        """The run's latest turn that still lacks ``wants`` (``usage`` or ``message``), else a new one."""
        run = self.run()
        last = self.last if self.last is not None and self.last_of is run else None
        if last is not None:
            if (wants == "usage" and not last.usage) or (wants == "message" and not last.has_message):
                return last
        turn = Turn(number=last.number + 1 if last is not None else 1)
        run.items.append(turn)
        self.last, self.last_of = turn, run
        return turn

    def take(self, record: dict[str, Any]) -> None:
        kind = record["kind"]
        if kind == "run_start":
            number = _int(record, "run") or len(self.trace.runs) + 1
            self.trace.runs.append(Run(number, _str(record, "task"), _str(record, "model")))
        elif kind == "run_end":
            run = self.run()
            run.status, run.reason = _str(record, "status"), _str(record, "reason")
            run.answer, run.usage = _str(record, "answer"), _dict(record, "usage")
        elif kind == "message":
            self.message(_dict(record, "message"))
        elif kind == "usage":
            self.usage(record)
        elif kind == "verdict":
            step = self.step(_str(record, "callId"), _str(record, "name"))
            step.verdict, step.rule = _str(record, "verdict"), _str(record, "rule")
            step.subject, step.approval = _str(record, "subject"), _str(record, "approval")
        elif kind == "tool":
            step = self.step(_str(record, "callId"), _str(record, "name"))
            step.duration_s = _float(record, "durationS")
            step.is_error = record.get("isError") is True
        elif kind == "compaction":
            text = (
                f"{_str(record, 'reason')}, {_str(record, 'how')}: {_int(record, 'tokensBefore'):,} → "
                f"{_int(record, 'tokensAfter'):,} tokens"
            )
            self.run().items.append(Note("compaction", text))
        elif kind == "checks":
            self.run().items.append(Note("checks", _checks_text(record)))
        elif kind in ("proposal", "proposal_cleared"):
            self.proposal(record)

    def message(self, message: dict[str, Any]) -> None:
        role = message.get("role")
        if role == "assistant":
            turn = self.turn(wants="message")
            turn.has_message = True
            turn.text, turn.reasoning = _str(message, "text"), _str(message, "reasoning")
            calls = message.get("toolCalls")
            for call in calls if isinstance(calls, list) else []:
                if isinstance(call, dict):
                    step = self.step(_str(call, "callId"), _str(call, "name"), turn)
                    step.arguments = _str(call, "arguments")
        elif role == "tool":
            step = self.step(_str(message, "callId"), _str(message, "name"))
            step.result = unwrap_tool_result(_str(message, "content"))
            step.is_error = step.is_error or message.get("isError") is True

    def usage(self, record: dict[str, Any]) -> None:
        role = _str(record, "role") or "main"
        if role != "main":  # a compaction summary, a subagent's turn: a line between the turns
            latency = _float(record, "latencyS")
            said = _tokens(_dict(record, "usage")) + (
                f" · {_seconds(latency)}" if latency is not None else ""
            )
            self.run().items.append(Note(role, f"{_str(record, 'model') or 'model call'}: {said}"))
            return
        turn = self.turn(wants="usage")
        turn.usage = _dict(record, "usage") or {"inputTokens": 0}
        turn.model, turn.provider = _str(record, "model"), _str(record, "provider")
        turn.latency_s = _float(record, "latencyS")
        turn.request_bytes = _int(record, "requestBytes") if "requestBytes" in record else None
        turn.request_sha256 = _str(record, "requestSha256")

    def step(self, call_id: str, name: str, turn: Turn | None = None) -> ToolStep:
        """The tool call ``call_id`` of the current run (ids repeat across runs of local models)."""
        key = f"{len(self.trace.runs)}:{call_id}"
        found = self.steps.get(key)
        if found is None or (turn is not None and all(step is not found for step in turn.tools)):
            found = ToolStep(call_id=call_id, name=name)
            self.steps[key] = found
            (turn or self.turn(wants="message")).tools.append(found)
        return found

    def proposal(self, record: dict[str, Any]) -> None:
        trace = self.trace
        if record["kind"] == "proposal_cleared":
            trace.proposal_state = _str(record, "why") or "applied"
            return
        if trace.proposal_state != "pending" and not record.get("why"):
            trace.proposal, trace.proposal_state = {}, "pending"  # a new proposal after an apply
        changes = record.get("changes")
        for change in changes if isinstance(changes, list) else []:
            if isinstance(change, dict) and _str(change, "path"):
                path = _str(change, "path")
                trace.proposal[path] = ProposedFile(
                    path, change.get("isNew") is True, _str(change, "baseText"), _str(change, "newText")
                )
        removed = record.get("removed")
        if not record.get("why"):  # an apply or discard of some files keeps them in the record
            for path in removed if isinstance(removed, list) else []:
                trace.proposal.pop(str(path), None)


def one_line(text: str, limit: int = RESULT_CHARS) -> str:
    """The first non-blank line of ``text``, cut to ``limit`` characters (``…`` when cut), and how many
    more lines there were: ``print(1) (+3 lines)``."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    first = lines[0] if len(lines[0]) <= limit else lines[0][: limit - 1] + "…"
    return first + (f" (+{len(lines) - 1} lines)" if len(lines) > 1 else "")


def tokens_text(usage: dict[str, Any]) -> str:
    """``1,306 in / 6 out`` (``~`` before estimates, ``, 1,000 cached`` when any), plus ``· $0.0012``
    when the cost is known."""
    return _tokens(usage)


def seconds_text(value: float | None) -> str:
    return _seconds(value)


def _tokens(usage: dict[str, Any]) -> str:
    mark = "~" if usage.get("estimated") is True else ""
    text = f"{mark}{_int(usage, 'inputTokens'):,} in / {mark}{_int(usage, 'outputTokens'):,} out"
    if cached := _int(usage, "cachedInputTokens"):
        text += f", {cached:,} cached"
    cost = _float(usage, "costUsd")
    return text + (f" · ${cost:.4f}" if cost is not None else "")


def _seconds(value: float | None) -> str:
    return "? s" if value is None else f"{value:.2f} s" if value >= 0.01 else f"{value * 1000:.1f} ms"


def _checks_text(record: dict[str, Any]) -> str:
    results = record.get("results")
    listed = [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []
    passed = sum(r.get("passed") is True for r in listed)
    failed = [_str(r, "command") for r in listed if r.get("passed") is not True]
    said = f"round {_int(record, 'round') or 1}: {passed} of {len(listed)} passed"
    return said + (f"; not passed: {', '.join(failed)}" if failed else "")


def _str(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _int(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _float(data: dict[str, Any], key: str) -> float | None:
    value = data.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _dict(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}
