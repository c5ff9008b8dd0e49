"""The editor side of ``bench_scale.py``: a real ``agent-ls serve`` over stdio, a pygls client that keeps
asking for hover and code actions, and the server's memory during a grep.

Order of one measurement (each run's model is a ``replay:`` script, docs/replay-format.md):

1. start the server on the tree, open one small source file, send hover/codeAction requests every
   ``PING_INTERVAL_S`` (open loop: a request does not wait for the previous one, so a blocked event
   loop shows as the latency of every request sent while it was blocked);
2. a warm-up run (a one-line answer) so the server's imports are done;
3. ``idle``: one second of requests with nothing else going on (the baseline); then the server's RSS, its
   peak reset (``/proc/<pid>/clear_refs``), a run whose one tool call is a grep of the whole tree,
   and the new peak (``VmHWM``) once the run has ended and the server answers again: the growth a
   grep causes;
4. runs that write the 10,000-line file with 1,000 spread changes (``write_file``), from ``agent.run``
   to ``agent/runEnded``; after each run (and the grep run) its end: until the server answers a
   command again, at least ``SETTLE_S``, so the cleanup a run leaves behind is charged to the run that
   left it; ``agent.proposal`` then asks for that proposal;
   ``agent.applyProposal`` applies it (the client writes the edit to disk in a worker thread, as an
   editor would off its UI loop).

Latencies are grouped by the phase in which the request was sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pygls.lsp.client import LanguageClient

from agent_ls.demo.edit_applier import EditorFiles

PING_INTERVAL_S = 0.01
SETTLE_S = 1.0
GREP_RUN = "a run that greps the whole tree"
WRITE_RUN = "a run proposing the 10k-line change (write_file)"
RUN_END = f"then its end (until the server answers again, ≥ {SETTLE_S:.0f} s)"


@dataclass
class EditorResult:
    """Latencies in seconds per phase (in order), and the server's RSS before and its growth, in MB."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    rss_before_mb: float = 0.0
    grep_growth_mb: float | None = None
    grep_output: str = ""


def _status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def _reset_peak(pid: int) -> bool:
    """Reset the process's ``VmHWM`` to its current RSS (proc(5) ``clear_refs``, value 5)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _script(folder: Path, name: str, steps: list[dict[str, Any]]) -> str:
    path = folder / f"{name}.json"
    path.write_text(json.dumps(steps))
    return f"replay:{path}"


class _Editor:
    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root, self.env = root, env
        self.client = LanguageClient("bench-scale", "1")
        self.files = EditorFiles()
        self.phase = "warm-up"
        self.result = EditorResult()
        self.ended: dict[str, asyncio.Event] = {}
        self.outputs: list[str] = []
        self._pinging: set[asyncio.Task[None]] = set()
        client = self.client

        @client.feature("agent/runEnded")
        def _ended(params: Any) -> None:
            sid = params["sessionId"] if isinstance(params, dict) else params.sessionId
            self.ended.setdefault(sid, asyncio.Event()).set()

        @client.feature("agent/event")
        def _event(params: Any) -> None:
            get = params.get if isinstance(params, dict) else lambda name: getattr(params, name, None)
            if get("kind") == "toolResult":
                self.outputs.append(str(get("text")))

        @client.feature(t.WINDOW_LOG_MESSAGE)
        def _log(params: Any) -> None:
            return None

        @client.feature(t.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def _progress(params: Any) -> None:
            return None

        @client.feature(t.WORKSPACE_APPLY_EDIT)
        async def _apply(params: t.ApplyWorkspaceEditParams) -> t.ApplyWorkspaceEditResult:
            # Unstructured in the worker thread too: the client's own loop, busy with 1,000 edits, would
            # delay the answers it reads and count that as the server's latency.
            edit = client.protocol._converter.unstructure
            outcome = await asyncio.to_thread(lambda: self.files.apply(edit(params.edit)))
            return t.ApplyWorkspaceEditResult(applied=outcome.applied, failure_reason=outcome.failure_reason)

    async def start(self, open_rel: str) -> None:
        await self.client.start_io(sys.executable, "-m", "agent_ls", "serve", env=self.env)
        await self.client.initialize_async(
            t.InitializeParams(
                capabilities=t.ClientCapabilities(
                    workspace=t.WorkspaceClientCapabilities(
                        apply_edit=True,
                        workspace_edit=t.WorkspaceEditClientCapabilities(
                            document_changes=True, resource_operations=[t.ResourceOperationKind.Create]
                        ),
                    )
                ),
                root_uri=self.root.as_uri(),
                workspace_folders=[t.WorkspaceFolder(uri=self.root.as_uri(), name="ws")],
                initialization_options={"agentLs": {}},
            )
        )
        self.client.initialized(t.InitializedParams())
        self.uri = (self.root / open_rel).as_uri()
        text = (self.root / open_rel).read_text()
        self.client.text_document_did_open(
            t.DidOpenTextDocumentParams(t.TextDocumentItem(self.uri, "python", 1, text))
        )

    @property
    def pid(self) -> int:
        server = self.client._server
        assert server is not None
        return server.pid

    async def ping_forever(self) -> None:
        doc = t.TextDocumentIdentifier(self.uri)
        where = t.Range(t.Position(1, 0), t.Position(3, 0))
        count = 0
        while True:
            phase = self.phase
            request: Awaitable[object]
            if count % 2:
                request = self.client.text_document_code_action_async(
                    t.CodeActionParams(doc, where, t.CodeActionContext(diagnostics=[]))
                )
            else:
                request = self.client.text_document_hover_async(t.HoverParams(doc, t.Position(1, 0)))
            task = asyncio.create_task(self._timed(phase, request))
            self._pinging.add(task)
            task.add_done_callback(self._pinging.discard)
            count += 1
            await asyncio.sleep(PING_INTERVAL_S)

    async def _timed(self, phase: str, request: Awaitable[object]) -> None:
        started = time.perf_counter()
        await request
        self.result.latencies.setdefault(phase, []).append(time.perf_counter() - started)

    async def command(self, name: str, argument: dict[str, Any]) -> Any:
        return await self.client.workspace_execute_command_async(
            t.ExecuteCommandParams(command=name, arguments=[argument])
        )

    async def run(self, model: str, task: str) -> str:
        sid = (await self.command("agent.run", {"task": task, "model": model}))["sessionId"]
        await asyncio.wait_for(self.ended.setdefault(sid, asyncio.Event()).wait(), timeout=900)
        return str(sid)

    async def settle(self, phase: str) -> None:
        """``phase`` lasts until the server answers a command again, and at least ``SETTLE_S``: what a
        run's end leaves running (its cleanup) is measured there, not in the next phase."""
        self.phase = phase
        started = time.perf_counter()
        await self.command("agent.listSkills", {})
        await asyncio.sleep(max(0.0, SETTLE_S - (time.perf_counter() - started)))
        self.phase = "between"

    async def stop(self) -> None:
        if self._pinging:
            await asyncio.wait(self._pinging, timeout=30)
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


