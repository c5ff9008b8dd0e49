"""One MCP server's connection: start or reach it, initialize, list, call, notice a crash, reconnect.

A connection is a task of its own (``_serve``) that enters the SDK's transport (``stdio_client``, which
spawns the process, or ``streamable_http_client``) and ``ClientSession``, initializes (MCP 2025-11-25
"Lifecycle"), lists every page of the server's tools (and of its resources and prompts when it has
them), then holds them open until ``close``; anyio's cancel scopes must be entered and left by one task,
and calls from the runs' tasks only send on the session's streams. The server's messages pass through a
relay that notices the end of its stream: a server process that exits (a crash) marks the connection
``failed`` with its stderr tail, and the next call reconnects after a backoff of 1, 2, 4, 8 then 16 s
(at most ``MAX_RECONNECTS`` times in a row; a successful start resets the count).

Timeouts: ``startup_timeout_s`` from spawn to the first tools/list; ``call_timeout_s`` for each call
(the SDK then sends notifications/cancelled). A call that timed out or met a crash is never sent again
by the host: a write may have taken effect (seeds, "MCP", JSON-RPC). ``notifications/tools/list_changed``
lists the tools again and calls ``on_change``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from agent_ls import __version__
from agent_ls.mcp_client.config import Expanded, MissingVariable, ServerConfig, expand
from agent_ls.settings import EnvSnapshot

if TYPE_CHECKING:  # the SDK takes about 1.4 s to import: ``load_sdk`` does it in a worker thread
    import mcp.types as mt
    from mcp import ClientSession, MCPError

log = logging.getLogger(__name__)


def load_sdk() -> None:
    """Import the MCP SDK (about 1.4 s: its pydantic models are built at import). Blocking: callers run it
    in a worker thread before the first connection, so that no event loop waits on it; the methods below
    then find it imported."""
    import anyio  # noqa: F401
    import mcp.client.session
    import mcp.client.stdio
    import mcp.types  # noqa: F401


State = Literal["not started", "connecting", "connected", "failed", "needs approval", "denied", "disabled"]
BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0)
MAX_RECONNECTS = len(BACKOFF_S)
MAX_PAGES = 100
"""The most pages of one list a server may return (a server that loops on its cursor ends here)."""
STDERR_TAIL = 2_000
"""Characters of the server's stderr kept for status and errors."""


