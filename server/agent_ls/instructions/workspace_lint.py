"""The agent files of a workspace root and their problems, for the editor (``lsp/handlers/agent_files.py``).

``lint_root`` does, in order:

1. find the ``SKILL.md`` files and the AGENTS.md-family files (``AGENTS.override.md``, ``AGENTS.md``, the
   configured fallbacks) under the root: one ``rg --files`` run (``find_agent_files``);
2. for each directory holding such a file (and the root itself, which catches a symlinked root file rg
   does not list), load the chain with that directory in focus (``agents_md.load_chain``) and keep the
   diagnostics of that directory's own file: truncation, imports refused or not found, over budget, not
   followed;
3. for each directory that holds ``.agents/skills`` (and the root), discover the skills visible from it
   (``skills.discover_skills``: parse, spec validation, name clashes, description overlaps), and give
   each ``SKILL.md`` found in step 1 the diagnostics of that same real file;
4. a ``SKILL.md`` that no discovery reaches (a skill being written outside any skills folder) is still
   parsed and validated on its own, and says that agent-ls does not load it.

Finding files is bounded: ripgrep honours ``.gitignore`` (and ``.ignore``) files the way users expect,
walks in parallel, and skips ``.git`` and ``node_modules`` here; at most ``MAX_LISTED_FILES`` paths and
``SCAN_TIMEOUT_S`` seconds, so a huge monorepo costs a bounded scan (a pathspec walk in Python would be
slower and re-implement rg's ignore rules). Everything here blocks: the LSP layer runs it in a thread.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from agent_ls.config import LoadedConfig, path_policy_for, user_config_file
from agent_ls.core.file_diagnostics import FileDiagnostic
from agent_ls.instructions.agent_context import (
    bundled_skills_dir,
    home_dir,
    instruction_settings,
    skill_settings,
)
from agent_ls.instructions.agents_md import InstructionChain, InstructionSettings, load_chain
from agent_ls.instructions.frontmatter import read_head
from agent_ls.instructions.skill_lint import spec_diagnostics
from agent_ls.instructions.skill_parse import parse_skill
from agent_ls.instructions.skills import Skill, discover_skills
from agent_ls.settings import EnvSnapshot
from agent_ls.workspace.dependency_folders import first_party
from agent_ls.workspace.overlay import find_ripgrep

INSTRUCTION_NAMES = ("AGENTS.override.md", "AGENTS.md")
SKILL_NAME = "SKILL.md"
MAX_LISTED_FILES = 5000
"""Paths read from one ``rg --files`` run at most (then the scan says it is incomplete)."""
SCAN_TIMEOUT_S = 10.0
MAX_LINTED_DIRS = 200
"""Directories whose chain (or skills) are loaded per root at most."""
NOT_DISCOVERED = (
    "agent-ls does not load this skill: it is not in a skills folder it scans (.agents/skills in the "
    "project root or a folder below it, .claude/skills, a configured [skills] path)"
)


@dataclass(frozen=True)
class FileList:
    """Files found under a directory: absolute paths, sorted; ``complete`` False when a cap or the timeout
    cut the listing (or ripgrep is missing)."""

    files: tuple[Path, ...]
    complete: bool


def list_files(
    directory: Path,
    globs: Sequence[str] = (),
    *,
    hidden: bool = False,
    max_files: int = MAX_LISTED_FILES,
    timeout_s: float = SCAN_TIMEOUT_S,
) -> FileList:
    """The files under ``directory`` that ripgrep would search, optionally only those matching ``globs``.

    Args:
        directory: an absolute directory.
        globs: ripgrep ``--glob`` patterns (gitignore syntax; a bare name matches at any depth).
        hidden: include hidden files and directories (``.git`` and ``node_modules`` are always skipped).
        max_files: stop after this many paths.
        timeout_s: stop after this many seconds.

    Symlinks are not followed. ``.gitignore`` files apply even outside a Git repository.
    """
    rg = find_ripgrep()
    if rg is None or not directory.is_dir():
        return FileList((), rg is not None)
    args = [
        rg,
        "--files",
        "--no-config",
        "--no-require-git",
        "--no-messages",
        "-g",
        "!.git",
        "-g",
        "!node_modules",
    ]
    if hidden:
        args.append("--hidden")
    for glob in globs:
        args += ["-g", glob]
    process = subprocess.Popen(
        args, cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
    )
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        process.kill()

    timer = threading.Timer(timeout_s, expire)
    timer.start()
    found: list[Path] = []
    capped = False
    try:
        assert process.stdout is not None
        for raw in process.stdout:
            if len(found) >= max_files:
                capped = True
                break
            found.append(directory / os.fsdecode(raw.rstrip(b"\n")))
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
        process.wait()
    complete = not capped and not expired.is_set()  # exit code 2 (some paths unreadable) lists the rest
    return FileList(tuple(sorted(found)), complete)


def find_agent_files(root: Path, settings: InstructionSettings) -> FileList:
    """Every ``SKILL.md`` and AGENTS.md-family file under ``root``, hidden folders included (skills live in
    ``.agents/skills``), ``.gitignore``-d ones and ``.git``/``node_modules`` excluded (``list_files``)."""
    names = {*INSTRUCTION_NAMES, SKILL_NAME, *(PurePosixPath(f).name for f in settings.fallback_filenames)}
    return list_files(root, sorted(names), hidden=True)


def chain_dir(path: Path, settings: InstructionSettings) -> Path | None:
    """The directory whose instruction file ``path`` would be: its parent, or for a fallback written as a
    relative path (``.claude/CLAUDE.md``) the directory above that path; None for another file name."""
    for name in (*INSTRUCTION_NAMES, *settings.fallback_filenames):
        parts = PurePosixPath(name).parts
        if parts and path.parts[-len(parts) :] == parts:
            return path.parents[len(parts) - 1]
    return None


@dataclass(frozen=True)
class RootLint:
    """The lint of one workspace root.

    Attributes:
        root: the workspace root.
        diagnostics: for every agent file found (and a root file that is a symlink), its diagnostics,
            possibly none; paths as found under ``root``.
        skills: each ``SKILL.md`` found that discovery loaded, as loaded (for the hover).
        complete: the scan was not cut by its limits.
    """

    root: Path
    diagnostics: Mapping[Path, tuple[FileDiagnostic, ...]]
    skills: Mapping[Path, Skill]
    complete: bool


def lint_root(root: Path, *, config: LoadedConfig, env: EnvSnapshot) -> RootLint:
    """Lint the agent files of ``root`` (module docstring). Blocking; never raises for file contents.

    Args:
        root: an absolute workspace root.
        config: its loaded config files (``[instructions]``, ``[skills]``, the user config dir).
        env: the environment (``HOME`` for user skills).
    """
    linter = _RootLinter(root, config, env)
    scan = find_agent_files(root, linter.settings)
    instruction_files = [p for p in scan.files if p.name != SKILL_NAME and chain_dir(p, linter.settings)]
    skill_files = [p for p in scan.files if p.name == SKILL_NAME]
    diagnostics = linter.instructions(instruction_files)
    skills = linter.skills(skill_files, diagnostics)
    return RootLint(
        root=root,
        diagnostics={path: tuple(found) for path, found in diagnostics.items()},
        skills=skills,
        complete=scan.complete,
    )


class _RootLinter:
    """One root's lint: settings, and the chains loaded so far (one per focus folder)."""

    def __init__(self, root: Path, config: LoadedConfig, env: EnvSnapshot) -> None:
        self.root, self.config, self.env = root, config, env
        self.settings = instruction_settings(config.instructions)
        self.global_dir = (config.user_file or user_config_file(env)).parent
        self.is_secret = path_policy_for(root, config).is_secret  # the configured secrets, as a run
        self.chains: dict[Path, InstructionChain] = {}

    def chain(self, directory: Path) -> InstructionChain:
        if directory not in self.chains:
            self.chains[directory] = load_chain(
                workspace_root=self.root,
                focus=directory,
                global_dir=self.global_dir,
                settings=self.settings,
                is_secret=self.is_secret,
            )
        return self.chains[directory]

    def instructions(self, files: list[Path]) -> dict[Path, list[FileDiagnostic]]:
        """Step 2: each folder's own file's diagnostics, and why a file found is not loaded."""
        diagnostics: dict[Path, list[FileDiagnostic]] = {}
        dirs = dict.fromkeys([self.root, *(d for p in files if (d := chain_dir(p, self.settings)))])
        for directory in list(dirs)[:MAX_LINTED_DIRS]:
            for diagnostic in self.chain(directory).diagnostics:
                if chain_dir(diagnostic.path, self.settings) == directory:
                    _add(diagnostics, diagnostic.path, diagnostic)
        for path in files:
            folder = chain_dir(path, self.settings)
            chain = self.chains.get(folder) if folder is not None else None
            if chain is not None and path not in diagnostics:
                reason = not_loaded_reason(chain, path)
                if reason is not None:
                    notice = FileDiagnostic(path, 0, 0, 0, "information", f"not loaded: {reason}")
                    _add(diagnostics, path, notice)
            diagnostics.setdefault(path, [])
        return diagnostics

    def skills(self, files: list[Path], diagnostics: dict[Path, list[FileDiagnostic]]) -> dict[Path, Skill]:
        """Steps 3 and 4: adds each SKILL.md's diagnostics to ``diagnostics``; returns the loaded skills."""
        by_real: dict[Path, list[FileDiagnostic]] = {}
        loaded: dict[Path, Skill] = {}
        owners = dict.fromkeys([self.root, *(d for p in files if (d := _agents_skills_owner(p)))])
        for focus in list(owners)[:MAX_LINTED_DIRS]:
            found = discover_skills(
                workspace_root=self.root,
                project_root=self.chain(focus).project_root,
                focus_dir=focus,
                home=home_dir(self.env),
                user_config_dir=self.global_dir,
                bundled_dir=bundled_skills_dir(),
                settings=skill_settings(self.config.skills, self.root),
            )
            for skill in (*found.skills, *found.shadowed):
                loaded.setdefault(_real(skill.path), skill)
            for diagnostic in found.diagnostics:
                if diagnostic.path.name == SKILL_NAME:
                    _add(by_real, _real(diagnostic.path), diagnostic)
        skills: dict[Path, Skill] = {}
        for path in files:
            real = _real(path)
            if real in by_real or real in loaded:
                for diagnostic in by_real.get(real, []):
                    _add(diagnostics, path, replace(diagnostic, path=path))
                diagnostics.setdefault(path, [])
            else:
                diagnostics[path] = lint_skill_file(path)
            if real in loaded:
                skills[path] = loaded[real]
        return skills


