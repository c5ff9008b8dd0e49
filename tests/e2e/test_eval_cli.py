"""``agent-ls eval`` as a user runs it (issue 19, docs/evals.md): real ``agent-ls eval`` processes with
``--model replay``, each task answered by its own ``solution.json`` through the ``agent-ls run`` path.

The starter suite (benchmarks/evals) passes 10/10 offline; a task whose scripted solution is wrong is
reported failed with its check's reason; ``-k`` gives pass@k by the unbiased estimator; ``--json`` has
the documented shape; ``--compare`` shows the differences; attempts never change the suite's folder
and leave no copy behind.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent_cli import environment, run, tree

REPO = Path(__file__).resolve().parents[2]
STARTER = REPO / "benchmarks" / "evals"


def make_task(
    suite: Path, name: str, *, files: dict[str, str], check: str, steps: list[dict[str, Any]] | None
) -> Path:
    """A task folder: ``task.toml`` (a fixed prompt, ``check``), ``repo/`` with ``files``, and
    ``solution.json`` with ``steps`` when given."""
    folder = suite / name
    (folder / "repo").mkdir(parents=True)
    for rel, text in files.items():
        (folder / "repo" / rel).write_text(text, encoding="utf-8")
    (folder / "task.toml").write_text(
        f"prompt = 'Fix {name}.'\ncheck = {json.dumps(check)}\nmax_turns = 4\n", encoding="utf-8"
    )
    if steps is not None:
        (folder / "solution.json").write_text(json.dumps(steps), encoding="utf-8")
    return folder


def edit(path: str, old: str, new: str) -> list[dict[str, Any]]:
    """A two-step script: one ``edit_file`` call, then a final answer."""
    call = {"name": "edit_file", "arguments": {"path": path, "old_string": old, "new_string": new}}
    return [{"content": "", "tool_calls": [call]}, {"content": "Done."}]


CHECK_ANSWER = 'python -c "import answer, sys; sys.exit(0 if answer.VALUE == 42 else 1)"'


def small_suite(root: Path) -> Path:
    """``right`` (its script fixes the value), ``wrong`` (its script writes the wrong value) and
    ``unscripted`` (no solution.json)."""
    suite = root / "suite"
    files = {"answer.py": "VALUE = 41\n"}
    make_task(suite, "right", files=files, check=CHECK_ANSWER, steps=edit("answer.py", "41", "42"))
    make_task(suite, "wrong", files=files, check=CHECK_ANSWER, steps=edit("answer.py", "41", "43"))
    make_task(suite, "unscripted", files=files, check=CHECK_ANSWER, steps=None)
    return suite


def test_the_starter_suite_passes_offline_and_is_left_unchanged(tmp_path: Path) -> None:
    before = tree(STARTER)
    out = tmp_path / "run.json"
    done = run(
        ["eval", str(STARTER), "--model", "replay", "--min-pass", "1.0", "--json", str(out)],
        cwd=tmp_path,
        env=environment(tmp_path),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["summary"]["tasks"] == len(report["tasks"]) >= 10
    assert report["summary"]["pass@1"] == 1.0, done.stdout
    assert {task["name"] for task in report["tasks"]} >= {
        "format-price-negative",
        "failing-test",
        "rename-across-files",
        "missing-argument-check",
    }
    assert all(task["turns"] >= 2 and task["tokens"] > 0 for task in report["tasks"])
    assert tree(STARTER) == before  # every edit went to a temporary copy
    assert not list(tmp_path.glob("agent-ls-eval-*"))  # and the copies are gone


def test_a_wrong_solution_is_reported_failed_with_its_reason(tmp_path: Path) -> None:
    suite = small_suite(tmp_path)
    before = tree(suite)
    out = tmp_path / "run.json"
    done = run(
        ["eval", str(suite), "--model", "replay", "--json", str(out)], cwd=tmp_path, env=environment(tmp_path)
    )
    assert done.returncode == 0, done.stderr  # the run completed: its score is not an error
    tasks = {task["name"]: task for task in json.loads(out.read_text())["tasks"]}
    assert tasks["right"]["pass@1"] == 1.0 and tasks["right"]["reason"] is None
    assert tasks["wrong"]["pass@1"] == 0.0
    assert tasks["wrong"]["reason"] == "check exited 1"
    assert tasks["wrong"]["attempts"][0]["status"] == "done"  # the agent said done; the check said no
    assert tasks["unscripted"]["reason"] == "no solution.json for --model replay"
    rows = {line.split()[0]: line for line in done.stdout.splitlines()}
    assert "check exited 1" in rows["wrong"]
    assert rows["overall"].split()[1] == "0.33"
    assert tree(suite) == before


def test_min_pass_fails_the_run_below_the_rate(tmp_path: Path) -> None:
    suite = small_suite(tmp_path)
    below = run(["eval", str(suite), "--model", "replay", "--min-pass", "0.5"], cwd=tmp_path)
    assert below.returncode == 1
    assert "pass@1 0.33 is below --min-pass 0.5" in below.stderr
    met = run(["eval", str(suite), "--model", "replay", "--min-pass", "0.3"], cwd=tmp_path)
    assert met.returncode == 0, met.stderr


def test_k_attempts_give_pass_at_k(tmp_path: Path) -> None:
    """The check passes only the first time it runs (it creates a marker outside the copy): of 2
    attempts 1 passes, so pass@1 is 0.5 and pass@2 is 1.0."""
    marker = tmp_path / "first-check-ran"
    once = f'python -c "import os; os.open({str(marker)!r}, os.O_CREAT | os.O_EXCL)"'
    suite = tmp_path / "suite"
    make_task(suite, "flaky", files={"a.txt": "a\n"}, check=once, steps=[{"content": "Done."}])
    out = tmp_path / "run.json"
    done = run(
        ["eval", str(suite), "--model", "replay", "-k", "2", "--jobs", "1", "--json", str(out)],
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["k"] == 2
    (task,) = report["tasks"]
    assert [attempt["passed"] for attempt in task["attempts"]] == [True, False]
    assert (task["passed"], task["pass@1"], task["pass@k"]) == (1, 0.5, 1.0)
    assert done.stdout.splitlines()[0].split()[:3] == ["task", "pass@1", "pass@2"]


def test_the_json_has_the_documented_shape(tmp_path: Path) -> None:
    suite = small_suite(tmp_path)
    out = tmp_path / "run.json"
    run(["eval", str(suite), "--model", "replay", "--json", str(out)], cwd=tmp_path)
    report = json.loads(out.read_text())
    assert set(report) == {"format", "suite", "model", "harness_version", "k", "summary", "tasks"}
    assert (report["format"], report["model"], report["k"]) == (1, "replay", 1)
    figures = {"pass@1", "pass@k", "turns", "tokens", "cost_usd", "latency_s"}
    assert set(report["summary"]) == figures | {"tasks"}
    assert [task["name"] for task in report["tasks"]] == ["right", "unscripted", "wrong"]
    for task in report["tasks"]:
        assert set(task) == figures | {"name", "passed", "reason", "attempts"}
        (attempt,) = task["attempts"]
        assert set(attempt) == {
            "passed",
            "status",
            "turns",
            "input_tokens",
            "output_tokens",
            "cost_usd",
            "latency_s",
            "reason",
        }
    right = report["tasks"][0]["attempts"][0]
    assert right["turns"] == 2 and right["input_tokens"] > 0 and right["cost_usd"] is None


def test_compare_shows_the_differences_with_an_earlier_run(tmp_path: Path) -> None:
    suite = small_suite(tmp_path)
    earlier = tmp_path / "earlier.json"
    run(["eval", str(suite), "--model", "replay", "--json", str(earlier)], cwd=tmp_path)
    # The wrong solution is fixed and a task is retired before the second run.
    (suite / "wrong" / "solution.json").write_text(json.dumps(edit("answer.py", "41", "42")))
    (suite / "unscripted" / "task.toml").rename(tmp_path / "retired.toml")
    (suite / "unscripted").rename(suite / "_retired")
    make_task(
        suite, "added", files={"answer.py": "VALUE = 42\n"}, check=CHECK_ANSWER, steps=[{"content": "ok"}]
    )
    done = run(["eval", str(suite), "--model", "replay", "--compare", str(earlier)], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    compared = done.stdout.split(f"compared with {earlier}:\n")[1]
    rows = {line.split()[0]: line for line in compared.splitlines()[1:]}
    assert rows["wrong"].split()[1:4] == ["0.00", "->", "1.00"] and "(+1.00)" in rows["wrong"]
    assert rows["right"].split()[1:5] == ["1.00", "->", "1.00", "(+0.00)"]
    assert rows["added"].rstrip().endswith("new")
    assert rows["unscripted"].rstrip().endswith("gone")
    assert rows["overall"].split()[1:5] == ["0.33", "->", "1.00", "(+0.67)"]


def test_attempts_are_isolated_from_the_suite_and_from_each_other(tmp_path: Path) -> None:
    """Two attempts of a task that creates a file and a check that writes next to it run at once: each
    sees only its own copy (the check fails if the file is already there), and the suite is unchanged."""
    suite = tmp_path / "suite"
    write = {"name": "write_file", "arguments": {"path": "new.txt", "content": "mine\n"}}
    check = 'test ! -e checked && test "$(cat new.txt)" = mine && touch checked && echo x >> answer.py'
    make_task(
        suite,
        "writes",
        files={"answer.py": "VALUE = 41\n"},
        check=check,
        steps=[{"content": "", "tool_calls": [write]}, {"content": "Done."}],
    )
    before = tree(suite)
    out = tmp_path / "run.json"
    done = run(
        ["eval", str(suite), "--model", "replay", "-k", "2", "--jobs", "2", "--json", str(out)],
        cwd=tmp_path,
        env=environment(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["tasks"][0]["passed"] == 2
    assert tree(suite) == before
    assert not list(tmp_path.glob("agent-ls-eval-*"))


def test_a_suite_that_cannot_be_read_is_a_usage_error(tmp_path: Path) -> None:
    missing = run(["eval", str(tmp_path / "nowhere"), "--model", "replay"], cwd=tmp_path)
    assert missing.returncode == 2
    assert "is not a directory" in missing.stderr
    suite = tmp_path / "suite"
    make_task(suite, "bad", files={}, check="true", steps=None)
    (suite / "bad" / "task.toml").write_text("prompt = 'x'\nchek = 'true'\n")
    bad = run(["eval", str(suite), "--model", "replay"], cwd=tmp_path)
    assert bad.returncode == 2
    assert "task bad: task.toml: check: Field required" in bad.stderr


def test_a_model_that_cannot_be_used_stops_the_run(tmp_path: Path) -> None:
    suite = small_suite(tmp_path)
    done = run(["eval", str(suite), "--model", "nowhere/x"], cwd=tmp_path)
    assert done.returncode == 2
    assert "agent-ls: eval: the model cannot be used: --model: unknown provider 'nowhere'" in done.stderr
    assert done.stdout == ""


def test_attempts_run_as_ray_tasks_with_the_same_report(tmp_path: Path) -> None:
    """``--ray local`` starts a Ray instance on this machine (the optional extra ``agent-ls[ray]``; skipped
    without it): the same pass@k, reasons and isolation as attempts run in-process."""
    pytest.importorskip("ray")
    suite = small_suite(tmp_path)
    before = tree(suite)
    out = tmp_path / "run.json"
    short = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    done = run(
        ["eval", str(suite), "--model", "replay", "--ray", "local", "-k", "2", "--json", str(out)],
        cwd=tmp_path,
        # Ray's sockets live under RAY_TMPDIR: a short path (AF_UNIX paths stop at 107 bytes).
        env=environment(tmp_path, RAY_AUTH_MODE="disabled", RAY_TMPDIR=str(short)),
        timeout=600,
    )
    shutil.rmtree(short, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    tasks = {task["name"]: task for task in report["tasks"]}
    assert (tasks["right"]["passed"], tasks["right"]["pass@k"]) == (2, 1.0)
    assert tasks["wrong"]["reason"] == "check exited 1"
    assert tasks["unscripted"]["reason"] == "no solution.json for --model replay"
    assert [len(task["attempts"]) for task in report["tasks"]] == [2, 2, 2]
    assert tree(suite) == before
    assert not list(tmp_path.glob("agent-ls-eval-*"))


def test_ray_without_the_extra_says_how_to_get_it(tmp_path: Path) -> None:
    if importlib.util.find_spec("ray") is not None:
        pytest.skip("Ray is installed here")
    done = run(["eval", str(small_suite(tmp_path)), "--model", "replay", "--ray", "local"], cwd=tmp_path)
    assert done.returncode == 2
    assert "--ray needs Ray: pip install 'agent-ls[ray]'" in done.stderr
