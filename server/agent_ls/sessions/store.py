"""The session store: one append-only JSONL file per session, one folder per workspace (docs/sessions.md).

Where: ``<state dir>/sessions/<workspace folder>/<session id>.jsonl``. The state dir is
``AGENT_LS_STATE_DIR`` when set, else platformdirs' ``user_state_dir("agent-ls")``
(``~/.local/state/agent-ls`` on Linux). The workspace folder is the root's base name and the first 12
hex digits of the SHA-256 of its real path (``myapp-3f2a9c0d1e4b``): stable, filesystem-safe, and two
checkouts named alike do not share a folder.

Format: the first line is the header ``{"kind": "session", "format": 1, "harness": "0.1.0",
"workspace": "/abs/root", "sessionId": "...", "createdAt": "<ISO 8601 UTC>"}``. Every further line is
one event ``{"kind": "<kind>", "at": "<ISO 8601 UTC>", ...payload}``; ``session_log.KINDS`` lists those
written today, and a reader skips kinds it does not know, so new kinds (compaction, todo, memory) need
no new format version. A file whose ``format`` is newer than ``FORMAT_VERSION`` is not read.

Durability: a line is written whole with one ``write`` to a file opened ``O_APPEND`` (no user-space
buffer), so a killed process loses nothing it wrote; ``SessionLog.sync`` (``fsync``) runs at the end of
each run, for a power cut. On load, a last line without its newline (a write cut short) is ignored, as
is any line that is not a JSON object (malformed, nested too deeply for the parser, too big to hold in
memory: ``line_record``); an unfinished run is repaired (``replay.load_session``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import queue
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from agent_ls import __version__
from agent_ls.sessions.redaction import Redactor
from agent_ls.workspace.private_dirs import make_private

FORMAT_VERSION = 1
STATE_DIR_ENV = "AGENT_LS_STATE_DIR"
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a session id may be: it names a file, so no separator and no dot."""


class SessionNotFound(LookupError):
    """The user named a session that is not stored for this workspace (or an id that cannot be one); the
    front end says so and nothing runs."""


class SessionFormatError(ValueError):
    """The session file has no header or a newer format; the front end says so and nothing runs."""


def is_session_file(path: str) -> bool:
    """Whether a ``replay:`` path names a session file (``.jsonl``: ``replay:<session.jsonl>`` replays
    it) rather than a replay script (``.json``)."""
    return path.lower().endswith(".jsonl")


def now_iso() -> str:
    """The current UTC time, ISO 8601 with milliseconds (``2026-11-30T20:46:21.123Z``)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def state_dir(environ: Mapping[str, str]) -> Path:
    """``AGENT_LS_STATE_DIR`` (``~`` expanded) when set, else platformdirs' user state dir for agent-ls."""
    chosen = environ.get(STATE_DIR_ENV)
    if chosen:
        return Path(chosen).expanduser()
    return Path(platformdirs.user_state_dir("agent-ls"))


def workspace_folder(root: Path) -> str:
    """``<base name>-<12 hex digits of sha256(real path)>``; the name keeps only ``[A-Za-z0-9._-]``."""
    real = os.path.realpath(root)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(real))[:40].lstrip(".") or "root"
    return f"{name}-{digest}"


def check_id(session_id: str) -> str:
    """``session_id`` when it can name a session file, else ``SessionNotFound``."""
    if not SESSION_ID.fullmatch(session_id):
        raise SessionNotFound(f"no session {session_id!r}: an id is letters, digits, '-' and '_'")
    return session_id


