"""The server class and what it remembers between messages: client flags, settings and sessions.

Handlers import ``AgentLanguageServer`` from here at run time (pygls resolves their annotations),
so this module must not import the handlers.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as t
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer

from agent_ls import __version__
from agent_ls.assembly import SecretIndexes
from agent_ls.core.messages import Usage
from agent_ls.instructions.skills import Skill
from agent_ls.instructions.watch import InstructionWatcher
from agent_ls.lsp.action_items import approval_converter
from agent_ls.lsp.capabilities import ClientFlags
from agent_ls.lsp.diagnostic_sets import DiagnosticSets
from agent_ls.lsp.problem_store import ProblemStore
from agent_ls.lsp.well_formed import WellFormedProtocol
from agent_ls.mcp_client.hubs import McpHubs
from agent_ls.runtime import Session
from agent_ls.sessions.run_lock import RunLock
from agent_ls.sessions.store import SessionLog, SessionStore
from agent_ls.sessions.telemetry import Telemetry
from agent_ls.settings import EditorSettings

if TYPE_CHECKING:
    from pygls.server import ServerErrors

log = logging.getLogger(__name__)


@dataclass
class SessionEntry:
    """A session and its background run. ``task`` is None before the run starts and after it ends."""

    session: Session
    task_text: str
    progress_token: str
    run_task: asyncio.Task[None] | None = None
    log: SessionLog | None = None
    """The session's file in the session store (docs/sessions.md); None when it could not be opened."""
    run_lock: RunLock | None = None
    """Held while a run goes, so that another process cannot run the session meanwhile."""


@dataclass
class ServerState:
    flags: ClientFlags = field(default_factory=ClientFlags)
    settings: EditorSettings = field(default_factory=EditorSettings)
    roots: list[Path] = field(default_factory=list)
    sessions: dict[str, SessionEntry] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    """Usage of every run of this editor session (this server process), summed as runs end."""
    config_diagnostic_files: set[Path] = field(default_factory=set)
    """Config files whose diagnostics are currently shown (so they can be cleared)."""
    instructions_watcher: InstructionWatcher = field(default_factory=InstructionWatcher)
    """Counts changes of AGENTS.md and skill files (``instructions_generation``); watches the disk
    itself unless the client watches for us (``handlers/agent_files.py`` starts and stops it)."""
    agent_diagnostics: dict[Path, list[t.Diagnostic]] = field(default_factory=dict)
    """SKILL.md and AGENTS.md-family files whose diagnostics are currently shown, with them."""
    lint_task: asyncio.Task[None] | None = None
    """The agent-file lint in progress, if any."""
    lint_again: bool = False
    """Something changed while ``lint_task`` ran: lint once more when it ends."""
    linted_skills: dict[Path, Skill] = field(default_factory=dict)
    """Each SKILL.md of the workspace as the last lint loaded it (for the hover)."""
    client_watches_files: bool = False
    """The client accepted to watch the instruction files (``workspace/didChangeWatchedFiles``)."""
    store: SessionStore = field(default_factory=lambda: SessionStore.from_environ(os.environ))
    """Where sessions are written and read back (``AGENT_LS_STATE_DIR`` or the user state dir)."""
    diagnostics: DiagnosticSets = field(default_factory=DiagnosticSets)
    """Every diagnostic the server shows, per source (config files, agent files, review findings), so
    that one source's publication never erases another's on the same file."""
    review_publishing: asyncio.Task[None] | None = None
    """The latest publication of review findings (``review_diagnostics``); the next one waits for it."""
    problems: ProblemStore = field(default_factory=ProblemStore)
    """The editor's problems (``agent/didChangeProblems``, ``lsp/editor_problems.py``), per file."""
    secret_indexes: SecretIndexes = field(default_factory=SecretIndexes)
    """The secret index of each workspace root, started at ``initialized`` so that a run's first
    command finds it built (``workspace.secret_index``), shared by the runs of that root."""
    mcp_hubs: McpHubs = field(default_factory=McpHubs)
    """The MCP servers of each workspace root (``mcp_client``), started at the first run that needs them
    and shared by the runs of that root; stopped at shutdown."""
    telemetry: Telemetry = field(default_factory=lambda: Telemetry(os.environ))
    """The OpenTelemetry export (``AGENT_LS_OTEL``, docs/telemetry.md): opened at the first run, shut down
    at shutdown (``handlers/telemetry.py``)."""

    @property
    def instructions_generation(self) -> int:
        """Grows each time instruction or skill files change; a session compares it at each turn with
        the generation its prompt prefix was built from, and rebuilds the prefix when it moved."""
        return self.instructions_watcher.generation


class AgentLanguageServer(LanguageServer):
    """pygls server plus our state (no module-level globals)."""

    def __init__(self) -> None:
        super().__init__(
            "agent-ls",
            __version__,
            text_document_sync_kind=t.TextDocumentSyncKind.Incremental,
            converter_factory=approval_converter,  # keeps the feedback of a prompt's reply
            protocol_cls=WellFormedProtocol,  # no lone surrogate from the editor reaches a buffer or an edit
        )
        self.state = ServerState()

    def report_server_error(self, error: Exception, source: ServerErrors) -> None:
        """An error outside a request (a notification's handler failed, a message could not be sent):
        one line on stderr and in the editor's log. pygls would show it as an "Error in server" popup
        the user can do nothing about (a didChange of a document never opened, say). Errors of a
        request are in its response."""
        if source is FeatureRequestError:
            return
        text = " ".join(f"agent-ls: {error}".split())[:300]
        log.warning("%s", text)
        self.window_log_message(t.LogMessageParams(type=t.MessageType.Warning, message=text))
