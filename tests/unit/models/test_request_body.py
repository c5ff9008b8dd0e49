"""``describe_request`` (what ``--debug`` prints) over the three wires' bodies, and its redaction."""

from __future__ import annotations

import json

from agent_ls.core.messages import SystemMessage, ToolSpec, UserMessage
from agent_ls.models.anthropic import AnthropicClient
from agent_ls.models.base import WireConfig
from agent_ls.models.openai_responses import OpenAIResponsesClient
from agent_ls.models.request_body import describe_request, redact_all

KEY = "sk-unit-secret-0123456789"
MESSAGES = [SystemMessage("Be brief."), UserMessage(f"my key is {KEY}; summarize")]
TOOLS = [ToolSpec(name="read_file", description="Read a file.", parameters={"type": "object"})]


def test_redaction_takes_whole_tokens_only() -> None:
    text = f'k and key and "{KEY}" and x={KEY}&y and a{KEY}'
    assert (
        redact_all(text, ["k", KEY]) == f'[redacted] and key and "[redacted]" and x=[redacted]&y and a{KEY}'
    )


def test_an_anthropic_body_shows_its_system_blocks_and_messages() -> None:
    client = AnthropicClient(WireConfig(model="claude-x", base_url="http://127.0.0.1:9/v1", api_key=KEY))
    body = client.encode_request(MESSAGES, TOOLS)
    shown = describe_request(body, [KEY])
    assert shown.startswith(f"request: {len(body):,} bytes (~{len(body) // 4:,} tokens)\n")
    assert "tools (1): read_file\n" in shown
    assert "message 1 system (" in shown and "Be brief." in shown
    assert "message 2 user (" in shown and "my key is [redacted]; summarize" in shown
    assert KEY not in shown and KEY in body.decode()


def test_a_responses_body_shows_its_instructions_and_input() -> None:
    client = OpenAIResponsesClient(WireConfig(model="gpt-x", base_url="http://127.0.0.1:9/v1", api_key=KEY))
    body = client.encode_request(MESSAGES, TOOLS)
    shown = describe_request(body, [KEY])
    data = json.loads(body)
    assert f"tools ({len(data['tools'])}): read_file\n" in shown
    assert "Be brief." in shown and "[redacted]" in shown and KEY not in shown
