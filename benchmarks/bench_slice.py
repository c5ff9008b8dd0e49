"""Reproducible measurements of the slice, each against a baseline measured in the same run.

Run from the repository root with the dev install:  .venv/bin/python benchmarks/bench_slice.py [--repeat N]

Measures (DESIGN.md "Budgets"): the first request's estimated tokens (bytes / 4) and the number of
model requests for a task needing no tool; the CLI cold start to the first model request (baseline:
``python -c pass``); harness time per turn (tool-call reply → next request; baseline: one HTTP round
trip to the same fake server); time to cancel a run over LSP (baseline: one ``agent.listSkills``
round trip on the same server); peak RSS of ``agent-ls run`` (baseline: ``python -c pass``).
Results are medians; machines here are noisy, so compare ratios, not absolutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.model_server import FakeModelServer  # noqa: E402

ENV = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
# The runs' sessions and memory go to a folder of the benchmark's own, never the user's state dir.
ENV["AGENT_LS_STATE_DIR"] = tempfile.mkdtemp(prefix="bench-slice-state-")


def _project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("# demo\n\nA tiny project used by the benchmarks.\nIt prints hello.\n")
    (root / "AGENTS.md").write_text(
        "# Rules\n- Use type hints.\n- Keep functions short.\n- Test with pytest.\n- No network.\n"
    )
    (root / "main.py").write_text("print('hello')\n")
    return root


def _run_cli(
    root: Path, server: FakeModelServer, task: str
) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    env = {**ENV, "AGENT_LS_BASE_URL": server.base_url}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "agent_ls", "run", task, "--model", "openai/bench", "--workspace", str(root)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"agent-ls run failed: {done.stderr.decode()[-500:]}")
    return started, done


def _python_pass() -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.monotonic() - started


def first_request_and_cold_start(tmp: Path, repeat: int) -> dict[str, Any]:
    root = _project(tmp / "first")
    tokens, requests, cold, baseline = [], [], [], []
    for _ in range(repeat):
        with FakeModelServer([{"content": "It prints hello."}]) as server:
            started, _ = _run_cli(root, server, "Summarize README.md")
            cold.append(server.request_times[0] - started)
            tokens.append(len(json.dumps(server.requests[0]).encode()) / 4)
            requests.append(len(server.requests))
        baseline.append(_python_pass())
    return {
        "first_request_est_tokens": round(statistics.median(tokens)),
        "model_requests_for_no_tool_task": max(requests),
        "cold_start_s": round(statistics.median(cold), 3),
        "python_pass_s": round(statistics.median(baseline), 3),
        "cold_start_ratio": round(statistics.median(cold) / statistics.median(baseline), 2),
    }


def harness_per_turn(tmp: Path, turns: int) -> dict[str, Any]:
    root = _project(tmp / "turns")
    steps: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "main.py"}}]}
    ] * turns
    with FakeModelServer([*steps, {"content": "done"}]) as server:
        _run_cli(root, server, "read main.py many times")
        gaps = [server.request_times[i + 1] - server.reply_times[i] for i in range(turns)]
        round_trips = []
        for _ in range(turns):
            server.steps.append({"content": "x"})
            request = urllib.request.Request(
                server.base_url + "/chat/completions",
                data=b'{"model":"m","messages":[]}',
                headers={"Content-Type": "application/json"},
            )
            started = time.monotonic()
            urllib.request.urlopen(request).read()
            round_trips.append(time.monotonic() - started)
    harness, http = statistics.median(gaps), statistics.median(round_trips)
    return {
        "harness_ms_per_turn": round(harness * 1000, 2),
        "http_round_trip_ms": round(http * 1000, 2),
        "harness_ratio": round(harness / http, 2),
    }


def peak_memory(tmp: Path) -> dict[str, Any]:
    root = _project(tmp / "mem")
    steps = [{"tool_calls": [{"name": "list_files", "arguments": {}}]}, {"content": "done"}]
    with FakeModelServer(steps) as server:
        _run_cli(root, server, "list files")
    agent_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    baseline = subprocess.run(
        [sys.executable, "-c", "import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {
        "agent_ls_run_peak_rss_mb": round(agent_kb / 1024, 1),
        "python_pass_rss_mb": round(int(baseline.stdout) / 1024, 1),
    }


async def _cancel_latency(tmp: Path, repeat: int) -> dict[str, Any]:
    from lsprotocol import types as t
    from pygls.lsp.client import LanguageClient

    root = _project(tmp / "cancel")
    with FakeModelServer([]) as server:
        client = LanguageClient("bench", "1")
        ended: dict[str, float] = {}
        arrived: dict[str, asyncio.Event] = {}

        @client.feature("agent/runEnded")
        def _ended(params: Any) -> None:
            sid = params["sessionId"] if isinstance(params, dict) else params.sessionId
            ended[sid] = time.monotonic()
            arrived.setdefault(sid, asyncio.Event()).set()

        @client.feature("agent/event")
        def _event(params: Any) -> None:
            return None

        @client.feature(t.WINDOW_LOG_MESSAGE)
        def _log(params: Any) -> None:
            return None

        await client.start_io(sys.executable, "-m", "agent_ls", "serve", env=ENV)
        await client.initialize_async(
            t.InitializeParams(
                capabilities=t.ClientCapabilities(),
                root_uri=root.as_uri(),
                initialization_options={"agentLs": {"model": "openai/bench", "baseUrl": server.base_url}},
            )
        )
        client.initialized(t.InitializedParams())

        async def command(name: str, arg: dict[str, Any]) -> Any:
            return await client.workspace_execute_command_async(
                t.ExecuteCommandParams(command=name, arguments=[arg])
            )

        cancels, pings = [], []
        for i in range(repeat):
            server.steps.append({"content": "slow", "delay_s": 30})
            sid = (await command("agent.run", {"task": "wait"}))["sessionId"]
            arrived.setdefault(sid, asyncio.Event())
            await asyncio.to_thread(server.wait_for_requests, i + 1, 10.0)
            started = time.monotonic()
            await command("agent.cancel", {"sessionId": sid})
            await asyncio.wait_for(arrived[sid].wait(), timeout=10)
            cancels.append(ended[sid] - started)
            started = time.monotonic()
            await command("agent.listSkills", {})
            pings.append(time.monotonic() - started)
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    cancel, ping = statistics.median(cancels), statistics.median(pings)
    return {
        "cancel_to_run_ended_ms": round(cancel * 1000, 2),
        "command_round_trip_ms": round(ping * 1000, 2),
        "cancel_ratio": round(cancel / ping, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        # Peak memory first: RUSAGE_CHILDREN is the largest child waited for so far, and the cancel
        # figure's `agent-ls serve` (pygls, lsprotocol) would otherwise be what it reports.
        memory = peak_memory(tmp)
        results = {
            **first_request_and_cold_start(tmp, args.repeat),
            **harness_per_turn(tmp, turns=10),
            **asyncio.run(_cancel_latency(tmp, args.repeat)),
            **memory,
        }
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
