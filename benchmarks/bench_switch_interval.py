"""How long an editor request waits for the event loop while a worker thread diffs, at CPython's GIL switch
interval (5 ms) and at the server's (``lsp.stdio.SWITCH_INTERVAL_S``), in the same run (issue 14).

Run from the repository root with the dev install:
    .venv/bin/python benchmarks/bench_switch_interval.py [--requests N]

A worker thread diffs 12 changes of the 10,000-line table with 1,000 spread changes each, uncached, over
and over (pure Python holding the GIL, as the proposal's diffs do in the server); meanwhile a request
crosses threads as one from the editor does (a reader thread hands it to the loop with
``call_soon_threadsafe``, the loop answers), every 5 ms. p50/p99/max of the time from hand-over to
answer, in ms. Measured, not asserted; compare the rows of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import scale_trees as trees  # noqa: E402

from agent_ls.core.proposal import FileChange  # noqa: E402
from agent_ls.lsp.stdio import SWITCH_INTERVAL_S  # noqa: E402
from agent_ls.workspace.diffs import unified_diff  # noqa: E402
from agent_ls.workspace.line_diff import text_diff  # noqa: E402


async def _waits(interval: float, changes: list[FileChange], requests: int) -> list[float]:
    sys.setswitchinterval(interval)
    loop = asyncio.get_running_loop()
    stop = threading.Event()

    def diff_forever() -> None:
        while not stop.is_set():
            text_diff.cache_clear()
            for change in changes:
                unified_diff(change)

    worker = threading.Thread(target=diff_forever)
    worker.start()
    waits = []
    try:
        for _ in range(requests):
            answered = asyncio.Event()
            started = time.perf_counter()
            threading.Thread(target=loop.call_soon_threadsafe, args=(answered.set,)).start()
            await answered.wait()
            waits.append(time.perf_counter() - started)
            await asyncio.sleep(0.005)
    finally:
        stop.set()
        worker.join()
    return waits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    big = trees.big_base_text()
    changes = [
        FileChange(f"f{n}.py", False, big, None, trees.spread_changes(big, trees.SPREAD_CHANGES, seed=n))
        for n in range(12)
    ]
    default = sys.getswitchinterval()
    print(f"python {sys.version.split()[0]}; {args.requests} requests per row; wait in ms\n")
    print(f"{'switch interval':24} {'p50':>8} {'p99':>8} {'max':>8}")
    for interval in (default, SWITCH_INTERVAL_S, default, SWITCH_INTERVAL_S):
        waits = asyncio.run(_waits(interval, changes, args.requests))
        cuts = statistics.quantiles(waits, n=100, method="inclusive")
        row = [cuts[49] * 1e3, cuts[98] * 1e3, max(waits) * 1e3]
        print(f"{interval * 1e3:21.0f} ms " + " ".join(f"{v:8.1f}" for v in row))


if __name__ == "__main__":
    main()
