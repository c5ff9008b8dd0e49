"""The secrets sweep (issue 12): fake credentials planted for the whole test run, looked for at its end.

At session start (``tests/conftest.py``) ``PLANTED`` goes into the environment under names real users
have, so every ``agent-ls serve``, ``agent-ls run`` and child process the suite starts inherits them, as
it would inherit a user's own tokens. Every ``FakeModelServer`` is searched when it stops (and those
still running at the end): no recorded request body or header of the whole suite may hold one. Tests
that capture more (CLI output, editor log messages, a command's environment) hand the text to
``record``. At the end every session file the suite wrote under pytest's base temporary folder is
searched too (``scan_trajectories``). Any hit fails the run at its end, naming where it was found.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Any

PLANTED = {
    "GITHUB_TOKEN": "ghp_sweepPlantedGithubToken0000000001",
    "AWS_SECRET_ACCESS_KEY": "sweepPlantedAwsSecretAccessKey0000000002",
    "NPM_TOKEN": "npm_sweepPlantedNpmToken0000000003",
    "DATABASE_PASSWORD": "sweep-planted-database-password-0004",
    "SERVICE_CREDENTIAL": "sweep-planted-service-credential-0005",
}
"""Variable name → value; the values are unique enough that a hit is never a coincidence."""

hits: list[str] = []
_servers: weakref.WeakSet[Any] = weakref.WeakSet()


def find(text: str) -> list[str]:
    """The names of the planted values that occur in ``text``."""
    return [name for name, value in PLANTED.items() if value in text]


def record(where: str, texts: Iterable[str]) -> None:
    """Search ``texts`` (captured by a test) and remember any hit, labelled ``where``."""
    for text in texts:
        for name in find(text):
            hits.append(f"{name} in {where}")


def register(server: Any) -> None:
    """Remember a fake model server, to be searched when it stops or at the end of the run."""
    _servers.add(server)


def scan_server(server: Any, where: str = "a request to the fake model server") -> None:
    """Search every request body and header ``server`` recorded (each server once)."""
    if getattr(server, "_swept", False):
        return
    server._swept = True
    record(where, (json.dumps(body) if not isinstance(body, str) else body for body in server.requests))
    record(where + " (headers)", (json.dumps(headers) for headers in server.request_headers))


def scan_trajectories(root: Path) -> None:
    """Search every session file under ``root`` (``**/sessions/<folder>/<id>.jsonl`` and the kept
    outputs beside it, docs/sessions.md): the trajectories of every run of the suite (issue 19)."""
    for path in sorted(root.glob("**/sessions/*/*.jsonl")) + sorted(root.glob("**/sessions/*/*.outputs/*")):
        try:
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        record(f"the session file {path}", [text])


def finish() -> list[str]:
    """Search the servers still alive and return every hit of the run."""
    for server in list(_servers):
        scan_server(server)
    return hits
