"""``agent-ls eval``: every attempt of every task, at most ``--jobs`` at once, then the table on stdout,
``--json`` and ``--compare`` (docs/evals.md). Progress goes to stderr, a line per attempt.

Exit codes: 0 the run completed, whatever its score; 1 ``--min-pass`` given and the suite's pass@1 is
below it; 2 a usage error (a suite that cannot be read, a bad option, a model that cannot be used, an
unreadable ``--compare`` file).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from agent_ls import __version__
from agent_ls.evals.arguments import MAX_DEFAULT_JOBS
from agent_ls.evals.attempt import AttemptResult, ModelUnusable, run_attempt
from agent_ls.evals.ray_dispatch import RayUnavailable, run_on_ray
from agent_ls.evals.report import TaskReport, compare, table, to_json
from agent_ls.evals.suite import EvalTask, SuiteError, load_suite

EXIT_DONE, EXIT_BELOW_MIN_PASS, EXIT_USAGE = 0, 1, 2


def main(args: argparse.Namespace) -> int:
    """Run ``agent-ls eval`` with the parsed ``args`` (``evals.arguments``); returns the exit code."""
    problem = _usage_problem(args)
    if problem is not None:
        return _usage(problem)
    try:
        tasks = load_suite(args.suite)
    except SuiteError as exc:
        return _usage(str(exc))
    previous: dict[str, Any] | None = None
    if args.compare is not None:
        try:
            previous = json.loads(args.compare.read_text(encoding="utf-8"))
            assert isinstance(previous, dict) and "tasks" in previous and "summary" in previous
        except (OSError, ValueError, AssertionError):
            return _usage(f"--compare {args.compare} is not the JSON of an earlier agent-ls eval --json")
    jobs = args.jobs or min(os.cpu_count() or 1, MAX_DEFAULT_JOBS)
    try:
        if args.ray is not None:
            reports = _run_on_ray(tasks, args)
        else:
            reports = asyncio.run(run_suite(tasks, args.model, k=args.k, jobs=jobs, yes=args.yes))
    except ModelUnusable as exc:
        return _usage(f"the model cannot be used: {exc}")
    except RayUnavailable as exc:
        return _usage(str(exc))
    report = to_json(reports, suite=str(args.suite), model=args.model, version=__version__)
    print(table(report))
    if previous is not None:
        print(f"\ncompared with {args.compare}:")
        print(compare(report, previous))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    rate = report["summary"]["pass@1"]
    if args.min_pass is not None and rate < args.min_pass:
        print(f"agent-ls: eval: pass@1 {rate:.2f} is below --min-pass {args.min_pass:g}", file=sys.stderr)
        return EXIT_BELOW_MIN_PASS
    return EXIT_DONE


async def run_suite(
    tasks: list[EvalTask], model: str | None, *, k: int, jobs: int, yes: bool = False
) -> list[TaskReport]:
    """``k`` attempts at each of ``tasks``, at most ``jobs`` running at once; a report per task, in the
    order of ``tasks``.

    Raises:
        ModelUnusable: the model cannot be opened (the attempts still running are cancelled).
    """
    bound = asyncio.Semaphore(jobs)
    finished = Progress(len(tasks) * k)

    async def attempt(task: EvalTask, number: int) -> AttemptResult:
        async with bound:
            result = await run_attempt(task, model, yes=yes)
        finished(task, number, result)
        return result

    try:
        async with asyncio.TaskGroup() as group:
            running = [[group.create_task(attempt(task, n)) for n in range(1, k + 1)] for task in tasks]
    except ExceptionGroup as failed:
        unusable = failed.subgroup(ModelUnusable)
        if unusable is None:
            raise
        raise unusable.exceptions[0] from None
    return [
        TaskReport(task.name, tuple(t.result() for t in attempts), k)
        for task, attempts in zip(tasks, running, strict=True)
    ]


def _run_on_ray(tasks: list[EvalTask], args: argparse.Namespace) -> list[TaskReport]:
    attempts = run_on_ray(
        tasks,
        args.model,
        k=args.k,
        address=args.ray,
        jobs=args.jobs,
        yes=args.yes,
        finished=Progress(len(tasks) * args.k),
    )
    return [TaskReport(task.name, tuple(done), args.k) for task, done in zip(tasks, attempts, strict=True)]


class Progress:
    """Prints a line on stderr as each of ``total`` attempts ends: ``[3/20] task #2: passed (1.20s)``."""

    def __init__(self, total: int) -> None:
        self._total = total
        self._done = 0

    def __call__(self, task: EvalTask, number: int, result: AttemptResult) -> None:
        self._done += 1
        verdict = "passed" if result.passed else f"failed: {result.reason}"
        print(
            f"agent-ls: eval [{self._done}/{self._total}] {task.name} #{number}: {verdict} "
            f"({result.latency_s:.2f}s)",
            file=sys.stderr,
            flush=True,
        )


def _usage_problem(args: argparse.Namespace) -> str | None:
    if args.k < 1:
        return "-k must be at least 1"
    if args.jobs is not None and args.jobs < 1:
        return "--jobs must be at least 1"
    if args.min_pass is not None and not 0 <= args.min_pass <= 1:
        return f"--min-pass is a rate from 0 to 1, not {args.min_pass}"
    return None


def _usage(message: str) -> int:
    print(f"agent-ls: eval: {message}", file=sys.stderr)
    return EXIT_USAGE
