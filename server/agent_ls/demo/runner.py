"""``agent-ls demo``: a whole editor session, played by a real LSP client against ``agent-ls serve``.

Order:
1. copy the bundled sample project (a bug and a failing test) to a temporary directory;
2. start ``agent-ls serve`` as a subprocess and initialize it like a capable editor would;
3. ``agent.run`` the task with the bundled replay script as the model (or ``--model``);
4. print the transcript (``window/logMessage``), permission questions and their answers, the end of
   the run, and the proposed diff (``agent.proposal``);
5. ``agent.applyProposal``: this client plays the editor and applies the WorkspaceEdit to disk;
6. run the sample's tests on disk to show they now pass.

Exit code 0 only when the run is done, the edit is applied and the tests pass.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pygls.lsp.client import LanguageClient

from agent_ls.demo.edit_applier import EditorFiles

TASK = "The tests in this project fail. Find the bug, fix it, and check that the tests pass."
CAPABILITIES = t.ClientCapabilities(
    workspace=t.WorkspaceClientCapabilities(
        apply_edit=True,
        workspace_edit=t.WorkspaceEditClientCapabilities(
            document_changes=True,
            resource_operations=[t.ResourceOperationKind.Create],
            change_annotation_support=t.ChangeAnnotationsSupportOptions(groups_on_label=True),
        ),
    ),
    window=t.WindowClientCapabilities(
        work_done_progress=True,
        show_message=t.ShowMessageRequestClientCapabilities(),
    ),
)


def _say(text: str) -> None:
    print(text, flush=True)


def _bundled(name: str) -> Path:
    return Path(str(resources.files("agent_ls.demo").joinpath(name)))


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


class DemoClient(LanguageClient):
    """An LSP client that plays a capable editor and prints what the user would see."""

    def __init__(self, root: Path, interactive: bool) -> None:
        super().__init__("agent-ls-demo", "1")
        self.root = root
        self.files = EditorFiles()
        self.interactive = interactive
        self.run_ended: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._register()

    def _register(self) -> None:
        @self.feature(t.WINDOW_LOG_MESSAGE)
        def log_message(params: t.LogMessageParams) -> None:
            _say(f"  {params.message}")

        @self.feature(t.WINDOW_SHOW_MESSAGE_REQUEST)
        def ask(params: t.ShowMessageRequestParams) -> t.MessageActionItem | None:
            titles = [a.title for a in params.actions or []]
            _say(f"\n[editor prompt] {params.message}\n  choices: {' / '.join(titles)}")
            choice = titles[0] if titles else None
            if self.interactive and titles:
                answer = input(f"  answer 1-{len(titles)} (default 1): ").strip()
                choice = (
                    titles[int(answer) - 1] if answer.isdigit() and 0 < int(answer) <= len(titles) else choice
                )
            elif "Deny" in titles:
                choice = "Deny"  # no human to ask: the headless default is deny
            _say(f"  answered: {choice}")
            return t.MessageActionItem(title=choice) if choice else None

        @self.feature(t.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create_progress(params: t.WorkDoneProgressCreateParams) -> None:
            return None

        @self.feature(t.PROGRESS)
        def progress(params: t.ProgressParams) -> None:
            return None

        @self.feature("agent/event")
        def agent_event(params: Any) -> None:
            return None

        @self.feature("agent/runEnded")
        def run_ended(params: Any) -> None:
            if not self.run_ended.done():
                self.run_ended.set_result(params)

        @self.feature(t.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: t.ApplyWorkspaceEditParams) -> t.ApplyWorkspaceEditResult:
            _say(
                f"\n[editor] applying '{params.label}' ({len(params.edit.document_changes or [])} change(s))"
            )
            outcome = self.files.apply(self.protocol._converter.unstructure(params.edit))
            return t.ApplyWorkspaceEditResult(applied=outcome.applied, failure_reason=outcome.failure_reason)


async def _session(root: Path, model: str, interactive: bool) -> int:
    client = DemoClient(root, interactive)
    await client.start_io(sys.executable, "-m", "agent_ls", "serve")
    try:
        await client.initialize_async(
            t.InitializeParams(
                capabilities=CAPABILITIES,
                root_uri=root.as_uri(),
                workspace_folders=[t.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
                initialization_options={"agentLs": {"model": model}},
            )
        )
        client.initialized(t.InitializedParams())
        _say(f"\n▶ agent.run: {TASK}\n")
        started = await client.workspace_execute_command_async(
            t.ExecuteCommandParams(command="agent.run", arguments=[{"task": TASK, "model": model}])
        )
        session_id = _field(started, "sessionId")
        ended = await asyncio.wait_for(client.run_ended, timeout=600)
        status = _field(ended, "status")
        _say(f"\n■ run ended: {status} ({_field(ended, 'reason')})")
        answer = _field(ended, "answer")
        if answer:
            _say(f"\nagent: {answer}")
        proposal = await client.workspace_execute_command_async(
            t.ExecuteCommandParams(command="agent.proposal", arguments=[{"sessionId": session_id}])
        )
        files = _field(proposal, "files") or []
        _say("\n── proposed changes ──")
        for file in files:
            _say(_field(file, "diff").rstrip("\n"))
        if not files:
            _say("(none)")
            return 1
        applied = await client.workspace_execute_command_async(
            t.ExecuteCommandParams(command="agent.applyProposal", arguments=[{"sessionId": session_id}])
        )
        ok = bool(_field(applied, "applied"))
        _say(f"\n[apply] applied={ok}" + ("" if ok else f" reason={_field(applied, 'failureReason')}"))
        return 0 if ok and status == "done" else 1
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()


def run_demo(*, model: str | None = None, keep: bool = False) -> int:
    """Run the demo; returns 0 when the bug is fixed on disk and the sample's tests pass."""
    workdir = Path(tempfile.mkdtemp(prefix="agent-ls-demo-"))
    root = workdir / "sample"
    shutil.copytree(_bundled("sample"), root, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    chosen = model or f"replay:{_bundled('script.json')}"
    _say(f"agent-ls demo: sample project copied to {root}\nmodel: {chosen}")
    try:
        code = asyncio.run(_session(root, chosen, interactive=model is not None and sys.stdin.isatty()))
        if code != 0:
            _say("\nagent-ls demo: the run did not produce an applied fix")
            return code
        _say("\n── tests on disk after applying ──")
        tests = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
        _say(tests.stdout.strip().splitlines()[-1] if tests.stdout.strip() else tests.stderr.strip())
        _say("\nagent-ls demo: done" if tests.returncode == 0 else "\nagent-ls demo: the tests still fail")
        return 0 if tests.returncode == 0 else 1
    finally:
        if keep:
            _say(f"(kept {root})")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
