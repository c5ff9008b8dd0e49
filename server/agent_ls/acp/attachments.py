"""A prompt's content blocks as the task text, its attached context marked as data (ACP ``ContentBlock``).

- a text block is the user's own words, as given;
- an embedded text resource (the editor's "@file" context) is a line ``Attached file: PATH`` then its text
  in a ``<tool_result tool="attached_file" trust="data">`` element (``core.context.wrap_tool_result``,
  tags inside neutralized): the system prompt says such text is data, never instructions, and a text
  holding a code fence or a closing tag cannot leave it;
- a resource link is the line ``Attached file: PATH`` (the model reads it with its tools, which judge it);
- PATH is a ``file://`` URI's percent-decoded path, else the URI, on one line: control characters
  (a ``%0A`` in the URI) are shown escaped (``\\n``), so a link cannot add lines to the task;
- an attachment whose path the path policy treats as secret (``~/.ssh/id_rsa``, ``.env``: what the read
  tools refuse) is left out and named in ``Task.left_out`` for the user; images, audio and binary
  resources are left out with a note in the task (the prompt capabilities do not offer them).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from acp import schema

from agent_ls.core.context import neutralize_tags, wrap_tool_result

ATTACHED_TOOL = "attached_file"


@dataclass(frozen=True)
class Task:
    """The task text, and the attachments left out as secrets (their paths, one line each)."""

    text: str
    left_out: tuple[str, ...] = ()


def prompt_task(blocks: Sequence[Any], is_secret: Callable[[str], bool] = lambda path: False) -> Task:
    """The task of a prompt (module docstring). ``is_secret(path)``: whether the path policy refuses
    the (absolute) path of a ``file://`` attachment as a secret."""
    parts: list[str] = []
    left_out: list[str] = []
    for block in blocks:
        if isinstance(block, schema.TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, (schema.ResourceContentBlock, schema.EmbeddedResourceContentBlock)):
            uri = block.uri if isinstance(block, schema.ResourceContentBlock) else block.resource.uri
            path = _path_of(uri)
            shown = one_line(path if path is not None else uri)
            if path is not None and is_secret(path):
                left_out.append(shown)
                parts.append(f"(attached file {shown} left out: the policy treats it as a secret)")
            elif isinstance(block, schema.ResourceContentBlock):
                parts.append(f"Attached file: {shown}")
            elif isinstance(block.resource, schema.TextResourceContents):
                parts.append(
                    f"Attached file: {shown}\n{wrap_tool_result(ATTACHED_TOOL, block.resource.text, False)}"
                )
            else:
                parts.append(f"(attached binary resource {shown} left out)")
        else:
            parts.append(f"(attached {getattr(block, 'type', 'content')} left out: only text is read)")
    return Task("\n\n".join(part for part in parts if part), tuple(left_out))


def one_line(text: str) -> str:
    """``text`` with every control, format or line-separator character escaped (``\\n``, ``\\u2028``) and
    our block tags neutralized: a name shown on one line of the task."""
    out = []
    for char in text:
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(char.encode("unicode_escape").decode("ascii"))
        else:
            out.append(char)
    return neutralize_tags("".join(out))


def _path_of(uri: str) -> str | None:
    """The path of a ``file://`` URI (percent-decoded), None for another scheme."""
    parsed = urlsplit(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else None
