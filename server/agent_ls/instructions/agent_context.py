"""What a session knows before its first model call: the AGENTS.md chain and the skills, from one load.

``load_agent_context`` reads the chain for the file in focus (``agents_md.load_chain``) and discovers the
skills (``skills.discover_skills``), with the settings of the config files. ``AgentContext.prefix`` is the
text that follows the system prompt: the instruction files, then the skills catalog. It is a pure function
of what was loaded, so rebuilding the context gives byte-identical text (the stable, cacheable prefix;
a later compaction rebuilds it the same way).

The catalog budget is about 1% of the model's context window (Claude Code's ``skillListingBudgetFraction``),
in characters at 4 per token; 128,000 tokens when the window is unknown.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from pathlib import Path

from agent_ls.config import InstructionsConfig, LoadedConfig, SkillsConfig, path_policy_for, user_config_file
from agent_ls.instructions.agents_md import (
    InstructionChain,
    InstructionFile,
    InstructionSettings,
    NestedInstructions,
    governing_files,
    load_chain,
    render_chain,
    render_nested,
)
from agent_ls.instructions.skills import (
    SkillSet,
    SkillSettings,
    discover_skills,
    render_catalog,
)
from agent_ls.settings import EnvSnapshot
from agent_ls.workspace.paths import is_secret as default_is_secret
from agent_ls.workspace.sandbox import HOME_CREDENTIALS

DEFAULT_CONTEXT_WINDOW = 128_000
CATALOG_SHARE = 0.01
CHARS_PER_TOKEN = 4


def bundled_skills_dir() -> Path:
    """The skills shipped with the server (package data ``agent_ls/bundled_skills``)."""
    return Path(str(resources.files("agent_ls").joinpath("bundled_skills")))


def catalog_budget_chars(context_window: int | None) -> int:
    """About 1% of ``context_window`` tokens, in characters (4 per token)."""
    window = context_window or DEFAULT_CONTEXT_WINDOW
    return max(400, int(window * CATALOG_SHARE * CHARS_PER_TOKEN))


def instruction_settings(config: InstructionsConfig) -> InstructionSettings:
    """The ``[instructions]`` table over the defaults (unset keys keep them)."""
    given = {k: v for k, v in config.model_dump(exclude_none=True).items() if k in _SETTING_NAMES}
    for key in ("project_root_markers", "fallback_filenames"):
        if key in given:
            given[key] = tuple(given[key])
    return replace(InstructionSettings(), **given)


_SETTING_NAMES = frozenset(f.name for f in fields(InstructionSettings))


def skill_settings(config: SkillsConfig, workspace_root: Path) -> SkillSettings:
    """The ``[skills]`` table: ``paths`` relative to the workspace root, ``~`` expanded."""
    roots = tuple(workspace_root / Path(p).expanduser() for p in config.paths or ())
    return SkillSettings(extra_roots=roots)


def too_broad(directory: Path, workspace_root: Path, home: Path | None) -> bool:
    """True for a skill folder that must not become readable: ``/``, the home or a folder above it, a
    folder above the workspace, or one that holds (or lies in) a credentials folder of the home
    (``workspace.sandbox.HOME_CREDENTIALS``: ``.aws``, ``.git-credentials``, …). A linked user skills root
    (``~/.agents/skills -> ~``) would otherwise open the whole home to read_file."""
    real = directory.resolve()
    if real == Path(real.anchor) or workspace_root.resolve().is_relative_to(real):
        return True
    if home is None:
        return False
    home = home.resolve()
    if home.is_relative_to(real):
        return True
    credentials = (home / name for name in HOME_CREDENTIALS if "*" not in name)
    return any(c.is_relative_to(real) or real.is_relative_to(c) for c in credentials)


def marker_above(root: Path, config: LoadedConfig) -> Path | None:
    """The nearest folder above ``root`` holding a project root marker (``.git``), or None: a workspace
    opened in a subfolder of a repository misses the AGENTS.md files and skills above it."""
    markers = instruction_settings(config.instructions).project_root_markers
    for parent in root.resolve().parents:
        if any((parent / marker).exists() for marker in markers):
            return parent
    return None


def home_dir(env: EnvSnapshot) -> Path | None:
    """``$HOME``, else the password database's home; None when neither is known."""
    home = env.get("HOME")
    if home:
        return Path(home)
    try:
        return Path.home()
    except RuntimeError:
        return None


