"""What a model sends that Python's JSON layer accepts but nothing after it can use, through ``agent-ls run``.

Real ``agent-ls run`` processes against the fake model server on 127.0.0.1 (or a replay script):

- lone surrogates (``"\\ud83d"``) in tool arguments (a path, file content, an edit, a grep pattern, a
  command) and in the answer: the run goes on, the diff is printed and applied with U+FFFD in their place;
- tool arguments nested 100,000 levels deep, as a JSON string and as an object in the response body (the
  llama.cpp shape), whole and streamed: each call gets an error naming the nesting, and the run goes on;
- tool calls written as text (gpt-oss Harmony here) run; markup that cannot run ends the run "stopped"
  saying the model emitted markup that was not understood, never "done".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.model_server import FakeModelServer
from tests.support.wire_formats import sse

DEEP = "[" * 100_000 + "]" * 100_000
FFFD = "\ufffd"


def agent_ls(
    *args: str, cwd: Path, server: FakeModelServer | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
    env["AGENT_LS_CONFIG_DIR"] = os.environ["AGENT_LS_CONFIG_DIR"]  # empty: no user config leaks in
    if server is not None:
        env.update({"AGENT_LS_API_KEY": "sk-test", "AGENT_LS_BASE_URL": server.base_url})
    return subprocess.run(
        [sys.executable, "-m", "agent_ls", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=False,
        encoding="utf-8",
    )


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    return root


def call(call_id: str, name: str, raw_arguments: str) -> dict[str, Any]:
    return {"id": call_id, "name": name, "raw_arguments": raw_arguments}


def tool_results(request: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


def chat_body(tool_calls: list[dict[str, Any]] | str, content: str | None = None) -> str:
    """A whole Chat Completions body; ``tool_calls`` may be JSON text spliced in as it is."""
    calls = tool_calls if isinstance(tool_calls, str) else json.dumps(tool_calls)
    message = f'{{"role": "assistant", "content": {json.dumps(content)}, "tool_calls": {calls}}}'
    return f'{{"id": "c", "object": "chat.completion", "choices": [{{"index": 0, "message": {message}}}]}}'


def test_lone_surrogates_from_the_model_are_replaced_and_the_proposal_applies(tmp_path: Path) -> None:
    root = project(tmp_path)
    steps: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call(
                    "w", "write_file", '{"path": "new\\ud83d.txt", "content": "hi \\ud83d\\ude00 \\udc80\\n"}'
                ),
                call(
                    "e", "edit_file", '{"path": "notes.txt", "old_string": "beta", "new_string": "b\\ud83d"}'
                ),
                call("g", "grep", '{"pattern": "\\ud83d"}'),
                call("r", "read_file", '{"path": "\\udc80"}'),
                call("b", "bash", '{"command": "echo \\ud83d"}'),
            ]
        },
        # The answer itself holds a lone surrogate (sent as JSON text, as a server would).
        {"body": chat_body("[]", "@").replace('"@"', '"Done \\ud83d."')},
    ]
    with FakeModelServer(steps) as server:
        ran = agent_ls(
            "run", "edit", "--model", "openai/m", "--workspace", str(root), "--yes", "--apply",
            cwd=tmp_path, server=server,
        )  # fmt: skip
        results = tool_results(server.requests[1])
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr and "run done" in ran.stderr
    assert f"Done {FFFD}." in ran.stderr
    assert f"+hi \U0001f600 {FFFD}" in ran.stdout and f"+b{FFFD}" in ran.stdout
    assert (root / f"new{FFFD}.txt").read_text(encoding="utf-8") == f"hi \U0001f600 {FFFD}\n"
    assert (root / "notes.txt").read_text(encoding="utf-8") == f"alpha\nb{FFFD}\n"
    assert f"new{FFFD}.txt" in results["w"] and "Edited notes.txt" in results["e"]
    assert "notes.txt" in results["g"] and f"b{FFFD}" in results["g"]
    assert f"file not found: '{FFFD}'" in results["r"]
    assert FFFD in results["b"]


def test_arguments_nested_100k_deep_are_a_tool_error_and_the_run_goes_on(tmp_path: Path) -> None:
    root = project(tmp_path)
    deep_object = [{"id": "obj", "type": "function", "function": {"name": "read_file", "arguments": "@"}}]
    object_body = chat_body(json.dumps(deep_object).replace('"@"', '{"path": ' + DEEP + "}"))
    streamed = [
        sse({"id": "s", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]})
        for delta in (
            {"role": "assistant", "content": ""},
            {"tool_calls": [{"index": 0, "id": "sse", "function": {"name": "grep", "arguments": "@"}}]},
        )
    ]
    streamed[1] = streamed[1].replace('"@"', '{"pattern": ' + DEEP + "}")
    steps: list[dict[str, Any]] = [
        {"tool_calls": [call("text", "read_file", '{"path": ' + DEEP + "}")]},
        {"body": object_body},
        {"chunks": [*streamed, "data: [DONE]\n\n"]},
        {"tool_calls": [call("after", "read_file", '{"path": "notes.txt"}')]},
        {"content": "Read it."},
    ]
    with FakeModelServer(steps) as server:
        ran = agent_ls(
            "run", "read", "--model", "openai/m", "--workspace", str(root), cwd=tmp_path, server=server
        )
        results = [tool_results(request) for request in server.requests[1:]]
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr and "RecursionError" not in ran.stderr
    refused = "nest arrays or objects more than 32 levels deep. Send one flat JSON object"
    assert f"Error: the arguments of read_file {refused}" in results[0]["text"]
    assert f"Error: the arguments of read_file {refused}" in results[1]["obj"]
    assert f"Error: the arguments of grep {refused}" in results[2]["sse"]
    assert "alpha" in results[3]["after"]
    assert "run done" in ran.stderr


def test_a_replay_script_with_lone_surrogates_and_deep_arguments_runs(tmp_path: Path) -> None:
    root = project(tmp_path)
    script = tmp_path / "script.json"
    script.write_text(
        '[{"tool_calls": [{"name": "write_file", "arguments": {"path": "s.txt", "content": "x\\ud83d"}},'
        ' {"name": "read_file", "arguments": {"path": ' + DEEP + '}}]}, {"content": "ok \\udc80"}]',
        encoding="ascii",
    )
    ran = agent_ls("run", "x", "--model", f"replay:{script}", "--workspace", str(root), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert f"+x{FFFD}" in ran.stdout and f"ok {FFFD}" in ran.stderr
    assert "more than 32 levels deep" in ran.stderr


HARMONY_CALL = (
    "<|channel|>analysis<|message|>I need the notes.<|end|><|start|>assistant<|channel|>commentary "
    'to=functions.read_file <|constrain|>json<|message|>{"path": "notes.txt"}<|call|>'
)
HARMONY_FINAL = "<|start|>assistant<|channel|>final<|message|>The notes say alpha and beta.<|return|>"


def test_harmony_text_from_a_server_runs_its_call_and_answers(tmp_path: Path) -> None:
    root = project(tmp_path)
    with FakeModelServer([{"content": HARMONY_CALL}, {"content": HARMONY_FINAL}]) as server:
        ran = agent_ls(
            "run", "read", "--model", "openai/m", "--workspace", str(root), cwd=tmp_path, server=server
        )
        results = list(tool_results(server.requests[1]).values())
        replayed = [m for m in server.requests[1]["messages"] if m["role"] == "assistant"]
    assert ran.returncode == 0, ran.stderr
    assert "run done" in ran.stderr and "The notes say alpha and beta." in ran.stderr
    assert len(results) == 1 and "alpha" in results[0]
    # The history sent back holds a structured call, not the markup.
    assert replayed[0]["tool_calls"][0]["function"] == {
        "name": "read_file",
        "arguments": '{"path": "notes.txt"}',
    }
    assert "<|" not in json.dumps(replayed)


def test_markup_that_is_not_understood_ends_the_run_stopped_not_done(tmp_path: Path) -> None:
    root = project(tmp_path)
    leak = '<|channel|>commentary to=browser.search <|constrain|>json<|message|>{"query": "notes"}<|call|>'
    with FakeModelServer([{"content": leak}]) as server:
        ran = agent_ls(
            "run", "read", "--model", "openai/m", "--workspace", str(root), cwd=tmp_path, server=server
        )
    assert ran.returncode == 1, ran.stderr
    assert "run done" not in ran.stderr
    assert "emitted markup that was not understood (<|channel|>, <|constrain|>, <|message|>)" in ran.stderr
