"""Agent files in the editor: ``SKILL.md`` and the AGENTS.md family as a language server lints them, and
the watch that tells sessions to rebuild their prompt prefix.

Lint (``textDocument/publishDiagnostics``, ``instructions/workspace_lint.py`` per workspace root) runs:

1. at ``initialized``;
2. on ``didOpen`` / ``didSave`` of an agent file;
3. after each change the watch reports (``InstructionWatcher.bump`` → ``on_change``).

Runs never overlap: a request during a run makes one more run after it. The disk work happens in a
worker thread; the event loop only publishes, and only files whose diagnostics changed. A file whose
problems are gone gets an empty list (the editor clears them); columns are converted to the negotiated
encoding (``config_files.lsp_diagnostic``).

Watching, decided at ``initialized``: a client that can register ``workspace/didChangeWatchedFiles``
dynamically watches the workspace for us (globs below) and its notifications bump the generation;
otherwise watchfiles watches the workspace roots. The user-level folders (the agent-ls config dir and
``~/.agents/skills``) are watched with watchfiles either way, as editors only watch the workspace.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

from lsprotocol import types as t
from pygls.uris import from_fs_path

from agent_ls.config import load_config, user_config_file
from agent_ls.instructions.agent_context import home_dir
from agent_ls.instructions.skills import Skill
from agent_ls.instructions.watch import INSTRUCTION_FILENAMES, SKILL_FILENAME
from agent_ls.instructions.workspace_lint import lint_root
from agent_ls.lsp.file_uris import to_fs_path
from agent_ls.lsp.handlers.config_files import lsp_diagnostic
from agent_ls.lsp.state import AgentLanguageServer
from agent_ls.settings import EnvSnapshot

log = logging.getLogger(__name__)

WATCH_REGISTRATION_ID = "agent-ls/instruction-files"
REGISTRATION_TIMEOUT_S = 10.0


def watch_globs(fallback_filenames: tuple[str, ...]) -> list[str]:
    """The globs the client is asked to watch: the instruction and skill file names at any depth, and
    anything under a ``skills`` folder (a skill folder created, renamed or removed)."""
    names = dict.fromkeys(
        [*INSTRUCTION_FILENAMES, *(Path(f).name for f in fallback_filenames), SKILL_FILENAME]
    )
    return [f"**/{{{','.join(names)}}}", "**/skills/**"]


async def initialized(ls: AgentLanguageServer, params: t.InitializedParams) -> None:
    """Lint once, and start watching (the client, or watchfiles)."""
    watcher = ls.state.instructions_watcher
    watcher.on_change = lambda _generation: schedule_lint(ls)
    schedule_lint(ls)
    await _fallbacks_from_config(ls)
    if ls.state.flags.watched_files_registration:
        ls.state.client_watches_files = await _register_watch(ls)
    _start_disk_watch(ls)


async def _fallbacks_from_config(ls: AgentLanguageServer) -> None:
    """The watcher counts every root's configured fallback names (``[instructions]``)."""
    env, roots = EnvSnapshot.from_environ(), list(ls.state.roots)

    def read() -> tuple[str, ...]:
        names: list[str] = []
        for root in roots:
            configured = load_config(env, root).instructions.fallback_filenames
            names += configured if configured is not None else ["CLAUDE.md"]
        return tuple(dict.fromkeys(names or ["CLAUDE.md"]))

    try:
        ls.state.instructions_watcher.fallback_filenames = await asyncio.to_thread(read)
    except Exception:  # a broken config is reported by config_files; the defaults still count
        log.exception("reading the instruction settings failed")


async def _register_watch(ls: AgentLanguageServer) -> bool:
    """Ask the client to watch the instruction files; False when it refuses (then watchfiles does)."""
    options = t.DidChangeWatchedFilesRegistrationOptions(
        watchers=[
            t.FileSystemWatcher(glob_pattern=glob)
            for glob in watch_globs(ls.state.instructions_watcher.fallback_filenames)
        ]
    )
    registration = t.Registration(
        id=WATCH_REGISTRATION_ID, method=t.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )
    try:
        async with asyncio.timeout(REGISTRATION_TIMEOUT_S):
            await ls.client_register_capability_async(t.RegistrationParams(registrations=[registration]))
    except Exception as exc:  # refused, or never answered (TimeoutError)
        log.warning("the client did not register the file watch (%r); watching with watchfiles", exc)
        return False
    return True


