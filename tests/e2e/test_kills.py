"""The Kills suite (issue 12): ``agent-ls run --apply`` and ``agent-ls serve`` are SIGKILLed at random points,
mid-stream (a model reply still streaming), mid-tool (a shell command and its background child running,
with and without the sandbox) and mid-apply (a 400-file apply). After each kill: the user's files are
untouched or fully applied (a kill mid-apply leaves every file whole, and the next run completes or undoes
the apply), no child process survives, and the next start removes the dead run's shadow copy.

Sized for CI: a few rounds per scenario. ``AGENT_LS_FUZZ_LONG=1`` runs the deep version (the rounds in
``ROUNDS``); ``AGENT_LS_FUZZ_SEED`` replays a run's kill points (every failure names its seed). Each test
prints what the kills hit (run with ``-s`` to see it); docs/reliability.md has the figures of the long run.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_ls.workspace.apply_journal import JOURNAL_NAME
from tests.support.agent_cli import environment, script, shadow_dirs, start, tree, wait_for_line
from tests.support.model_server import FakeModelServer, ServerStep
from tests.support.processes import command_lines, require_sandbox
from tests.support.wire_formats import render_chat

LONG = os.environ.get("AGENT_LS_FUZZ_LONG") == "1"
SEED = int(os.environ.get("AGENT_LS_FUZZ_SEED") or random.randrange(1 << 31))
ROUNDS = (
    {"apply": 100, "tool": 15, "stream": 15, "serve": 10}
    if LONG
    else {"apply": 3, "tool": 1, "stream": 1, "serve": 1}
)
FILES = 400  # the apply: half replace files, half are new, in ten new folders


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> random.Random:
    return random.Random(f"{SEED}:{request.node.name}")


def _seeded(message: str) -> str:
    return f"{message} (replay with AGENT_LS_FUZZ_SEED={SEED})"


def _marker(rng: random.Random) -> str:
    return f"{rng.randrange(10**6, 10**7)}.{os.getpid()}"


def _sleeping(marker: str) -> list[int]:
    """The ``sleep MARKER`` processes (not a shell whose command line mentions them)."""
    return [pid for pid, line in command_lines().items() if line.startswith(f"sleep {marker}")]


def _wait(condition: Callable[[], bool], timeout_s: float = 15.0, poll_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(poll_s)
    return condition()


def _config(tmp_path: Path, *, sandboxed: bool) -> Path:
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    text = '[permissions]\nallow = ["bash: sleep *", "bash: true"]\n'
    (config / "agent-ls.toml").write_text(text + ("" if sandboxed else "[sandbox]\nenabled = false\n"))
    return config


def _places(tmp_path: Path, *, sandboxed: bool) -> tuple[Path, Path, Path]:
    """(the user config, the run's TMPDIR, a workspace holding the user's ``a.txt``)."""
    config = _config(tmp_path, sandboxed=sandboxed)
    temp = tmp_path / "tmp"
    temp.mkdir()
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("mine\n")
    return config, temp, root


def _streamed(words: int = 400, chunk_delay_s: float = 0.02) -> dict[str, Any]:
    """A model reply streamed as Chat Completions events, a few seconds long."""
    _, chunks = render_chat(ServerStep(content="word " * words), 1, "test-model", 100, stream=True)
    return {"chunks": chunks, "chunk_delay_s": chunk_delay_s}


def _sweep_by_next_start(tmp_path: Path, temp: Path, config: Path) -> None:
    """A later run (one command, so it makes a shadow copy) removes the dead run's copy, and its own."""
    root = tmp_path / "later"
    root.mkdir(exist_ok=True)
    steps = [{"tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]}, {"content": "ok"}]
    later = start(
        ["run", "t", "--model", script(tmp_path / "later.json", steps), "--yes"],
        cwd=root,
        env=environment(temp, config),
    )
    _, rest = later.communicate(timeout=120)
    assert later.returncode == 0, rest
    assert shadow_dirs(temp) == [], _seeded("a dead run's shadow copy was left")


# -- agent-ls run --------------------------------------------------------------------------------------


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "unsandboxed"])
def test_a_run_killed_mid_tool_leaves_no_process_and_the_files_untouched(
    tmp_path: Path, rng: random.Random, sandboxed: bool
) -> None:
    if sandboxed:
        require_sandbox()
    config, temp, root = _places(tmp_path, sandboxed=sandboxed)
    for _ in range(ROUNDS["tool"]):
        marker = _marker(rng)
        steps = [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "agent\n"}}]},
            {"tool_calls": [{"name": "bash", "arguments": {"command": f"sleep {marker} & sleep {marker}"}}]},
            {"content": "done"},
        ]
        run = start(
            ["run", "t", "--model", script(tmp_path / "tool.json", steps), "--apply", "--yes"],
            cwd=root,
            env=environment(temp, config),
        )
        try:
            wait_for_line(run, "→ bash")
            assert _wait(lambda: len(_sleeping(marker)) == 2, 30), _seeded("the command never ran")  # noqa: B023
            time.sleep(rng.uniform(0, 1.0))
            run.send_signal(signal.SIGKILL)
            run.wait(timeout=30)
            assert _wait(lambda: not _sleeping(marker)), _seeded(f"survivors: {_sleeping(marker)}")  # noqa: B023
            assert tree(root) == {"a.txt": b"mine\n"}
        finally:
            run.kill()
            for pid in _sleeping(marker):
                os.kill(pid, signal.SIGKILL)
    _sweep_by_next_start(tmp_path, temp, config)


