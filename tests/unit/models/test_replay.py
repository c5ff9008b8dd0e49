"""models/replay.py: steps in order, ids, exhaustion, bad script files, a cancellable delay."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_ls.core.errors import ConfigError, ScriptExhausted
from agent_ls.core.events import Event
from agent_ls.core.messages import AssistantMessage, ModelResponse, ToolCall, Usage, UserMessage
from agent_ls.models.openai_chat import chat_request_body
from agent_ls.models.replay import MAX_SCRIPT_BYTES, ReplayModel


def _ignore(_event: Event) -> None:
    return None


def script(tmp_path: Path, steps: Any, name: str = "script.json") -> Path:
    path = tmp_path / name
    path.write_text(steps if isinstance(steps, str) else json.dumps(steps), encoding="utf-8")
    return path


async def test_steps_are_answered_in_order_with_ids_and_json_arguments(tmp_path: Path) -> None:
    path = script(
        tmp_path,
        [
            {
                "content": "Let me look.",
                "tool_calls": [
                    {"name": "read_file", "arguments": {"path": "a.py"}},
                    {"name": "bash", "arguments": {"command": "ls"}, "id": "call_given"},
                ],
            },
            {"tool_calls": [{"name": "list_files"}]},
            {"content": "Done."},
        ],
    )
    model = ReplayModel(str(path))

    responses = [(await model.complete([UserMessage("go")], [], _ignore)).message for _ in range(3)]

    assert model.model_name == f"replay:{path}"
    assert responses == [
        AssistantMessage(
            "Let me look.",
            (
                ToolCall("call_1_1", "read_file", '{"path": "a.py"}'),
                ToolCall("call_given", "bash", '{"command": "ls"}'),
            ),
        ),
        AssistantMessage("", (ToolCall("call_2_1", "list_files", "{}"),)),
        AssistantMessage("Done."),
    ]


async def test_usage_is_estimated_from_the_request_and_reply_bytes(tmp_path: Path) -> None:
    model = ReplayModel(script(tmp_path, [{"content": "abcdefgh"}]))
    history = [UserMessage("what is in this repository?")]

    response = await model.complete(history, [], _ignore)

    request_bytes = len(chat_request_body(model.model_name, history, []))
    assert response == ModelResponse(
        message=AssistantMessage("abcdefgh"),
        usage=Usage(input_tokens=request_bytes // 4, output_tokens=2, estimated=True),
        finish_reason="stop",
    )


async def test_running_out_of_steps_raises_script_exhausted(tmp_path: Path) -> None:
    model = ReplayModel(str(script(tmp_path, [{"content": "only one"}])))
    await model.complete([UserMessage("one")], [], _ignore)

    with pytest.raises(ScriptExhausted) as caught:
        await model.complete([UserMessage("two")], [], _ignore)

    assert str(caught.value) == f"replay script {tmp_path / 'script.json'} has no step left for model call 2"


async def test_the_model_name_keeps_the_path_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, [], "empty.json")
    monkeypatch.chdir(tmp_path)
    model = ReplayModel("./empty.json")

    with pytest.raises(ScriptExhausted) as caught:
        await model.complete([UserMessage("hi")], [], _ignore)

    assert (model.model_name, str(caught.value)) == (
        "replay:./empty.json",
        "replay script ./empty.json has no step left for model call 1",
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "[{",
            "{path} is not JSON: Expecting property name enclosed in double quotes: line 1 column 3 (char 2)",
        ),
        ('{"content": "hi"}', "{path} must be a JSON list of steps (see docs/replay-format.md)"),
        (
            '[{"content": "hi"}, "bye"]',
            "{path}: step 2: the step: Input should be a valid dictionary or instance of ReplayStep",
        ),
        ('[{"tool_calls": [{"arguments": {}}]}]', "{path}: step 1: tool_calls.0.name: Field required"),
        ('[{"content": "x", "status": 500}]', "{path}: step 1: status: Extra inputs are not permitted"),
        (
            '[{"tool_calls": [{"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}]}]',
            "{path}: step 1: tool_calls.0.arguments: Input should be a valid dictionary",
        ),
        (
            '[{"content": "x", "delay_s": -1}]',
            "{path}: step 1: delay_s: Input should be greater than or equal to 0",
        ),
    ],
    ids=[
        "not-json",
        "not-a-list",
        "step-not-object",
        "no-name",
        "unknown-key",
        "string-arguments",
        "bad-delay",
    ],
)
def test_bad_scripts_are_one_line_config_errors(tmp_path: Path, content: str, message: str) -> None:
    path = script(tmp_path, content)

    with pytest.raises(ConfigError) as caught:
        ReplayModel(path)

    assert str(caught.value) == "replay script " + message.format(path=path)


def test_a_missing_script_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        ReplayModel(tmp_path / "missing.json")

    assert (
        str(caught.value)
        == f"replay script {tmp_path / 'missing.json'} cannot be read: No such file or directory"
    )


async def test_a_delay_is_cancellable_and_uses_up_its_step(tmp_path: Path) -> None:
    model = ReplayModel(script(tmp_path, [{"content": "slow", "delay_s": 3600}, {"content": "next"}]))

    call = asyncio.create_task(model.complete([UserMessage("hi")], [], _ignore))
    await asyncio.sleep(0)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    after = await model.complete([UserMessage("again")], [], _ignore)

    assert after.message == AssistantMessage("next")


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo.json"
    os.mkfifo(path)  # nobody ever writes: a blocking open would hang forever
    return path


def _huge(tmp_path: Path) -> Path:
    path = tmp_path / "huge.json"
    with path.open("wb") as file:
        file.truncate(MAX_SCRIPT_BYTES + 1)  # sparse: costs no disk
    return path


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda _: Path("/dev/zero"), "not a regular file"),
        (_fifo, "not a regular file"),
        (lambda tmp_path: tmp_path, "not a regular file"),
        (_huge, f"{MAX_SCRIPT_BYTES + 1:,} bytes, over the {MAX_SCRIPT_BYTES:,}-byte limit"),
    ],
    ids=["device", "fifo", "folder", "over-16-MiB"],
)
def test_only_a_regular_file_within_the_size_cap_is_read(tmp_path: Path, make: Any, reason: str) -> None:
    """Issue 11.2: ``replay:/dev/zero`` grew the server until it was killed; a FIFO would hang it."""
    path = make(tmp_path)
    with pytest.raises(ConfigError) as caught:
        ReplayModel(path)
    assert str(caught.value) == f"replay script {path} cannot be read: {reason}"
