"""Fakes of the ports the tools use: an in-memory Workspace, a scripted CommandRunner and Approver.

They implement the Protocols of ``agent_ls.core.ports`` by their contracts, with no disk and no
subprocess, and record what they were asked so tests can compare whole lists.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable
from fnmatch import fnmatchcase
from pathlib import Path

from agent_ls.core.errors import EditFailed, PathRefused, ToolError
from agent_ls.core.file_views import PageRequest, SearchHit, SearchResult, TextPage
from agent_ls.core.ports import Approval, ApprovalReply, ApprovalRequest, CommandResult
from agent_ls.core.proposal import FileChange, TextEncoding
from agent_ls.workspace.text_pages import page_of

ROOT = Path("/ws")


class FakeWorkspace:
    """Files on "disk" (``files``) under pending edits (``pending``); ``.env*`` files are secrets."""

    def __init__(self, files: dict[str, str] | None = None) -> None:
        self.files = dict(files or {})
        self.pending: dict[str, str] = {}
        self.searches: list[tuple[str, str, str | None]] = []
        self.search_result: SearchResult | None = None  # answers every search when set

    @property
    def root(self) -> Path:
        return ROOT

    def resolve(self, path: str) -> str:
        if "\0" in path:
            raise ToolError(f"path {path!r} contains a NUL character; pass a plain file path")
        if path.startswith("/"):
            if not (path == str(ROOT) or path.startswith(f"{ROOT}/")):
                raise PathRefused(f"path {path!r} is outside the workspace {ROOT}; use a path inside it")
            path = path[len(str(ROOT)) :].lstrip("/") or "."
        rel = posixpath.normpath(path or ".")
        if rel == ".." or rel.startswith("../"):
            raise PathRefused(f"path {path!r} is outside the workspace {ROOT}; use a path inside it")
        if posixpath.basename(rel).startswith(".env"):
            raise PathRefused(f"{rel!r} is a secret file; it cannot be read or written")
        return rel

    def _view(self) -> dict[str, str]:
        return {**self.files, **self.pending}

    def exists(self, rel: str) -> bool:
        return rel in self._view() or self.is_dir(rel)

    def is_dir(self, rel: str) -> bool:
        return rel == "." or any(path.startswith(rel + "/") for path in self._view())

    def read_text(self, rel: str) -> str:
        try:
            return self._view()[rel]
        except KeyError:
            raise ToolError(f"file not found: {rel!r}") from None

    def read_page(self, rel: str, request: PageRequest) -> TextPage:
        return page_of([self.read_text(rel)], request, name=rel)

    def propose(
        self, rel: str, text: str, *, based_on: str | None = None, encoding: TextEncoding | None = None
    ) -> bool:
        if based_on is not None and self._view().get(rel) != based_on:
            raise EditFailed(f"{rel} changed since you read it; read it again")
        before = self.proposal()
        self.pending[rel] = text
        return self.proposal() != before

    def list_files(self, rel_dir: str, pattern: str | None, limit: int) -> tuple[list[str], int]:
        found = sorted(p for p in self._view() if rel_dir == "." or p.startswith(rel_dir + "/"))
        if pattern is not None:
            found = [p for p in found if fnmatchcase(p, pattern)]
        return found[:limit], len(found)

    async def search(
        self, pattern: str, rel: str, glob: str | None, *, max_line_chars: int = 500, window: int = 150
    ) -> SearchResult:
        """Every matching line whole, one hit per line at its first match (no windows)."""
        self.searches.append((pattern, rel, glob))
        if self.search_result is not None:
            return self.search_result
        regex = re.compile(pattern)
        hits = []
        for path, text in sorted(self._view().items()):
            if rel != "." and path != rel and not path.startswith(rel + "/"):
                continue
            if glob is not None and not fnmatchcase(posixpath.basename(path), glob):
                continue
            for n, line in enumerate(text.splitlines(), 1):
                if (found := regex.search(line)) is not None:
                    hits.append(SearchHit(path, n, found.start() + 1, line, 1, len(line)))
        return SearchResult(tuple(hits), dict(Counter(hit.path for hit in hits)))

    def proposal(self) -> list[FileChange]:
        return [
            FileChange(path, path not in self.files, self.files.get(path, ""), None, text)
            for path, text in sorted(self.pending.items())
            if text != self.files.get(path)
        ]


class FakeRunner:
    """Answers each command with the next scripted result (default: exit 0, no output)."""

    def __init__(self, results: Iterable[CommandResult] = ()) -> None:
        self.results = list(results)
        self.calls: list[tuple[str, float]] = []

    async def run(self, command: str, timeout_s: float) -> CommandResult:
        self.calls.append((command, timeout_s))
        return self.results.pop(0) if self.results else CommandResult(exit_code=0, output="")


class ScriptedApprover:
    """Replies from a script, in order (a reply alone or a whole ``Approval``); records every request.

    Replies "deny" when the script is empty.
    """

    def __init__(self, replies: Iterable[ApprovalReply | Approval] = ()) -> None:
        self.replies = [r if isinstance(r, Approval) else Approval(r) for r in replies]
        self.requests: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        return self.replies.pop(0) if self.replies else Approval("deny")
