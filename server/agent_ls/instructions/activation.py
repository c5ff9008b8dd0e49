"""Skill activation for one session: what the ``skill`` tool and explicit ``/name args`` invocation inject.

An activation is the skill's body (frontmatter removed, ``$ARGUMENTS`` substituted), its base directory and
a capped list of its files, in one ``<instructions source="skill:NAME">`` block: trusted text, outside any
tool-result wrapper. Activations are deduplicated (a second call for an active skill returns a short note)
and kept in order, so a later compaction can re-attach them (pinned, as OpenCode never prunes ``skill``
results and the Agent Skills client guide asks). Behaviour follows the Agent Skills client implementation
guide (agentskills ``docs/client-implementation/adding-skills-support.mdx``) and OpenCode ``tool/skill.ts``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent_ls.core.context import instructions_block
from agent_ls.instructions.skills import (
    Skill,
    SkillSet,
    load_body,
    render_activation,
    skill_files,
    substitute_arguments,
)

MAX_BODY_BYTES = 40_000
"""A longer body (SK01's is 73,938 bytes) is cut at a UTF-8 boundary with a visible marker; the rest stays
readable with read_file."""
MAX_READ_BYTES = 128 * 1024
"""What activation reads of a SKILL.md at most: the frontmatter (64 KiB at most), then over the body cap."""
MAX_LISTED_FILES = 20

# "/code-review args": a skill name as skills-ref accepts it (Unicode letters and digits, "-"), leniently
# any case and with "." or "_", then blanks or the end.
# Punctuation right after the name is not part of it ("/code-review: focus auth", "/explain, please").
_SLASH = re.compile(r"\s*/([^\W_][\w.-]*?)[.:,;!?]*(?:\s+(.*))?\s*\Z", re.DOTALL)


@dataclass(frozen=True)
class Activation:
    """One activated skill: ``name``, and ``text``, the instructions block the model reads."""

    name: str
    text: str


def parse_slash(task: str) -> tuple[str, str] | None:
    """``("code-review", "focus on auth")`` for ``/code-review focus on auth``; None when ``task`` does not
    start with ``/name``. Whether ``name`` is a skill is the caller's question."""
    found = _SLASH.match(task)
    if found is None:
        return None
    return found[1], (found[2] or "").strip()


def base_label(skill: Skill, workspace_root: Path) -> str:
    """The skill's folder as the model should name it to read_file: workspace-relative when inside the
    workspace, else absolute (read_file may read it: ``PathPolicy`` extra directory)."""
    try:
        return skill.base_dir.relative_to(workspace_root.resolve()).as_posix()
    except ValueError:
        return skill.base_dir.as_posix()


def _capped(body: str, skill: Skill, label: str, *, complete: bool) -> str:
    """``body`` cut to ``MAX_BODY_BYTES`` with a visible marker; ``complete`` False: the file was read only in
    part, so the total is the file's size."""
    data = body.encode("utf-8")
    if len(data) <= MAX_BODY_BYTES and complete:
        return body
    kept = data[:MAX_BODY_BYTES].decode("utf-8", errors="ignore")  # drops a split code point
    shown = len(kept.encode("utf-8"))
    total = f"{len(data):,} bytes" if complete else f"a {skill.size_bytes:,}-byte SKILL.md"
    return (
        f"{kept}\n[truncated: {shown:,} of {total}; read the rest with read_file {label}/{skill.path.name}]"
    )


def find_skill(skills: SkillSet, name: str) -> Skill | None:
    """The skill ``name`` names: exactly, else ignoring case (``/Code-Review``)."""
    return skills.get(name) or skills.get(name.lower())


def near_names(skills: SkillSet, name: str) -> list[str]:
    """Up to three skill names close to ``name``, for "did you mean" (difflib ratio ≥ 0.6)."""
    return difflib.get_close_matches(name.lower(), [s.name for s in skills.skills], n=3)


class SkillActivations:
    """The skills of one session and the ones activated so far.

    Args:
        skills: the skills found for the session.
        workspace_root: the first root (base directories are shown relative to it when inside).
    """

    def __init__(self, skills: SkillSet, workspace_root: Path) -> None:
        self.skills = skills
        self._root = workspace_root
        self._active: dict[str, Activation] = {}
        self.on_activate: Callable[[Skill], None] | None = None
        """Called with each skill as it is activated (the session loads the deferred tools its
        ``allowed-tools`` names: ``assembly``); must not raise."""

    def is_active(self, name: str) -> bool:
        return name in self._active

    def activate(self, name: str, args: str = "") -> Activation | None:
        """Activate ``name``; None when it is already active in this session.

        Raises:
            KeyError: no skill of that name.
            OSError: its SKILL.md can no longer be read.
        """
        skill = self.skills.get(name)
        if skill is None:
            raise KeyError(name)
        if name in self._active:
            return None
        label = base_label(skill, self._root)
        complete = skill.size_bytes <= MAX_READ_BYTES
        raw = load_body(skill, None if complete else MAX_READ_BYTES)
        body = _capped(substitute_arguments(raw, args), skill, label, complete=complete)
        files, total = skill_files(skill, MAX_LISTED_FILES)
        content = render_activation(skill, body, files, total, label)
        activation = Activation(name, instructions_block(f"skill:{name}", content))
        self._active[name] = activation
        if self.on_activate is not None:
            self.on_activate(skill)
        return activation

    def active(self) -> tuple[Activation, ...]:
        """Every activation, in order: what a compaction must keep (pinned)."""
        return tuple(self._active.values())

    def active_folders(self) -> list[Path]:
        """The folders of the activated skills (their ``base_dir``), in activation order; a skill no
        longer in ``skills`` (a reload removed it) is left out."""
        found = (self.skills.get(activation.name) for activation in self.active())
        return [skill.base_dir for skill in found if skill is not None]
