"""OpenAI Chat Completions (``POST {base_url}/chat/completions``), non-streaming, for OpenAI, Ollama,
OpenRouter and any other OpenAI-compatible server (vLLM, llama.cpp, LM Studio).

One ``complete`` call, in order:
1. map the conversation and tool specs to a request body (``chat_request_body``);
2. send it, translating transport failures and error statuses (``models/errors.py``);
3. read the body leniently (``ChatCompletion``) and map it back to a ``ModelResponse``: tool calls with
   an empty name are dropped, missing ids are synthesized, arguments stay raw JSON text.

Behaviour follows the OpenAI Chat Completions API reference; the leniency follows what local servers
send (see ../shared/corpus/tool-calls: tc01 arguments as an object, tc06 an entry with no function).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from typing import Any, assert_never

import httpx
from pydantic import BaseModel, ConfigDict, Field

from agent_ls.core.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from agent_ls.models.errors import Endpoint, read_body, translated_errors

log = logging.getLogger(__name__)


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ChatFunction(_Lenient):
    name: str | None = None
    # A JSON string per the API; llama.cpp has sent a JSON object (corpus tc01).
    arguments: Any = None


class ChatToolCall(_Lenient):
    id: str | None = None
    function: ChatFunction | None = None


class ChatContentPart(_Lenient):
    text: str | None = None


class ChatMessage(_Lenient):
    content: str | list[ChatContentPart] | None = None
    tool_calls: list[ChatToolCall] | None = None


class ChatChoice(_Lenient):
    message: ChatMessage
    finish_reason: str | None = None


class ChatPromptTokensDetails(_Lenient):
    cached_tokens: int | None = None


class ChatUsage(_Lenient):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: ChatPromptTokensDetails | None = None


class ChatCompletion(_Lenient):
    """The parts of a chat completion we read; everything else is ignored."""

    choices: list[ChatChoice] = Field(min_length=1)
    usage: ChatUsage | None = None


class OpenAIChatClient:
    """A ``ModelClient`` over OpenAI Chat Completions (see ``core/ports.py`` for the contract).

    Args:
        model: the model name the server knows (``qwen2.5-coder:7b``, ``anthropic/claude-sonnet-4``).
        base_url: the API root, up to and including ``/v1``; a trailing slash is ignored.
        api_key: sent as ``Authorization: Bearer <key>`` when set; never logged or put in an error.
        model_name: the user's model string, shown in events and errors; defaults to ``model``.
        key_env: the provider's key variable, named in the hint of an auth error (``OPENAI_API_KEY``).
        timeout_s: the httpx timeout of each connect, read and write, in seconds.
        transport: an httpx transport to use instead of the network (tests pass ``httpx.MockTransport``).
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None = None,
        model_name: str | None = None,
        key_env: str | None = None,
        timeout_s: float = 120.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._model = model
        self._endpoint = Endpoint(
            url=base_url.rstrip("/") + "/chat/completions",
            model_name=model_name or model,
            key_env=key_env,
            api_key=api_key,
        )
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.AsyncClient(headers=headers, timeout=timeout_s, transport=transport)

    @property
    def model_name(self) -> str:
        return self._endpoint.model_name

    async def complete(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        """Send the whole conversation once and return the model's answer.

        Raises:
            ModelError: one of its subclasses, with a one-line message naming the URL and the model
                (see ``models/errors.py``).
        """
        body = chat_request_body(self._model, messages, tools)
        with translated_errors(self._endpoint):
            response = await self._http.post(self._endpoint.url, content=body)
            response.raise_for_status()
        completion = read_body(response, self._endpoint, ChatCompletion)
        return model_response(completion, body)

    async def aclose(self) -> None:
        await self._http.aclose()


def chat_request_body(model: str, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> bytes:
    """The JSON request body (UTF-8) for ``messages`` in order; ``tools``/``tool_choice`` only with tools."""
    body: dict[str, Any] = {"model": model, "messages": [_wire_message(message) for message in messages]}
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            }
            for t in tools
        ]
        body["tool_choice"] = "auto"
    return json.dumps(body, ensure_ascii=False).encode()


def _wire_message(message: Message) -> dict[str, Any]:
    match message:
        case SystemMessage(text=text):
            return {"role": "system", "content": text}
        case UserMessage(text=text):
            return {"role": "user", "content": text}
        case AssistantMessage(text=text, tool_calls=()):
            return {"role": "assistant", "content": text}
        case AssistantMessage(text=text, tool_calls=calls):
            # "" rather than null: some local servers reject a null content next to tool calls.
            return {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {
                        "id": call.call_id,
                        "type": "function",
                        # Always a JSON string: servers answer 400 to an object here (corpus tc01).
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                    for call in calls
                ],
            }
        case ToolResultMessage(call_id=call_id, content=content):
            return {"role": "tool", "tool_call_id": call_id, "content": content}
        case _:
            assert_never(message)


def model_response(completion: ChatCompletion, request_body: bytes) -> ModelResponse:
    """Map the first choice of ``completion`` to a ``ModelResponse``.

    ``finish_reason`` is kept but not authoritative: tool calls are returned whatever it says (corpus tc10).
    When the server reports no usage, it is estimated from ``request_body`` and the reply (bytes / 4).
    """
    choice = completion.choices[0]
    message = AssistantMessage(text=_text(choice.message.content), tool_calls=_tool_calls(choice.message))
    usage = completion.usage
    if usage is None:
        reported = estimate_usage(request_body, message)
    else:
        details = usage.prompt_tokens_details
        reported = Usage(
            input_tokens=usage.prompt_tokens or 0,
            output_tokens=usage.completion_tokens or 0,
            cached_input_tokens=(details.cached_tokens or 0) if details else 0,
        )
    return ModelResponse(message=message, usage=reported, finish_reason=choice.finish_reason)


def estimate_usage(request_body: bytes, reply: AssistantMessage) -> Usage:
    """Tokens as bytes / 4: the request body for input, the reply's text and arguments for output."""
    reply_bytes = len(reply.text.encode()) + sum(
        len(call.name.encode()) + len(call.arguments.encode()) for call in reply.tool_calls
    )
    return Usage(input_tokens=len(request_body) // 4, output_tokens=reply_bytes // 4, estimated=True)


def _text(content: str | list[ChatContentPart] | None) -> str:
    if isinstance(content, list):
        return "".join(part.text or "" for part in content)
    return content or ""


def _tool_calls(message: ChatMessage) -> tuple[ToolCall, ...]:
    """The calls in order; entries without a function name are dropped (never run a nameless call)."""
    calls: list[ToolCall] = []
    for position, entry in enumerate(message.tool_calls or [], start=1):
        name = entry.function.name if entry.function else None
        if not name:
            log.warning("dropped a tool call without a function name: %s", entry.model_dump_json())
            continue
        arguments = _raw_arguments(entry.function.arguments if entry.function else None)
        call_id = entry.id or synthetic_call_id(position, name, arguments)
        calls.append(ToolCall(call_id=call_id, name=name, arguments=arguments))
    return tuple(calls)


def _raw_arguments(arguments: Any) -> str:
    """Arguments as JSON text: a string as received (not parsed here), anything else serialized;
    absent, null or blank means no arguments, ``{}``."""
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return "{}"
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def synthetic_call_id(position: int, name: str, arguments: str) -> str:
    """A stable id for a call the server sent without one: ``call_<position>_<12 hex of sha256>``.

    ``position`` is the 1-based place of the entry in the response's ``tool_calls``.
    """
    digest = hashlib.sha256(f"{name}\x00{arguments}".encode()).hexdigest()[:12]
    return f"call_{position}_{digest}"
