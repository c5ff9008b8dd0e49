"""A ``tools/call`` result as the text the model reads (``mcp_client.results``, MCP 2025-11-25 "Tool
Result"), built from the SDK's own types."""

from __future__ import annotations

import base64

import mcp.types as mt

from agent_ls.mcp_client.results import resource_text, result_text


def text(value: str) -> mt.TextContent:
    return mt.TextContent(type="text", text=value)


def b64(size: int) -> str:
    return base64.b64encode(b"\x89" * size).decode()


def test_text_blocks_are_joined_by_blank_lines() -> None:
    result = mt.CallToolResult(content=[text("first"), text("second")])
    assert result_text(result) == "first\n\nsecond"


def test_no_content_says_so() -> None:
    assert result_text(mt.CallToolResult(content=[])) == "(no output)"


def test_structured_content_is_added_only_when_no_text_block_carries_it() -> None:
    alone = mt.CallToolResult(content=[], structured_content={"temp": 21.5, "unit": "°C"})
    assert result_text(alone) == '{"temp":21.5,"unit":"°C"}'
    beside_text = mt.CallToolResult(content=[text('{"temp": 21.5}')], structured_content={"temp": 21.5})
    assert result_text(beside_text) == '{"temp": 21.5}'  # the server's text, not the JSON twice


def test_an_image_or_audio_is_described_by_type_and_decoded_size() -> None:
    result = mt.CallToolResult(
        content=[
            text("chart:"),
            mt.ImageContent(type="image", data=b64(1234), mime_type="image/png"),
            mt.AudioContent(type="audio", data=b64(5), mime_type="audio/wav"),
        ]
    )
    assert result_text(result) == "chart:\n\n[image: image/png, 1,234 bytes]\n\n[audio: audio/wav, 5 bytes]"


def test_a_resource_link_names_its_uri_and_name() -> None:
    link = mt.ResourceLink(type="resource_link", uri="file:///repo/README.md", name="README")
    assert (
        result_text(mt.CallToolResult(content=[link])) == "[resource link: file:///repo/README.md (README)]"
    )


def test_an_embedded_resource_gives_its_text_or_describes_its_blob() -> None:
    embedded_text = mt.EmbeddedResource(
        type="resource", resource=mt.TextResourceContents(uri="note://1", text="remember this")
    )
    embedded_blob = mt.EmbeddedResource(
        type="resource",
        resource=mt.BlobResourceContents(uri="bin://2", blob=b64(300), mime_type="application/zip"),
    )
    assert result_text(mt.CallToolResult(content=[embedded_text, embedded_blob])) == (
        "[resource: note://1]\nremember this\n\n[resource: bin://2, application/zip, 300 bytes]"
    )
    untyped = mt.BlobResourceContents(uri="bin://3", blob=b64(1))
    assert resource_text(untyped) == "[resource: bin://3, application/octet-stream, 1 bytes]"


def test_an_error_result_keeps_its_text() -> None:
    """The text is the server's own explanation; the tool reports it with ``is_error`` (the e2e tests
    check the model reads it as an error result)."""
    result = mt.CallToolResult(content=[text("repository not found: /nope")], is_error=True)
    assert result_text(result) == "repository not found: /nope"