def scope_of(chain: InstructionChain, directory: Path) -> str:
    """The scope of ``directory``'s instruction file (``**``, ``pkg/**``), as in ``InstructionFile.scope``."""
    rel = directory.relative_to(chain.workspace_root).as_posix()
    return "**" if rel == "." else f"{rel}/**"


def not_loaded_reason(chain: InstructionChain, path: Path) -> str | None:
    """Why the instruction file ``path`` is not in ``chain`` (focused on its folder), or None when it is."""
    if any(file.path == path for file in chain.files):
        return None
    notice = next((n.message for n in chain.notices if n.path == path), None)
    if notice is not None:
        return notice
    if first_party(chain.workspace_root, path.parent) != path.parent:
        return "its folder is inside a dependency folder (node_modules, vendor, .venv, …): never loaded"
    scope = scope_of(chain, chain.focus_dir)
    chosen = next((f.label for f in chain.files if f.kind == "project" and f.scope == scope), None)
    if chosen is None:
        return "instructions are disabled (max_total_bytes = 0) or its folder is outside the chain"
    return (
        f"{chosen} is this folder's instruction file (one per folder: the first found of "
        "AGENTS.override.md, AGENTS.md, then the fallbacks)"
    )


def lint_skill_file(path: Path) -> list[FileDiagnostic]:
    """The diagnostics of a ``SKILL.md`` on its own: parsing, spec validation, and that it is not loaded."""
    try:
        text, complete = read_head(path)
    except (OSError, UnicodeDecodeError) as error:
        return [FileDiagnostic(path, 0, 0, 0, "error", f"SKILL.md cannot be read as UTF-8 text ({error})")]
    parsed, found = parse_skill(path, text, complete=complete, dir_name=path.parent.name)
    if parsed is not None:
        found = [*found, *spec_diagnostics(path, parsed, path.parent)]
    found.append(FileDiagnostic(path, 0, 0, 3, "information", NOT_DISCOVERED))
    return sorted(found, key=lambda d: (d.line, d.character))


def _agents_skills_owner(path: Path) -> Path | None:
    """``X`` for ``X/.agents/skills/**/SKILL.md`` or ``X/.claude/skills/**/SKILL.md``: the focus from which
    discovery scans that folder (``.claude/skills`` only at a project root, which ``X`` then is)."""
    parts = path.parts
    for index in range(len(parts) - 2, 0, -1):
        if parts[index] == "skills" and parts[index - 1] in (".agents", ".claude"):
            return Path(*parts[: index - 1])
    return None


def _add(into: dict[Path, list[FileDiagnostic]], path: Path, diagnostic: FileDiagnostic) -> None:
    found = into.setdefault(path, [])
    if diagnostic not in found:
        found.append(diagnostic)


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path