@dataclass
class AgentContext:
    """The instructions and skills of one session.

    Attributes:
        workspace_root: the session's root (the first workspace folder holding the file in focus).
        chain: the AGENTS.md chain for the file in focus; None: instructions disabled or not loaded.
        skills: the skills found.
        settings: the instruction settings the chain was loaded with (nested files use them too).
        catalog_budget: the catalog's budget in characters.
        focus: the absolute path in focus the chain was built for, or None (the workspace root).
        is_secret: the session's secret test on workspace-relative paths: secret files are never
            loaded as instructions.
        home: the user's home (a skill folder holding it, or its credentials, is never opened up).
    """

    workspace_root: Path
    chain: InstructionChain | None = None
    skills: SkillSet = field(default_factory=lambda: SkillSet((), (), (), ()))
    settings: InstructionSettings = field(default_factory=InstructionSettings)
    catalog_budget: int = field(default_factory=lambda: catalog_budget_chars(None))
    focus: Path | None = None
    is_secret: Callable[[str], bool] = default_is_secret
    home: Path | None = None

    def prefix(self) -> str:
        """The instruction files, then the skills catalog: the text after the system prompt ("" for
        none). Deterministic: the same loaded context always gives the same text."""
        parts = []
        if self.chain is not None:
            parts.append(render_chain(self.chain))
        parts.append(render_catalog(self.skills.model_invocable(), self.catalog_budget))
        return "\n\n".join(part for part in parts if part)

    def readable_dirs(self) -> tuple[Path, ...]:
        """The folders of skills outside the workspace: read_file may read them (never write), and the
        sandbox mounts them read-only. A folder too broad to open up is left out (``too_broad``)."""
        root = self.workspace_root.resolve()
        found = (s.base_dir for s in self.skills.skills if not s.base_dir.is_relative_to(root))
        return tuple(d for d in dict.fromkeys(found) if not too_broad(d, root, self.home))

    def governing(self, rel: str) -> list[str]:
        """The labels of the AGENTS.md files (root first) that govern the workspace file ``rel``."""
        if self.chain is None:
            return []
        return list(governing_files(self.chain, rel, self.settings, is_secret=self.is_secret))

    def nested(self) -> NestedAttacher | None:
        """A new per-session attacher of nested AGENTS.md files; None without a chain."""
        nested = self.nested_instructions()
        return NestedAttacher(nested) if nested is not None else None

    def nested_instructions(self, spent: int = 0) -> NestedInstructions | None:
        """The nested files below this context's chain (none loaded yet; ``spent`` bytes of the session's
        nested budget already used); None without a chain."""
        if self.chain is None:
            return None
        return NestedInstructions(self.chain, self.settings, is_secret=self.is_secret, spent=spent)


class NestedAttacher:
    """``tools.base.InstructionAttacher`` over ``agents_md.NestedInstructions``.

    It remembers what it delivered, with the file's size and modification time then, so that after a
    reload (``replace``: an instruction file changed on disk) a file is attached again only when it
    changed on disk, at the next touch inside its folder; an unchanged one is never repeated, and the
    session's nested budget carries over (``spent``).
    """

    def __init__(self, nested: NestedInstructions) -> None:
        self._nested = nested
        self._delivered: dict[Path, tuple[tuple[int, int] | None, InstructionFile]] = {}

    @property
    def spent(self) -> int:
        """Bytes of nested instructions given to the model so far in this session."""
        return sum(file.kept_bytes for _, file in self._delivered.values())

    def replace(self, nested: NestedInstructions) -> None:
        """Use ``nested`` (built from a reloaded chain, with ``spent``) from now on; what was delivered
        is kept."""
        self._nested = nested

    def on_touch(self, rel: str, *, is_dir: bool) -> tuple[str, tuple[str, ...]]:
        files = []
        for file in self._nested.on_touch(rel, is_dir=is_dir):
            stamp = _stamp(file.real_path)
            seen = self._delivered.get(file.real_path)
            if seen is not None and seen[0] == stamp:
                continue
            self._delivered.pop(file.real_path, None)
            self._delivered[file.real_path] = (stamp, file)  # re-inserted: the order of delivery
            files.append(file)
        return "\n\n".join(render_nested(f) for f in files), tuple(f.label for f in files)

    def loaded(self) -> tuple[InstructionFile, ...]:
        """The latest version of every nested file attached so far, in order of delivery (what a
        compaction re-attaches)."""
        return tuple(file for _, file in self._delivered.values())


def _stamp(path: Path) -> tuple[int, int] | None:
    """``(size, mtime_ns)`` of ``path``, or None when it cannot be read."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def load_agent_context(
    *,
    workspace_root: Path,
    focus: Path | None,
    config: LoadedConfig,
    env: EnvSnapshot,
    context_window: int | None = None,
    is_secret: Callable[[str], bool] | None = None,
) -> AgentContext:
    """Read the AGENTS.md chain for ``focus`` and discover the skills. Blocking (disk reads): the LSP
    server calls it in a worker thread. Never raises for file contents: problems are diagnostics.

    Args:
        workspace_root: the session's root.
        focus: the absolute path of the file in focus, or None for the workspace root (never the cwd).
        config: the loaded config files (``[instructions]``, ``[skills]``, the user config dir).
        env: the environment (``HOME``, ``AGENT_LS_CONFIG_DIR``).
        context_window: the model's context window in tokens, when known (sets the catalog budget).
        is_secret: whether a workspace-relative path is a secret (never read as an instruction); the
            session's path policy's (``assembly``), else one built from ``config``.
    """
    root = Path(os.path.abspath(workspace_root))
    settings = instruction_settings(config.instructions)
    global_dir = (config.user_file or user_config_file(env)).parent
    if is_secret is None:
        is_secret = path_policy_for(root, config).is_secret
    chain = load_chain(
        workspace_root=root, focus=focus, global_dir=global_dir, settings=settings, is_secret=is_secret
    )
    focus_dir = chain.focus_dir
    skills = discover_skills(
        workspace_root=root,
        project_root=chain.project_root,
        focus_dir=focus_dir,
        home=home_dir(env),
        user_config_dir=global_dir,
        bundled_dir=bundled_skills_dir(),
        settings=skill_settings(config.skills, root),
    )
    return AgentContext(
        workspace_root=root,
        chain=chain,
        skills=skills,
        settings=settings,
        catalog_budget=catalog_budget_chars(context_window),
        focus=focus,
        is_secret=is_secret,
        home=home_dir(env),
    )