class SessionLog:
    """The open file of one session: ``append(kind, payload)`` writes one redacted line.

    The redaction, the JSON encoding and the write happen in a writer thread of the log's own, in the
    order of the calls, so the event loop never waits for them (a 10k-line file's proposal event is a
    megabyte of text to redact and encode: tens of milliseconds during which the editor's requests
    would wait). ``flush`` waits until every line appended so far is written; ``sync`` and ``close``
    flush first. A kill loses at most the lines still queued (milliseconds' worth), never part of one.

    Contract: ``append`` never raises for a full disk or a vanished folder; it logs nothing with the
    payload (it may hold file texts) and keeps the run going: the store is a record, not the run.
    ``broken`` tells whether a write failed. ``header`` (a new session's first line, not redacted) is
    written just before the first appended line, so the file exists only once something is recorded.
    ``hold`` keeps one line back until the next ``append`` (``drop_held`` forgets it): a run's start is
    written only once the run did something, so a run that did nothing leaves no new file behind.
    """

    def __init__(self, path: Path, redactor: Redactor, header: Mapping[str, Any] | None = None) -> None:
        self.path = path
        self._redactor = redactor
        self._header = dict(header) if header is not None else None
        self._fd: int | None = None
        self.broken: str | None = None
        self._queue: queue.Queue[tuple[str, str, Mapping[str, Any]] | None] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._held: tuple[str, Mapping[str, Any] | None] | None = None

    @property
    def is_new(self) -> bool:
        """True while nothing was appended to a new session's log (its file does not exist yet)."""
        return self._header is not None and self._writer is None and self._held is None

    def hold(self, kind: str, payload: Mapping[str, Any] | None = None) -> None:
        """Keep ``append(kind, payload)`` back: it is appended just before the next line, or never."""
        self._held = (kind, payload)

    def drop_held(self) -> bool:
        """Forget the held line; True when there was one (nothing was appended after it)."""
        held, self._held = self._held, None
        return held is not None

    @property
    def redactor(self) -> Redactor:
        """What every appended line goes through (``sessions.outputs`` cleans the kept outputs with it)."""
        return self._redactor

    def _open(self) -> int:
        if self._fd is None:
            make_private(self.path.parent)  # the state dir and sessions/ too: 0700
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":  # a torn line: end it, keep ours whole
                os.write(fd, b"\n")
            self._fd = fd
        return self._fd

    def append(self, kind: str, payload: Mapping[str, Any] | None = None) -> bool:
        """Queue ``{"kind": kind, "at": now, **payload}`` (every string redacted) as one line.

        ``payload`` must be JSON-serializable, must not hold ``kind`` or ``at``, and must not be changed
        afterwards (it is encoded later, in the writer thread). Returns False when an earlier line could
        not be written (``broken`` says why)."""
        if self.broken is not None:
            return False
        if self._held is not None:
            (held_kind, held_payload), self._held = self._held, None
            self.append(held_kind, held_payload)
        with self._start_lock:
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_queued, name="agent-ls-session-log")
                self._writer.daemon = True
                self._writer.start()
        self._queue.put((kind, now_iso(), dict(payload or {})))
        return True

    def _write_queued(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                kind, at, payload = item
                try:
                    if self._header is not None:  # a new session's file starts with its first event
                        header, self._header = self._header, None
                        self.write_line(header)
                    self.write_line({"kind": kind, "at": at, **self._redactor.value(payload)})
                except Exception as exc:  # never kill the writer: the next lines still go out
                    self.broken = f"{self.path}: {type(exc).__name__}"
            finally:
                self._queue.task_done()

    def flush(self) -> None:
        """Wait until every line appended so far is written."""
        if self._writer is not None:
            self._queue.join()

    def write_line(self, record: Mapping[str, Any]) -> bool:
        """Write ``record`` as it is (no redaction: the header) as one line, now."""
        data = (json_line(record) + "\n").encode("utf-8")
        try:
            fd = self._open()
            view = memoryview(data)
            while view:  # one write for a line under the pipe/page limits; a loop for a long one
                written = os.write(fd, view)
                view = view[written:]
        except OSError as exc:
            self.broken = f"{self.path}: {exc.strerror or exc}"
            return False
        return True

    def sync(self) -> None:
        """Write what is queued, then ``fsync`` it (at the end of a run)."""
        self.flush()
        if self._fd is not None:
            try:
                os.fsync(self._fd)
            except OSError as exc:
                self.broken = f"{self.path}: {exc.strerror or exc}"

    def close(self) -> None:
        self.sync()
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join()
            self._writer = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_line(record: Mapping[str, Any]) -> str:
    """``record`` as one line of JSON that encodes to valid UTF-8, whatever its strings hold.

    A lone surrogate (a task read from stdin with invalid UTF-8 bytes arrives as ``\\udcff``, Python's
    ``surrogateescape``) cannot be encoded as UTF-8; it is written as its JSON escape ``\\udcff``
    instead, which ``json.loads`` reads back as the same string. Other characters stay as they are (no
    ``ensure_ascii``: a file's text keeps its size). Source: RFC 8259 section 7 (any code point may be
    escaped)."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@dataclass(frozen=True)
class StoredFile:
    """The lines of one session file: the header and each readable event, in order.

    ``skipped`` counts the lines that were not JSON objects; ``torn`` is True when the last line had no
    newline (a write cut short) and was ignored."""

    header: dict[str, Any]
    records: list[dict[str, Any]]
    skipped: int
    torn: bool


def line_record(raw: bytes) -> dict[str, Any] | None:
    """The JSON object of one line with a string ``kind``, or None for any line that is not one.

    Never raises: malformed JSON and invalid UTF-8 (``ValueError``), nesting deeper than the parser's
    recursion limit (``RecursionError``: ``[[[[…]]]]`` in a hand-edited or hostile file) and a line too big
    to decode (``MemoryError``) all read as "not a record", so one bad line costs that line only."""
    try:
        record = json.loads(raw.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError, MemoryError):
        return None
    if isinstance(record, dict) and isinstance(record.get("kind"), str):
        return record
    return None


def read_file(path: Path) -> StoredFile:
    """Parse a session file (module docstring).

    Raises:
        OSError: it cannot be read.
        SessionFormatError: no header, or a format newer than ``FORMAT_VERSION``.
    """
    return parse_lines(path.read_bytes(), str(path))


def parse_lines(data: bytes, name: str = "the file") -> StoredFile:
    """Parse the bytes of a session file (``read_file``); ``name`` is what errors call it.

    Raises:
        SessionFormatError: no header, or a format newer than ``FORMAT_VERSION``.
    """
    torn = bool(data) and not data.endswith(b"\n")
    lines = data.split(b"\n")
    lines = lines[:-1]  # after the last newline: "" or a torn line
    records: list[dict[str, Any]] = []
    skipped = 0
    for raw in lines:
        record = line_record(raw)
        if record is None:
            skipped += 1
        else:
            records.append(record)
    if not records or records[0].get("kind") != "session":
        raise SessionFormatError(f"{name} is not a session file (no header line)")
    header = records.pop(0)
    version = header.get("format")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise SessionFormatError(
            f"{name} is in session format {version!r}; this agent-ls reads up to {FORMAT_VERSION}"
        )
    return StoredFile(header, records, skipped, torn)


class SessionStore:
    """The sessions of every workspace under one state dir.

    Args:
        root_dir: the state dir (``state_dir``); sessions go to ``root_dir / "sessions"``.
        redactor: what every event line goes through before it is written.
    """

    def __init__(self, root_dir: Path, redactor: Redactor | None = None) -> None:
        self.root_dir = root_dir
        self._redactor = redactor
        self._environ: Mapping[str, str] = {}

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> SessionStore:
        """The store of ``state_dir(environ)``; its redactor is built at the first write, after the keys
        were handed over (``key_handoff.received``)."""
        store = cls(state_dir(environ))
        store._environ = environ
        return store

    @property
    def redactor(self) -> Redactor:
        if self._redactor is None:
            self._redactor = Redactor.from_environ(self._environ)
        return self._redactor

    def folder(self, workspace: Path) -> Path:
        return self.root_dir / "sessions" / workspace_folder(workspace)

    def path(self, workspace: Path, session_id: str) -> Path:
        """The file of ``session_id`` (checked with ``check_id``) in ``workspace``'s folder."""
        return self.folder(workspace) / f"{check_id(session_id)}.jsonl"

    def create(self, workspace: Path, session_id: str) -> SessionLog:
        """The log of a new session. Its file is created, header line first, with the first event
        appended: a session that records nothing (a ``/context`` run) leaves no file behind."""
        header = {
            "kind": "session",
            "format": FORMAT_VERSION,
            "harness": __version__,
            "workspace": str(workspace),
            "sessionId": session_id,
            "createdAt": now_iso(),
        }
        return SessionLog(self.path(workspace, session_id), self.redactor, header)

    def reopen(self, workspace: Path, session_id: str) -> SessionLog:
        """The log of a stored session, to append to. Raises ``SessionNotFound``."""
        path = self.path(workspace, session_id)
        if not path.is_file():
            raise SessionNotFound(f"no session {session_id} in {workspace}")
        return SessionLog(path, self.redactor)

    def read(self, workspace: Path, session_id: str) -> StoredFile:
        """Raises ``SessionNotFound`` (also for an unreadable file) or ``SessionFormatError``."""
        path = self.path(workspace, session_id)
        try:
            return read_file(path)
        except FileNotFoundError:
            raise SessionNotFound(f"no session {session_id} in {workspace}") from None
        except OSError as exc:
            raise SessionNotFound(f"session {session_id} cannot be read: {exc.strerror or exc}") from None

    def session_ids(self, workspace: Path) -> list[str]:
        """The stored session ids of ``workspace``, most recently written first."""
        try:
            files = [p for p in self.folder(workspace).iterdir() if p.suffix == ".jsonl" and p.is_file()]
        except OSError:
            return []
        files.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
        return [p.stem for p in files if SESSION_ID.fullmatch(p.stem)]
