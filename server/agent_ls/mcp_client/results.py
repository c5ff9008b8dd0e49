"""A ``tools/call`` result as the text the model reads (MCP 2025-11-25, "Tool Result").

- text content blocks, joined by blank lines;
- ``structuredContent``, as compact JSON, when the result has no text block (the spec asks servers to put
  its serialized JSON in a text block too, so a text block is what the server meant the model to read; the
  SDK's servers add ``{"result": ...}`` beside a plain text answer);
- an image or audio block as ``[image: image/png, 1,234 bytes]``: the model is told what came, not sent the
  bytes (our model requests carry text tool results only);
- a resource link as ``[resource link: <uri> (<name>)]``, an embedded text resource as its text after a
  ``[resource: <uri>]`` line, an embedded blob as ``[resource: <uri>, <mime>, N bytes]``;
- ``isError`` true: the same text, reported to the model as an error result.

The registry then redacts, cuts and marks it as data, like any tool's output.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp.types as mt


def result_text(result: mt.CallToolResult) -> str:
    """The text of ``result`` (module docstring); "(no output)" when it has none."""
    import mcp.types as mt

    parts = [block_text(block) for block in result.content]
    structured = result.structured_content
    if structured is not None and not any(isinstance(block, mt.TextContent) for block in result.content):
        parts.append(json.dumps(structured, ensure_ascii=False, separators=(",", ":")))
    text = "\n\n".join(part for part in parts if part)
    return text or "(no output)"


def block_text(block: Any) -> str:
    """One content block as text (module docstring)."""
    import mcp.types as mt

    if isinstance(block, mt.TextContent):
        return block.text
    if isinstance(block, mt.ImageContent | mt.AudioContent):
        kind = "image" if isinstance(block, mt.ImageContent) else "audio"
        return f"[{kind}: {block.mime_type}, {_decoded_size(block.data):,} bytes]"
    if isinstance(block, mt.ResourceLink):
        named = f" ({block.name})" if block.name else ""
        return f"[resource link: {block.uri}{named}]"
    if isinstance(block, mt.EmbeddedResource):
        return resource_text(block.resource)
    kind = getattr(block, "type", type(block).__name__)
    return f"[{kind} content]"


def resource_text(contents: Any) -> str:
    """A resource's contents (``resources/read`` or an embedded resource) as text: its text under a
    ``[resource: <uri>]`` line, or a line describing a blob."""
    import mcp.types as mt

    if isinstance(contents, mt.TextResourceContents):
        return f"[resource: {contents.uri}]\n{contents.text}"
    if isinstance(contents, mt.BlobResourceContents):
        mime = contents.mime_type or "application/octet-stream"
        return f"[resource: {contents.uri}, {mime}, {_decoded_size(contents.blob):,} bytes]"
    return f"[resource: {getattr(contents, 'uri', '?')}]"


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)
