"""Start-up of ``agent-ls acp`` (issue 20) against ``agent-ls serve`` and a same-run baseline.

Run from the repository root with the dev install:  .venv/bin/python benchmarks/bench_acp.py [--repeat N]

Each figure is the median of ``--repeat`` fresh processes, interleaved:

- ``acp``: from the exec of ``python -m agent_ls acp`` to its ``initialize`` answer read from stdout (the
  request is written to stdin right after the spawn as one line, ACP's newline-delimited JSON-RPC);
- ``acp_session``: the same process on to the answer of ``session/new`` on a small project (the session,
  its AGENTS.md and skills assembled);
- ``serve``: ``python -m agent_ls serve`` to its ``initialize`` answer (LSP framing), the other front end;
- ``sdk_floor``: ``python -c "import asyncio, acp"``, what any Python agent on the ACP SDK pays.

Prints one JSON object with the seconds and the ratios ``acp / serve`` and ``acp / sdk_floor``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
ENV["AGENT_LS_STATE_DIR"] = tempfile.mkdtemp(prefix="bench-acp-state-")
ENV["AGENT_LS_CONFIG_DIR"] = tempfile.mkdtemp(prefix="bench-acp-config-")


def _read_answer(process: subprocess.Popen[bytes], wanted: int) -> None:
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("agent-ls acp ended before answering")
        message = json.loads(line)
        if message.get("id") == wanted:
            if "error" in message:
                raise RuntimeError(f"agent-ls acp answered an error: {message['error']}")
            return


def acp(project: Path) -> tuple[float, float]:
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_ls", "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    assert process.stdin is not None
    initialize = {"protocolVersion": 1, "clientCapabilities": {}}
    process.stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}).encode() + b"\n"
    )
    process.stdin.flush()
    _read_answer(process, 1)
    initialized = time.monotonic() - started
    new = {"cwd": str(project), "mcpServers": []}
    process.stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": new}).encode() + b"\n"
    )
    process.stdin.flush()
    _read_answer(process, 2)
    opened = time.monotonic() - started
    process.stdin.close()
    process.wait(timeout=30)
    return initialized, opened


def serve() -> float:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    ).encode()
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_ls", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    process.stdin.flush()
    length = 0
    while (header := process.stdout.readline().strip()) != b"":
        if header.lower().startswith(b"content-length:"):
            length = int(header.split(b":")[1])
    process.stdout.read(length)
    took = time.monotonic() - started
    process.kill()
    process.wait()
    return took


def floor() -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "import asyncio, acp"], check=True, env=ENV)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    project = Path(tempfile.mkdtemp(prefix="bench-acp-project-"))
    (project / "AGENTS.md").write_text("# Rules\n- Use type hints.\n", encoding="utf-8")
    (project / "main.py").write_text("print('hello')\n", encoding="utf-8")
    figures: dict[str, list[float]] = {"acp": [], "acp_session": [], "serve": [], "sdk_floor": []}
    for _ in range(args.repeat):
        initialized, opened = acp(project)
        figures["acp"].append(initialized)
        figures["acp_session"].append(opened)
        figures["serve"].append(serve())
        figures["sdk_floor"].append(floor())
    medians = {name: round(statistics.median(values), 3) for name, values in figures.items()}
    print(
        json.dumps(
            {
                "repeat": args.repeat,
                "median_s": medians,
                "acp_vs_serve": round(medians["acp"] / medians["serve"], 2),
                "acp_vs_sdk_floor": round(medians["acp"] / medians["sdk_floor"], 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