@dataclass(frozen=True)
class ToolInfo:
    """One tool as the server lists it.

    Attributes:
        name: the server's own name (sent in tools/call).
        description: its description ("" for none).
        input_schema: its ``inputSchema`` (a JSON Schema object).
        read_only, destructive: the ``readOnlyHint`` / ``destructiveHint`` annotations (None: unset); hints
            from the server, never permissions.
        definition: what a listChanged compares: a tool whose definition changed is a new tool.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool | None = None
    destructive: bool | None = None
    definition: str = ""


@dataclass(frozen=True)
class Listing:
    """What the server offers: tools, resources (uri, name, mime type) and prompts (name, description)."""

    tools: tuple[ToolInfo, ...] = ()
    resources: tuple[tuple[str, str, str], ...] = ()
    prompts: tuple[tuple[str, str], ...] = ()


class CallFailed(Exception):
    """A call that produced no result: the message is what the model reads (after ``Error: ``)."""


@dataclass
class Connection:
    """One server's connection (module docstring). Use from one event loop.

    Args:
        config: the server's entry.
        root: the workspace root (a stdio server's working directory, unless ``cwd`` says otherwise).
        env: where ``${VAR}`` values come from.
        startup_timeout_s: seconds from spawn (or first request) to the first tools/list.
        call_timeout_s: seconds each tools/call may take.
        on_change: called after the tools changed (listChanged, a reconnect that lists others).
        redact: replaces secrets (``sessions.redaction.Redactor.text``) in what is shown of the server's
            stderr and of its errors (status, the transcript, doctor); identity when not given.
    """

    config: ServerConfig
    root: Path
    env: EnvSnapshot
    startup_timeout_s: float = 30.0
    call_timeout_s: float = 60.0
    on_change: Callable[[], None] = lambda: None
    redact: Callable[[str], str] = lambda text: text
    state: State = "not started"
    detail: str = ""
    server_name: str = ""
    server_version: str = ""
    protocol_version: str = ""
    listing: Listing = field(default_factory=Listing)
    _session: ClientSession | None = None
    _task: asyncio.Task[None] | None = None
    _stop: asyncio.Event | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _errlog: TextIO | None = None
    _failures: int = 0
    _retry_at: float = 0.0
    _closed: bool = False
    _refreshing: asyncio.Task[None] | None = None
    start_failed: bool = False
    """The last failure was at start-up (not found, refused, too slow), not a crash after it: a run does
    not try again by itself (``hub.McpHub.prepare``); a status request or a changed entry does."""

    # -- lifecycle ---------------------------------------------------------------------------------

    async def connect(self) -> bool:
        """Connected now (True), or why not in ``detail`` (False). Starts the server unless connected; after
        a failure, waits out the backoff first (a server that failed ``MAX_RECONNECTS`` times in a row is
        not started again until ``reset``). Never raises except ``CancelledError``."""
        async with self._lock:
            if self.state == "connected" and self._session is not None:
                return True
            if self._closed:
                self.detail = "stopped: the MCP configuration changed, or the server is shutting down"
                return False
            if self.state == "failed":
                if self._failures > MAX_RECONNECTS:
                    return False
                wait = self._retry_at - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
            return await self._start()

    def reset(self) -> None:
        """Forget earlier failures: the next ``connect`` starts at once (a new run, a status request)."""
        if self.state == "failed":
            self._failures = 0
            self._retry_at = 0.0

    async def close(self) -> None:
        """Stop the server (stdin closed, then SIGTERM, then SIGKILL: the SDK's bounded shutdown) or end
        the HTTP session. Idempotent."""
        self._closed = True
        task, stop = self._task, self._stop
        self._task = self._stop = None
        self._session = None
        if stop is not None:
            stop.set()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(task), timeout=8)
            if not task.done():
                task.cancel()
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None
        if self.state in ("connected", "connecting"):
            self.state, self.detail = "not started", "closed"

    def stderr_tail(self) -> str:
        """The last ``STDERR_TAIL`` characters the server wrote on stderr ("" for an HTTP server)."""
        if self._errlog is None:
            return ""
        try:
            fd = self._errlog.fileno()
            size = os.fstat(fd).st_size
            start = max(0, size - STDERR_TAIL * 4)
            data = os.pread(fd, size - start, start)  # pread: the child's write offset is shared
        except (OSError, ValueError):
            return ""
        return self.redact(data.decode("utf-8", "replace"))[-STDERR_TAIL:].strip()

    async def _start(self) -> bool:
        await self._drop()
        self.state, self.detail = "connecting", ""
        try:
            expanded = expand(self.config, self.env)
        except MissingVariable as exc:
            self.start_failed = True
            return self._failed(str(exc), count=False)
        if self.config.transport == "stdio":
            # A real file (the child writes to its descriptor), read back with pread.
            self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", prefix="agent-ls-mcp-")
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[ClientSession] = loop.create_future()
        self._stop = asyncio.Event()
        serve = self._serve(expanded, ready, self._stop)
        self._task = loop.create_task(serve, name=f"mcp:{self.config.name}")
        try:
            async with asyncio.timeout(self.startup_timeout_s):
                session = await asyncio.shield(ready)
        except TimeoutError:
            await self._drop()
            self.start_failed = True
            return self._failed(f"did not finish starting within {self.startup_timeout_s:g} s")
        except CallFailed as exc:
            await self._drop()
            self.start_failed = True
            return self._failed(str(exc))
        self._session = session
        self._failures = 0
        self.start_failed = False
        self.state = "connected"
        version = f" {self.server_version}" if self.server_version else ""
        self.detail = f"{len(self.listing.tools)} tools, {self.server_name or self.config.name}{version}"
        return True

    def _failed(self, why: str, *, count: bool = True) -> bool:
        if count:
            self._failures += 1
            self._retry_at = time.monotonic() + BACKOFF_S[min(self._failures, MAX_RECONNECTS) - 1]
        else:
            self._failures = MAX_RECONNECTS + 1  # a configuration problem: no retry until reset
        self.state, self.detail = "failed", self.redact(why)
        self._session = None
        return False

    async def _drop(self) -> None:
        """End a connection task still there (a crashed server's, a timed-out start's)."""
        task, stop = self._task, self._stop
        self._task = self._stop = None
        self._session = None
        if stop is not None:
            stop.set()
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _serve(
        self, expanded: Expanded, ready: asyncio.Future[ClientSession], stop: asyncio.Event
    ) -> None:
        """The connection task: open, initialize, list, then hold until ``stop`` or the server's end."""
        import anyio
        import mcp.types as mt
        from mcp import ClientSession

        ended = asyncio.Event()
        try:
            async with self._transport(expanded) as (read, write):
                relay_send, relay_receive = anyio.create_memory_object_stream[Any](0)
                async with anyio.create_task_group() as group:
                    group.start_soon(_relay, read, relay_send, ended)
                    async with ClientSession(
                        relay_receive,
                        write,
                        message_handler=self._on_message,
                        client_info=mt.Implementation(name="agent-ls", version=__version__),
                    ) as session:
                        init = await session.initialize()
                        self.server_name = init.server_info.name
                        self.server_version = init.server_info.version
                        self.protocol_version = init.protocol_version
                        self.listing = await _list_all(session, init.capabilities)
                        if not ready.done():
                            ready.set_result(session)
                        waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(ended.wait())]
                        try:
                            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                        finally:
                            for waiting in waits:
                                waiting.cancel()
                    group.cancel_scope.cancel()
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(CallFailed("start-up was cancelled"))
            raise
        except BaseException as exc:  # the SDK raises exception groups from its task groups
            why = self._why(exc)
            if not ready.done():
                ready.set_exception(CallFailed(why))
            elif self._stop is stop:
                self._failed(why)
            log.debug("MCP server %s: %s", self.config.name, why, exc_info=True)
            return
        if not ready.done():
            ready.set_exception(CallFailed(self._ended_text()))
        elif ended.is_set() and not stop.is_set() and self._stop is stop:
            self._failed(self._ended_text())  # the server went away: a crash; the next call reconnects

    @contextlib.asynccontextmanager
    async def _transport(self, expanded: Expanded) -> AsyncIterator[tuple[Any, Any]]:
        from mcp import StdioServerParameters, stdio_client

        if self.config.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            async with create_mcp_http_client(headers=expanded.headers) as client:
                async with streamable_http_client(expanded.url, http_client=client) as (read, write):
                    yield read, write
            return
        # A user server does not start in the workspace: there `python -m pkg` or `npx pkg` would run a
        # repository's own pkg/ or node_modules (trial finding 1). A workspace server, approved, runs there.
        home = (
            self.root
            if self.config.scope == "workspace"
            else self.config.source.parent
            if self.config.source
            else self.root
        )
        cwd = home / self.config.cwd if self.config.cwd else home
        params = StdioServerParameters(
            command=expanded.command, args=list(expanded.args), env=expanded.env or None, cwd=cwd
        )
        assert self._errlog is not None
        async with stdio_client(params, errlog=self._errlog) as (read, write):
            yield read, write

    def _ended_text(self) -> str:
        tail = self.stderr_tail()
        last = f"; its stderr ends: {tail[-400:]}" if tail else ""
        return f"the server closed the connection (its process exited?){last}"

    def _why(self, exc: BaseException) -> str:
        from mcp import MCPError

        leaf = _leaf(exc)
        if isinstance(leaf, FileNotFoundError):
            return f"cannot start {self.config.command!r}: command not found (is it installed, on PATH?)"
        if isinstance(leaf, PermissionError):
            return f"cannot start {self.config.command!r}: permission denied"
        if isinstance(leaf, MCPError):
            tail = self.stderr_tail()
            more = f"; its stderr ends: {tail[-400:]}" if tail else ""
            return f"the server refused or dropped the connection: {leaf.error.message}{more}"
        text = str(leaf) or type(leaf).__name__
        tail = self.stderr_tail()
        more = f"; its stderr ends: {tail[-400:]}" if tail else ""
        return f"{type(leaf).__name__}: {text}{more}"

    # -- requests ----------------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> mt.CallToolResult:
        """Call ``tool`` (the server's own name). Raises ``CallFailed`` with the line the model reads when
        the server cannot be reached, refuses the request (a JSON-RPC error), times out or stops meanwhile;
        never sends the call twice."""
        import anyio
        import mcp.types as mt
        from mcp import MCPError

        if not await self.connect():
            raise CallFailed(f"MCP server {self.config.name!r} is not available: {self.detail}")
        session = self._session
        assert session is not None
        try:
            result = await session.call_tool(tool, arguments, read_timeout_seconds=self.call_timeout_s)
        except MCPError as exc:
            raise CallFailed(self._call_error(tool, exc)) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            raise CallFailed(self._stopped(tool)) from None
        except RuntimeError as exc:  # the SDK: structured content that does not match the output schema
            raise CallFailed(f"MCP server {self.config.name!r}: {exc}") from None
        if not isinstance(result, mt.CallToolResult):
            raise CallFailed(f"MCP server {self.config.name!r} answered {tool} with an unexpected result")
        await self._settle()
        return result

    async def _settle(self) -> None:
        """Wait for a listing a ``list_changed`` sent during the call started (a tool that adds tools):
        the model's next request then has them. Bounded by the call timeout; a failure is logged."""
        for _ in range(3):  # the notification's handler may still be scheduled behind the response
            await asyncio.sleep(0)
        refreshing = self._refreshing
        if refreshing is not None and not refreshing.done():
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(refreshing), self.call_timeout_s)

    def _call_error(self, tool: str, exc: MCPError) -> str:
        import mcp.types as mt

        name = self.config.name
        if exc.error.code == mt.REQUEST_TIMEOUT:
            return (
                f"MCP server {name!r} did not answer {tool} within {self.call_timeout_s:g} s; the call was "
                "abandoned and is not retried (it may still have taken effect)"
            )
        if exc.error.code == mt.CONNECTION_CLOSED:
            return self._stopped(tool)
        return f"MCP server {name!r} refused {tool}: {exc.error.message} (JSON-RPC error {exc.error.code})"

    def _stopped(self, tool: str) -> str:
        if self.state == "connected":  # the relay may not have seen the end yet
            self._failed(self._ended_text())
        tail = self.stderr_tail()
        more = f" Its stderr ends: {tail[-300:]}" if tail else ""
        return (
            f"MCP server {self.config.name!r} stopped during the call to {tool}; the call may or may not "
            f"have taken effect and it is not retried. The server is restarted at the next call.{more}"
        )

    async def read_resource(self, uri: str) -> list[Any]:
        """The contents of resource ``uri`` (``resources/read``). Raises ``CallFailed``."""
        from mcp import MCPError

        if not await self.connect():
            raise CallFailed(f"MCP server {self.config.name!r} is not available: {self.detail}")
        assert self._session is not None
        try:
            result = await asyncio.wait_for(self._session.read_resource(uri), self.call_timeout_s)
        except TimeoutError:
            raise CallFailed(f"MCP server {self.config.name!r} did not return {uri} in time") from None
        except MCPError as exc:
            why = exc.error.message
            raise CallFailed(f"MCP server {self.config.name!r} cannot read {uri}: {why}") from None
        return list(getattr(result, "contents", []))

    async def _on_message(self, message: Any) -> None:
        import mcp.types as mt

        if isinstance(message, mt.ServerNotification):
            message = message.root if hasattr(message, "root") else message
        changed = (
            mt.ToolListChangedNotification,
            mt.ResourceListChangedNotification,
            mt.PromptListChangedNotification,
        )
        if isinstance(message, changed):
            # Listed from a task of its own: the session's receive loop must go on to deliver the answer.
            self._refreshing = asyncio.get_running_loop().create_task(self._refresh())
        elif isinstance(message, Exception):
            log.debug("MCP server %s sent something unreadable: %s", self.config.name, message)

    async def _refresh(self) -> None:
        """List again after a listChanged; ``on_change`` when the tools differ."""
        import anyio
        from mcp import MCPError

        session = self._session
        if session is None:
            return
        try:
            listing = await asyncio.wait_for(
                _list_all(session, session.server_capabilities), self.call_timeout_s
            )
        except (MCPError, TimeoutError, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            log.info("MCP server %s: listing after list_changed failed: %s", self.config.name, exc)
            return
        changed = listing.tools != self.listing.tools
        self.listing = listing
        if self.state == "connected":
            version = f" {self.server_version}" if self.server_version else ""
            self.detail = f"{len(listing.tools)} tools, {self.server_name or self.config.name}{version}"
        if changed:
            self.on_change()


async def _relay(source: Any, sink: Any, ended: asyncio.Event) -> None:
    """Pass the server's messages to the session; set ``ended`` when the server's stream ends."""
    import anyio

    try:
        async with sink:
            async for item in source:
                await sink.send(item)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
        pass
    finally:
        ended.set()


async def _list_all(session: ClientSession, capabilities: mt.ServerCapabilities | None) -> Listing:
    """Every page of tools/list, and of resources/list and prompts/list when the server has them."""
    from mcp import MCPError

    tools: list[ToolInfo] = []
    for page in await _pages(session.list_tools):
        for tool in page.tools:
            hints = tool.annotations
            schema = tool.input_schema if isinstance(tool.input_schema, dict) else {"type": "object"}
            description = tool.description or ""
            read_only = hints.read_only_hint if hints is not None else None
            destructive = hints.destructive_hint if hints is not None else None
            definition = repr((description, sorted(schema.items(), key=str), read_only, destructive))
            tools.append(ToolInfo(tool.name, description, schema, read_only, destructive, definition))
    resources: list[tuple[str, str, str]] = []
    prompts: list[tuple[str, str]] = []
    if capabilities is not None and capabilities.resources is not None:
        with contextlib.suppress(MCPError):
            for page in await _pages(session.list_resources):
                resources += [(str(r.uri), r.name, r.mime_type or "") for r in page.resources]
    if capabilities is not None and capabilities.prompts is not None:
        with contextlib.suppress(MCPError):
            for page in await _pages(session.list_prompts):
                prompts += [(p.name, p.description or "") for p in page.prompts]
    return Listing(tuple(tools), tuple(resources), tuple(prompts))


async def _pages(lister: Callable[..., Any]) -> list[Any]:
    """All pages of a paginated list (``nextCursor``), at most ``MAX_PAGES``."""
    import mcp.types as mt

    pages = [await lister()]
    while (cursor := pages[-1].next_cursor) and len(pages) < MAX_PAGES:
        pages.append(await lister(params=mt.PaginatedRequestParams(cursor=cursor)))
    return pages


def _leaf(exc: BaseException) -> BaseException:
    """The first exception that is not a group (the SDK's task groups wrap what failed)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
