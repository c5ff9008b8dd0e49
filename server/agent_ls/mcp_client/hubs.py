"""The MCP hub of each workspace a front end serves (the language server's), without importing the SDK:
the language server holds one of these from its start, and a hub (``hub.McpHub``) is built only for a
workspace with servers configured."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_ls.mcp_client.hub import McpHub


class McpHubs:
    """The hub of each workspace a front end serves, replaced when its servers' configuration changes.
    Use from the front end's event loop."""

    def __init__(self) -> None:
        self._hubs: dict[Path, tuple[tuple[object, ...], McpHub]] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._warming: asyncio.Future[None] | None = None

    def warm(self, root: Path, user_file: Path | None) -> None:
        """Import the MCP SDK in a worker thread when ``root`` or the user config has an MCP file (about
        1.4 s that the first run would otherwise wait for); nothing starts. Call on the event loop."""
        from agent_ls.mcp_client.config import USER_FILE, WORKSPACE_FILE

        places = [root / WORKSPACE_FILE, *([user_file.parent / USER_FILE] if user_file is not None else [])]
        if self._warming is not None or not any(place.is_file() for place in places):
            return
        from agent_ls.mcp_client.connection import load_sdk

        self._warming = asyncio.get_running_loop().run_in_executor(None, load_sdk)

    def get(self, root: Path, key: tuple[object, ...], build: Callable[[], McpHub]) -> McpHub:
        """The hub of ``root`` built for ``key`` (the servers and settings); a different key replaces it
        (the old one closed in the background)."""
        found = self._hubs.get(root)
        if found is not None and found[0] == key:
            return found[1]
        hub = build()
        self._hubs[root] = (key, hub)
        if found is not None:
            self._close_later(found[1])
        return hub

    def _close_later(self, hub: McpHub) -> None:
        with contextlib.suppress(RuntimeError):  # no running loop: nothing was started
            task = asyncio.get_running_loop().create_task(hub.aclose())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        hubs, self._hubs = [hub for _, hub in self._hubs.values()], {}
        await asyncio.gather(*(hub.aclose() for hub in hubs), *self._closing, return_exceptions=True)
