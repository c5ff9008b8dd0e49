"""A configurable MCP probe server on the official SDK (``mcp.server.mcpserver``), for the e2e tests of
issue 18. Run as a script (``python probe.py [--marker PATH] [--name NAME] [--http]``):

- stdio by default; ``--http`` serves streamable HTTP on 127.0.0.1 on a port the OS picks, binds it before
  serving and prints ``port <N>`` on stdout, so the parent knows where it answers without racing;
- ``--marker PATH`` (or ``MCP_PROBE_MARKER`` in its environment) appends ``start <pid>`` to PATH the moment
  the process starts, before any MCP traffic, and ``call <tool>`` as each tool call begins: a test proves no
  process was spawned by the file's absence, counts the starts (a reconnect after a crash), and sees which
  calls reached the server;
- ``--exit-at-start MESSAGE`` prints MESSAGE on stderr and exits 1 before answering (a server that fails);
- ``--hang-at-start`` never answers ``initialize`` and only a signal stops it (a server that never starts);
- it exits when its parent goes away (checked twice a second): a killed agent-ls never leaves it behind;
  except with ``--linger``: then it neither watches its parent nor exits when its stdin closes, and only a
  signal stops it (a server the client must terminate);

Tools: ``echo`` (read-only), ``crash`` (the process exits mid-call), ``hang`` (never answers), ``grow``
(adds ``grown`` and sends ``notifications/tools/list_changed``), ``fail`` (raises: an ``is_error`` result),
``image`` (a 1,234-byte PNG), ``wipe`` (``destructiveHint``), ``environ`` (the process's environment as a
JSON object of each name to the first 12 hex digits of the SHA-256 of its value: names and a check of the
values, never a value itself), ``headers`` (the same of the HTTP request's headers), ``where`` (its
working directory). Resource ``probe://notes``
(text/plain); prompt ``greet``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
import threading
import time

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

NOTES = "Probe notes: the release is on Friday."
PNG = b"\x89PNG\r\n\x1a\n" + bytes(1234 - 8)
"""An image of 1,234 bytes (the PNG signature, then zeros): only its type and size are described."""


def build(name: str, marker: str | None) -> MCPServer:
    """The probe server called ``name`` (its ``serverInfo.name``), writing its calls to ``marker``."""
    app = MCPServer(name, version="1.2.3")

    def note(line: str) -> None:
        if marker:
            with open(marker, "a", encoding="utf-8") as file:
                file.write(f"{line}\n")

    @app.tool(annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        """Echo text back."""
        note("call echo")
        return text

    @app.tool()
    def crash() -> str:
        """Stop the server process in the middle of the call."""
        note("call crash")
        sys.stdout.flush()
        os._exit(3)

    @app.tool()
    async def hang() -> str:
        """Never answer."""
        note("call hang")
        await asyncio.sleep(3600)
        return "woke up"

    @app.tool()
    async def grow(ctx: Context) -> str:
        """Add the tool 'grown' and tell the client the tool list changed."""
        note("call grow")

        def grown(number: int) -> int:
            """Add one to a number."""
            note("call grown")
            return number + 1

        app.add_tool(grown)
        await ctx.request_context.session.send_tool_list_changed()
        return "grown"

    @app.tool()
    def fail() -> str:
        """Always fail."""
        note("call fail")
        raise ToolError("the probe failed on purpose")

    @app.tool()
    def image() -> Image:
        """A small PNG image."""
        note("call image")
        return Image(data=PNG, format="png")

    @app.tool(annotations=ToolAnnotations(destructive_hint=True))
    def wipe(path: str) -> str:
        """Pretend to delete a path (destructive)."""
        note("call wipe")
        return f"wiped {path}"

    @app.tool()
    def environ() -> str:
        """The server process's environment, as a JSON object."""
        note("call environ")
        digests = {k: hashlib.sha256(v.encode()).hexdigest()[:12] for k, v in os.environ.items()}
        return json.dumps(digests, sort_keys=True)

    @app.tool()
    def headers(ctx: Context) -> str:
        """The HTTP request's headers, as ``environ`` reports variables ({} over stdio)."""
        note("call headers")
        given = ctx.headers or {}
        return json.dumps({k.lower(): hashlib.sha256(v.encode()).hexdigest()[:12] for k, v in given.items()})

    @app.tool()
    def where() -> str:
        """The server process's working directory."""
        note("call where")
        return os.getcwd()

    @app.resource("probe://notes", name="notes", mime_type="text/plain")
    def notes() -> str:
        return NOTES

    @app.prompt(description="Greet someone.")
    def greet(who: str) -> str:
        return f"Say hello to {who}."

    return app


def _exit_with_parent() -> None:
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


async def _serve_http(app: MCPServer) -> None:
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(f"port {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app.streamable_http_app(host="127.0.0.1"), log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--marker", default=os.environ.get("MCP_PROBE_MARKER"))
    parser.add_argument("--name", default="probe")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--exit-at-start", metavar="MESSAGE")
    parser.add_argument("--linger", action="store_true")
    parser.add_argument("--hang-at-start", action="store_true")
    options = parser.parse_args()
    if options.marker:
        with open(options.marker, "a", encoding="utf-8") as marker:
            marker.write(f"start {os.getpid()}\n")
    if options.exit_at_start:
        print(options.exit_at_start, file=sys.stderr, flush=True)
        sys.exit(1)
    if options.hang_at_start:  # never answers initialize, and only a signal stops it
        time.sleep(3600)
    if not options.linger:
        _exit_with_parent()
    print(f"probe {options.name} started", file=sys.stderr, flush=True)
    app = build(options.name, options.marker)
    if options.http:
        asyncio.run(_serve_http(app))
    else:
        app.run()
    if options.linger:  # a server that outlives its stdin: only a signal stops it
        time.sleep(3600)


if __name__ == "__main__":
    main()
