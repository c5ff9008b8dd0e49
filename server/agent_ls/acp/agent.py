"""The ACP agent: sessions of the one core behind ``initialize``, ``session/new``, ``session/load``,
``session/prompt``, ``session/cancel`` and ``session/set_mode`` (ACP v1, ``PROTOCOL_VERSION``).

An ACP session is an agent-ls ``Session`` (``assembly.assemble_session``, as every front end gets one)
on the client's ``cwd``, with the same id in the session store: ``agent-ls sessions`` lists it and
``agent-ls run --session ID`` or an editor over LSP can go on with it, and ``session/load`` loads a session
started over LSP or by ``agent-ls run`` in the same workspace. Each prompt is one run (``Session.run``)
recorded in the session file as ``agent-ls run`` records it, holding the session's ``RunLock``; its
events stream as ``session/update`` (``updates.py``), its "ask" verdicts become
``session/request_permission`` (``approver.py``), the files it reads come from the editor when the client
offers ``fs.readTextFile`` (``client_files.py``), and a run that ends ``done`` with a proposal asks
whether to apply it (``apply_offer.py``). docs/acp.md describes it for users.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import RequestError, helpers, schema
from acp.interfaces import Client

from agent_ls import __version__
from agent_ls.acp.apply_offer import ClientFs, offer_apply
from agent_ls.acp.approver import AcpApprover
from agent_ls.acp.attachments import prompt_task
from agent_ls.acp.client_files import ClientBuffers, PrefetchingModel
from agent_ls.acp.mapping import history_updates, plan_entries, stop_reason
from agent_ls.acp.mcp_servers import server_configs
from agent_ls.acp.update_stream import UpdateStream
from agent_ls.acp.updates import EventUpdates
from agent_ls.assembly import assemble_session, mcp_hub_for
from agent_ls.config import load_config
from agent_ls.core.context import Focus
from agent_ls.core.errors import AgentLsError
from agent_ls.core.messages import SystemMessage
from agent_ls.core.plan import RunMode
from agent_ls.core.ports import ModelClient
from agent_ls.instructions.agent_context import DEFAULT_CONTEXT_WINDOW
from agent_ls.models.request_body import context_window_of
from agent_ls.runtime import CONTEXT_COMMAND, Session
from agent_ls.sessions.continuation import find_saved, recorded_model, start_recording
from agent_ls.sessions.resume import SessionRecorder
from agent_ls.sessions.run_lock import RunLock, SessionBusy
from agent_ls.sessions.saved import SavedSession
from agent_ls.sessions.store import SessionFormatError, SessionNotFound, SessionStore
from agent_ls.settings import EnvSnapshot, process_environ
from agent_ls.slash_commands import COMPACT_COMMAND
from agent_ls.workspace.apply import recover_interrupted_apply

if TYPE_CHECKING:
    from agent_ls.mcp_client.hub import McpHub

log = logging.getLogger(__name__)

ACP_PROTOCOL_VERSION = 1
"""The ACP protocol version implemented (the SDK's schema ``schema-v1.19.0``, stable methods only); a unit
test checks that the SDK speaks it (``acp.PROTOCOL_VERSION``)."""

MODES = [
    schema.SessionMode(
        id="default", name="Default", description="Reads, edits (as a proposal) and runs commands"
    ),
    schema.SessionMode(
        id="plan", name="Plan", description="Read-only tools; the run ends with a plan (docs/modes.md)"
    ),
]
BUILT_IN_COMMANDS = [
    schema.AvailableCommand(name="context", description="What the next model request holds, by part"),
    schema.AvailableCommand(name="compact", description="Summarize the conversation to free the context"),
    schema.AvailableCommand(name="apply", description="Apply the pending proposal, with no model call"),
]
APPLY_COMMAND = "/apply"
"""A prompt of only this asks the apply question for the pending proposal without a run: after a Keep, a
merge of the user's change or a write that failed halfway, applying costs no model turn."""


@dataclass
class AcpSession:
    """One ACP session: the core's ``Session`` and what the front end keeps for it."""

    session: Session
    recorder: SessionRecorder
    stream: UpdateStream
    approver: AcpApprover
    buffers: ClientBuffers
    mcp_servers: list[dict[str, Any]] = field(default_factory=list)
    """The client's ``mcpServers`` of ``session/new`` (or ``session/load``), as sent."""
    hub: McpHub | None = None
    """The session's MCP hub when the client gave servers (this front end closes it), else None."""
    mode: RunMode = "default"
    task: asyncio.Task[schema.StopReason] | None = None
    applies: int = 0


class AcpAgent:
    """Implements the SDK's ``acp.interfaces.Agent`` (module docstring)."""

    def __init__(self) -> None:
        self._client: Client | None = None
        self._fs = ClientFs()
        self._sessions: dict[str, AcpSession] = {}
        self._store = SessionStore.from_environ(process_environ())

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: schema.ClientCapabilities | None = None,
        client_info: schema.Implementation | None = None,
        **kwargs: Any,
    ) -> schema.InitializeResponse:
        """Our version (a client asking for another one decides whether to go on), ``loadSession``, and
        text prompts with embedded context; the client's ``fs`` capabilities are kept."""
        fs = client_capabilities.fs if client_capabilities is not None else None
        self._fs = ClientFs(read=bool(fs and fs.read_text_file), write=bool(fs and fs.write_text_file))
        return schema.InitializeResponse(
            protocol_version=ACP_PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                prompt_capabilities=schema.PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=schema.McpCapabilities(http=True, sse=False),
            ),
            agent_info=schema.Implementation(name="agent-ls", title="agent-ls", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> schema.AuthenticateResponse | None:
        return None  # no auth methods: the model's key comes from the environment or the config

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> schema.NewSessionResponse:
        """A session on ``cwd`` (the workspace root; absolute), its ``mcpServers`` stored."""
        root = _root(cwd)
        entry = await self._open(root, None, mcp_servers)
        self._advertise(entry)
        return schema.NewSessionResponse(session_id=entry.session.session_id, modes=_modes(entry.mode))

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> schema.LoadSessionResponse | None:
        """The stored session ``session_id`` of ``cwd`` (started here, over LSP or by ``agent-ls run``):
        its history replayed as updates, then the answer; its proposal and approvals are back."""
        root = _root(cwd)
        if session_id in self._sessions:
            raise RequestError.invalid_request({"details": f"session {session_id} is already loaded"})
        try:
            saved = find_saved(self._store, root, session_id=session_id, latest=False)
        except (SessionNotFound, SessionFormatError, ValueError) as exc:
            raise RequestError.resource_not_found(f"session {session_id}: {exc}") from None
        assert saved is not None
        entry = await self._open(root, saved, mcp_servers)
        messages = [m for m in saved.messages if not isinstance(m, SystemMessage)]
        for update in history_updates(root, messages):
            entry.stream.send(update)
        if saved.todos:
            entry.stream.send(helpers.update_plan(plan_entries(saved.todos)))
        await entry.stream.drain()
        self._advertise(entry)
        return schema.LoadSessionResponse(modes=_modes(entry.mode))

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> schema.SetSessionModeResponse | None:
        """``default`` or ``plan`` for the session's next prompts."""
        entry = self._entry(session_id)
        if mode_id not in ("default", "plan"):
            raise RequestError.invalid_params({"details": f"no mode {mode_id!r}: default or plan"})
        entry.mode = "plan" if mode_id == "plan" else "default"
        return schema.SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> schema.PromptResponse:
        """One run of the prompt's text; answered with its stop reason once its updates were sent."""
        entry = self._entry(session_id)
        if entry.task is not None and not entry.task.done():
            raise RequestError.invalid_request({"details": "a prompt of this session is still running"})
        session = entry.session
        lock = RunLock(self._store.path(session.root, session.session_id))
        try:  # a run of this session in another process (agent-ls run, an editor's server) goes first
            lock.acquire()
        except SessionBusy as exc:
            raise RequestError.invalid_request({"details": str(exc)}) from None
        task = prompt_task(prompt, lambda path: session.policy.paths.check(path, write=False).secret)
        if task.left_out:  # the read tools refuse them too: the model never sees a secret
            names = ", ".join(task.left_out)
            entry.stream.send(
                helpers.update_agent_message_text(f"agent-ls: left out attached secret file(s): {names}\n\n")
            )
        entry.task = asyncio.get_running_loop().create_task(self._run(entry, task.text))
        try:
            reason = await asyncio.shield(entry.task)
        except asyncio.CancelledError:  # the connection closes: the run stops before its lock is released
            entry.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await entry.task
            raise
        finally:
            lock.release()
        await entry.stream.drain()
        return schema.PromptResponse(stop_reason=reason)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Cancel the session's running prompt; it answers ``cancelled``."""
        entry = self._sessions.get(session_id)
        if entry is not None and entry.task is not None and not entry.task.done():
            entry.task.cancel()

    async def close(self) -> None:
        """Close every session (shadow copies deleted, MCP servers stopped); at the end of the connection."""
        for entry in self._sessions.values():
            if entry.task is not None:
                entry.task.cancel()
            entry.session.close()
            await entry.session.close_mcp()
            if entry.hub is not None:
                await entry.hub.aclose()
            entry.recorder.log.close()
            await entry.stream.close()
        self._sessions.clear()

    async def _run(self, entry: AcpSession, task: str) -> schema.StopReason:
        session = entry.session
        updates = EventUpdates(entry.stream, session, entry.approver, DEFAULT_CONTEXT_WINDOW)
        entry.recorder.forward = updates
        try:
            if task.strip() == APPLY_COMMAND:
                message = await self._offer_apply(entry) or "agent-ls: no proposal is pending"
                entry.stream.send(helpers.update_agent_message_text(message))
                return "end_turn"
            ended = await session.run(
                task=task,
                focus=Focus(),
                emit=entry.recorder,
                open_model=functools.partial(self._open_model, entry, updates),
                mode=entry.mode,
            )
            if (
                ended.status == "done"
                and ended.mode == "default"
                and not ended.not_verified
                and not _asks(task)
            ):
                message = await self._offer_apply(entry)
                if message:
                    entry.stream.send(helpers.update_agent_message_text(f"\n\n{message}"))
            return stop_reason(ended)
        except asyncio.CancelledError:  # before the loop started, or during the apply question
            return "cancelled"
        finally:
            entry.stream.fail_open()  # a cancelled command or question never sent its own end
            entry.recorder.log.flush()

    async def _offer_apply(self, entry: AcpSession) -> str:
        """The apply question for the session's pending proposal (``apply_offer``); "" when none."""
        entry.applies += 1
        session = entry.session
        return await offer_apply(
            self._connected(),
            entry.stream,
            session,
            self._fs,
            entry.recorder.log,
            lambda change: entry.buffers.put(session.root / change.path, change.new_text),
            f"apply-{entry.applies}",
        )

    def _open_model(self, entry: AcpSession, updates: EventUpdates) -> ModelClient:
        """The run's model client (raises ``ConfigError``: the run ends ``error``), reading the files its
        calls name through the client first when it offers ``fs.readTextFile``."""
        inner = entry.session.open_model()
        updates.window = context_window_of(inner) or DEFAULT_CONTEXT_WINDOW
        if not self._fs.read:
            return inner
        client, session = self._connected(), entry.session

        async def read_text(path: Path) -> str | None:
            try:
                return (await client.read_text_file(session_id=session.session_id, path=str(path))).content
            except Exception:  # no such file, or the editor cannot read it: the disk is read
                return None

        def allowed(path: str) -> Path | None:
            try:
                return session.root / session.overlay.resolve(path)
            except AgentLsError:
                return None

        return PrefetchingModel(inner, entry.buffers, read_text, allowed)

    async def _open(
        self, root: Path, saved: SavedSession | None, mcp_servers: list[Any] | None
    ) -> AcpSession:
        """Assemble the session of ``root`` (``saved`` put back when given) and open its file."""
        if (recovered := recover_interrupted_apply(root)) is not None:
            log.warning("agent-ls: %s", recovered)
        client = self._connected()
        env = EnvSnapshot.from_environ()
        config = load_config(env, root)
        for diagnostic in config.diagnostics:
            log.warning("agent-ls: %s", diagnostic)
        configured = bool(env.get("AGENT_LS_MODEL") or config.model)
        model = recorded_model(saved, configured=configured) if saved is not None else None
        buffers = ClientBuffers()
        session_id = saved.session_id if saved is not None else None
        approver = AcpApprover(client, session_id or "")
        given = server_configs(mcp_servers or [])
        hub = mcp_hub_for(root, config, env, process_environ(), given=given) if given else None
        session = await asyncio.to_thread(
            functools.partial(
                assemble_session,
                root=root,
                approver=approver,
                environ=process_environ(),
                config=config,
                env=env,
                model=model,
                buffers=buffers,
                session_id=session_id,
                mcp_hub=hub,
            )
        )
        approver.session_id = session.session_id
        stream = UpdateStream(client, session.session_id)
        approver.stream = stream
        recorder, notes = await asyncio.to_thread(start_recording, self._store, session, saved, stream.send)
        for note in notes:
            log.warning("agent-ls: session %s: proposed files %s", session.session_id, note)
        servers = [server.model_dump(mode="json", by_alias=True) for server in mcp_servers or []]
        entry = AcpSession(session, recorder, stream, approver, buffers, mcp_servers=servers, hub=hub)
        self._sessions[session.session_id] = entry
        return entry

    def _advertise(self, entry: AcpSession) -> None:
        """The skills and built-in commands as ``available_commands_update``, sent after the answer."""
        commands = [
            schema.AvailableCommand(
                name=skill.name,
                description=skill.description,
                input=schema.AvailableCommandInput(
                    root=schema.UnstructuredCommandInput(hint=skill.argument_hint or "what to work on")
                ),
            )
            for skill in entry.session.context.skills.skills
        ]
        update = helpers.update_available_commands([*commands, *BUILT_IN_COMMANDS])
        asyncio.get_running_loop().call_soon(entry.stream.send, update)  # after the answer is queued

    def _entry(self, session_id: str) -> AcpSession:
        entry = self._sessions.get(session_id)
        if entry is None:
            raise RequestError.resource_not_found(f"session {session_id}")
        return entry

    def _connected(self) -> Client:
        if self._client is None:
            raise RequestError.internal_error({"details": "no client connection"})
        return self._client


def _root(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise RequestError.invalid_params({"details": f"cwd must be an absolute path: {cwd!r}"})
    if not path.is_dir():
        raise RequestError.invalid_params({"details": f"cwd is not a directory: {cwd}"})
    root = path.resolve()
    if root == Path(root.anchor):  # the workspace would be the whole disk (the secret index walks it)
        raise RequestError.invalid_params(
            {"details": f"cwd is the filesystem root ({root}): open a project folder as the workspace"}
        )
    return root


def _asks(task: str) -> bool:
    """True for a task that only asks about the session (``/context``, ``/compact``): no apply question."""
    return task.split(maxsplit=1)[:1] in ([CONTEXT_COMMAND], [COMPACT_COMMAND])


def _modes(current: RunMode) -> schema.SessionModeState:
    return schema.SessionModeState(current_mode_id=current, available_modes=MODES)
