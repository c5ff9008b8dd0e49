"""AGENTS.md instructions: the chain of instruction files for the file in focus, and its prompt text.

``load_chain`` does, in order:

1. the focus directory: the directory of the file in focus (or the focus itself when it is a
   directory), when it lies inside the workspace root; otherwise, or with no focus, the workspace root.
   Never the process's working directory;
2. the project root: the nearest ancestor of the focus directory, up to and including the workspace
   root (never above it), that holds one of ``project_root_markers``; else the workspace root;
3. the candidates: the global file (``<global_dir>/AGENTS.override.md``, else ``AGENTS.md``), then in each
   directory from the project root down to the focus directory the first that exists of
   ``AGENTS.override.md``, ``AGENTS.md`` and the ``fallback_filenames`` (one file per directory);
4. the policy: a workspace file whose real path leaves the workspace root is not followed, a secret
   file is not loaded, a real path met before is loaded once (all with a visible notice);
5. reading each file once (``reading.py``); empty or whitespace-only files are skipped with a notice;
6. ``@path`` imports, in files found under a fallback name only (``imports.py``);
7. budgets, nearest-first, and the visible ``[truncated: N of M bytes]`` marker (``budget.py``).

Behaviour follows Codex ``project_doc`` (candidate names, one file per directory, root markers, global
file first, root → leaf order, 32 KiB) with these differences: a per-file cap as well, root files cut
first instead of the nearest, truncation said in the prompt and as a diagnostic, every file labelled
with its path and scope, Claude Code ``@path`` imports, and files below the focus directory loaded
when the agent first touches their subtree (``nested.py``, like OpenCode ``resolve`` and Gemini CLI JIT
context).
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from pathlib import Path

from agent_ls.core.context import INSTRUCTIONS_TAG, neutralize_tags
from agent_ls.instructions.chain import (
    InstructionChain,
    InstructionFile,
    InstructionKind,
    InstructionSettings,
)
from agent_ls.instructions.discovery import Loader
from agent_ls.instructions.imports import ImportRecord, ImportStatus
from agent_ls.instructions.nested import NestedInstructions
from agent_ls.workspace.paths import is_secret as default_is_secret

__all__ = [
    "ImportRecord",
    "ImportStatus",
    "InstructionChain",
    "InstructionFile",
    "InstructionKind",
    "InstructionSettings",
    "NestedInstructions",
    "governing_files",
    "load_chain",
    "render_chain",
    "render_nested",
]

DEFAULT_SETTINGS = InstructionSettings()

CHAIN_HEADER = (
    # Short on purpose: it is in every request (DESIGN.md first-request budget, 1,400 tokens).
    "Project instructions, general first; each governs its scope. A deeper (later) file overrides a "
    "shallower one, and the user's request overrides them all."
)


def load_chain(
    *,
    workspace_root: Path,
    focus: Path | None,
    global_dir: Path | None,
    settings: InstructionSettings = DEFAULT_SETTINGS,
    is_secret: Callable[[str], bool] = default_is_secret,
) -> InstructionChain:
    """The instruction chain for ``focus`` in ``workspace_root`` (module docstring for the steps).

    Reads each file once and walks no directory tree: only the ancestry of the focus directory is
    looked at. Never raises for file problems (they become notices and diagnostics).

    Args:
        workspace_root: an absolute workspace root; in a multi-root workspace, the root holding the
            focus (each root has its own chain).
        focus: the absolute path of the file (or directory) in focus, a path relative to
            ``workspace_root``, or None for the workspace root.
        global_dir: the agent-ls user config directory, whose ``AGENTS.override.md`` or ``AGENTS.md``
            is the global file (symlinks followed: it is the user's own); None for no global file.
        settings: names, markers and budgets.
        is_secret: whether a workspace-relative POSIX path (relative to the real root) names a secret
            file; such files are never loaded nor imported. Default: the default secret patterns
            (``workspace.paths.is_secret``); pass ``PathPolicy.is_secret`` for the configured ones.

    Raises:
        ValueError: ``workspace_root`` is not absolute (a caller bug: it must never depend on the cwd).
    """
    loader = Loader(workspace_root, settings, is_secret)
    focus_dir = loader.focus_dir(focus)
    project_root = loader.project_root(focus_dir)
    files: list[InstructionFile] = []
    if settings.max_total_bytes > 0:
        found = [loader.find_global(global_dir)] if global_dir is not None else []
        found += [loader.find(directory) for directory in loader.dirs(project_root, focus_dir)]
        drafts = loader.drafts(loader.dedupe(f for f in found if f is not None))
        files = loader.finish(drafts, budget=settings.max_total_bytes, nested=False)
    return InstructionChain(
        workspace_root=loader.root,
        project_root=project_root,
        focus_dir=focus_dir,
        files=tuple(files),
        notices=tuple(loader.notices),
        budget_bytes=settings.max_total_bytes,
    )


def render_chain(chain: InstructionChain) -> str:
    """The instructions text for the prompt: ``CHAIN_HEADER``, then one block per file in order.

    Each block is ``<instructions source="<label>" scope="<scope>">…</instructions>`` with our tag
    names neutralized inside (``core.context.neutralize_tags``). Deterministic: the same chain gives
    byte-identical text (prompt caching, rebuilding after compaction). ``""`` when there are no files.
    """
    if not chain.files:
        return ""
    return "\n\n".join([CHAIN_HEADER, *(_block(file) for file in chain.files)])


def render_nested(file: InstructionFile) -> str:
    """The block placed next to a tool result (outside its ``<tool_result>``) for a nested file.

    Shape: a first line ``Instructions from: <label> (scope: <scope>)``, then the same
    ``<instructions>`` block as ``render_chain``.
    """
    return f"Instructions from: {file.label} (scope: {file.scope})\n{_block(file)}"


def _block(file: InstructionFile) -> str:
    return (
        f'<{INSTRUCTIONS_TAG} source="{escape(file.label, quote=True)}" '
        f'scope="{escape(file.scope, quote=True)}">\n'
        f"{neutralize_tags(file.text.rstrip(chr(10)))}\n</{INSTRUCTIONS_TAG}>"
    )


def governing_files(
    chain: InstructionChain,
    rel: str,
    settings: InstructionSettings = DEFAULT_SETTINGS,
    is_secret: Callable[[str], bool] = default_is_secret,
) -> tuple[str, ...]:
    """The labels of the project instruction files that govern the file ``rel``, root → leaf.

    A file is governed by the instruction file of every directory from its project root down to its
    own directory (the agents.md rule: each AGENTS.md governs its subtree); the global file is not
    listed. Directories the chain covers (project root → focus directory) are answered from the chain
    without touching the disk; for the others the candidate names are only ``stat``-ed, never read
    (so an empty file there is listed unless its size is 0). Used for a proposal's ``governedBy``.

    Args:
        chain: the session's chain (same workspace root).
        rel: a workspace-relative POSIX file path (``pkg/mod.py``); one outside the root gives ``()``.
        settings / is_secret: as given to ``load_chain``.
    """
    loader = Loader(chain.workspace_root, settings, is_secret)
    directory = loader.dir_of(rel, is_dir=False)
    if directory is None or settings.max_total_bytes <= 0:
        return ()
    covered = set(loader.dirs(chain.project_root, chain.focus_dir))
    in_chain = {loader.scope_dir(file.scope): file.label for file in chain.files if file.kind == "project"}
    labels: list[str] = []
    for step in loader.dirs(loader.project_root(directory), directory):
        label = in_chain.get(step) if step in covered else loader.governing_label(step)
        if label is not None:
            labels.append(label)
    return tuple(labels)
