"""An evaluation suite on disk: one folder per task (docs/evals.md)::

    SUITE/
      fix-negative-price/
        task.toml        prompt, check, max_turns, budget_usd (optional), check_timeout_s (optional)
        repo/            the files the attempt starts from (copied, never changed)
        solution.json    optional: the replay script ``--model replay`` answers with (docs/replay-format.md)
        session.jsonl    optional, preferred to solution.json: a recorded session (``agent-ls run --record``)
                         that ``--model replay`` replays, checking each request against the recorded one

The format follows what an evaluation must state (the seeds' chapter on evaluation): the task and
the initial state of the repository, a success criterion checked by code, the maximum number of steps.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

TASK_FILE = "task.toml"
REPO_DIR = "repo"
SOLUTION_FILE = "solution.json"
SESSION_FILE = "session.jsonl"


class SuiteError(Exception):
    """The suite cannot be run: the folder is missing, holds no task, or a task is malformed. One line."""


class TaskSpec(BaseModel):
    """The fields of ``task.toml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: str = Field(min_length=1, description="the task as the user would type it")
    check: str = Field(
        min_length=1, description="shell command run in the task's copy; exit status 0 means success"
    )
    max_turns: int = Field(default=10, ge=1, le=1000, description="the run's turn limit")
    budget_usd: float | None = Field(default=None, gt=0, description="the run's cost limit in US dollars")
    check_timeout_s: float = Field(default=300, gt=0, description="seconds the check may take")


@dataclass(frozen=True)
class EvalTask:
    """One task of a suite: its folder name, what ``task.toml`` says, and its files.

    ``solution`` is the absolute path of ``session.jsonl`` when the task has one, else of
    ``solution.json``, or None when it has neither.
    """

    name: str
    spec: TaskSpec
    repo: Path
    solution: Path | None


def load_suite(folder: Path) -> list[EvalTask]:
    """The tasks of the suite in ``folder``, sorted by name. Files at the top and folders whose name
    starts with ``.`` or ``_`` are not tasks.

    Raises:
        SuiteError: ``folder`` is not a directory or holds no task; a task has no ``task.toml`` or
            ``repo/``, or its ``task.toml`` is not TOML or has a wrong or unknown field.
    """
    if not folder.is_dir():
        raise SuiteError(f"suite {folder} is not a directory")
    tasks = [
        load_task(child)
        for child in sorted(folder.iterdir())
        if child.is_dir() and not child.name.startswith((".", "_"))
    ]
    if not tasks:
        raise SuiteError(f"suite {folder} holds no task folder")
    return tasks


def load_task(folder: Path) -> EvalTask:
    """The task in ``folder`` (see ``load_suite``). Raises ``SuiteError``."""
    path = folder / TASK_FILE
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SuiteError(f"task {folder.name}: {TASK_FILE} cannot be read: {exc.strerror}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SuiteError(f"task {folder.name}: {TASK_FILE} is not TOML: {exc}") from exc
    try:
        spec = TaskSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        place = ".".join(str(part) for part in first["loc"]) or "the file"
        raise SuiteError(f"task {folder.name}: {TASK_FILE}: {place}: {first['msg']}") from exc
    repo = folder / REPO_DIR
    if not repo.is_dir():
        raise SuiteError(f"task {folder.name}: no {REPO_DIR}/ folder with the initial files")
    solution = folder / SESSION_FILE if (folder / SESSION_FILE).is_file() else folder / SOLUTION_FILE
    return EvalTask(
        name=folder.name,
        spec=spec,
        repo=repo.resolve(),
        solution=solution.resolve() if solution.is_file() else None,
    )
