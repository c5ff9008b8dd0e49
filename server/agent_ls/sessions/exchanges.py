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

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_ls.core.errors import ConfigError
from agent_ls.core.messages import ToolSpec
from agent_ls.models.recording import ModelExchange
from agent_ls.sessions.records import message_json, usage_json
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


def save_recording(session_file: Path, target: Path) -> str:
    """Copy ``session_file`` to ``target`` (written whole, then renamed into place; its folder is made),
    and say so in one line, or why it could not be (never raises for an ``OSError``)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        shutil.copyfile(session_file, partial)
        os.replace(partial, target)
    except OSError as exc:
        return f"could not save the recording to {target}: {exc.strerror or exc}"
    return f"recorded to {target} (replay it with --model replay:{target})"


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
        response: the assistant message answered (``records`` shape), or None for a failed call.
        error: the failed call's one-line error, else "".
        finish: the provider's finish reason, when recorded.
        usage: the usage recorded (``records.usage_json``), or None.
        exact: True for an ``exchange`` record (the whole request was recorded); False for a call read
            from the history of a session file, whose request may have ended with a status note.
    """

    number: int
    run: int
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    response: dict[str, Any] | None
    error: str = ""
    finish: str | None = None
    usage: dict[str, Any] | None = None
    exact: bool = True


def recorded_calls(stored: StoredFile, path: str) -> list[RecordedCall]:
    """The model calls of a session file, in order: its ``exchange`` records when it has any, else the
    assistant messages of its history (module docstring).

    Raises:
        ConfigError: the file has no model call; or, without ``exchange`` records, it made calls that its
            history does not hold (a compaction's summary, a subagent's): record it with ``--record``.
    """
    exchanges = [r for r in stored.records if r.get("kind") == EXCHANGE_KIND]
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
            keep = int(record.get("keep", 0))
            messages = [*previous[:keep], *[dict(m) for m in record["messages"]]]
            if "tools" in record:
                tools = [dict(t) for t in record["tools"]]
            response = record.get("response")
            usage = record.get("usage")
            calls.append(
                RecordedCall(
                    number=len(calls) + 1,
                    run=max(run, 1),
                    messages=messages,
                    tools=tools,
                    response=dict(response) if isinstance(response, dict) else None,
                    error=str(record.get("error") or ""),
                    finish=record.get("finish"),
                    usage=dict(usage) if isinstance(usage, dict) else None,
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(
                f"replay session {path}: exchange {len(calls) + 1} is malformed ({type(exc).__name__}: {exc})"
            ) from exc
        previous = messages
    return calls


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
                    response=dict(data),
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
