"""Ports: the Protocols through which the core talks to the world.

Adapters implement them at the edge (``models/``, ``tools/``, ``workspace/``, ``policy/``, ``lsp/``,
``cli.py``) and are wired together in ``agent_ls/assembly.py`` (``assemble_session``). Each docstring
is a contract: what an implementation must do, what it must never do, and how it reports failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from agent_ls.core.checks import CheckResult
from agent_ls.core.events import EventSink
from agent_ls.core.file_views import PageRequest, SearchResult, TextPage
from agent_ls.core.messages import Message, ModelResponse, ToolCall, ToolResultMessage, ToolSpec
from agent_ls.core.proposal import FileChange, TextEncoding


class ModelClient(Protocol):
    """A model behind some wire API.

    Contract:
        - ``complete`` sends the whole conversation (it is stateless) and returns one response.
        - While it runs it may emit ``MessageDelta`` (text and reasoning as they stream in; a non-streaming
          client emits the whole text once) and ``ModelRetrying``; no other event, and never after it
          returned.
        - The response's tool calls have non-empty names and unique non-empty ids (repaired if needed).
        - Cancelling the awaiting task aborts an in-flight request or stream promptly.
        - Failures raise a ``ModelError`` subclass whose message is one line naming the URL and the
          model, never the API key. Nothing else may escape, except ``asyncio.CancelledError``.
        - Tool-call arguments in the response are raw JSON text, malformed or not: the dispatcher
          reports them.
    """

    @property
    def model_name(self) -> str:
        """The model string the user chose (``openai/gpt-4.1``, ``replay:demo.json``)."""
        ...

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse: ...

    async def aclose(self) -> None:
        """Release connections. Idempotent."""
        ...


class ToolExecutor(Protocol):
    """The tool registry as the loop sees it.

    Contract:
        - ``execute`` never raises (except ``asyncio.CancelledError``): bad JSON, an unknown tool, invalid
          arguments, a refusal, a timeout and any exception become a ``ToolResultMessage`` with
          ``is_error=True`` whose ``call_id`` is the call's.
        - It emits ``ToolCallStarted``, ``VerdictGiven`` (when a permission was checked), ``ToolCallFinished``
          and ``ProposalChanged`` (when a mutating tool changed the proposal) on ``emit``, in that order.
    """

    def specs(self) -> Sequence[ToolSpec]: ...

    async def execute(self, call: ToolCall, emit: EventSink) -> ToolResultMessage: ...


ApprovalReply = Literal["once", "session", "always", "deny"]


@dataclass(frozen=True)
class ApprovalRequest:
    """A question for the user: may tool ``tool_name`` act on ``subject`` (a command or a path)?

    Attributes:
        tool_name: the tool (``bash``, ``write_file``).
        subject: the command or path, as the model gave it.
        reason: why we ask, in one line (``no rule matches "make build"``).
        rule: the label of what asked (``fallback: no rule matches``, ``bash: git push --force* (user
            config)``).
        always: the allow rules an "Always allow" would write to the user config (``bash: make
            build``); empty when "always" is not offered.
        no_always: when ``always`` is empty, why (an explicit ask rule, a command that cannot be read):
            the prompt says it.
        purpose: what the harness runs it for when the model did not ask (``acceptance check``), shown in
            the question; empty for a model's call.
        always_effect: what "Always allow" does, after its name in the question (``adds to your user
            config``; an MCP server's start: ``remembers it for this workspace``).
    """

    tool_name: str
    subject: str
    reason: str
    rule: str = ""
    always: tuple[str, ...] = ()
    no_always: str = ""
    purpose: str = ""
    always_effect: str = "adds to your user config"


MCP_SERVER_START = "MCP server start"
"""``ApprovalRequest.purpose`` of the question before a workspace's MCP server starts (``mcp_client.hub``):
only a user's answer starts one (an ``Approval`` with ``unasked`` never does)."""


@dataclass(frozen=True)
class Approval:
    """The user's answer.

    Attributes:
        reply: ``once``; ``session`` (the caller may allow the same normalized command or path again
            for the session); ``always`` (the caller writes ``ApprovalRequest.always`` to the user
            config); ``deny``.
        feedback: with ``deny``, what the user wants the model to know (it reads it in the tool
            result), or None.
        unasked: why nobody was asked, when the reply is a default rather than the user's answer
            (``headless``: no terminal, or an editor that cannot show prompts; ``--yes``); "" when the
            user answered.
    """

    reply: ApprovalReply
    feedback: str | None = None
    unasked: str = ""


DENIED = Approval("deny")


class Approver(Protocol):
    """Asks the user to approve a tool call the policy answered "ask" for.

    Contract:
        - Returns an ``Approval``; ``always`` only when ``request.always`` is not empty (the caller
          reads a stray ``always`` as ``once``).
        - When nobody can answer (no TTY, a client without ``window/showMessageRequest``, a dismissed
          prompt), it returns the configured headless answer, ``deny`` by default. It never hangs
          forever and never raises except ``CancelledError``.
    """

    async def ask(self, request: ApprovalRequest) -> Approval: ...


@dataclass(frozen=True)
class CommandResult:
    """The outcome of a shell command. ``output`` is stdout and stderr interleaved, already capped.

    ``changed_paths`` are the workspace-relative files whose changes in the shadow copy were brought into
    the proposal (a formatter's output), sorted. ``full_output`` is the whole output when ``output`` was
    cut (its lines numbered as ``output``'s omission note numbers them; bounded, see
    ``workspace.processes.FULL_OUTPUT_MAX_BYTES``), else None.
    """

    exit_code: int | None
    output: str
    timed_out: bool = False
    changed_paths: tuple[str, ...] = ()
    full_output: str | None = None


class CommandRunner(Protocol):
    """Runs shell commands where they cannot touch the user's files (the session's shadow copy; in the
    opt-in ``shell.mode = "workspace"`` the real tree, at stricter verdicts).

    Contract:
        - Runs ``command`` with ``/bin/sh -c`` (or bash) in a directory that holds the workspace with the
          pending proposal written into it; never in the user's tree.
        - The child environment is a small allowlist and never holds API keys.
        - Stops the process group after ``timeout_s`` seconds and reports ``timed_out``; never raises for a
          failing command (non-zero exit is a normal result).
    """

    async def run(self, command: str, timeout_s: float) -> CommandResult: ...


class Verifier(Protocol):
    """Runs a task's acceptance checks when the model says it is done (``core.checks``; implemented by
    ``tools.acceptance.AcceptanceChecks``).

    Contract:
        - ``commands`` are the checks in order (empty: the run has none, and ``run`` is not called).
        - ``run`` runs each one as the ``bash`` tool would, in the shadow copy with the proposal and under
          the permission policy (asking the approver on "ask", emitting each ``VerdictGiven``), and
          returns one ``CheckResult`` per command, in order; a check that may not run is a result with
          ``not_run``, never an exception. Never raises except ``CancelledError``.
    """

    def commands(self) -> Sequence[str]: ...

    async def run(self, emit: EventSink) -> tuple[CheckResult, ...]: ...


class Workspace(Protocol):
    """The agent's view of one workspace root: pending agent edits over open editor buffers over disk.

    Paths given by the model are resolved with ``resolve``; every other method takes the
    workspace-relative POSIX path it returned.

    Contract:
        - Never writes the user's files: ``propose`` only records a pending edit.
        - ``resolve`` raises ``PathRefused`` for a path outside the root (after resolving ``..`` and
          symlinks) or a secret file; its message tells the model what to do instead.
        - Reads and listings raise ``ToolError`` with a one-line message (missing file, a directory
          where a file was expected); never ``OSError``.
    """

    @property
    def root(self) -> Path: ...

    def resolve(self, path: str) -> str:
        """Map a model-given path (relative to the root, or absolute) to a workspace-relative POSIX path."""
        ...

    def exists(self, rel: str) -> bool: ...

    def is_dir(self, rel: str) -> bool: ...

    def read_text(self, rel: str) -> str:
        """The current text: pending edit, else the unsaved editor buffer, else the disk file (in its
        own encoding, line endings kept). Raises ``ToolError`` for a file too large to edit."""
        ...

    def read_page(self, rel: str, request: PageRequest) -> TextPage:
        """A page of the current text, memory bounded whatever the file's size; the agent has now read
        ``rel`` (see ``propose``)."""
        ...

    def propose(
        self, rel: str, text: str, *, based_on: str | None = None, encoding: TextEncoding | None = None
    ) -> bool:
        """Record ``text`` as the proposed content of ``rel``. Returns True when the proposal changed.

        The proposal's base is the version the agent read: when ``rel`` changed since the agent last
        read it (``read_page``), or its current text is not ``based_on``, raises ``EditFailed`` saying
        "changed since you read it; read it again". Also ``EditFailed`` when the file's encoding cannot
        write ``text``. ``encoding`` is a new file's (default UTF-8).
        """
        ...

    def list_files(self, rel_dir: str, pattern: str | None, limit: int) -> tuple[list[str], int]:
        """Files under ``rel_dir``, recursively, as sorted workspace-relative paths, and the total count.

        Respects .gitignore, includes pending new files, skips hidden entries unless ``pattern`` (a glob
        on the relative path) names them. At most ``limit`` paths are returned.
        """
        ...

    async def search(
        self, pattern: str, rel: str, glob: str | None, *, max_line_chars: int = 500, window: int = 150
    ) -> SearchResult:
        """ripgrep ``pattern`` (a regex) over the current view of ``rel``.

        Returns bounded hits: a line of at most ``max_line_chars`` characters whole, a longer one as
        ``window`` characters each side of each match, with 1-indexed columns.
        """
        ...

    def proposal(self) -> list[FileChange]:
        """The pending edits, sorted by path; files whose proposed text equals their base are left out."""
        ...
