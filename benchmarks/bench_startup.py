"""Start-up time of ``agent-ls run`` and ``agent-ls serve``, against their budgets and same-run baselines.

Run from the repository root with the dev install:  .venv/bin/python benchmarks/bench_startup.py [--repeat N]

Measures (issue 16, "Fast to start"), each the median of ``--repeat`` fresh processes:

- ``run``: from the exec of ``python -m agent_ls run`` to the fake model server (``FakeModelServer`` on
  127.0.0.1, Chat Completions) receiving the first request, with an API key in the environment as most
  users have (``key_handoff`` re-executes the process once to drop it), and again without one. Both
  clocks are ``time.monotonic()`` (system-wide CLOCK_MONOTONIC), so the server's arrival time compares
  with the spawn time. Budget 0.20 s.
- ``serve``: from the exec of ``python -m agent_ls serve`` to the ``initialize`` response read from its
  stdout (the request is written to its stdin right after the spawn, framed as LSP 3.17 base protocol
  says: ``Content-Length`` header, blank line, JSON). Budget 0.25 s.
- baselines measured in the same run, interleaved with the above: ``python -c pass``,
  ``python -c "import asyncio, httpx"`` (the floor any Python agent talking HTTP pays) and
  ``python -c "import asyncio, pygls.lsp.server"`` (the floor of a pygls server); each figure is also
  given as a ratio to them, since the machines here are noisy. With ``--before DIR``, the same two
  figures of an earlier commit's code (``DIR/server`` first on the import path), interleaved too.
- the import time per module, the top 25 by cumulative time from ``python -X importtime`` of one
  ``run`` and one ``serve`` (microseconds as CPython prints them; the process's whole life, so what is
  imported after the first request shows too, listed with ``after_first_request``).

Prints one JSON object. Key variables of the caller are not passed on (``AGENT_LS_*``, ``OPENAI_*``);
the runs' sessions go to a temporary state dir.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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

RUN_BUDGET_S = 0.20
SERVE_BUDGET_S = 0.25
TOP_MODULES = 25
ENV = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
ENV["AGENT_LS_STATE_DIR"] = tempfile.mkdtemp(prefix="bench-startup-state-")
ENV["AGENT_LS_CONFIG_DIR"] = tempfile.mkdtemp(prefix="bench-startup-config-")
_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def _project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("# demo\n\nA tiny project used by the benchmarks.\nIt prints hello.\n")
    (root / "AGENTS.md").write_text("# Rules\n- Use type hints.\n- Test with pytest.\n")
    (root / "main.py").write_text("print('hello')\n")
    return root


def _run_argv(root: Path, *flags: str) -> list[str]:
    return [sys.executable, *flags, "-m", "agent_ls", "run", "Summarize README.md", "--model", "openai/bench",
            "--workspace", str(root)]  # fmt: skip


def _run_once(root: Path, *flags: str, key: bool = True, tree: Path | None = None) -> tuple[float, str]:
    """Seconds from spawn to the first model request, and the process's stderr. With ``key``, an API key
    is in the environment, as for most users: ``key_handoff`` then re-executes the process once."""
    with FakeModelServer([{"content": "It prints hello."}]) as server:
        env = {**_env(tree), "AGENT_LS_BASE_URL": server.base_url}
        if key:
            env["AGENT_LS_API_KEY"] = "sk-bench-not-a-real-key"
        started = time.monotonic()
        done = subprocess.run(_run_argv(root, *flags), env=env, stdin=subprocess.DEVNULL, capture_output=True)
        if done.returncode != 0 or not server.request_times:
            raise SystemExit(f"agent-ls run failed: {done.stderr.decode()[-800:]}")
        return server.request_times[0] - started, done.stderr.decode()


def _env(tree: Path | None) -> dict[str, str]:
    """The environment of a measured process; with ``tree``, its ``server`` folder comes first on the
    import path (an earlier commit's code, to compare with in the same run)."""
    return {**ENV, "PYTHONPATH": str(tree / "server")} if tree is not None else ENV


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _serve_once(root: Path, *flags: str, tree: Path | None = None) -> tuple[float, str]:
    """Seconds from spawn to the ``initialize`` response on stdout, and the process's stderr."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}},
    }
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, *flags, "-m", "agent_ls", "serve"],
        env=_env(tree),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(_frame(initialize))
    process.stdin.flush()
    while True:  # headers, then the body; a notification (window/logMessage) may come first
        length = 0
        while (line := process.stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        if not length:
            raise SystemExit(f"agent-ls serve ended: {process.stderr.read().decode()[-800:]}")
        message = json.loads(process.stdout.read(length))
        if message.get("id") == 1:
            break
    elapsed = time.monotonic() - started
    if "result" not in message:
        raise SystemExit(f"initialize failed: {message}")
    process.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    process.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    process.stdin.flush()
    try:
        _, stderr = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
    return elapsed, stderr.decode()


def _python(code: str) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", code], env=ENV, check=True)
    return time.monotonic() - started


def _top_imports(stderr: str) -> list[dict[str, Any]]:
    """The ``TOP_MODULES`` modules with the largest cumulative import time (µs), with their own time."""
    rows = [
        {"module": m[4], "cumulative_us": int(m[2]), "self_us": int(m[1]), "depth": (len(m[3]) - 1) // 2}
        for m in map(_IMPORT_LINE.match, stderr.splitlines())
        if m
    ]
    return sorted(rows, key=lambda row: -row["cumulative_us"])[:TOP_MODULES]


def _total_import_us(stderr: str) -> int:
    """The sum of the top-level imports' cumulative times (µs): all the process imported."""
    return sum(int(m[2]) for m in map(_IMPORT_LINE.match, stderr.splitlines()) if m and len(m[3]) == 1)


def measure(tmp: Path, repeat: int, before: Path | None = None) -> dict[str, Any]:
    root = _project(tmp / "project")
    runs, keyless, serves, passes, floors = [], [], [], [], []
    runs_before, serves_before, pygls = [], [], []
    for _ in range(repeat):  # interleaved, so a burst of load on the machine hits every figure alike
        runs.append(_run_once(root)[0])
        keyless.append(_run_once(root, key=False)[0])
        serves.append(_serve_once(root)[0])
        pygls.append(_python("import asyncio, pygls.lsp.server"))
        if before is not None:
            runs_before.append(_run_once(root, tree=before)[0])
            serves_before.append(_serve_once(root, tree=before)[0])
        passes.append(_python("pass"))
        floors.append(_python("import asyncio, httpx"))
    run, serve = statistics.median(runs), statistics.median(serves)
    python_pass, floor = statistics.median(passes), statistics.median(floors)
    _, run_imports = _run_once(root, "-X", "importtime")
    _, serve_imports = _serve_once(root, "-X", "importtime")
    compared = {}
    if before is not None:
        run_before, serve_before = statistics.median(runs_before), statistics.median(serves_before)
        compared = {
            "before_tree": str(before),
            "run_first_request_before_s": round(run_before, 3),
            "serve_initialize_before_s": round(serve_before, 3),
            "run_ratio_to_before": round(run / run_before, 2),
            "serve_ratio_to_before": round(serve / serve_before, 2),
        }
    pygls_floor = statistics.median(pygls)
    return {
        "run_first_request_s": round(run, 3),
        "run_budget_s": RUN_BUDGET_S,
        "run_within_budget": run <= RUN_BUDGET_S,
        "run_without_key_s": round(statistics.median(keyless), 3),
        "serve_initialize_s": round(serve, 3),
        "serve_budget_s": SERVE_BUDGET_S,
        "serve_within_budget": serve <= SERVE_BUDGET_S,
        "python_pass_s": round(python_pass, 3),
        "python_import_asyncio_httpx_s": round(floor, 3),
        "run_ratio_to_pass": round(run / python_pass, 1),
        "run_ratio_to_asyncio_httpx": round(run / floor, 2),
        "serve_ratio_to_pass": round(serve / python_pass, 1),
        "serve_ratio_to_asyncio_httpx": round(serve / floor, 2),
        "python_import_asyncio_pygls_server_s": round(pygls_floor, 3),
        "serve_ratio_to_asyncio_pygls_server": round(serve / pygls_floor, 2),
        **compared,
        "run_min_max_s": [round(min(runs), 3), round(max(runs), 3)],
        # Minimum over minimum: load on a shared machine only ever adds time, and it hits the longer
        # process more often than its short baseline, so this ratio is the steadier one (run_all's gate).
        "python_import_asyncio_httpx_min_s": round(min(floors), 3),
        "run_min_ratio_to_asyncio_httpx": round(min(runs) / min(floors), 2),
        "serve_min_max_s": [round(min(serves), 3), round(max(serves), 3)],
        "run_imports_total_us": _total_import_us(run_imports),
        "serve_imports_total_us": _total_import_us(serve_imports),
        "run_top_imports": _top_imports(run_imports),
        "serve_top_imports": _top_imports(serve_imports),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--no-imports", action="store_true", help="leave out the per-module import lists")
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="a tree holding an earlier commit's server/ (git archive COMMIT server | tar -x -C DIR), "
        "measured interleaved with this one",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        results = measure(Path(name), args.repeat, args.before)
    if args.no_imports:
        results = {k: v for k, v in results.items() if not k.endswith("_top_imports")}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