def _user_dirs() -> list[Path]:
    """The user-level folders holding instructions or skills: the agent-ls config dir, ~/.agents/skills."""
    env = EnvSnapshot.from_environ()
    home = home_dir(env)
    return [user_config_file(env).parent, *([home / ".agents" / "skills"] if home else [])]


def _start_disk_watch(ls: AgentLanguageServer) -> None:
    roots = [] if ls.state.client_watches_files else list(ls.state.roots)
    ls.state.instructions_watcher.start([*roots, *_user_dirs()])


def did_change_watched_files(ls: AgentLanguageServer, params: t.DidChangeWatchedFilesParams) -> None:
    """The client saw files change: one bump when any of them counts (``InstructionWatcher.watches``)."""
    watcher = ls.state.instructions_watcher
    paths = [Path(fs) for change in params.changes if (fs := to_fs_path(change.uri))]
    if any(watcher.watches(path, ls.state.roots) for path in paths):
        watcher.bump()


def did_change_workspace_folders(ls: AgentLanguageServer, params: t.DidChangeWorkspaceFoldersParams) -> None:
    """After ``lifecycle`` updated the roots: watch the new ones and lint again."""
    _start_disk_watch(ls)
    schedule_lint(ls)


def did_open(ls: AgentLanguageServer, params: t.DidOpenTextDocumentParams) -> None:
    if _is_agent_file(ls, params.text_document.uri):
        schedule_lint(ls)


def did_save(ls: AgentLanguageServer, params: t.DidSaveTextDocumentParams) -> None:
    if _is_agent_file(ls, params.text_document.uri):
        schedule_lint(ls)


async def shutdown(ls: AgentLanguageServer) -> None:
    """Stop the watch and any lint in progress."""
    await ls.state.instructions_watcher.aclose()
    task = ls.state.lint_task
    if task is not None and not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _is_agent_file(ls: AgentLanguageServer, uri: str) -> bool:
    fs = to_fs_path(uri) if uri.startswith("file:") else None
    return fs is not None and ls.state.instructions_watcher.watches(Path(fs), ls.state.roots)


def schedule_lint(ls: AgentLanguageServer) -> None:
    """Lint the agent files soon (module docstring). Needs a running event loop."""
    state = ls.state
    if state.lint_task is not None and not state.lint_task.done():
        state.lint_again = True
        return
    state.lint_task = asyncio.get_running_loop().create_task(_lint_until_settled(ls))


async def _lint_until_settled(ls: AgentLanguageServer) -> None:
    while True:
        ls.state.lint_again = False
        try:
            await lint(ls)
        except Exception as exc:  # never leaves the lint stuck: the next change lints again
            log.exception("linting the agent files failed")
            message = f"agent-ls: cannot lint the AGENTS.md and SKILL.md files: {exc}"
            ls.window_log_message(t.LogMessageParams(type=t.MessageType.Error, message=message))
        if not ls.state.lint_again:
            return


async def lint(ls: AgentLanguageServer) -> None:
    """Lint every workspace root now and publish per file (clearing files that have no problem left)."""
    roots = list(ls.state.roots)
    encoding = ls.workspace.position_encoding or t.PositionEncodingKind.Utf16
    by_file, skills = await asyncio.to_thread(_lint_roots, roots, encoding)
    state = ls.state
    state.linted_skills = skills
    for path in set(state.agent_diagnostics) - set(by_file):
        by_file[path] = []
    for path, diagnostics in by_file.items():
        if diagnostics == state.agent_diagnostics.get(path, []):
            continue  # the editor shows these already
        uri = from_fs_path(str(path))
        if uri is not None:
            ls.state.diagnostics.publish(ls, uri, "agent-files", diagnostics)
    state.agent_diagnostics = {path: found for path, found in by_file.items() if found}


def _lint_roots(roots: list[Path], encoding: str) -> tuple[dict[Path, list[t.Diagnostic]], dict[Path, Skill]]:
    """Blocking: each root's lint (nested roots may both list a file: its diagnostics come once)."""
    env = EnvSnapshot.from_environ()
    by_file: dict[Path, list[t.Diagnostic]] = {}
    skills: dict[Path, Skill] = {}
    for root in roots:
        result = lint_root(root, config=load_config(env, root), env=env)
        skills.update(result.skills)
        for path, diagnostics in result.diagnostics.items():
            shown = by_file.setdefault(path, [])
            for diagnostic in diagnostics:
                converted = lsp_diagnostic(diagnostic, encoding)
                if converted not in shown:
                    shown.append(converted)
    return by_file, skills