def test_a_run_killed_mid_stream_leaves_the_files_untouched(tmp_path: Path, rng: random.Random) -> None:
    config, temp, root = _places(tmp_path, sandboxed=False)
    for _ in range(ROUNDS["stream"]):
        steps = [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "agent\n"}}]},
            {"tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]},
            _streamed(),
            {"content": "done"},
        ]
        with FakeModelServer(steps) as server:
            run = start(
                ["run", "t", "--model", "openai/test-model", "--apply", "--yes"],
                cwd=root,
                env=environment(temp, config, AGENT_LS_BASE_URL=server.base_url, AGENT_LS_API_KEY="sk-kills"),
            )
            try:
                assert server.wait_for_requests(3, 60), _seeded("the streamed turn never started")
                time.sleep(rng.uniform(0, 2.0))  # the stream lasts about 3 s
                run.send_signal(signal.SIGKILL)
                run.wait(timeout=30)
            finally:
                run.kill()
        assert tree(root) == {"a.txt": b"mine\n"}
        assert len(shadow_dirs(temp)) == 1  # SIGKILL: the run could not remove its copy
        _sweep_by_next_start(tmp_path, temp, config)


def _apply_workspace(template: Path) -> tuple[dict[str, bytes], dict[str, bytes], list[dict[str, Any]]]:
    """The files before and after the 400-file apply, and the script that proposes it."""
    old = {f"src/f{i}.txt": f"old {i}\n".encode() for i in range(FILES // 2)}
    new = {path: f"new {i}\n".encode() * 40 for i, path in enumerate(old)}
    new |= {f"new/d{i % 10}/n{i}.txt": f"n {i}\n".encode() for i in range(FILES // 2)}
    for path, data in old.items():
        (template / path).parent.mkdir(parents=True, exist_ok=True)
        (template / path).write_bytes(data)
    calls = [
        {"name": "write_file", "arguments": {"path": path, "content": data.decode()}}
        for path, data in new.items()
    ]
    return old, new, [{"tool_calls": calls}, {"content": "done"}]


def _apply_run(root: Path, model: str, temp: Path, config: Path, output: Path) -> subprocess.Popen[str]:
    with output.open("wb") as stdout:  # the diff of 400 files must not fill a pipe nobody reads
        return start(
            ["run", "t", "--model", model, "--apply"], cwd=root, env=environment(temp, config), stdout=stdout
        )


def _journal_state(journal: Path) -> bytes:
    """The first line of the apply's journal (``staged``, ``commit``), or ``b""`` when there is none."""
    try:
        with journal.open("rb") as handle:
            return handle.read(7)
    except OSError:
        return b""


def _journal_phases(journal: Path) -> tuple[float, float]:
    """Seconds from the journal's appearance to its commit point, and from there to its removal."""
    assert _wait(lambda: os.path.lexists(journal), 60), "the apply never started"
    started = time.monotonic()
    while _journal_state(journal) == b"staged\n":
        time.sleep(0.0002)
    committed = time.monotonic()
    while os.path.lexists(journal):
        time.sleep(0.0002)
    return committed - started, time.monotonic() - committed


def _drain(process: subprocess.Popen[str]) -> Iterator[str]:
    assert process.stderr is not None
    yield from process.stderr


def test_a_run_killed_mid_apply_leaves_whole_files_and_the_next_run_completes_or_undoes_it(
    tmp_path: Path, rng: random.Random
) -> None:
    config = _config(tmp_path, sandboxed=True)
    temp = tmp_path / "tmp"
    temp.mkdir()
    template = tmp_path / "template"
    template.mkdir()
    old, new, steps = _apply_workspace(template)
    model = script(tmp_path / "apply.json", steps)
    nothing = script(tmp_path / "nothing.json", [{"content": "nothing to do"}])

    # One run to the end: it applies everything, and times the apply: how long its journal lives.
    calibration = tmp_path / "calibration"
    shutil.copytree(template, calibration)
    run = _apply_run(calibration, model, temp, config, tmp_path / "out")
    wait_for_line(run, "agent-ls: usage:")
    staging_s, renaming_s = _journal_phases(calibration / JOURNAL_NAME)
    rest = "".join(_drain(run))
    run.wait(timeout=120)
    assert run.returncode == 0 and tree(calibration) == new, rest

    seen: Counter[str] = Counter()
    for round_number in range(ROUNDS["apply"]):
        root = tmp_path / f"ws{round_number}"
        shutil.copytree(template, root)
        run = _apply_run(root, model, temp, config, tmp_path / "out")
        wait_for_line(run, "agent-ls: usage:")
        # A quarter of the kills anywhere from the line before the apply on; a quarter while it stages
        # (its journal exists); half after its commit point, while it renames.
        phase = round_number % 4
        if phase == 1:
            _wait(lambda: os.path.lexists(root / JOURNAL_NAME), 30, 0.0002)  # noqa: B023
        elif phase > 1:
            _wait(lambda: _journal_state(root / JOURNAL_NAME) == b"commit\n", 30, 0.0002)  # noqa: B023
        window_s = {0: staging_s + renaming_s + 0.2, 1: staging_s}.get(phase, renaming_s)
        threading.Event().wait(rng.uniform(0, window_s * 1.2))
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=30)
        files = {k: v for k, v in tree(root).items() if not Path(k).name.startswith(".agent-ls")}
        broken = [path for path, data in files.items() if data not in (old.get(path), new.get(path))]
        assert not broken, _seeded(f"round {round_number}: files neither old nor new: {broken[:5]}")
        applied = sum(files.get(path) == data for path, data in new.items())
        staged = any(Path(k).name.startswith(".agent-ls") for k in tree(root))
        seen[
            "complete" if applied == FILES else "part-way" if applied else "staged" if staged else "untouched"
        ] += 1
        later = start(["run", "t", "--model", nothing], cwd=root, env=environment(temp, config))
        _, said = later.communicate(timeout=120)
        assert later.returncode == 0, said
        after = tree(root)
        assert after in (old, new), _seeded(f"round {round_number}: after the next run, {said}")
        assert not list(root.rglob(".agent-ls*")), _seeded(f"round {round_number}: leftovers")
        shutil.rmtree(root)
    phases = f"staging {staging_s * 1000:.0f} ms, renaming {renaming_s * 1000:.0f} ms"
    print(f"\nkills mid-apply (seed {SEED}; {phases}): {dict(seen)}")


# -- agent-ls serve ------------------------------------------------------------------------------------


class _Serve:
    """``agent-ls serve`` over stdio with the smallest client: it frames messages, answers the server's
    requests with null, and keeps every message it receives."""

    def __init__(self, root: Path, env: dict[str, str], base_url: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agent_ls", "serve"],
            cwd=root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.received: list[dict[str, Any]] = []
        self._ids = iter(range(1, 1 << 30))
        threading.Thread(target=self._read, daemon=True).start()
        settings = {"model": "openai/test-model", "baseUrl": base_url}
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
                "capabilities": {"window": {"workDoneProgress": True}},
                "initializationOptions": {"agentLs": settings},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()

    def request(self, method: str, params: Any) -> int:
        number = next(self._ids)
        self.send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        return number

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while (line := stream.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            message = json.loads(stream.read(length))
            self.received.append(message)
            if "id" in message and "method" in message:
                try:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                except OSError:
                    return


@pytest.mark.parametrize("where", ["mid-tool-unsandboxed", "mid-tool-sandboxed", "mid-stream"])
def test_a_server_killed_mid_run_leaves_no_process_and_the_files_untouched(
    tmp_path: Path, rng: random.Random, where: str
) -> None:
    sandboxed = where == "mid-tool-sandboxed"
    if sandboxed:
        require_sandbox()
    config, temp, root = _places(tmp_path, sandboxed=sandboxed)
    for _ in range(ROUNDS["serve"]):
        marker = _marker(rng)
        steps: list[dict[str, Any]] = [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "agent\n"}}]},
            {"tool_calls": [{"name": "bash", "arguments": {"command": f"sleep {marker} & sleep {marker}"}}]}
            if where != "mid-stream"
            else {"tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]},
            _streamed(),
            {"content": "done"},
        ]
        with FakeModelServer(steps) as model:
            env = environment(temp, config, AGENT_LS_API_KEY="sk-kills")
            serve = _Serve(root, env, model.base_url)
            try:
                serve.request(
                    "workspace/executeCommand", {"command": "agent.run", "arguments": [{"task": "go"}]}
                )
                if where == "mid-stream":
                    assert model.wait_for_requests(3, 60), _seeded("the streamed turn never started")
                    time.sleep(rng.uniform(0, 2.0))
                else:
                    assert _wait(lambda: len(_sleeping(marker)) == 2, 60), _seeded("the command never ran")  # noqa: B023
                    time.sleep(rng.uniform(0, 1.0))
                serve.process.send_signal(signal.SIGKILL)
                serve.process.wait(timeout=30)
                assert _wait(lambda: not _sleeping(marker)), _seeded(f"survivors: {_sleeping(marker)}")  # noqa: B023
                assert tree(root) == {"a.txt": b"mine\n"}
            finally:
                serve.process.kill()
                for pid in _sleeping(marker):
                    os.kill(pid, signal.SIGKILL)
        _sweep_by_next_start(tmp_path, temp, config)
