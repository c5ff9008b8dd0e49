"""Nested instruction files: the AGENTS.md files of directories the chain does not cover, loaded the first
time the agent reads, lists or edits something in their subtree.

Behaviour follows OpenCode ``Instruction.resolve`` (attached to the read tool's result, once per
conversation, re-attached after compaction) and Gemini CLI JIT context (``read_file``,
``list_directory``, ``write_file``, ``replace``): only the ancestry of the touched path is examined,
never a directory tree. The same rules as the chain apply (``discovery.py``): one file per directory,
symlink and secret policy, one load per real path, imports in fallback-named files, the per-file cap;
and the session's nested files together get ``max_total_bytes``, allocated nearest-first per touch.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent_ls.core.file_diagnostics import FileDiagnostic
from agent_ls.instructions.chain import InstructionChain, InstructionFile, InstructionSettings
from agent_ls.instructions.discovery import Loader
from agent_ls.workspace.paths import is_secret as default_is_secret


class NestedInstructions:
    """Per session: nested AGENTS.md files below the starting (focus) directory, loaded on first touch.

    Args:
        chain: the session's chain (its files are never loaded again here).
        settings: as given to ``load_chain``.
        is_secret: as given to ``load_chain``.

    A directory is examined once per session: an instruction file created there later is picked up
    by a new ``NestedInstructions`` (the caller builds one when instruction files change).
    """

    def __init__(
        self,
        chain: InstructionChain,
        settings: InstructionSettings,
        *,
        is_secret: Callable[[str], bool] = default_is_secret,
        spent: int = 0,
    ) -> None:
        """``spent``: bytes of nested files already given in this session by an earlier instance (after a
        reload): they count against the session's ``max_total_bytes``."""
        self._settings = settings
        self._loader = Loader(chain.workspace_root, settings, is_secret)
        self._loader.seed(chain.files)
        self._covered = set(self._loader.dirs(chain.project_root, chain.focus_dir))
        self._examined: set[Path] = set()
        self._left = max(0, settings.max_total_bytes - spent)
        self._loaded: list[InstructionFile] = []

    def on_touch(self, rel: str, *, is_dir: bool) -> tuple[InstructionFile, ...]:
        """The instruction files that apply to ``rel`` and were not given to the model yet.

        Args:
            rel: the workspace-relative POSIX path the agent read, listed or edited (absolute paths
                inside the root work too; a path outside the root gives nothing).
            is_dir: ``rel`` is a directory (listed): its own instruction file counts.

        Returns:
            The files of the directories from ``rel``'s project root down to its directory that the
            chain does not cover and that no earlier touch examined, root → leaf, each at most once per
            session (``kind="nested"``), cut to the budget like the chain's. Usually empty.
        """
        if self._settings.max_total_bytes <= 0:
            return ()
        directory = self._loader.dir_of(rel, is_dir=is_dir)
        if directory is None:
            return ()
        steps = [
            step
            for step in self._loader.dirs(self._loader.project_root(directory), directory)
            if step not in self._covered and step not in self._examined
        ]
        if not steps:
            return ()
        self._examined.update(steps)
        found = (self._loader.find(step, kind="nested") for step in steps)
        drafts = self._loader.drafts(self._loader.dedupe(f for f in found if f is not None))
        files = self._loader.finish(drafts, budget=self._left, nested=True)
        self._left -= sum(file.kept_bytes for file in files)
        self._loaded.extend(files)
        return tuple(files)

    def loaded(self) -> tuple[InstructionFile, ...]:
        """Every nested file given so far, in order of loading: re-attach them after a compaction."""
        return tuple(self._loaded)

    def notices(self) -> tuple[FileDiagnostic, ...]:
        """Nested files not loaded (symlink out of the workspace, secret, unreadable, empty, seen already)."""
        return tuple(self._loader.notices)
