"""Model calls in the session file: ``exchange`` records written by ``agent-ls run --record``, and every
model call a session file holds, read back for ``replay:<session.jsonl>`` (docs/replay-format.md).

An ``exchange`` record (one per model call, in call order, any role)::

    {"kind": "exchange", "at": "...", "call": 3, "model": "openai/gpt-4.1",
     "keep": 5, "messages": [<message>, ...], "tools": [{"name", "description", "parameters"}, ...],
     "response": <assistant message>, "finish": "tool_calls", "usage": {<usage>}}

``messages`` are those of the request after the first ``keep`` messages of the previous exchange's
request (a prefix they share): a run's requests grow by a few messages a turn, so the file grows by what
each adds, not by the whole history again. ``tools`` is written when the tool set differs from the
previous exchange's (always for the first). A failed call has ``"error": "<one line>"`` instead of
``response``. Messages use the shapes of ``records``; every string is redacted by the session log.

A session file without ``exchange`` records (any session) still replays: its model calls are the
assistant messages of its history, each request being the history before it (``saved.apply_record``
folds the records); the tools offered were not recorded and are not checked, and a transient status
note at the end of a request (``core.reminder``) was never stored and is not compared either.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_ls.core.errors import ConfigError
from agent_ls.core.messages import AssistantMessage, ToolSpec, Usage
from agent_ls.models.recording import ModelExchange
from agent_ls.models.replay import MAX_SCRIPT_BYTES
from agent_ls.sessions.records import message_from, message_json, usage_from, usage_json
from agent_ls.sessions.saved import SavedSession, apply_record
from agent_ls.sessions.store import SessionLog, StoredFile

EXCHANGE_KIND = "exchange"


def tool_json(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "parameters": spec.parameters}


class ExchangeWriter:
    """Appends each ``ModelExchange`` to ``log`` as an ``exchange`` record (module docstring).

    The ``record`` hook of ``models.recording.RecordingModel``; never raises (a line that cannot be
    written marks the log broken, as any other).
    """

    def __init__(self, log: SessionLog) -> None:
        self._log = log
        self._previous: list[dict[str, Any]] = []
        self._tools: list[dict[str, Any]] | None = None
        self._calls = 0

    def __call__(self, exchange: ModelExchange) -> None:
        self._calls += 1
        messages = [message_json(message) for message in exchange.messages]
        keep = _shared_prefix(self._previous, messages)
        payload: dict[str, Any] = {
            "call": self._calls,
            "model": exchange.model,
            "keep": keep,
            "messages": messages[keep:],
        }
        tools = [tool_json(spec) for spec in exchange.tools]
        if tools != self._tools:
            payload["tools"] = tools
        self._previous, self._tools = messages, tools
        if exchange.response is None:
            payload["error"] = exchange.error
        else:
            payload["response"] = message_json(exchange.response.message)
            payload["finish"] = exchange.response.finish_reason
            payload["usage"] = usage_json(exchange.response.usage)
        self._log.append(EXCHANGE_KIND, payload)


def record_target_problem(target: Path, root: Path) -> str | None:
    """Why ``--record`` cannot save to ``target``, said before the run (None: it can).

    Refused: a symbolic link, anything but a regular file (a folder, a device, a FIFO), and a file inside
    the workspace ``root`` (it would be one of the files the replayed run lists and reads)."""
    shown = f"--record {target}"
    if target.is_symlink():
        return f"{shown}: a symbolic link; name a new or a regular file"
    if target.exists() and not target.is_file():
        return f"{shown}: not a regular file"
    if target.absolute().is_relative_to(root.absolute()) or target.resolve().is_relative_to(root.resolve()):
        return f"{shown}: inside the workspace, where the replayed run would find it; save it outside"
    return None


def save_recording(session_file: Path, target: Path) -> tuple[bool, str]:
    """Copy ``session_file`` to ``target``: its folder is made, the copy is written to a new temporary
    file there (``O_EXCL``, mode 0600, as private as the session store) and renamed over ``target``, so a
    link or a special file planted at a fixed name is never written through.

    Returns:
        Whether it was saved, and one line saying so (with a note when the file is over the size a
        replay reads), or why not. Never raises for an ``OSError``.
    """
    problem = record_target_problem(target, Path("/nonexistent-root"))
    if problem is not None:
        return False, problem
    partial: str | None = None
    try:
        data = session_file.read_bytes()
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(partial, target)
        partial = None
    except OSError as exc:
        return False, f"could not save the recording to {target}: {exc.strerror or exc}"
    finally:
        if partial is not None:
            with contextlib.suppress(OSError):
                os.unlink(partial)
    line = f"recorded to {target} (replay it with --model replay:{target})"
    if len(data) > MAX_SCRIPT_BYTES:
        line += f"; it is {len(data):,} bytes, over the {MAX_SCRIPT_BYTES:,} a replay reads"
    return True, line


def _shared_prefix(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> int:
    count = 0
    for before, now in zip(old, new, strict=False):
        if before != now:
            break
        count += 1
    return count


@dataclass(frozen=True)
class RecordedCall:
    """One model call of a session file.

    Attributes:
        number: 1-based, in the file's order.
        run: the run it belongs to (1-based).
        messages: the request's messages (``records`` shapes, as stored: redacted).
        tools: the tool specs offered (``tool_json`` shapes); None when the file did not record them.
        answer: the assistant message answered, or None for a failed call.
        error: the failed call's one-line error, else "".
        finish: the provider's finish reason, when recorded.
        usage: the usage recorded, or None.
        exact: True for an ``exchange`` record (the whole request was recorded); False for a call read
            from the history of a session file, whose request may have ended with a status note.
    """

    number: int
    run: int
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    answer: AssistantMessage | None
    error: str = ""
    finish: str | None = None
    usage: Usage | None = None
    exact: bool = True


def recorded_calls(stored: StoredFile, path: str) -> list[RecordedCall]:
    """The model calls of a session file, in order: its ``exchange`` records when it has any, else the
    assistant messages of its history (module docstring).

    Raises:
        ConfigError: the file has no model call; with ``exchange`` records, a line is unreadable or an
            exchange is malformed (its number and what is wrong); without them, it made calls that its
            history does not hold (a compaction's summary, a subagent's): record it with ``--record``.
    """
    exchanges = [r for r in stored.records if r.get("kind") == EXCHANGE_KIND]
    if exchanges and stored.skipped:
        raise ConfigError(f"replay session {path} has {stored.skipped} unreadable line(s): record it again")
    calls = _from_exchanges(stored.records, path) if exchanges else _from_history(stored, path)
    if not calls:
        raise ConfigError(f"replay session {path} holds no model call to answer with")
    return calls


def _from_exchanges(records: list[dict[str, Any]], path: str) -> list[RecordedCall]:
    calls: list[RecordedCall] = []
    previous: list[dict[str, Any]] = []
    tools: list[dict[str, Any]] | None = None
    run = 0
    for record in records:
        if record.get("kind") == "run_start":
            run += 1
        if record.get("kind") != EXCHANGE_KIND:
            continue
        try:
            call = _exchange(record, previous, tools, number=len(calls) + 1, run=max(run, 1))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            where = f"replay session {path}: exchange {len(calls) + 1}"
            raise ConfigError(f"{where} is malformed: {exc}") from exc
        calls.append(call)
        previous, tools = call.messages, call.tools
    return calls


def _exchange(
    record: dict[str, Any],
    previous: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    *,
    number: int,
    run: int,
) -> RecordedCall:
    """The call of one ``exchange`` record, the previous request's messages and tools given. Raises
    ``ValueError`` (or ``KeyError``, ``TypeError``) saying what is wrong."""
    keep = record.get("keep", 0)
    if not isinstance(keep, int) or isinstance(keep, bool) or not 0 <= keep <= len(previous):
        raise ValueError(f"keep {keep!r} is not a count of the previous request's {len(previous)} messages")
    added = record["messages"]
    if not isinstance(added, list) or not all(isinstance(m, dict) for m in added):
        raise ValueError("messages is not a list of messages")
    for data in added:
        message_from(data)  # each must read back as a message
    if "tools" in record:
        if not isinstance(record["tools"], list) or not all(isinstance(t, dict) for t in record["tools"]):
            raise ValueError("tools is not a list of tool specs")
        tools = [dict(t) for t in record["tools"]]
    answer: AssistantMessage | None = None
    if "response" in record:
        if not isinstance(record["response"], dict):
            raise ValueError("response is not a message")
        message = message_from(record["response"])
        if not isinstance(message, AssistantMessage):
            raise ValueError(f"response has the role {message.role!r}, not assistant")
        answer = message
    elif not record.get("error"):
        raise ValueError("it has neither a response nor an error")
    usage = record.get("usage")
    finish = record.get("finish")
    return RecordedCall(
        number=number,
        run=run,
        messages=[*previous[:keep], *added],
        tools=tools,
        answer=answer,
        error=str(record.get("error") or ""),
        finish=finish if isinstance(finish, str) else None,
        usage=usage_from(usage) if isinstance(usage, dict) else None,
    )


def _from_history(stored: StoredFile, path: str) -> list[RecordedCall]:
    roles = {str(r.get("role", "main")) for r in stored.records if r.get("kind") == "usage"}
    unrecorded = roles - {"main"}
    if unrecorded:
        raise ConfigError(
            f"replay session {path} made {' and '.join(sorted(unrecorded))} model calls its history does not "
            "hold; record the session with `agent-ls run --record FILE` to replay it"
        )
    saved = SavedSession(session_id="", workspace="", created_at="", updated_at="")
    calls: list[RecordedCall] = []
    open_run, run = False, 0
    for record in stored.records:
        data = record.get("message") if record.get("kind") == "message" else None
        if isinstance(data, dict) and data.get("role") == "assistant" and not record.get("repaired"):
            calls.append(
                RecordedCall(
                    number=len(calls) + 1,
                    run=max(run, 1),
                    messages=[message_json(m) for m in saved.messages],
                    tools=None,
                    answer=_assistant(data),
                    exact=False,
                )
            )
        if record.get("kind") == "run_start":
            run += 1
        try:
            open_run = apply_record(saved, record, open_run)
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # as when a session is resumed: a line it cannot use is skipped
    return calls


def _assistant(data: dict[str, Any]) -> AssistantMessage | None:
    """The assistant message of a history record; None for one that does not read back (the replay then
    answers that call as failed)."""
    try:
        message = message_from(data)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return message if isinstance(message, AssistantMessage) else None
