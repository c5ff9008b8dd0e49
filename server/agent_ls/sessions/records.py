"""Messages and file changes as JSON objects (one session-store line each) and back.

Shapes (camelCase keys, as on the wire)::

    {"role": "system"|"user", "text": "..."}
    {"role": "assistant", "text": "...", "reasoning": "...",
     "toolCalls": [{"callId": "c1", "name": "read_file", "arguments": "{...}"}],
     "opaque": [{"wire": "anthropic", "data": "...", "beforeCall": 0}]}
    {"role": "tool", "callId": "c1", "name": "read_file", "content": "...", "isError": false}

    change: {"path": "src/a.py", "isNew": false, "baseText": "...", "baseVersion": 3|null,
             "newText": "...", "codec": "utf-8", "bom": ""|"efbbbf"}

Reading is lenient about what it does not know (extra keys are ignored) and strict about what it needs
(``KeyError``/``TypeError``/``ValueError`` for a line that lacks it; the loader skips such a line).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_ls.core.checks import CheckResult
from agent_ls.core.events import ModelCall, ModelRole
from agent_ls.core.messages import (
    AssistantMessage,
    Message,
    OpaqueItem,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from agent_ls.core.proposal import FileChange, TextEncoding


def message_json(message: Message) -> dict[str, Any]:
    """One message as a JSON object (module docstring)."""
    if isinstance(message, SystemMessage | UserMessage):
        return {"role": message.role, "text": message.text}
    if isinstance(message, ToolResultMessage):
        return {
            "role": "tool",
            "callId": message.call_id,
            "name": message.name,
            "content": message.content,
            "isError": message.is_error,
        }
    out: dict[str, Any] = {"role": "assistant", "text": message.text}
    if message.reasoning:
        out["reasoning"] = message.reasoning
    if message.tool_calls:
        out["toolCalls"] = [
            {"callId": c.call_id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ]
    if message.opaque:
        out["opaque"] = [
            {"wire": o.wire, "data": o.data, "beforeCall": o.before_call} for o in message.opaque
        ]
    return out


def message_from(data: dict[str, Any]) -> Message:
    """The message of ``message_json``. Raises ``KeyError``/``ValueError`` for a malformed object."""
    role = data["role"]
    if role == "system":
        return SystemMessage(str(data["text"]))
    if role == "user":
        return UserMessage(str(data["text"]))
    if role == "tool":
        return ToolResultMessage(
            call_id=str(data["callId"]),
            name=str(data["name"]),
            content=str(data["content"]),
            is_error=bool(data.get("isError", False)),
        )
    if role == "assistant":
        calls = tuple(
            ToolCall(str(c["callId"]), str(c["name"]), str(c["arguments"])) for c in data.get("toolCalls", [])
        )
        opaque = tuple(
            OpaqueItem(str(o["wire"]), str(o["data"]), o.get("beforeCall")) for o in data.get("opaque", [])
        )
        return AssistantMessage(
            text=str(data.get("text", "")),
            tool_calls=calls,
            reasoning=str(data.get("reasoning", "")),
            opaque=opaque,
        )
    raise ValueError(f"unknown role {role!r}")


def change_json(change: FileChange) -> dict[str, Any]:
    """One pending edit as a JSON object: both texts, so the proposal is rebuilt without the files."""
    return {
        "path": change.path,
        "isNew": change.is_new,
        "baseText": change.base_text,
        "baseVersion": change.base_version,
        "newText": change.new_text,
        "codec": change.encoding.codec,
        "bom": change.encoding.bom.hex(),
    }


def change_from(data: dict[str, Any]) -> FileChange:
    """The edit of ``change_json``. Raises ``KeyError``/``ValueError`` for a malformed object."""
    version = data.get("baseVersion")
    return FileChange(
        path=str(data["path"]),
        is_new=bool(data["isNew"]),
        base_text=str(data["baseText"]),
        base_version=int(version) if version is not None else None,
        new_text=str(data["newText"]),
        encoding=TextEncoding(str(data.get("codec", "utf-8")), bytes.fromhex(str(data.get("bom", "")))),
    )


def usage_json(usage: Usage) -> dict[str, Any]:
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cachedInputTokens": usage.cached_input_tokens,
        "estimated": usage.estimated,
        "costUsd": usage.cost_usd,
    }


def call_json(call: ModelCall | None) -> dict[str, Any]:
    """The facts of one model call for its ``usage`` line: ``model``, ``provider``, ``latencyS``,
    ``requestBytes`` and ``requestSha256`` (the hex SHA-256 of the body as sent; a hash reveals nothing
    of the body, so it needs no redaction); ``{}`` when the call was not measured (a compaction). Null
    request fields when the client built no body."""
    if call is None:
        return {}
    sent = call.request
    return {
        "model": call.model,
        "provider": provider_of(call.model),
        "latencyS": round(call.latency_s, 4),
        "requestBytes": sent.size_bytes if sent else None,
        "requestSha256": sent.sha256 if sent else None,
    }


def provider_of(model: str) -> str:
    """The provider of a model string (``models.resolution``): what comes before the first ``/``
    (``openrouter/anthropic/claude-sonnet-4`` → ``openrouter``), ``replay`` for ``replay:<path>``, else
    "" (a scripted test model's bare name)."""
    if model.startswith("replay:"):
        return "replay"
    provider, slash, _ = model.partition("/")
    return provider if slash else ""


def usage_by_role_json(by_role: Mapping[ModelRole, Usage]) -> dict[str, Any]:
    """A run's usage by role (``RunEnded.usage_by_role``): ``{"main": {usage}, "compaction": {usage}}``."""
    return {role: usage_json(usage) for role, usage in by_role.items()}


def usage_by_role_from(record: dict[str, Any]) -> dict[str, Usage]:
    """The ``usageByRole`` of a ``run_end`` record; a record written before roles were recorded has its
    whole ``usage`` under ``main`` (every call was the run's own then, subagents' aside)."""
    by_role = record.get("usageByRole")
    if isinstance(by_role, dict):
        return {str(role): usage_from(usage) for role, usage in by_role.items() if isinstance(usage, dict)}
    return {"main": usage_from(record["usage"])} if isinstance(record.get("usage"), dict) else {}


def usage_from(data: dict[str, Any]) -> Usage:
    cost = data.get("costUsd")
    return Usage(
        input_tokens=int(data.get("inputTokens", 0)),
        output_tokens=int(data.get("outputTokens", 0)),
        cached_input_tokens=int(data.get("cachedInputTokens", 0)),
        estimated=bool(data.get("estimated", False)),
        cost_usd=float(cost) if cost is not None else None,
    )


def check_json(result: CheckResult) -> dict[str, Any]:
    """An acceptance check's result (``core.checks``) as the ``checks`` record holds it."""
    return {
        "command": result.command,
        "passed": result.passed,
        "exitCode": result.exit_code,
        "outputTail": result.output_tail,
        "notRun": result.not_run or None,
    }


def check_from(data: dict[str, Any]) -> CheckResult:
    """A ``checks`` record's result back (``check_json``)."""
    code = data.get("exitCode")
    return CheckResult(
        command=str(data["command"]),
        passed=bool(data["passed"]),
        exit_code=int(code) if code is not None else None,
        output_tail=str(data.get("outputTail", "")),
        not_run=str(data.get("notRun") or ""),
    )
