"""Tool calls written as text by each open-weight family, through the real path: the fake model server on
127.0.0.1 sends the text as the answer's content, a real wire client reads it (whole and streamed), and
the response's calls, text and reasoning are compared whole.

The forms follow each family's chat template and the tool-call parsers of vLLM, SGLang and llama.cpp
(sources in ``models/call_markup.py``, ``models/harmony.py``, ``models/text_calls.py``). The second table
is markup that must not run; each of those texts is what ``core.model_markup`` then reports, so the loop
ends the run saying the model emitted markup that was not understood.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from agent_ls.core.events import Event
from agent_ls.core.messages import ModelResponse, ToolSpec, UserMessage
from agent_ls.core.model_markup import leftover_markup
from agent_ls.models.anthropic import AnthropicClient
from agent_ls.models.base import HttpModelClient, WireConfig
from agent_ls.models.openai_chat import OpenAIChatClient
from tests.support.model_server import FakeModelServer

READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file.",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
        "required": ["path"],
        "additionalProperties": False,
    },
)
GREP = ToolSpec(
    name="grep",
    description="Search.",
    parameters={
        "type": "object",
        "properties": {"pattern": {"type": "string"}},
        "required": ["pattern"],
        "additionalProperties": False,
    },
)
TOOLS = (READ_FILE, GREP)
A = {"path": "src/app.py"}
A3 = {"path": "src/app.py", "limit": 3}
B = {"pattern": "TODO"}


@dataclass(frozen=True)
class Family:
    name: str
    text: str
    calls: list[tuple[str, dict[str, Any]]]
    visible: str = ""
    reasoning: str = ""
    ids: list[str | None] = field(default_factory=list)


FAMILIES = [
    Family(
        "gpt-oss harmony, as a server passes it on",
        "<|channel|>analysis<|message|>Need the file.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.read_file <|constrain|>json<|message|>{"path": "src/app.py", "limit": 3}<|call|>',
        [("read_file", A3)],
        reasoning="Need the file.",
    ),
    Family(
        "gpt-oss harmony, recipient in the role, preamble, two calls",
        "<|start|>assistant<|channel|>commentary<|message|>Reading it now.<|end|>"
        '<|start|>assistant to=functions.read_file<|channel|>commentary json<|message|>{"path": "src/app.py"}'
        "<|call|><|start|>assistant to=functions.grep<|channel|>commentary<|message|>"
        '{"pattern": "TODO"}<|call|>',
        [("read_file", A), ("grep", B)],
        visible="Reading it now.",
    ),
    Family(
        "gpt-oss harmony final answer (no call)",
        "<|channel|>analysis<|message|>Easy.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>It is 4.<|return|>",
        [],
        visible="It is 4.",
        reasoning="Easy.",
    ),
    Family(
        "llama 3.1 python_tag",
        '<|python_tag|>{"name": "read_file", "parameters": {"path": "src/app.py"}}<|eom_id|>',
        [("read_file", A)],
    ),
    Family(
        "llama 3.1 python_tag, two calls separated by ;",
        '<|python_tag|>{"name": "read_file", "parameters": {"path": "src/app.py"}}; '
        '{"name": "grep", "parameters": {"pattern": "TODO"}}',
        [("read_file", A), ("grep", B)],
    ),
    Family(
        "llama 3.x bare JSON",
        '{"type": "function", "name": "read_file", "parameters": {"path": "src/app.py", "limit": 3}}',
        [("read_file", A3)],
    ),
    Family(
        "llama 3.1 function tag", '<function=read_file>{"path": "src/app.py"}</function>', [("read_file", A)]
    ),
    Family(
        "llama 3.2 / 4 pythonic",
        '<|python_start|>[read_file(path="src/app.py", limit=3), grep(pattern="TODO")]<|python_end|>',
        [("read_file", A3), ("grep", B)],
    ),
    Family(
        "deepseek v3 / r1",
        "Let me look.\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n"
        '{"path": "src/app.py"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>grep\n'
        '```json\n{"pattern": "TODO"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
        [("read_file", A), ("grep", B)],
        visible="Let me look.",
    ),
    Family(
        "deepseek v3.1",
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{"path": "src/app.py"}'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        [("read_file", A)],
    ),
    Family(
        "deepseek v3.2 dsml",
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="read_file">\n<｜DSML｜parameter name="path" '
        'string="true">src/app.py</｜DSML｜parameter>\n<｜DSML｜parameter name="limit" string="false">3'
        "</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
        [("read_file", A3)],
    ),
    Family(
        "glm 4.5",
        "<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>src/app.py</arg_value>\n"
        "<arg_key>limit</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
        [("read_file", A3)],
    ),
    Family(
        "glm 4.7 (no newline after the name)",
        "<tool_call>grep<arg_key>pattern</arg_key><arg_value>TODO</arg_value></tool_call>",
        [("grep", B)],
    ),
    Family(
        "kimi k2",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>"
        '{"path": "src/app.py"}<|tool_call_end|><|tool_call_begin|>functions.grep:1'
        '<|tool_call_argument_begin|>{"pattern": "TODO"}<|tool_call_end|><|tool_calls_section_end|>',
        [("read_file", A), ("grep", B)],
    ),
    Family(
        "hermes / qwen 2.5",
        'I will read it.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "src/app.py"}}\n'
        "</tool_call><|im_end|>",
        [("read_file", A)],
        visible="I will read it.",
    ),
    Family(
        "qwen3-coder xml",
        "<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/app.py\n</parameter>\n<parameter=limit>\n3\n"
        "</parameter>\n</function>\n</tool_call>",
        [("read_file", A3)],
    ),
    Family(
        "seed-oss",
        "<seed:tool_call>\n<function=read_file>\n<parameter=path>\nsrc/app.py\n</parameter>\n</function>\n"
        "</seed:tool_call>",
        [("read_file", A)],
    ),
    Family(
        "minimax m2",
        '<minimax:tool_call>\n<invoke name="read_file">\n<parameter name="path">src/app.py</parameter>\n'
        '<parameter name="limit">3</parameter>\n</invoke>\n</minimax:tool_call>',
        [("read_file", A3)],
    ),
    Family(
        "mistral v11 with call id",
        '[TOOL_CALLS]read_file[CALL_ID]a1B2c3D4e[ARGS]{"path": "src/app.py"}</s>',
        [("read_file", A)],
        ids=["a1B2c3D4e"],
    ),
    Family(
        "granite 3",
        '<|tool_call|>[{"name": "read_file", "arguments": {"path": "src/app.py"}}]',
        [("read_file", A)],
    ),
    Family(
        "internlm 2.5",
        "<|action_start|><|plugin|>\n"
        '{"name": "read_file", "parameters": {"path": "src/app.py"}}<|action_end|>',
        [("read_file", A)],
    ),
    Family(
        "hunyuan",
        '<tool_calls>[{"name": "grep", "arguments": {"pattern": "TODO"}}]</tool_calls>',
        [("grep", B)],
    ),
    Family(
        "longcat",
        '<longcat_tool_call>{"name": "grep", "arguments": {"pattern": "TODO"}}</longcat_tool_call>',
        [("grep", B)],
    ),
    Family("an answer with a leaked end-of-turn token", "It is 4.<|eot_id|>", [], visible="It is 4."),
]


async def complete(client: HttpModelClient, text: str) -> ModelResponse:
    events: list[Event] = []
    try:
        return await client.complete([UserMessage("look at src/app.py")], TOOLS, events.append)
    finally:
        await client.aclose()


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
async def test_each_family_text_becomes_its_calls(family: Family, stream: bool) -> None:
    with FakeModelServer([{"content": family.text}]) as server:
        client = OpenAIChatClient(WireConfig(model="m", base_url=server.base_url, stream=stream))
        response = await complete(client, family.text)

    message = response.message
    assert [(call.name, json.loads(call.arguments)) for call in message.tool_calls] == family.calls
    assert (message.text, message.reasoning) == (family.visible, family.reasoning)
    if family.ids:
        assert [call.call_id for call in message.tool_calls] == family.ids
    assert len({call.call_id for call in message.tool_calls}) == len(message.tool_calls)
    assert leftover_markup(message.text) == []


async def test_the_anthropic_wire_reads_text_calls_the_same_way() -> None:
    harmony = FAMILIES[0]
    with FakeModelServer([{"content": harmony.text}]) as server:
        client = AnthropicClient(WireConfig(model="m", base_url=server.base_url, stream=False))
        response = await complete(client, harmony.text)

    assert [(c.name, json.loads(c.arguments)) for c in response.message.tool_calls] == harmony.calls
    assert (response.message.text, response.message.reasoning) == ("", "Need the file.")


NOT_RUN = [
    pytest.param(
        '<|channel|>commentary to=browser.search <|constrain|>json<|message|>{"query": "x"}<|call|>',
        id="harmony built-in tool",
    ),
    pytest.param(
        '<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{"file": "a"}<|call|>',
        id="harmony invalid arguments",
    ),
    pytest.param(
        '<|start|>assistant to=functions.read_file<|channel|>commentary<|message|>{"path": "a"}<|call|>'
        "<|start|>functions.read_file to=assistant<|channel|>commentary<|message|>invented result<|end|>",
        id="harmony call followed by an invented tool result",
    ),
    pytest.param('<|python_tag|>brave_search.call(query="x")<|eom_id|>', id="llama built-in tool"),
    pytest.param(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>delete_all\n```json\n{}\n```"
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        id="deepseek unknown tool",
    ),
    pytest.param(
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>"
        '{"path": ',
        id="kimi cut off",
    ),
    pytest.param("<tool_call>read_file\n<arg_key>path</arg_key>\n", id="glm unclosed"),
    pytest.param('<tool_call>{"name": "read_file", "arguments": {"path": "a"}', id="hermes unclosed json"),
    pytest.param(
        '[TOOL_CALLS]read_file[ARGS]{"path": "a"}\nThen I will summarize it.', id="mistral followed by text"
    ),
    pytest.param(
        '<minimax:tool_call><invoke name="read_file"><parameter name="path">a</parameter></invoke>'
        "</minimax:tool_call> and more words",
        id="minimax followed by text",
    ),
]


@pytest.mark.parametrize("text", NOT_RUN)
async def test_markup_that_cannot_run_stays_in_the_text_and_is_reported(text: str) -> None:
    with FakeModelServer([{"content": text}]) as server:
        client = OpenAIChatClient(WireConfig(model="m", base_url=server.base_url, stream=False))
        response = await complete(client, text)

    assert response.message.tool_calls == ()
    assert response.message.text == text
    assert leftover_markup(response.message.text) != []


@pytest.mark.parametrize(
    "text",
    [
        "Harmony messages start with `<|start|>` and calls end with `<|call|>`.",
        'A Hermes call looks like this:\n```\n<tool_call>{"name": "read_file"}</tool_call>\n```\nThat is it.',
        "Use x < y | z > w and a <div> here.",
        '{"name": "Ada", "parameters": {"age": 36}}',
    ],
    ids=["inline code", "fenced", "prose", "json that names no tool"],
)
async def test_prose_and_quoted_markup_are_an_answer(text: str) -> None:
    with FakeModelServer([{"content": text}]) as server:
        client = OpenAIChatClient(WireConfig(model="m", base_url=server.base_url, stream=False))
        response = await complete(client, text)

    assert (response.message.text, response.message.tool_calls) == (text, ())
    assert leftover_markup(text) == []
