"""Scores of an evaluation run: pass@1 and pass@k per task and overall, the run's measurements, the
table printed on stdout, the JSON written by ``--json``, and the comparison with an earlier run's JSON.

pass@k is the unbiased estimator of Chen et al., "Evaluating Large Language Models Trained on Code"
(2021), section 2.1: with ``n`` attempts of which ``c`` passed, ``1 - C(n-c, k) / C(n, k)``. A task's
pass@1 is then ``c / n``; the suite's figures are the means over its tasks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from agent_ls.evals.attempt import AttemptResult

FORMAT_VERSION = 1
"""The version of the JSON written by ``--json`` (``format``); grows only with an incompatible change."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate from ``n`` attempts with ``c`` passes (module docstring), in [0, 1].

    Computed as ``1 - prod(1 - k / i for i in n-c+1..n)`` (the paper's numerically stable form).

    Raises:
        ValueError: not ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, not n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


@dataclass(frozen=True)
class TaskReport:
    """The attempts at one task and what they add up to (means over the attempts; ``cost_usd`` None when
    no attempt had a price; ``reason`` the first failed attempt's reason, None when all passed)."""

    name: str
    attempts: tuple[AttemptResult, ...]
    k: int

    @property
    def passed(self) -> int:
        return sum(attempt.passed for attempt in self.attempts)

    @property
    def pass_at_1(self) -> float:
        return pass_at_k(len(self.attempts), self.passed, 1)

    @property
    def pass_at_k(self) -> float:
        return pass_at_k(len(self.attempts), self.passed, self.k)

    @property
    def turns(self) -> float:
        return _mean([a.turns for a in self.attempts])

    @property
    def tokens(self) -> float:
        return _mean([a.input_tokens + a.output_tokens for a in self.attempts])

    @property
    def cost_usd(self) -> float | None:
        costs = [a.cost_usd for a in self.attempts if a.cost_usd is not None]
        return _mean(costs) if costs else None

    @property
    def latency_s(self) -> float:
        return _mean([a.latency_s for a in self.attempts])

    @property
    def reason(self) -> str | None:
        return next((a.reason for a in self.attempts if not a.passed), None)


def to_json(tasks: Sequence[TaskReport], *, suite: str, model: str | None, version: str) -> dict[str, Any]:
    """The ``--json`` document (docs/evals.md): ``format``, ``suite``, ``model``, ``harness_version``,
    ``k``, ``summary`` (the suite's means) and ``tasks`` (each with its ``attempts``)."""
    rows = [
        {
            "name": task.name,
            "passed": task.passed,
            "pass@1": task.pass_at_1,
            "pass@k": task.pass_at_k,
            "turns": task.turns,
            "tokens": task.tokens,
            "cost_usd": task.cost_usd,
            "latency_s": task.latency_s,
            "reason": task.reason,
            "attempts": [asdict(attempt) for attempt in task.attempts],
        }
        for task in tasks
    ]
    costs = [task.cost_usd for task in tasks if task.cost_usd is not None]
    return {
        "format": FORMAT_VERSION,
        "suite": suite,
        "model": model,
        "harness_version": version,
        "k": tasks[0].k if tasks else 1,
        "summary": {
            "tasks": len(tasks),
            "pass@1": _mean([task.pass_at_1 for task in tasks]),
            "pass@k": _mean([task.pass_at_k for task in tasks]),
            "turns": _mean([task.turns for task in tasks]),
            "tokens": _mean([task.tokens for task in tasks]),
            "cost_usd": sum(costs) if costs else None,
            "latency_s": _mean([task.latency_s for task in tasks]),
        },
        "tasks": rows,
    }


def table(report: Mapping[str, Any]) -> str:
    """The run as a text table, a row per task then ``overall`` (means; the cost is the suite's total)."""
    k = report["k"]
    head = ("task", "pass@1", f"pass@{k}", "turns", "tokens", "cost", "latency", "failure")
    rows = [_row(task["name"], task) for task in report["tasks"]]
    rows.append(_row("overall", report["summary"]))
    return _columns([head, *rows])


def _row(name: str, figures: Mapping[str, Any]) -> tuple[str, ...]:
    cost = figures["cost_usd"]
    return (
        name,
        f"{figures['pass@1']:.2f}",
        f"{figures['pass@k']:.2f}",
        f"{figures['turns']:.1f}",
        f"{figures['tokens']:.0f}",
        "-" if cost is None else f"${cost:.4f}",
        f"{figures['latency_s']:.2f}s",
        figures.get("reason") or "",
    )


def compare(current: Mapping[str, Any], previous: Mapping[str, Any]) -> str:
    """Per task and overall, pass@1, pass@k, turns and tokens now against ``previous`` (a ``--json``
    document), with the difference; tasks only one of the runs has are marked ``new`` or ``gone``."""
    head = ("task", "pass@1", "pass@k", "turns", "tokens", "")
    before = {task["name"]: task for task in previous.get("tasks", [])}
    now = {task["name"]: task for task in current["tasks"]}
    rows = []
    for name in sorted(before.keys() | now.keys()):
        if name not in before:
            rows.append((name, *(_change(None, now[name], key) for key in _COMPARED), "new"))
        elif name not in now:
            rows.append((name, *(_change(before[name], None, key) for key in _COMPARED), "gone"))
        else:
            rows.append((name, *(_change(before[name], now[name], key) for key in _COMPARED), ""))
    overall = tuple(_change(previous["summary"], current["summary"], key) for key in _COMPARED)
    rows.append(("overall", *overall, ""))
    return _columns([head, *rows])


_COMPARED = ("pass@1", "pass@k", "turns", "tokens")


def _change(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None, key: str) -> str:
    """``0.50 -> 1.00 (+0.50)``; one side only when the task is in one run."""
    digits = 2 if key.startswith("pass@") else 1 if key == "turns" else 0
    old = None if before is None else before.get(key)
    new = None if after is None else after.get(key)
    if old is None or new is None:
        value = new if new is not None else old
        return "-" if value is None else f"{value:.{digits}f}"
    delta = new - old
    return f"{old:.{digits}f} -> {new:.{digits}f} ({delta:+.{digits}f})"


def _columns(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(line.rstrip() for line in lines)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
