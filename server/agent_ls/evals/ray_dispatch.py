"""``agent-ls eval --ray ADDRESS``: every attempt as a Ray task (Ray from PyPI, the optional extra
``agent-ls[ray]``), for suites that outgrow one machine, with the same isolation and the same report.

The driver packs each task's folder (``task.toml``, ``repo/``, ``solution.json``) into a tar archive put
once in Ray's object store; a worker unpacks it into its own temporary directory, runs
``attempt.run_attempt`` there (a copy of that copy, as on one machine) and returns the
``AttemptResult``. So workers need agent-ls installed (the same version) but not the suite's files.
``ADDRESS`` is what ``ray.init`` takes (``auto``, ``ray://head:10001``), or ``local`` to start a Ray
instance on this machine for the run (stopped at its end). Ray schedules each attempt with one CPU;
``--jobs``, when given, also bounds how many are submitted at once.

API keys are never sent: a worker's model reads its key from the worker's own environment (the
cluster's), as ``agent-ls run`` would there.
"""

from __future__ import annotations

import asyncio
import importlib
import io
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_ls.evals.attempt import AttemptResult, ModelUnusable, run_attempt
from agent_ls.evals.suite import EvalTask, load_task

LOCAL = "local"
"""``--ray local``: start a Ray instance on this machine for the run."""


class RayUnavailable(Exception):
    """Ray is not installed, or the cluster cannot be reached. One line."""


def pack(task: EvalTask) -> bytes:
    """The task's folder (``task.repo``'s parent) as an uncompressed tar archive, paths under its name."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.add(task.repo.parent, arcname=task.name)
    return buffer.getvalue()


def attempt_packed(packed: bytes, name: str, model: str | None, yes: bool) -> AttemptResult:
    """One attempt of the packed task ``name`` (``pack``), in a temporary directory removed afterwards.
    What a Ray worker runs.

    Raises:
        ModelUnusable: the model cannot be opened on this worker.
    """
    scratch = Path(tempfile.mkdtemp(prefix="agent-ls-eval-ray-"))
    try:
        with tarfile.open(fileobj=io.BytesIO(packed)) as archive:
            archive.extractall(scratch, filter="data")  # no absolute paths, no links out
        return asyncio.run(run_attempt(load_task(scratch / name), model, yes=yes))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_on_ray(
    tasks: list[EvalTask],
    model: str | None,
    *,
    k: int,
    address: str,
    jobs: int | None,
    yes: bool,
    finished: Callable[[EvalTask, int, AttemptResult], None],
) -> list[list[AttemptResult]]:
    """``k`` attempts at each of ``tasks`` as Ray tasks on ``address``; per task, its attempts in order.
    ``finished`` is called on the driver as each attempt ends (task, 1-based attempt, result).

    Raises:
        RayUnavailable: Ray is not installed or ``ray.init`` failed.
        ModelUnusable: the model cannot be opened on a worker (the other attempts are cancelled).
    """
    try:
        ray: Any = importlib.import_module("ray")  # the optional extra: imported only for --ray
    except ImportError as exc:
        raise RayUnavailable("--ray needs Ray: pip install 'agent-ls[ray]'") from exc
    try:
        ray.init(
            address=None if address == LOCAL else address,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    except Exception as exc:  # ConnectionError, RuntimeError, ValueError: Ray's own
        raise RayUnavailable(f"--ray {address}: {' '.join(str(exc).split())}") from exc
    try:
        return _dispatch(ray, tasks, model, k=k, jobs=jobs, yes=yes, finished=finished)
    finally:
        ray.shutdown()


def _dispatch(
    ray: Any,
    tasks: list[EvalTask],
    model: str | None,
    *,
    k: int,
    jobs: int | None,
    yes: bool,
    finished: Callable[[EvalTask, int, AttemptResult], None],
) -> list[list[AttemptResult]]:
    remote = ray.remote(num_cpus=1, max_retries=0)(attempt_packed)
    packed = [ray.put(pack(task)) for task in tasks]
    todo = [(t, n) for t in range(len(tasks)) for n in range(k)]
    results: list[list[AttemptResult | None]] = [[None] * k for _ in tasks]
    running: dict[Any, tuple[int, int]] = {}
    limit = jobs or len(todo)
    while todo or running:
        while todo and len(running) < limit:
            t, n = todo.pop(0)
            running[remote.remote(packed[t], tasks[t].name, model, yes)] = (t, n)
        (ready,), _ = ray.wait(list(running), num_returns=1)
        t, n = running.pop(ready)
        try:
            result: AttemptResult = ray.get(ready)
        except ray.exceptions.RayTaskError as exc:
            for ref in running:
                ray.cancel(ref, force=True)
            if isinstance(exc.cause, ModelUnusable):
                raise ModelUnusable(str(exc.cause)) from None
            raise
        results[t][n] = result
        finished(tasks[t], n + 1, result)
    done = [[r for r in attempts if r is not None] for attempts in results]
    assert all(len(attempts) == k for attempts in done), "an attempt has no result"
    return done
