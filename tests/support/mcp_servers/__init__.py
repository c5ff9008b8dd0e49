"""MCP servers for the e2e tests of issue 18 (docs/mcp.md): ``.mcp.json`` entries for the probe server
(``probe.py``) and for the PyPI servers ``mcp-server-time`` and ``mcp-server-git``, and ``HttpProbe``, the
probe served over streamable HTTP on 127.0.0.1 in a subprocess of the test.

Every stdio entry runs ``sys.executable`` (this venv's interpreter, which has the servers installed) with
an absolute path or ``-m``, so it works whatever working directory agent-ls gives the server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

PROBE = Path(__file__).with_name("probe.py")


def probe_entry(
    marker: Path | None = None,
    name: str = "probe",
    exit_at_start: str | None = None,
    linger: bool = False,
    hang_at_start: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """A stdio entry for the probe (``probe.py``), writing its starts and calls to ``marker``; with
    ``exit_at_start``, the probe prints that to stderr and exits 1 before answering; with ``linger`` it
    outlives its stdin until a signal; with ``hang_at_start`` it never answers and only a signal stops it;
    ``extra`` is merged into the entry (``env``, ``cwd``, ``disabled``)."""
    args = [str(PROBE), "--name", name]
    if marker is not None:
        args += ["--marker", str(marker)]
    if exit_at_start is not None:
        args += ["--exit-at-start", exit_at_start]
    if linger:
        args.append("--linger")
    if hang_at_start:
        args.append("--hang-at-start")
    return {"command": sys.executable, "args": args, **extra}


def time_entry() -> dict[str, Any]:
    """``mcp-server-time`` from PyPI over stdio, in UTC."""
    return {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def git_entry(repository: Path) -> dict[str, Any]:
    """``mcp-server-git`` from PyPI over stdio, on ``repository``."""
    return {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", str(repository)]}


def write_servers(path: Path, servers: dict[str, dict[str, Any]]) -> Path:
    """Write ``{"mcpServers": servers}`` (Claude Code's ``.mcp.json`` format) at ``path``; returns it."""
    path.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")
    return path


def _lines(marker: Path) -> list[str]:
    return marker.read_text(encoding="utf-8").splitlines() if marker.exists() else []


def starts(marker: Path) -> int:
    """How many times a probe writing ``marker`` has started (0: never, the file is absent)."""
    return sum(line.startswith("start ") for line in _lines(marker))


def calls(marker: Path) -> list[str]:
    """The tools called on the probes writing ``marker``, in order (each noted as its call began)."""
    return [line.removeprefix("call ") for line in _lines(marker) if line.startswith("call ")]


class HttpProbe:
    """The probe server over streamable HTTP on 127.0.0.1, in a subprocess, for the life of a ``with``.

    ``url`` (``http://127.0.0.1:<port>/mcp``) answers once ``__enter__`` returns: the child binds its port
    before printing it, and ``__enter__`` then waits for an HTTP answer (any status). ``marker`` as in
    ``probe_entry``. ``__exit__`` stops the child and waits for it.

    Raises:
        RuntimeError: the child ended or printed no port within ``timeout_s`` seconds.
    """

    def __init__(self, marker: Path | None = None, name: str = "probe-http", timeout_s: float = 30) -> None:
        self.marker = marker
        self.name = name
        self.timeout_s = timeout_s
        self.url = ""
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> HttpProbe:
        args = [sys.executable, str(PROBE), "--http", "--name", self.name]
        if self.marker is not None:
            args += ["--marker", str(self.marker)]
        self._process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        try:
            assert self._process.stdout is not None
            line = self._process.stdout.readline()  # "port N", or "" when the child ended
            if not line.startswith("port "):
                raise RuntimeError(f"the HTTP probe did not start: {line!r}")
            self.url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"
            self._wait_answering()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_answering(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                httpx.get(self.url, timeout=5)
                return
            except httpx.TransportError:
                if time.monotonic() > deadline or self._process is None or self._process.poll() is not None:
                    raise RuntimeError(f"the HTTP probe at {self.url} does not answer") from None
                time.sleep(0.05)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
        self._process = None
