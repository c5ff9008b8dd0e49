"""The regression gate of ``benchmarks/run_all.py`` (docs/benchmarks.md), with fake figures: a figure over
its limit fails with a message naming it, its value and its limit; one within passes; one missing fails.
The real run is CI's own step (``.ci/run``: ``run_all.py --short --check``)."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run_all() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_all", REPO / "benchmarks" / "run_all.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_all"] = module  # dataclasses resolve their annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def _figure(run_all: ModuleType, name: str, ratio: float) -> object:
    return run_all.Figure(name, "harness time per turn", "12 ms", "one HTTP round trip 1 ms", ratio)


def test_a_figure_over_its_limit_fails_naming_it_its_value_and_its_limit(run_all: ModuleType) -> None:
    limits = {"harness_turn_vs_http": run_all.Limit(40.0, "3x the worst measured")}
    failures = run_all.check([_figure(run_all, "harness_turn_vs_http", 41.5)], limits)
    assert len(failures) == 1
    message = failures[0]
    assert message.startswith("harness_turn_vs_http: 41.5x is over its limit 40x")
    assert "12 ms vs one HTTP round trip 1 ms" in message and "3x the worst measured" in message


def test_figures_within_or_at_their_limits_pass(run_all: ModuleType) -> None:
    limits = {"a": run_all.Limit(2.0, "why a"), "b": run_all.Limit(1.0, "budget")}
    figures = [_figure(run_all, "a", 1.9), _figure(run_all, "b", 1.0)]
    assert run_all.check(figures, limits) == []


def test_a_guarded_figure_not_measured_or_not_a_number_fails(run_all: ModuleType) -> None:
    limits = {"a": run_all.Limit(2.0, "why a"), "b": run_all.Limit(2.0, "why b")}
    failures = run_all.check([_figure(run_all, "a", math.nan)], limits)
    assert failures[0].startswith("a: nan")
    assert failures[1].startswith("b: not measured")


def test_every_limit_says_why_and_the_token_budget_is_design_mds(run_all: ModuleType) -> None:
    assert all(limit.why and limit.limit > 0 for limit in run_all.LIMITS.values())
    assert sys.modules["run_all_figures"].FIRST_REQUEST_BUDGET == 1_400
    assert run_all.LIMITS["first_request_vs_budget"].limit == 1.0


def test_the_slice_figures_are_read_as_ratios_to_the_same_run(run_all: ModuleType) -> None:
    out = (
        '{"first_request_est_tokens": 1410, "model_requests_for_no_tool_task": 1, "harness_ms_per_turn": 4.0,'
        ' "http_round_trip_ms": 0.5, "harness_ratio": 8.0, "cancel_to_run_ended_ms": 3.0,'
        ' "command_round_trip_ms": 1.5, "cancel_ratio": 2.0, "agent_ls_run_peak_rss_mb": 60.0,'
        ' "python_pass_rss_mb": 40.0}'
    )
    figures = run_all.read_slice(out)
    failures = run_all.check(figures, {k: run_all.LIMITS[k] for k in (f.name for f in figures)})
    assert failures == [
        "first_request_vs_budget: 1.01x is over its limit 1x (first request, est. tokens (bytes / 4): "
        f"1,410 vs budget 1,400; limit: {run_all.LIMITS['first_request_vs_budget'].why})"
    ]


def test_the_generated_section_replaces_only_what_is_between_the_markers(
    run_all: ModuleType, tmp_path: Path
) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nintro\n\n## issue 16\n\nhand-written analysis\n")
    run_all.write_docs("first\n", doc)
    run_all.write_docs("second\n", doc)
    text = doc.read_text()
    assert "first" not in text and text.count(run_all.BEGIN) == 1
    assert text.startswith("# Benchmarks\n\nintro\n\n## Latest run")
    assert text.endswith(f"{run_all.BEGIN}\nsecond\n{run_all.END}\n\n## issue 16\n\nhand-written analysis\n")


def test_help_works() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "run_all.py"), "--help"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "--short" in done.stdout and "--check" in done.stdout
