"""Recording and replaying model calls (``models.recording``, ``sessions.exchanges``,
``sessions.request_diff``, ``sessions.replayed``): exchanges written through a real ``SessionLog`` and
read back by the replay model, which checks each request."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_ls.core.errors import ConfigError, ModelError, ReplayMismatch, ScriptExhausted
from agent_ls.core.events import Event
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
from agent_ls.models.recording import ModelExchange, RecordingModel
from agent_ls.sessions.exchanges import ExchangeWriter
from agent_ls.sessions.redaction import Redactor
from agent_ls.sessions.replayed import SessionReplayModel
from agent_ls.sessions.request_diff import Normalizer, first_difference, tools_difference
from agent_ls.sessions.store import SessionLog, read_file

ROOT = "/home/ada/project"
TOOLS = (ToolSpec("read_file", "Read a file.", {"type": "object"}), ToolSpec("bash", "Run a command."))


def _drop(event: Event) -> None:
    return None


class Scripted:
    """A ``ModelClient`` answering from a list, failing where the list holds an exception."""

    def __init__(self, answers: list[AssistantMessage | ModelError]) -> None:
        self._answers = answers
        self.model_name = "scripted"

    async def complete(self, messages: object, tools: object, emit: object) -> ModelResponse:
        answer = self._answers.pop(0)
        if isinstance(answer, ModelError):
            raise answer
        return ModelResponse(answer, Usage(10, 2), "stop")

    async def aclose(self) -> None:
        return None


def _conversation(root: str = ROOT, listing: str = "a.py") -> list[list[Message]]:
    """The requests of a two-call run in ``root``: the second adds the call and its result."""
    first: list[Message] = [SystemMessage(f"You work in {root}."), UserMessage("list the files")]
    call = AssistantMessage("", (ToolCall("call_abc", "bash", '{"command": "ls"}'),))
    second = [*first, call, ToolResultMessage("call_abc", "bash", f"{listing}\nran in 0.02s at {root}")]
    return [first, second]


def _record(path: Path, requests: list[list[Message]], answers: list[AssistantMessage | ModelError]) -> Path:
    log = SessionLog(
        path, Redactor(["sk-secret-value-123"]), {"kind": "session", "format": 1, "workspace": ROOT}
    )
    log.append("run_start", {"run": 1, "task": "list the files", "model": "scripted"})
    model = RecordingModel(Scripted(answers), ExchangeWriter(log))
    for request in requests:
        try:
            asyncio.run(model.complete(request, TOOLS, _drop))
        except ModelError:
            pass
    log.close()
    return path


def _answers() -> list[AssistantMessage | ModelError]:
    return [
        AssistantMessage("", (ToolCall("call_abc", "bash", '{"command": "ls"}'),)),
        AssistantMessage("a.py"),
    ]


def test_exchanges_are_written_as_what_each_request_adds(tmp_path: Path) -> None:
    path = _record(tmp_path / "s.jsonl", _conversation(), _answers())
    exchanges = [r for r in read_file(path).records if r["kind"] == "exchange"]
    assert [(e["call"], e["keep"], len(e["messages"]), "tools" in e) for e in exchanges] == [
        (1, 0, 2, True),
        (2, 2, 2, False),
    ]
    assert exchanges[1]["response"] == {"role": "assistant", "text": "a.py"}


def test_a_replay_in_another_root_and_time_answers_with_the_recording(tmp_path: Path) -> None:
    path = _record(tmp_path / "s.jsonl", _conversation(), _answers())
    other = tmp_path / "elsewhere"
    replay = SessionReplayModel(str(path), other)
    first, second = _conversation(str(other))
    second = [*second[:-1], ToolResultMessage("call_xyz", "bash", f"a.py\nran in 1.5s at {other}")]
    second[2] = AssistantMessage("", (ToolCall("call_xyz", "bash", '{ "command":"ls" }'),))
    answer = asyncio.run(replay.complete(first, TOOLS, _drop))
    assert answer.message.tool_calls[0].call_id == "call_abc" and answer.usage == Usage(10, 2)
    assert asyncio.run(replay.complete(second, TOOLS, _drop)).message.text == "a.py"
    with pytest.raises(ScriptExhausted, match="has no model call left for call 3"):
        asyncio.run(replay.complete(second, TOOLS, _drop))


def test_a_different_tool_result_fails_at_its_message_and_field(tmp_path: Path) -> None:
    path = _record(tmp_path / "s.jsonl", _conversation(), _answers())
    replay = SessionReplayModel(str(path), Path(ROOT))
    first, second = _conversation(listing="b.py")
    asyncio.run(replay.complete(first, TOOLS, _drop))
    with pytest.raises(ReplayMismatch) as caught:
        asyncio.run(replay.complete(second, TOOLS, _drop))
    assert str(caught.value) == (
        f"replay session {path}: request 2 (run 1) differs from the recording at message 4 (tool, bash) "
        'content: recorded "a.py\\nran in <duration> at <workspace>" '
        'now "b.py\\nran in <duration> at <workspace>"'
    )


def test_changed_tools_are_named(tmp_path: Path) -> None:
    path = _record(tmp_path / "s.jsonl", _conversation(), _answers())
    replay = SessionReplayModel(str(path), Path(ROOT))
    with pytest.raises(ReplayMismatch, match=r"at the tools offered \(missing bash; new grep\)"):
        asyncio.run(replay.complete(_conversation()[0], (TOOLS[0], ToolSpec("grep", "Search.")), _drop))


def test_a_recorded_failure_fails_again_with_its_message(tmp_path: Path) -> None:
    answers: list[AssistantMessage | ModelError] = [
        ModelError("HTTP 500 from http://127.0.0.1:1/v1 (model m)")
    ]
    path = _record(tmp_path / "s.jsonl", _conversation()[:1], answers)
    with pytest.raises(ModelError, match="HTTP 500 from"):
        asyncio.run(SessionReplayModel(str(path), Path(ROOT)).complete(_conversation()[0], TOOLS, _drop))


def test_secrets_are_redacted_in_the_recording_and_match_on_replay(tmp_path: Path) -> None:
    request: list[Message] = [SystemMessage("s"), UserMessage("use the key sk-secret-value-123 please")]
    path = _record(tmp_path / "s.jsonl", [request], [AssistantMessage("ok")])
    assert "sk-secret-value-123" not in path.read_text(encoding="utf-8")
    replay = SessionReplayModel(str(path), Path(ROOT))
    assert asyncio.run(replay.complete(request, TOOLS, _drop)).message.text == "ok"


def test_normalizer_ignores_ids_roots_temp_paths_times_and_durations() -> None:
    normalize = Normalizer(["/home/ada/project"])
    text = (
        "at 2026-12-01T09:47:18.123Z in /tmp/agent-ls-shadow-x1/a.py, /home/ada/project/b.py: passed in 0.01s"
    )
    assert normalize.text(text) == "at <time> in <tmp>/a.py, <workspace>/b.py: passed in <duration>"
    messages = [
        {
            "role": "assistant",
            "text": "",
            "toolCalls": [{"callId": "c9", "name": "x", "arguments": '{"b":1,"a":2}'}],
        },
        {"role": "tool", "callId": "c9", "name": "x", "content": "ok"},
    ]
    assert normalize.messages(messages) == [
        {
            "role": "assistant",
            "text": "",
            "toolCalls": [{"callId": "call#1", "name": "x", "arguments": '{"a": 2, "b": 1}'}],
        },
        {"role": "tool", "callId": "call#1", "name": "x", "content": "ok"},
    ]


def test_first_difference_counts_and_notes() -> None:
    recorded = [{"role": "system", "text": "s"}, {"role": "user", "text": "task"}]
    with_note = [*recorded, {"role": "user", "text": "<reminder>turn 2</reminder>"}]
    assert first_difference(recorded, with_note, trailing_note=True) is None
    assert first_difference(recorded, with_note) == (
        '2 messages recorded, 3 now; now has message 3 (user): "<reminder>turn 2</reminder>"'
    )
    assert (
        first_difference(
            [{"role": "user", "text": "key [redacted] here"}], [{"role": "user", "text": "key sk-1 here"}]
        )
        is None
    )
    assert tools_difference([{"name": "a", "description": "x"}], [{"name": "a", "description": "y"}]) == (
        'tool a\'s description: recorded "x" now "y"'
    )


def test_exchange_writer_never_sees_a_cancelled_call(tmp_path: Path) -> None:
    seen: list[ModelExchange] = []

    class Slow(Scripted):
        async def complete(self, messages: object, tools: object, emit: object) -> ModelResponse:
            await asyncio.sleep(10)
            raise AssertionError("not reached")

    async def cancelled() -> None:
        task = asyncio.create_task(RecordingModel(Slow([]), seen.append).complete([], [], _drop))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    assert seen == []


@pytest.mark.parametrize(
    ("recorded", "now"),
    [
        ('REDACTED = "[redacted]"', 'REDACTED = "***"'),
        ("each is replaced by `[redacted]`.", "each is replaced by `<secret>`."),
        ("token=[redacted]&mode=safe", "token=abc&mode=unsafe&mode=safe"),
        ("timeout: 30s", "timeout: 300s"),
        ("wrote /tmp/good.txt", "wrote /tmp/evil.txt"),
        ("Use key [redacted] and x", "Use key COMPLETELY DIFFERENT and x"),
    ],
)
def test_real_differences_are_not_taken_for_noise(recorded: str, now: str) -> None:
    normalize = Normalizer([ROOT])
    before = normalize.messages([{"role": "user", "text": recorded}])
    after = normalize.messages([{"role": "user", "text": now}])
    assert first_difference(before, after) is not None


def test_many_redacted_keys_against_a_long_text_take_linear_time() -> None:
    """The old ``\\S+?`` wildcard took 28 s here; a possessive key run fails at once."""
    recorded = "keys=" + ",".join(["[redacted]"] * 6) + ";\nend"
    now = "keys=" + ",".join([f"h{i}" for i in range(5000)]) + ";\nend"
    assert first_difference([{"role": "user", "text": recorded}], [{"role": "user", "text": now}]) is not None
    assert first_difference(
        [{"role": "user", "text": "x" + "[redacted]x" * 3 + "y"}], [{"role": "user", "text": "x" * 5000}]
    )


def test_installed_packages_paths_are_one_place_wherever_the_venv_is() -> None:
    normalize = Normalizer([ROOT])
    one = normalize.text(
        "/work/main/.venv/lib/python3.11/site-packages/pytest_asyncio/plugin.py:217: Warning"
    )
    two = normalize.text(
        "/tmp/ci-check/.venv/lib/python3.11/site-packages/pytest_asyncio/plugin.py:217: Warning"
    )
    assert one == two == "<site-packages>/pytest_asyncio/plugin.py:217: Warning"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"keep": -3}, "keep -3 is not a count"),
        ({"keep": True}, "keep True is not a count"),
        ({"messages": "x"}, "messages is not a list"),
        ({"response": {"role": "user", "text": "hi"}}, "response has the role 'user', not assistant"),
        ({"response": {"role": "assistant", "text": "", "toolCalls": "x"}}, "exchange 2 is malformed"),
        ({"usage": {"inputTokens": "many"}}, "exchange 2 is malformed"),
    ],
)
def test_a_malformed_exchange_is_refused_when_opened(
    tmp_path: Path, change: dict[str, object], said: str
) -> None:
    import json

    path = _record(tmp_path / "s.jsonl", _conversation(), _answers())
    lines = path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    records[-2 if records[-1]["kind"] != "exchange" else -1].update(change)
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=said):
        SessionReplayModel(str(path), Path(ROOT))


def test_the_first_difference_is_raised_again_at_every_later_call(tmp_path: Path) -> None:
    """A subagent's request that differs becomes its tool's error; the run's next call must still end
    the run with that first difference, not a later one."""
    path = _record(tmp_path / "s.jsonl", _conversation(), _answers())
    replay = SessionReplayModel(str(path), Path(ROOT))
    with pytest.raises(ReplayMismatch) as first:
        asyncio.run(replay.complete([SystemMessage("other")], TOOLS, _drop))
    with pytest.raises(ReplayMismatch) as again:
        asyncio.run(replay.complete(_conversation()[1], TOOLS, _drop))
    assert str(again.value) == str(first.value) and "request 1 (run 1)" in str(first.value)
