"""Hover and codeAction latency while a 10,000-line proposal is summarized, shown and applied: the server
at a git revision from before issue 14's diff work against the server of this tree, in the same run.

Run from the repository root with the dev install:
    .venv/bin/python benchmarks/bench_editor_latency.py [--before REV] [--files N] [--runs N]

Each server runs ``scale_editor.measure_editor`` (a real ``agent-ls serve``, requests every 10 ms, open
loop) on the same generated tree (``scale_trees.generate_tree``, ``--files`` files, gitignored nothing)
whose 10,000-line table gets 1,000 spread changes by ``write_file``; the revision's ``server/`` is taken
with ``git archive`` and put first on the server's ``PYTHONPATH``. Latencies are grouped by the phase
in which a request was sent; p50/p99/max in ms. Measured, not asserted; the machine is noisy, so compare
the two servers' rows, and each against its own idle row.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import scale_trees as trees  # noqa: E402
from scale_editor import EditorResult, measure_editor, server_env  # noqa: E402

BEFORE = "3157a7e^"
"""The commit before the patience diff, the diff cache and the worker threads (issue 14)."""


def _server_at(revision: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision, "server"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "server"


def _percentile(samples: list[float], pct: int) -> float:
    if len(samples) < 2:
        return samples[0] if samples else float("nan")
    return statistics.quantiles(samples, n=100, method="inclusive")[pct - 1]


def _measure(root: Path, tmp: Path, server: Path, runs: int) -> EditorResult:
    scripts, config, home = tmp / "scripts", tmp / "config", tmp / "home"
    for folder in (scripts, config, home):
        folder.mkdir(parents=True, exist_ok=True)
    env = {**server_env(config, home), "PYTHONPATH": str(server)}
    new_text = trees.spread_changes(trees.big_base_text(), trees.SPREAD_CHANGES, seed=99)
    return asyncio.run(
        measure_editor(
            root,
            scripts,
            env,
            big_rel=trees.BIG_FILE,
            new_text=new_text,
            open_rel=trees.source_path(1),
            needle=trees.NEEDLE,
            runs=runs,
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help="git revision of the 'before' server")
    parser.add_argument("--files", type=int, default=1_000, help="files in the generated tree")
    parser.add_argument("--runs", type=int, default=3, help="write runs and agent.proposal calls")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-editor-") as tmp_name:
        tmp = Path(tmp_name)
        root = tmp / "tree"
        trees.generate_tree(root, args.files)
        servers = {
            f"before ({args.before})": _server_at(args.before, tmp / "before"),
            "after (this tree)": REPO / "server",
        }
        results = {
            label: _measure(root, tmp / label[:5], server, args.runs) for label, server in servers.items()
        }
    print(f"python {sys.version.split()[0]}; {args.files} files; {args.runs} runs; latency in ms\n")
    print(f"{'phase':92} {'server':26} {'n':>5} {'p50':>8} {'p99':>8} {'max':>8}")
    phases = list(dict.fromkeys(p for r in results.values() for p in r.latencies))
    for phase in phases:
        for label, result in results.items():
            samples = result.latencies.get(phase, [])
            if not samples:
                continue
            ms = [_percentile(samples, 50) * 1e3, _percentile(samples, 99) * 1e3, max(samples) * 1e3]
            print(f"{phase[:92]:92} {label:26} {len(samples):5} " + " ".join(f"{v:8.1f}" for v in ms))


if __name__ == "__main__":
    main()
