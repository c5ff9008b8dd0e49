"""The names the model sees for MCP tools, and the routing table back to each server's own name.

``mcp__<server>__<tool>``, as Claude Code and Codex name them (Codex ``MCP_TOOL_NAME_DELIMITER``), so that
permission rules written for Claude Code (``mcp__github``, ``mcp__github__create_issue``) apply as they
are. Characters outside ``[A-Za-z0-9_-]`` become ``_`` (the providers' tool-name pattern); a name longer
than 64 characters, or one another tool already took (two servers' names that sanitise alike), is cut and
ends with ``_`` and 8 hex digits of SHA-1(``server\\0tool``), as Codex does past its limit.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

PREFIX = "mcp__"
MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class Route:
    """Where a model-facing tool name goes: the server (its config name) and the tool's own name there."""

    server: str
    tool: str


def full_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>`` sanitised and never cut: what permission rules are matched against, so that
    a rule on a long tool's name applies although the model sees it cut (server names are at most 40
    characters, so the cut never reaches the ``mcp__<server>__`` part ``mcp__<server>`` rules match)."""
    return f"{PREFIX}{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"


def qualified_name(server: str, tool: str, taken: Iterable[str] = ()) -> str:
    """The model-facing name of ``tool`` of ``server`` (module docstring), unique among ``taken``."""
    name = full_name(server, tool)
    if len(name) <= MAX_NAME and name not in set(taken):
        return name
    digest = hashlib.sha1(f"{server}\0{tool}".encode(errors="surrogatepass")).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def server_prefix(server: str) -> str:
    """``mcp__<server>``: the rule key for every tool of ``server``."""
    return f"{PREFIX}{_UNSAFE.sub('_', server)}"
