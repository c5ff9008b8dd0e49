"""The tools the model can call: ``base.py`` (what a tool is), ``registry.py`` (the dispatcher) and
one module per tool."""

from __future__ import annotations

from typing import Any

from agent_ls.tools import bash, edit_file, grep, list_files, read_file, write_file
from agent_ls.tools.base import Tool


def default_tools() -> list[Tool[Any]]:
    """The default tool set, in the fixed order the model sees it: reading, then editing, then the shell."""
    return [read_file.TOOL, list_files.TOOL, grep.TOOL, edit_file.TOOL, write_file.TOOL, bash.TOOL]


def sent_tools() -> list[Tool[Any]]:
    """The default tools whose schemas every request carries: ``default_tools`` but ``write_file``, which
    is deferred (``tools.session_tools``): sent once loaded, or once called."""
    return [tool for tool in default_tools() if tool is not write_file.TOOL]


def read_only_tools() -> list[Tool[Any]]:
    """The tools of a subagent (``tools.task``): reading and searching, nothing that changes the proposal."""
    return [read_file.TOOL, list_files.TOOL, grep.TOOL]
