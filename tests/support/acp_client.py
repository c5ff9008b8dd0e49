"""An ACP client for the tests of ``agent-ls acp``: the SDK's client side (``acp.spawn_agent_process``)
over the stdio of a real ``agent-ls acp`` subprocess, recording what the agent sends.

``EditorClient`` plays the editor: its ``buffers`` are unsaved texts (``fs/read_text_file`` returns them,
else the disk file), ``fs/write_text_file`` only records the write (an editor writes its buffer), and
``session/request_permission`` is answered by ``answer`` (default: the first option, allow once).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, schema, spawn_agent_process
from acp.client.connection import ClientSideConnection

Answer = Callable[[schema.ToolCallUpdate, list[schema.PermissionOption]], str | None]
"""The option id to choose for a question, or None to answer ``cancelled``."""


def allow_once(tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]) -> str | None:
    return next(o.option_id for o in options if o.kind == "allow_once")


class EditorClient:
    """Implements the SDK's ``acp.interfaces.Client`` (module docstring)."""

    def __init__(self, buffers: dict[Path, str] | None = None, answer: Answer = allow_once) -> None:
        self.buffers = dict(buffers or {})
        self.answer = answer
        self.updates: list[Any] = []
        self.questions: list[tuple[schema.ToolCallUpdate, list[schema.PermissionOption]]] = []
        self.announced: list[bool] = []  # per question: its tool call was announced (tool_call) before it
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []

    async def request_permission(
        self,
        session_id: str,
        tool_call: schema.ToolCallUpdate,
        options: list[schema.PermissionOption],
        **_: Any,
    ) -> schema.RequestPermissionResponse:
        self.questions.append((tool_call, options))
        known = {u.tool_call_id for u in self.of_kind("tool_call")}
        self.announced.append(tool_call.tool_call_id in known)
        chosen = self.answer(tool_call, options)
        if chosen is None:
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=chosen)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **_: Any
    ) -> schema.ReadTextFileResponse:
        self.reads.append(path)
        if Path(path) in self.buffers:
            return schema.ReadTextFileResponse(content=self.buffers[Path(path)])
        try:
            text = await asyncio.to_thread(Path(path).read_text, encoding="utf-8")
        except OSError as exc:
            raise RequestError.resource_not_found(path) from exc
        return schema.ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_: Any
    ) -> schema.WriteTextFileResponse | None:
        self.writes.append((path, content))
        self.buffers[Path(path)] = content
        return schema.WriteTextFileResponse()

    def of_kind(self, kind: str) -> list[Any]:
        """The updates whose ``sessionUpdate`` is ``kind``, in order."""
        return [u for u in self.updates if u.session_update == kind]

    def message_text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of_kind(kind) if hasattr(u.content, "text"))


def capabilities(*, fs: bool) -> schema.ClientCapabilities:
    return schema.ClientCapabilities(
        fs=schema.FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=False
    )


@asynccontextmanager
async def agent_ls_acp(
    client: EditorClient, *, cwd: Path, env: dict[str, str], stderr: Path
) -> AsyncIterator[ClientSideConnection]:
    """``agent-ls acp`` started with ``env``, its stderr written to ``stderr``; yields the client's
    connection to it."""
    with stderr.open("wb") as log:
        async with spawn_agent_process(
            client,
            sys.executable,
            "-m",
            "agent_ls",
            "acp",
            env=env,
            cwd=cwd,
            transport_kwargs={"stderr": log},
        ) as (conn, _process):
            yield conn


async def initialized(conn: ClientSideConnection, *, fs: bool) -> schema.InitializeResponse:
    return await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities(fs=fs))
