"""The ``agent-ls eval`` command line (argparse only: ``cli`` builds its parser at every start)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

MAX_DEFAULT_JOBS = 4


def add_eval_parser(sub: Any) -> None:
    """Add ``eval`` to ``sub`` (the ``add_subparsers`` of ``cli``); ``evals.command.main`` runs it."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "eval", help="run an evaluation suite and report pass@1, pass@k, turns, tokens, cost, latency"
    )
    parser.add_argument("suite", type=Path, help="the suite folder: one folder per task (docs/evals.md)")
    parser.add_argument(
        "--model", help="<provider>/<model>, replay:<path>, or replay (each task's solution.json)"
    )
    parser.add_argument("-k", type=int, default=1, help="attempts per task (pass@k); default 1")
    parser.add_argument("--json", type=Path, help="write the results as JSON to this file")
    parser.add_argument("--compare", type=Path, help="an earlier run's --json file to compare with")
    parser.add_argument(
        "--jobs", type=int, help=f"attempts run at once; default the CPU count, at most {MAX_DEFAULT_JOBS}"
    )
    parser.add_argument(
        "--min-pass",
        type=float,
        help="exit 1 when the suite's pass@1 is below this rate (0 to 1); for CI",
    )
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run each attempt as a Ray task: auto, ray://HOST:PORT, or local (needs agent-ls[ray])",
    )
    parser.add_argument(
        "--yes", action="store_true", help="allow once every tool call that would ask (default: deny)"
    )
