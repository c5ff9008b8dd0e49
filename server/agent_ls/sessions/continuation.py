"""What ``agent-ls run --session ID``, ``run --continue`` and ``agent-ls sessions`` do with the store
(docs/sessions.md). Prints nothing: the front end says what it returns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from agent_ls.core.events import EventSink
from agent_ls.runtime import Session
from agent_ls.sessions.resume import SessionRecorder, restore
from agent_ls.sessions.run_lock import is_running
from agent_ls.sessions.saved import SavedSession, replay
from agent_ls.sessions.store import SessionFormatError, SessionNotFound, SessionStore


def find_saved(
    store: SessionStore, root: Path, *, session_id: str | None, latest: bool
) -> SavedSession | None:
    """The stored session ``session_id`` of ``root``, or with ``latest`` its most recently written one;
    None when neither was asked for.

    Raises:
        SessionNotFound: no such session (or none at all for ``latest``).
        SessionFormatError: as ``SessionStore.read``.
    """
    if session_id is None and not latest:
        return None
    if session_id is None:
        ids = store.session_ids(root)
        if not ids:
            raise SessionNotFound(f"no session to continue in {root}")
        session_id = ids[0]
    return replay(store.read(root, session_id))


def recorded_model(saved: SavedSession, *, configured: bool) -> str | None:
    """The model string ``saved``'s last run used, for a run that continues it with no ``--model``:
    None when a model is ``configured`` (``AGENT_LS_MODEL``, a config file's ``model``: they win, as for
    any run) or none was recorded (``(none)``: the last run's model could not be opened). The session
    file is the user's own state, like the config (docs/sessions.md "Resume")."""
    if configured or saved.model in ("", "(none)"):
        return None
    return saved.model


def start_recording(
    store: SessionStore, session: Session, saved: SavedSession | None, forward: EventSink
) -> tuple[SessionRecorder, list[str]]:
    """Put ``saved`` back into ``session`` (when given) and open its file (a new one otherwise).

    Returns:
        The recorder to pass as the run's ``emit``, and notes for the user (stale or dropped files).
    """
    notes: list[str] = []
    if saved is not None:
        restored = restore(session, saved)
        if restored.stale:
            notes.append(
                f"changed since the agent read them (--apply re-checks them): {', '.join(restored.stale)}"
            )
        if restored.dropped:
            notes.append(f"left out of the proposal (a key was redacted): {', '.join(restored.dropped)}")
        log = store.reopen(session.root, session.session_id)
    else:
        log = store.create(session.root, session.session_id)
    recorder = SessionRecorder(log, session, forward, runs=saved.runs if saved is not None else 0)
    if saved is not None:
        recorder.pending_repairs(saved)
    return recorder, notes


def summaries(
    store: SessionStore,
    roots: Sequence[Path],
    running: AbstractSet[str] = frozenset(),
    notes: list[str] | None = None,
) -> list[dict[str, Any]]:
    """The ``agent.listSessions`` entries of ``roots``' stored sessions, newest first. Blocking.

    ``status`` is ``running`` for the ids in ``running`` and for every session whose run lock another
    process holds (``run_lock.is_running``: an ``agent-ls run`` in a terminal, another editor's server).
    A file that cannot be listed (unreadable, no header, a newer format) is left out, and one line saying
    which and why is added to ``notes`` when given; it never hides the other sessions."""
    found: list[dict[str, Any]] = []
    for root in roots:
        for session_id in store.session_ids(root):
            try:
                saved = replay(store.read(root, session_id))
            except (SessionNotFound, SessionFormatError) as exc:
                if notes is not None:
                    notes.append(f"session {session_id} left out: {exc}")
                continue
            busy = session_id in running or is_running(store.path(root, session_id))
            found.append(saved.summary(running=busy))
    found.sort(key=lambda s: str(s["updatedAt"]), reverse=True)
    return found


def sessions_text(found: list[dict[str, Any]], *, as_json: bool) -> str:
    """``agent-ls sessions``'s output: one JSON object ``{"sessions": [...]}``, or one line per session::

    3f2a9c0d1e4b  2026-11-30 20:46  done  2 runs  1 pending  Fix mean in stats.py
    """
    if as_json:
        return json.dumps({"sessions": found}, ensure_ascii=False, indent=2)
    if not found:
        return "no sessions stored for this workspace"
    lines = []
    for s in found:
        when = str(s["updatedAt"])[:16].replace("T", " ")
        runs = f"{s['runs']} run{'' if s['runs'] == 1 else 's'}"
        pending = f"{len(s['pendingFiles'])} pending"
        lines.append(f"{s['sessionId']}  {when}  {s['status']}  {runs}  {pending}  {s['title']}")
    return "\n".join(lines)
