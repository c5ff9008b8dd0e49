"""Skills (Agent Skills ``SKILL.md`` folders): discovery, trust zones, precedence and name clashes.

Discovery (:func:`discover_skills`), in precedence order (a name found earlier wins a clash):

1. project: ``.agents/skills/`` in every directory from the focus directory up to the project root (deeper
   first), then ``<project root>/.claude/skills/``;
2. configured: ``SkillSettings.extra_roots`` in the order given (e.g. ``<workspace>/.gemini/skills``);
3. user: ``~/.agents/skills``, then ``<user config dir>/skills``;
4. bundled: the skills shipped with the server.

In each root, directories are walked in name order, depth first, to ``max_depth`` below the root; a directory
holding ``SKILL.md`` is a skill and is not walked further (its ``scripts/``, ``references/``… are resources).
Dependency folders (``workspace.dependency_folders``: ``.git``, ``node_modules``, ``deps``, a virtual
environment, a git submodule...) are skipped, and the focus directory is cut above the first one, so
their skills are never loaded; hidden directories are walked (skills live in ``.system/``, corpus
SK14). Per root at most ``max_dirs`` directories, overall at most ``max_skills`` SKILL.md files; hitting a
limit is reported, never silent. Only the start of each SKILL.md is read (its frontmatter); the body is read
by ``catalog.load_body`` on activation.

Symlinks (a skill directory, a category directory, SKILL.md itself, or the root) are followed only while the
real path stays inside the root's trust zone: for project roots the workspace root (or the project root when
the workspace lies inside it); for a configured root inside the workspace, the same; for user, bundled and
other configured roots, the root itself (resolved). Anything else is skipped with a diagnostic. The same
real SKILL.md reached twice (``.claude/skills`` linked to ``.agents/skills``) is loaded once, from the first
root. A name clash between different files: the first in precedence order wins, the loser is kept in
``SkillSet.shadowed`` with a warning naming the winner. A malformed skill never stops the others.

Sources: agentskills.io client implementation guide (scan, limits, collisions, lenient parsing); Codex
``core-skills/src/loader.rs`` (``.agents/skills`` from root to cwd, depth 6, 2000 directories).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from agent_ls.core.file_diagnostics import FileDiagnostic, Severity
from agent_ls.instructions.catalog import (
    load_body,
    render_activation,
    render_catalog,
    skill_files,
    substitute_arguments,
)
from agent_ls.instructions.frontmatter import read_head
from agent_ls.instructions.skill_lint import overlap_warnings, spec_diagnostics
from agent_ls.instructions.skill_parse import Skill, SkillSource, parse_skill
from agent_ls.workspace.dependency_folders import dependency_folder, first_party

__all__ = [
    "Skill",
    "SkillRoot",
    "SkillSet",
    "SkillSettings",
    "SkillSource",
    "discover_skills",
    "load_body",
    "overlap_warnings",
    "render_activation",
    "render_catalog",
    "skill_files",
    "skill_roots",
    "substitute_arguments",
]


@dataclass(frozen=True)
class SkillSet:
    """What discovery found.

    Attributes:
        skills: the winners, sorted by name (one per name).
        shadowed: skills that lost a name clash, in discovery order (each with a warning naming the winner).
        skipped: one error per SKILL.md not loaded (no frontmatter, no description, unparseable even
            leniently, symlink out of its trust zone, over a limit), plus limit notices, each with a reason.
        diagnostics: everything, grouped by file in discovery order, by line within a file; clash and
            overlap warnings included.
    """

    skills: tuple[Skill, ...]
    shadowed: tuple[Skill, ...]
    skipped: tuple[FileDiagnostic, ...]
    diagnostics: tuple[FileDiagnostic, ...]

    def get(self, name: str) -> Skill | None:
        """The winning skill called ``name`` (its safe id), or ``None``."""
        return next((skill for skill in self.skills if skill.name == name), None)

    def model_invocable(self) -> tuple[Skill, ...]:
        """The skills the model may activate (the catalog and the ``skill`` tool's enum), by name."""
        return tuple(skill for skill in self.skills if skill.model_invocable)

    def wire(self) -> dict[str, object]:
        """``{"skills": [Skill.wire()…], "shadowed": […], "skipped": [FileDiagnostic.wire()…]}``."""
        return {
            "skills": [skill.wire() for skill in self.skills],
            "shadowed": [skill.wire() for skill in self.shadowed],
            "skipped": [d.wire() for d in self.skipped],
        }


@dataclass(frozen=True)
class SkillSettings:
    """Discovery settings.

    Attributes:
        extra_roots: configured roots (absolute), scanned after the project roots, hidden or not.
        max_depth: how deep below a root a skill directory may be (``root/x/SKILL.md`` is depth 1).
        max_dirs: directories walked per root at most.
        max_skills: SKILL.md files read overall at most.
    """

    extra_roots: tuple[Path, ...] = ()
    max_depth: int = 6
    max_dirs: int = 2000
    max_skills: int = 500


@dataclass(frozen=True)
class SkillRoot:
    """A directory searched for skills: ``path`` as configured, ``zone`` (resolved) its symlinks stay in."""

    path: Path
    source: SkillSource
    zone: Path


def _inside(path: Path, zone: Path) -> bool:
    return path == zone or path.is_relative_to(zone)


def skill_roots(
    *,
    workspace_root: Path,
    project_root: Path,
    focus_dir: Path | None,
    home: Path | None,
    user_config_dir: Path | None,
    bundled_dir: Path | None,
    settings: SkillSettings = SkillSettings(),
) -> tuple[SkillRoot, ...]:
    """The skills roots in precedence order (module docstring), existing or not (watchers use them too)."""
    workspace, project = workspace_root.resolve(), project_root.resolve()
    project_zone = project if _inside(workspace, project) else workspace
    chain = [project_root]
    if focus_dir is not None and focus_dir.is_relative_to(workspace_root):
        focus_dir = first_party(workspace_root, focus_dir)  # skills in dependency folders are data
    if focus_dir is not None:
        try:
            relative = focus_dir.relative_to(project_root)
        except ValueError:
            relative = None
        if relative is not None:
            for part in relative.parts:
                chain.append(chain[-1] / part)
    roots = [SkillRoot(d / ".agents" / "skills", "project", project_zone) for d in reversed(chain)]
    roots.append(SkillRoot(project_root / ".claude" / "skills", "project", project_zone))
    for extra in settings.extra_roots:
        real = extra.resolve()
        roots.append(SkillRoot(extra, "configured", project_zone if _inside(real, project_zone) else real))
    user = [home / ".agents" / "skills"] if home is not None else []
    user += [user_config_dir / "skills"] if user_config_dir is not None else []
    roots += [SkillRoot(path, "user", path.resolve()) for path in user]
    if bundled_dir is not None:
        roots.append(SkillRoot(bundled_dir, "bundled", bundled_dir.resolve()))
    return tuple(roots)


@dataclass
class _Discovery:
    """The mutable state of one discovery run."""

    settings: SkillSettings
    found: list[Skill] = field(default_factory=list)
    name_lines: dict[Path, tuple[int, int, int]] = field(default_factory=dict)
    skipped: list[FileDiagnostic] = field(default_factory=list)
    notes: list[FileDiagnostic] = field(default_factory=list)
    seen_files: set[Path] = field(default_factory=set)
    seen_roots: set[Path] = field(default_factory=set)
    read: int = 0

    def skip(self, path: Path, message: str, severity: Severity = "error") -> None:
        self.skipped.append(FileDiagnostic(path, 0, 0, 0, severity, message))

    def scan(self, root: SkillRoot) -> None:
        try:
            real_root = root.path.resolve(strict=True)
        except OSError:
            return  # an absent root is the normal case
        if not real_root.is_dir() or real_root in self.seen_roots:
            return
        self.seen_roots.add(real_root)
        if not _inside(real_root, root.zone):
            self.skip(
                root.path, f"skills folder links to {real_root}, outside {root.zone}; not scanned", "warning"
            )
            return
        stack = [(root.path, real_root, 0)]
        visited = {real_root}
        walked = too_deep = 0
        while stack:
            path, real, depth = stack.pop()
            walked += 1
            if walked > self.settings.max_dirs:
                self.skip(
                    root.path, f"stopped after {self.settings.max_dirs} directories (max_dirs)", "warning"
                )
                break
            try:
                with os.scandir(real) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            marker = next((e for e in entries if e.name == "SKILL.md"), None)
            if marker is not None:
                self.load(root, path, real, marker)
                continue
            children: list[tuple[Path, Path, int]] = []
            for entry in entries:
                child = self.child(root, entry, real, visited)
                if child is None:
                    continue
                if depth >= self.settings.max_depth:
                    too_deep += 1
                    continue
                children.append((path / entry.name, child, depth + 1))
            stack.extend(reversed(children))
        if too_deep:
            message = (
                f"{too_deep} directories deeper than {self.settings.max_depth} levels not scanned (max_depth)"
            )
            self.skip(root.path, message, "information")

    def child(self, root: SkillRoot, entry: os.DirEntry[str], real: Path, visited: set[Path]) -> Path | None:
        """The real path of a subdirectory to walk, or ``None`` (not a directory, skipped, out of zone…)."""
        if dependency_folder(Path(entry.path), root.zone) is not None:
            return None
        try:
            if not entry.is_dir():
                return None
            link = entry.is_symlink()
        except OSError:
            return None
        child = Path(os.path.realpath(entry.path)) if link else real / entry.name
        if link and not _inside(child, root.zone):
            if (child / "SKILL.md").is_file():
                message = f"skill folder links to {child}, outside {root.zone}; not loaded"
                self.skip(Path(entry.path) / "SKILL.md", message)
            return None
        if child in visited:
            return None
        visited.add(child)
        return child

    def load(self, root: SkillRoot, skill_dir: Path, real_dir: Path, marker: os.DirEntry[str]) -> None:
        path = skill_dir / "SKILL.md"
        real = real_dir / "SKILL.md"
        try:
            if not marker.is_file():
                why = "is a broken link" if marker.is_symlink() else "is not a file"
                self.skip(path, f"SKILL.md {why}; not loaded")
                return
            if marker.is_symlink():
                real = Path(os.path.realpath(marker.path))
                if not _inside(real, root.zone):
                    self.skip(path, f"SKILL.md links to {real}, outside {root.zone}; not loaded")
                    return
            size = real.stat().st_size
        except OSError as error:
            self.skip(path, f"SKILL.md cannot be read ({error.strerror or error}); not loaded")
            return
        if real in self.seen_files:
            return  # the same file through another root or link: loaded once, from the first
        self.seen_files.add(real)
        if self.read >= self.settings.max_skills and root.source != "bundled":
            # The bundled skills come last in precedence but never count: the editor's code actions
            # (review, explain, tests, fix) must keep working in a workspace with hundreds of skills.
            self.skip(path, f"over the limit of {self.settings.max_skills} skills (max_skills); not loaded")
            return
        self.read += root.source != "bundled"
        try:
            text, complete = read_head(real, hard_links_base=real.parent)
        except (OSError, UnicodeDecodeError) as error:
            self.skip(path, f"SKILL.md cannot be read as UTF-8 text ({error}); not loaded")
            return
        parsed, diagnostics = parse_skill(path, text, complete=complete, dir_name=skill_dir.name)
        if parsed is None:
            self.notes.extend(d for d in diagnostics if d.severity != "error")
            self.skipped.extend(d for d in diagnostics if d.severity == "error")
            return
        # The bundled skills are held to the spec by a test (tests/unit/instructions/test_bundled_skills.py)
        # rather than at every start: the reference validator's import (strictyaml) costs start-up time.
        lint = [] if root.source == "bundled" else spec_diagnostics(path, parsed, skill_dir)
        name_span = parsed.frontmatter.spans.get("name")
        if name_span is not None:
            self.name_lines[path] = (name_span.line, name_span.start, name_span.end)
        self.found.append(
            Skill(
                name=parsed.name,
                description=parsed.description,
                source=root.source,
                path=path,
                base_dir=real_dir,
                root=root.path,
                model_invocable=parsed.model_invocable,
                allowed_tools=parsed.allowed_tools,
                argument_hint=parsed.argument_hint,
                metadata=parsed.metadata,
                size_bytes=size,
                diagnostics=_by_line([*diagnostics, *lint]),
                description_line=parsed.description_line,
            )
        )


def _by_line(diagnostics: list[FileDiagnostic]) -> tuple[FileDiagnostic, ...]:
    return tuple(sorted(diagnostics, key=lambda d: (d.line, d.character)))


def _with(skill: Skill, extra: list[FileDiagnostic]) -> Skill:
    return replace(skill, diagnostics=_by_line([*skill.diagnostics, *extra])) if extra else skill


def discover_skills(
    *,
    workspace_root: Path,
    project_root: Path,
    focus_dir: Path | None,
    home: Path | None,
    user_config_dir: Path | None,
    bundled_dir: Path | None,
    settings: SkillSettings = SkillSettings(),
) -> SkillSet:
    """Find, read and check every skill visible from ``focus_dir`` (module docstring for order and rules).

    Args:
        workspace_root: the LSP workspace folder (absolute): the trust zone of project roots.
        project_root: the nearest ancestor with a project marker (or the workspace root).
        focus_dir: the directory of the file in focus (absolute), or ``None`` for the project root only.
        home: the user's home (``~/.agents/skills``), or ``None`` to skip.
        user_config_dir: the agent-ls user config dir (``<it>/skills``), or ``None``.
        bundled_dir: the bundled skills folder, or ``None``.
        settings: extra roots and limits.

    Returns:
        The :class:`SkillSet`. Blocking (disk reads: directory listings and each SKILL.md's first KiBs).
        Never raises: every problem is a diagnostic.
    """
    roots = skill_roots(
        workspace_root=workspace_root,
        project_root=project_root,
        focus_dir=focus_dir,
        home=home,
        user_config_dir=user_config_dir,
        bundled_dir=bundled_dir,
        settings=settings,
    )
    run = _Discovery(settings)
    for root in roots:
        run.scan(root)
    winners: dict[str, Skill] = {}
    shadowed: list[Skill] = []
    for skill in run.found:
        winner = winners.setdefault(skill.name, skill)
        if winner is skill:
            continue
        line, start, end = run.name_lines.get(skill.path, (0, 0, 3))
        message = (
            f"skill {skill.name!r} is shadowed by {winner.path} ({winner.source}), which takes precedence"
        )
        shadowed.append(_with(skill, [FileDiagnostic(skill.path, line, start, end, "warning", message)]))
    overlaps: dict[Path, list[FileDiagnostic]] = {}
    for diagnostic in overlap_warnings([s for s in run.found if winners[s.name] is s and s.model_invocable]):
        overlaps.setdefault(diagnostic.path, []).append(diagnostic)
    skills = {name: _with(skill, overlaps.get(skill.path, [])) for name, skill in winners.items()}
    order = {s.path: i for i, s in enumerate(run.found)}
    everything = [d for s in (*skills.values(), *shadowed) for d in s.diagnostics]
    everything += run.notes + run.skipped
    everything.sort(key=lambda d: (order.get(d.path, len(order)), str(d.path), d.line, d.character))
    return SkillSet(
        skills=tuple(sorted(skills.values(), key=lambda s: s.name)),
        shadowed=tuple(shadowed),
        skipped=tuple(run.skipped),
        diagnostics=tuple(everything),
    )
