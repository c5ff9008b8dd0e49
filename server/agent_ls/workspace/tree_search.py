"""grep over the current view of the workspace: ripgrep on the real tree, and on the pending texts apart.

``Overlay.search`` calls ``search_tree``, which runs, in order:

1. the pending pass, when files under the searched path have a pending edit or an unsaved editor buffer:
   their texts (in their files' encodings, ``Overlay.unsaved_files``) are written to a private
   temporary directory holding only them and the ``.gitignore``, ``.ignore`` and ``.rgignore`` files
   of their folders (so the same ignore rules hide them), and ripgrep searches it, dependency folders
   (``search.SKIPPED_DIRS``) included: the agent's own edits there are found, as in the copy;
2. the disk pass, when the searched path exists on disk: ripgrep searches the user's tree in place (no
   copy), in ``ripgrep_scope``'s scope. A hit counts only when its file has no pending text (that
   was searched in step 1), is not a secret (``PathPolicy.is_secret``) nor a hard link the rule refuses
   (``hard_links``: one ``lstat`` per file with hits, never per file searched), and lies in a folder that is
   not reached through a symbolic link (``lstat``, once per folder): ripgrep follows no link while it
   walks, and this check holds even if a folder is swapped for one during the search;
3. the two results are merged as one search over both would have given them (``search.merged``).

The two passes run at the same time (the pending one is mostly a process start); when the disk pass
fails (an invalid regex) or the search is cancelled, the pending one is stopped. Both run through
``processes.execute`` (killed with their group on cancel or timeout). With nothing pending, nothing is
written: grep costs what ripgrep costs.

ripgrep runs outside the sandbox: starting bubblewrap (10-15 ms here) cost as much as ripgrep's whole
search of a 1,000-file tree. The sandbox kept nothing of the workspace from it (the disk pass runs in
the real tree, unmasked): what is shown is decided by the checks above, and ripgrep reaches nothing
else. It follows no symbolic link: ``--no-config`` (no config file adds ``--follow`` or ``--pre``),
its walk does not enter links, a searched path that is one is refused (``_disk_scope``), and a hit in
a folder reached through one is dropped (``_DiskHits``); ``.git`` and the dependency folders are never
walked (``search.SKIPPED_GLOBS``); its environment is the commands' allowlisted one. What the sandbox
also hid was the machine outside the workspace from a folder swapped for a link *while* ripgrep walks
and swapped back before its first hit is checked: only a process writing the real tree during the
search could do that, and the agent's commands do not (tool calls run one at a time, a sandboxed
command's processes end with it, and commands write a view or a copy, not the tree, unless
``shell.mode = "workspace"`` and two runs overlap).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_ls.core.errors import ToolError
from agent_ls.core.file_views import SearchResult
from agent_ls.workspace.hard_links import HardLinks
from agent_ls.workspace.owned_temp_dirs import OwnedDir, make_owned_dir
from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.ripgrep_scope import RipgrepScope, scope_of
from agent_ls.workspace.search import SKIPPED_GLOBS, LineDecoder, PathFilter, SearchSpec, merged, run_ripgrep

PENDING_PREFIX = "agent-ls-grep-"
"""The pending pass's temporary directory: ``<TMPDIR>/agent-ls-grep-XXXXXXXX``, removed after the search
(or by the next session when this one was killed, ``owned_temp_dirs``)."""
_RULE_FILES = (".gitignore", ".ignore", ".rgignore")


@dataclass(frozen=True)
class RipgrepRun:
    """How ripgrep runs and reads: the binary, its environment, and the hit bounds.

    Attributes:
        rg: the ripgrep binary.
        env: its environment (``child_env.child_environment``).
        workspace_root: the workspace root as given.
        max_line_chars: a hit line's most characters shown whole (``search.RipgrepStream``).
        window: characters each side of a match in a longer line.
        decode_line: decodes a line in a legacy encoding (the file's).
    """

    rg: str
    env: dict[str, str]
    workspace_root: Path
    max_line_chars: int
    window: int
    decode_line: LineDecoder

    async def search(
        self, spec: SearchSpec, scope: RipgrepScope, keep: PathFilter, skipped: Sequence[str] = SKIPPED_GLOBS
    ) -> SearchResult:
        """``search.run_ripgrep`` of ``spec`` over ``scope``, keeping the hits whose path ``keep`` wants."""
        return await run_ripgrep(
            self.rg,
            spec,
            scope=scope,
            env=self.env,
            workspace_root=self.workspace_root,
            max_line_chars=self.max_line_chars,
            window=self.window,
            decode_line=self.decode_line,
            keep=keep,
            skipped=skipped,
        )


async def search_tree(
    run: RipgrepRun, spec: SearchSpec, paths: PathPolicy, unsaved: Mapping[str, bytes]
) -> SearchResult:
    """Search ``spec`` over the disk under ``paths.real_root`` and the ``unsaved`` texts (module docstring).

    Args:
        spec: the search; ``spec.rel`` is workspace-relative (``PathPolicy.resolve``'s answer).
        unsaved: path to the bytes of its pending edit or unsaved buffer: workspace-relative, or absolute
            for a buffer in another root or an extra directory (left out: the search stays in the
            workspace, and nothing is ever written outside the private folder).

    Raises:
        ToolError: as ``search.run_ripgrep``; ``spec.rel`` is outside the workspace (absolute: another
            root or an extra directory), or now leads through a symbolic link (it was replaced by one
            since it was resolved); the pending texts cannot be written.
    """
    rel = spec.rel
    if not _plain_relative(rel):
        # Another root or an extra directory (a skill's folder): ripgrep runs in the workspace only.
        raise ToolError(
            f"grep searches the workspace {run.workspace_root} only; use list_files and read_file for {rel}"
        )
    # A buffer outside the workspace has an absolute path: it is neither searched nor written.
    pending = {
        path: data
        for path, data in unsaved.items()
        if _plain_relative(path) and (rel in (".", path) or path.startswith(rel + "/"))
    }
    task = asyncio.create_task(_search_pending(run, spec, paths, pending)) if pending else None
    try:
        on_disk = await _search_disk(run, spec, paths, unsaved.keys())
        found = await task if task is not None else SearchResult()
    finally:
        if task is not None and not task.done():  # the disk pass failed or was cancelled
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    return merged(on_disk, found)


async def _search_disk(
    run: RipgrepRun, spec: SearchSpec, paths: PathPolicy, pending: Container[str]
) -> SearchResult:
    # The root's scope needs no disk access; a worker thread's hand-off costs ms on a busy machine.
    root = spec.rel == "."
    scope = _disk_scope(paths, ".") if root else await asyncio.to_thread(_disk_scope, paths, spec.rel)
    if scope is None:
        return SearchResult()  # only pending files there
    return await run.search(spec, scope, _DiskHits(paths, scope, pending))


def _disk_scope(paths: PathPolicy, rel: str) -> RipgrepScope | None:
    """The scope of the disk pass, or None when ``rel`` is not on disk (a pending new file or folder)."""
    if rel != "." and not os.path.lexists(paths.real_root / rel):
        return None
    if rel != "." and paths.resolve(rel) != rel:
        raise ToolError(f"{rel} is now a symbolic link; search the folder it points to")
    return scope_of(paths.real_root, rel)


class _DiskHits:
    """Whether a disk hit's path counts (module docstring, step 2); each folder is checked once."""

    def __init__(self, paths: PathPolicy, scope: RipgrepScope, pending: Container[str]) -> None:
        self._paths = paths
        self._scope = scope
        self._pending = pending
        self._root = os.fspath(paths.real_root)
        self._real_dirs: dict[str, bool] = {"": True}
        self._links = HardLinks(paths.real_root)

    def __call__(self, path: str) -> bool:
        if path in self._pending or not self._scope.wants(path) or self._paths.is_secret(path):
            return False
        return self._real_dir(path.rpartition("/")[0]) and not _hard_linked(self._links, self._root, path)

    def _real_dir(self, folder: str) -> bool:
        known = self._real_dirs.get(folder)
        if known is None:
            try:
                mode = os.lstat(f"{self._root}/{folder}").st_mode
            except OSError:
                mode = 0
            known = stat.S_ISDIR(mode) and self._real_dir(folder.rpartition("/")[0])
            self._real_dirs[folder] = known
        return known


async def _search_pending(
    run: RipgrepRun, spec: SearchSpec, paths: PathPolicy, pending: Mapping[str, bytes]
) -> SearchResult:
    # Shielded: a thread cannot be stopped, so a cancelled search removes the folder once it exists.
    setup = asyncio.ensure_future(asyncio.to_thread(_pending_tree, paths.real_root, spec.rel, pending))
    links, root = HardLinks(paths.real_root), os.fspath(paths.real_root)
    try:
        _, scope = await asyncio.shield(setup)
        return await run.search(
            spec,
            scope,
            # An open buffer of a hard-linked file holds what the disk file holds.
            lambda path: (
                path in pending
                and scope.wants(path)
                and not paths.is_secret(path)
                and not _hard_linked(links, root, path)
            ),
            skipped=(),  # the agent's own edits in node_modules are found, as in the copy
        )
    finally:
        if not setup.done():  # cancelled (the disk pass failed, or the grep was): the writes end soon,
            try:  # so wait for them, and the folder is gone when the grep's error is reported
                await asyncio.wait([setup])
            except asyncio.CancelledError:  # cancelled again meanwhile: removed when the writes end
                setup.add_done_callback(_remove_pending)
                raise
        _remove_pending(setup)


def _pending_tree(real_root: Path, rel: str, pending: Mapping[str, bytes]) -> tuple[OwnedDir, RipgrepScope]:
    """A new private folder holding the pending texts (``_write_pending``), and the scope of ``rel`` in it.

    Raises:
        ToolError: the folder cannot be made or written (it is removed again).
    """
    owned = make_owned_dir(PENDING_PREFIX)
    try:
        tree = owned.path / "ws"
        _write_pending(tree, real_root, pending)
        return owned, scope_of(tree, rel)
    except OSError as exc:
        owned.remove()
        raise ToolError(f"cannot search the pending edits: {exc}") from None
    except BaseException:
        owned.remove()
        raise


def _remove_pending(setup: asyncio.Future[tuple[OwnedDir, RipgrepScope]]) -> None:
    """Remove the pending folder: a few small files, so on the event loop."""
    if not setup.cancelled() and setup.exception() is None:
        setup.result()[0].remove()


def _write_pending(tree: Path, real_root: Path, pending: Mapping[str, bytes]) -> None:
    """Write each pending text at its path under ``tree``, with the ignore files of its folders."""
    folders = {"."}
    for rel in pending:
        parts = rel.split("/")[:-1]
        folders.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    for folder in sorted(folders):
        (tree / folder).mkdir(parents=True, exist_ok=True)
        for name in _RULE_FILES:
            rule = name if folder == "." else f"{folder}/{name}"
            if (
                rule not in pending
                and os.path.isfile(real_root / rule)
                and not os.path.islink(real_root / rule)
            ):
                shutil.copyfile(real_root / rule, tree / rule)
    for rel, data in pending.items():
        (tree / rel).write_bytes(data)


def _hard_linked(links: HardLinks, root: str, path: str) -> bool:
    """Whether the disk file ``path`` is a hard link the rule refuses (a vanished one is not)."""
    try:
        return links.refused(path, os.lstat(f"{root}/{path}"))
    except OSError:
        return False


def _plain_relative(rel: str) -> bool:
    """Whether ``rel`` is a workspace-relative POSIX path that ``tree / rel`` keeps inside ``tree``:
    ``"."``, or names without ``..``; an absolute path (another root, an extra directory) is not."""
    return rel == "." or (not rel.startswith("/") and all(p not in ("", ".", "..") for p in rel.split("/")))
