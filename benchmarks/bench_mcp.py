"""What MCP servers cost a run (issue 18), each against the same run without them, measured in one go.

Run from the repository root with the dev install:  .venv/bin/python benchmarks/bench_mcp.py [--repeat N]

For each configuration (no MCP server; ``mcp-server-time``, 2 tools; ``mcp-server-git``, 12 tools; both,
with ``[mcp] defer_over_tokens = 0`` so that every MCP tool is deferred), a real ``agent-ls run`` of a
task that needs no tool against the scripted model server on 127.0.0.1 (``FakeModelServer``):

- the first request's estimated tokens (its JSON body's bytes / 4) and, of those, the tools array's;
- the time from exec to the first model request (the MCP servers are started before it: the SDK's
  import, the spawn, initialize and tools/list), as a ratio to the run without MCP measured in the same
  round (interleaved, medians of ``--repeat``; these machines are noisy).
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
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.model_server import FakeModelServer  # noqa: E402

ENV = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
ENV["AGENT_LS_STATE_DIR"] = tempfile.mkdtemp(prefix="bench-mcp-state-")


def _servers(repo: Path) -> dict[str, dict[str, Any]]:
    time_server = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    git_server = {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", str(repo)]}
    return {
        "none": {},
        "time (2 tools)": {"time": time_server},
        "git (12 tools)": {"git": git_server},
        "time + git, deferred": {"time": time_server, "git": git_server},
    }


def _config_dir(tmp: Path, name: str, servers: dict[str, Any]) -> Path:
    directory = tmp / f"config-{len(list(tmp.glob('config-*')))}"
    directory.mkdir()
    rules = ["mcp__time", "mcp__git"]
    toml = f"[permissions]\nallow = {json.dumps(rules)}\n"
    if "deferred" in name:
        toml += "[mcp]\ndefer_over_tokens = 0\n"
    (directory / "agent-ls.toml").write_text(toml)
    if servers:
        (directory / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return directory


def _one_run(root: Path, config: Path) -> tuple[float, dict[str, Any]]:
    with FakeModelServer([{"content": "It prints hello."}]) as server:
        env = {**ENV, "AGENT_LS_BASE_URL": server.base_url, "AGENT_LS_CONFIG_DIR": str(config)}
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "agent_ls", "run", "Say hi", "--model", "openai/bench"],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"agent-ls run failed: {done.stderr.decode()[-800:]}")
        return server.request_times[0] - started, server.requests[0]


def measure(repeat: int) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as name:
        tmp = Path(name)
        root = tmp / "project"
        root.mkdir()
        (root / "main.py").write_text("print('hello')\n")
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        configs = {label: _config_dir(tmp, label, servers) for label, servers in _servers(root).items()}
        times: dict[str, list[float]] = {label: [] for label in configs}
        bodies: dict[str, dict[str, Any]] = {}
        for _ in range(repeat):  # interleaved: each round runs every configuration once
            for label, config in configs.items():
                seconds, body = _one_run(root, config)
                times[label].append(seconds)
                bodies[label] = body
    base = statistics.median(times["none"])
    rows = []
    for label in configs:
        body = bodies[label]
        tools = body.get("tools", [])
        mcp_names = [t["function"]["name"] for t in tools if t["function"]["name"].startswith("mcp__")]
        median = statistics.median(times[label])
        rows.append(
            {
                "configuration": label,
                "first_request_est_tokens": len(json.dumps(body).encode()) // 4,
                "tools_est_tokens": len(json.dumps(tools).encode()) // 4,
                "mcp_tools_sent": len(mcp_names),
                "to_first_request_s": round(median, 3),
                "ratio_to_no_mcp": round(median / base, 2),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for row in measure(args.repeat):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
