"""A long session in a small window, through ``agent-ls run`` (docs/context.md, "Compaction").

Run from the repository root with the dev install:
    .venv/bin/python benchmarks/bench_compaction.py [--window 4000] [--max-output 200] [--turns 40]

The scripted model server (``tests/support/model_server.py``) plays ``tests/support/long_session.py``'s
session: a skill activated, a todo list written, then a 20-line file read each turn. Printed: the exit
code, the requests, how many compactions pruned and how many summarized, and the largest request in
estimated tokens (bytes / 4 of its JSON body, the ``agent.context`` estimate) against the window.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.long_session import TASK, LongSession, body_tokens, is_summary_request, write_files
from tests.support.model_server import FakeModelServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=4_000)
    parser.add_argument("--max-output", type=int, default=200)
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        tmp = Path(temp)
        root = tmp / "ws"
        root.mkdir()
        write_files(root)
        config = tmp / "config"
        config.mkdir()
        (config / "agent-ls.toml").write_text(
            f"[providers.openai]\ncontext_window = {args.window}\nmax_output_tokens = {args.max_output}\n"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
        env |= {
            "AGENT_LS_CONFIG_DIR": str(config),
            "AGENT_LS_STATE_DIR": str(tmp / "state"),
            "AGENT_LS_API_KEY": "k",
            "TMPDIR": str(tmp),
            "HOME": str(tmp),
        }
        script = LongSession(turns=args.turns)
        with FakeModelServer([], responder=script) as server:
            env["AGENT_LS_BASE_URL"] = server.base_url
            command = [sys.executable, "-m", "agent_ls", "run", TASK, "--model", "openai/test-model"]
            command += ["--workspace", str(root), "--max-turns", str(args.turns + 5)]
            done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=tmp, check=False)
            requests = list(server.requests)
    largest = max(body_tokens(r) for r in requests)
    agent = sum(not is_summary_request(r) for r in requests)
    pruned, summarized = done.stderr.count("(auto, pruned"), done.stderr.count("summarized")
    summaries = script.summaries
    print(f"exit {done.returncode}; {len(requests)} requests ({agent} of the agent, {summaries} summaries)")
    print(f"compactions: {pruned} pruned, {summarized} summarized")
    print(f"largest request: {largest:,} estimated tokens; window {args.window:,}")


if __name__ == "__main__":
    main()