async def measure_editor(
    root: Path,
    scripts: Path,
    env: dict[str, str],
    *,
    big_rel: str,
    new_text: str,
    open_rel: str,
    needle: str,
    runs: int,
) -> EditorResult:
    """Run the phases of the module docstring on ``root``; the big file is restored afterwards."""
    base = (root / big_rel).read_text()
    editor = _Editor(root, env)
    await editor.start(open_rel)
    pinger = asyncio.create_task(editor.ping_forever())
    try:
        editor.phase = "warm-up"
        await editor.run(_script(scripts, "hello", [{"content": "hello"}]), "say hello")
        await asyncio.sleep(0.5)
        editor.phase = "idle"
        await asyncio.sleep(1.0)
        editor.phase = "between"
        pid = editor.pid
        editor.result.rss_before_mb = _status_kb(pid, "VmRSS") / 1024
        if not _reset_peak(pid):
            raise SystemExit("cannot reset the server's peak RSS (/proc/<pid>/clear_refs)")
        editor.phase = GREP_RUN
        grep: list[dict[str, Any]] = [
            {"tool_calls": [{"name": "grep", "arguments": {"pattern": needle}}]},
            {"content": "found"},
        ]
        await editor.run(_script(scripts, "grep", grep), f"find {needle}")
        await editor.settle(f"{GREP_RUN}, {RUN_END}")
        editor.result.grep_growth_mb = _status_kb(pid, "VmHWM") / 1024 - editor.result.rss_before_mb
        editor.result.grep_output = editor.outputs[-1] if editor.outputs else ""
        write: list[dict[str, Any]] = [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": big_rel, "content": new_text}}]},
            {"content": "Reformatted the table."},
        ]
        model = _script(scripts, "write", write)
        for _ in range(runs):
            editor.phase = WRITE_RUN
            sid = await editor.run(model, "reformat the table")
            await editor.settle(f"{WRITE_RUN}, {RUN_END}")
        for _ in range(runs * 5):  # a short phase: asked more often, for more samples
            editor.phase = "agent.proposal"
            files = (await editor.command("agent.proposal", {"sessionId": sid}))["files"]
            editor.phase = "between"
            if [f["path"] for f in files] != [big_rel]:
                raise SystemExit(f"agent.proposal answered {files}")
            await asyncio.sleep(0.2)
        editor.phase = "agent.applyProposal"
        applied = await editor.command("agent.applyProposal", {"sessionId": sid})
        editor.phase = "after"
        if not applied["applied"] or (root / big_rel).read_text() != new_text:
            raise SystemExit(f"agent.applyProposal answered {applied}")
        await asyncio.sleep(0.2)
    finally:
        pinger.cancel()
        await editor.stop()
        (root / big_rel).write_text(base)
    return editor.result


def server_env(config_dir: Path, home: Path) -> dict[str, str]:
    """The environment of the server: ours without agent-ls or provider settings, an empty user config
    directory and home (the developer's own config and skills never leak in)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_", "ANTHROPIC_"))}
    return {**env, "AGENT_LS_CONFIG_DIR": str(config_dir), "HOME": str(home)}
