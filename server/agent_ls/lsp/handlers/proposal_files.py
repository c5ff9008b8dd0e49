"""Part of a proposal: the files a command names, and keeping the session and its store in step.

``agent.applyProposal`` and ``agent.discardProposal`` take ``files`` (file URIs, as ``agent.proposal``
gives them); this module turns them into the proposal's changes, answers ``agent.discardProposal``, and
records what leaves the proposal and what stays pending in the session store (a ``proposal`` record with
the re-based changes and the ``removed`` paths; ``proposal_cleared`` once nothing is left), so a session
resumed later (another editor, ``agent-ls run --continue``) shows the same pending files.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_ls.core.proposal import FileChange
from agent_ls.lsp import protocol as p
from agent_ls.lsp.command_args import parse_params
from agent_ls.lsp.file_uris import to_fs_path
from agent_ls.lsp.handlers import sessions
from agent_ls.lsp.handlers.commands import assemble_for
from agent_ls.lsp.state import AgentLanguageServer, SessionEntry
from agent_ls.sessions.records import change_json


def _relative(root: Path, uri: str) -> str | None:
    """The workspace-relative POSIX path of the file ``uri`` under ``root``, or None when it is not under
    it (compared as given, then with symbolic links resolved on both sides)."""
    fs = to_fs_path(uri)
    if not fs:
        return None
    path = Path(fs)
    for base, target in ((root, path), (root.resolve(), path.resolve())):
        if target.is_relative_to(base):
            return target.relative_to(base).as_posix()
    return None


def select(root: Path, changes: Sequence[FileChange], uris: Sequence[str] | None) -> list[FileChange]:
    """The changes of ``changes`` whose files ``uris`` names (every change when ``uris`` is None), in the
    proposal's order.

    Raises:
        JsonRpcInvalidParams: a URI names no file of the proposal; the message lists the proposal's files.
    """
    if uris is None:
        return list(changes)
    by_path = {change.path: change for change in changes}
    wanted: set[str] = set()
    for uri in uris:
        rel = _relative(root, uri)
        if rel is None or rel not in by_path:
            pending = ", ".join(by_path) or "none"
            raise JsonRpcInvalidParams(f"{uri} is not a file of the proposal; its files: {pending}")
        wanted.add(rel)
    return [change for change in changes if change.path in wanted]


def uris(root: Path, changes: Sequence[FileChange]) -> list[str]:
    """The file URIs of ``changes``, as ``agent.proposal`` spells them."""
    return [(root / change.path).as_uri() for change in changes]


def forget(entry: SessionEntry, paths: Sequence[str], why: str) -> None:
    """Drop ``paths`` from the session's proposal (applied or discarded: ``why``) and record it."""
    if not paths:
        return
    entry.session.overlay.drop(paths)
    if entry.session.proposal():
        sessions.record(entry, "proposal", {"changes": [], "removed": list(paths), "why": why})
    else:
        sessions.record(entry, "proposal_cleared", {"why": why})


def keep_rebased(entry: SessionEntry, changes: Sequence[FileChange]) -> None:
    """Make ``changes`` (re-based on the documents' new text) the pending edits of their files, and record
    them."""
    if changes:
        entry.session.rebase(changes)
        sessions.record(entry, "proposal", {"changes": [change_json(c) for c in changes], "removed": []})


async def discard_proposal(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """``agent.discardProposal {sessionId?, files?}``: drop those files' pending edits (every file when
    ``files`` is left out); the others stay pending. ``DiscardProposalResult``."""
    params = parse_params(p.ProposalFilesParams, arguments)
    entry = await sessions.entry_for(ls, params.session_id, functools.partial(assemble_for, ls))
    if entry is None or not entry.session.proposal():
        if params.files:
            raise JsonRpcInvalidParams(f"{params.files[0]} is not a file of the proposal; its files: none")
        return p.DiscardProposalResult(discarded=False).wire()
    session = entry.session
    chosen = select(session.root, session.proposal(), params.files)
    forget(entry, [change.path for change in chosen], "discarded")
    return p.DiscardProposalResult(discarded=True, kept_files=uris(session.root, session.proposal())).wire()
