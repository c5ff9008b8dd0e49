"""A skill as loaded (:class:`Skill`), and the lenient reading of the SKILL.md frontmatter it comes from.

Order for one file (:func:`parse_skill`):

1. :func:`~agent_ls.instructions.frontmatter.split_frontmatter`, the one splitter (BOM, CRLF, ``---`` lines).
   No frontmatter, or one never closed → not loaded, with an error diagnostic.
2. :func:`~agent_ls.instructions.frontmatter.load_frontmatter`: YAML, then once with colon-quoting; a
   warning when loaded leniently, an error (not loaded) when it still fails or is not a mapping.
3. The fields. Keys are case-sensitive (``Name`` is not ``name``, corpus SK11); a repeated key keeps its
   last value, with a warning. ``name`` falls back to the directory name (warning) and is turned into a safe
   id (:func:`skill_id`, warning when that changes it). ``description`` must be non-empty text or the skill
   is not loaded; a scalar YAML types as a number or date is taken as written (``skills-ref`` reports it).
   The honoured extension keys (``disable-model-invocation``, ``allowed-tools``, ``argument-hint``,
   ``metadata``) are read leniently, each problem a warning.

Spec validation (``skills-ref``) is :mod:`agent_ls.instructions.skill_lint`'s job. Behaviour follows the
agentskills.io client implementation guide ("lenient parsing").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml

from agent_ls.core.file_diagnostics import FileDiagnostic, Severity
from agent_ls.instructions.frontmatter import (
    KeySpan,
    LoadedFrontmatter,
    frontmatter_unclosed,
    load_frontmatter,
    node_text,
    split_frontmatter,
)

SkillSource = Literal["project", "user", "bundled", "configured"]

MAX_NAME_CHARS = 64
"""Agent Skills specification: ``name`` is 1–64 characters."""

_LINE_BREAK = re.compile(r"\r\n?")
_TRUE = frozenset({"true", "yes", "on"})
_FALSE = frozenset({"false", "no", "off"})


CHECKS_KEY = "checks"
"""The ``metadata`` key of a skill's acceptance checks (``tools.acceptance.CHECKS_METADATA_KEY``)."""
CHECKS_LIST_NOTE = (
    "metadata 'checks' is a list: each item is read as one command (the Agent Skills spec makes metadata "
    "values strings; a block string 'checks: |' with one command per line works everywhere)"
)
CHECKS_NOT_TEXT = (
    "metadata 'checks' must be a string, one command per line, or a list of commands; ignored, no check runs"
)


@dataclass(frozen=True)
class ParsedSkill:
    """The fields of a SKILL.md frontmatter that agent-ls uses, read leniently.

    Attributes:
        name: the safe id (:func:`skill_id`) the skill is addressed by.
        raw_name: ``name`` as written, or ``None`` when missing or unusable (the directory name was used).
        description: stripped, LF line breaks only (block scalars keep their inner newlines).
        description_line: 0-based file line of the ``description`` key.
        model_invocable: False with ``disable-model-invocation: true``.
        allowed_tools: ``allowed-tools`` as a tuple, in file order.
        argument_hint: ``argument-hint`` as text, or ``None``.
        metadata: ``metadata`` entries as strings (values as written).
        frontmatter: the loaded mapping (for the spec validator).
        diagnostics: warnings found while reading (loaded leniently, name fallback, field types…), file order.
    """

    name: str
    raw_name: str | None
    description: str
    description_line: int
    model_invocable: bool
    allowed_tools: tuple[str, ...]
    argument_hint: str | None
    metadata: dict[str, str]
    frontmatter: LoadedFrontmatter
    diagnostics: tuple[FileDiagnostic, ...]


@dataclass(frozen=True)
class Skill:
    """One loaded skill: its frontmatter fields and where it was found. The body is never held here.

    Attributes:
        name: the id used for invocation and the ``skill`` tool's enum: the frontmatter ``name`` (or the
            directory name) made safe (``skill_parse.skill_id``); never used raw in paths or commands.
        description: one string, as YAML gives it (block scalars keep inner newlines), stripped, no ``\\r``.
        source: which kind of root it came from.
        path: the SKILL.md as found (not resolved; may be a symlink).
        base_dir: its directory, resolved: relative paths in the body are relative to it.
        root: the skills root it was found under.
        model_invocable: False with ``disable-model-invocation: true`` (then only explicit ``/name`` works).
        allowed_tools: ``allowed-tools``, recorded and shown only; never fed to the permission policy.
        argument_hint: ``argument-hint`` as written, or ``None``.
        metadata: the ``metadata`` map, values as strings.
        size_bytes: the size of SKILL.md on disk (bytes, from ``stat``).
        diagnostics: every diagnostic on this SKILL.md, clash and overlap warnings included, by line.
        description_line: 0-based line of the ``description`` key (where overlap warnings point).
    """

    name: str
    description: str
    source: SkillSource
    path: Path
    base_dir: Path
    root: Path
    model_invocable: bool
    allowed_tools: tuple[str, ...]
    argument_hint: str | None
    metadata: Mapping[str, str] = field(hash=False)  # a dict: left out so a Skill stays hashable
    size_bytes: int
    diagnostics: tuple[FileDiagnostic, ...]
    description_line: int = 0

    def wire(self) -> dict[str, object]:
        """The camelCase JSON object of ``agent.listSkills`` and ``agent-ls skills --json``."""
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "path": str(self.path),
            "baseDir": str(self.base_dir),
            "modelInvocable": self.model_invocable,
            "allowedTools": list(self.allowed_tools),
            "argumentHint": self.argument_hint,
            "diagnostics": [d.wire() for d in self.diagnostics],
        }


def skill_id(raw: str) -> str:
    """The safe id of a skill name: what it is invoked by and listed as; never used raw in paths or commands.

    NFKC-normalised and lowercased; every run of characters that are not letters or digits
    (``str.isalnum``, so Unicode letters stay, as the reference validator ``skills-ref`` accepts them)
    becomes one ``-``; leading and trailing ``-`` removed; at most 64 characters.
    ``"Ahrefs Automation"`` → ``"ahrefs-automation"``. Returns ``""`` when nothing usable is left.
    """
    out: list[str] = []
    for char in unicodedata.normalize("NFKC", raw).lower():
        if char.isalnum():
            out.append(char)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-")[:MAX_NAME_CHARS].rstrip("-")


def split_allowed_tools(text: str) -> list[str]:
    """``allowed-tools`` as one string: entries separated by blanks (the spec) or commas (Claude Code).

    Separators inside parentheses belong to the entry: ``"Bash(git diff:*) Read, Grep"`` →
    ``["Bash(git diff:*)", "Read", "Grep"]``.
    """
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                out.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        out.append("".join(current))
    return out


class _Reader:
    """Reads the fields of one loaded frontmatter, collecting diagnostics in file order."""

    def __init__(self, path: Path, frontmatter: LoadedFrontmatter) -> None:
        self.path = path
        self.fm = frontmatter
        self.diagnostics: list[FileDiagnostic] = []

    def span(self, key: str) -> KeySpan:
        return self.fm.spans.get(key, KeySpan(0, 0, 3))

    def report(self, key: str, severity: Severity, message: str) -> None:
        span = self.span(key)
        self.diagnostics.append(FileDiagnostic(self.path, span.line, span.start, span.end, severity, message))

    def text(self, key: str) -> str | None:
        """A scalar value as text (stripped, LF only); ``None`` when absent, null, blank or a collection."""
        value = self.fm.texts.get(key)
        if value is None:
            return None
        value = _LINE_BREAK.sub("\n", value).strip()
        return value or None

    def name(self, dir_name: str) -> tuple[str, str | None]:
        """``(id, raw name or None)``; ``id`` is ``""`` when neither the name nor the directory gives one."""
        raw = self.text("name")
        if raw is not None:
            ident = skill_id(raw)
            if ident and ident != raw:
                message = f"name {raw!r} is not a valid skill name; addressed as {ident!r}"
                self.report("name", "warning", message)
            if ident:
                return ident, raw
        ident = skill_id(dir_name)
        called = f"{dir_name!r}" if ident == dir_name else f"{dir_name!r} (as {ident!r})"
        if "name" not in self.fm.data:
            why = "no 'name' in the frontmatter"
        elif raw is None:
            why = "'name' is empty or not text"
        else:
            why = f"name {raw!r} has no letters or digits"
        if ident:
            self.report("name", "warning", f"{why}; the skill is named after its directory, {called}")
        return ident, None

    def model_invocable(self) -> bool:
        key = "disable-model-invocation"
        value = self.fm.data.get(key)
        if value is None or isinstance(value, bool):
            return value is not True
        text = (self.text(key) or "").lower()
        if text in _TRUE or text in _FALSE:
            return text in _FALSE
        # Fail closed: the author meant to restrict the skill; only /name (or the editor) runs it.
        shown = self.fm.data.get("name", "name")
        message = f"'{key}' must be true or false; read as true (only /{shown} runs it)"
        self.report(key, "warning", message)
        return False

    def allowed_tools(self) -> tuple[str, ...]:
        key = "allowed-tools"
        node = self.fm.value_nodes.get(key)
        if node is None or self.fm.data.get(key) is None:
            return ()
        if isinstance(node, yaml.SequenceNode):
            items = (node_text(item, self.fm.source).strip() for item in node.value)
            return tuple(item for item in items if item and item not in ("~", "null"))
        text = self.text(key)
        if text is None:
            self.report(key, "warning", f"'{key}' must be a string or a list of tools; ignored")
            return ()
        return tuple(split_allowed_tools(text))

    def argument_hint(self) -> str | None:
        node = self.fm.value_nodes.get("argument-hint")
        if node is None or self.fm.data.get("argument-hint") is None:
            return None
        return node_text(node, self.fm.source).strip() or None

    def metadata(self) -> dict[str, str]:
        node = self.fm.value_nodes.get("metadata")
        if node is None or self.fm.data.get("metadata") is None:
            return {}
        if not isinstance(node, yaml.MappingNode):
            self.report("metadata", "warning", "'metadata' must be a mapping of keys to strings; ignored")
            return {}
        source = self.fm.source
        entries: dict[str, str] = {}
        for key, value in node.value:
            name = node_text(key, source)
            if name == CHECKS_KEY and not isinstance(value, yaml.ScalarNode):
                checks = self.checks(value)
                if checks is not None:
                    entries[name] = checks
                continue
            entries[name] = "" if value.tag.endswith(":null") else node_text(value, source)
        return entries

    def checks(self, node: yaml.Node) -> str | None:
        """A ``metadata`` ``checks`` value that is not a string: a list of plain strings is read as one
        command per item (what users write; information diagnostic), anything else is dropped with a warning
        (its source text would become a bogus command such as ``- grep -q 3 app.py``)."""
        items = node.value if isinstance(node, yaml.SequenceNode) else None
        if items is not None and all(isinstance(i, yaml.ScalarNode) and "\n" not in i.value for i in items):
            self.report("metadata", "information", CHECKS_LIST_NOTE)
            return "\n".join(str(item.value) for item in items)
        self.report("metadata", "warning", CHECKS_NOT_TEXT)
        return None


def parse_skill(
    path: Path, text: str, *, complete: bool, dir_name: str
) -> tuple[ParsedSkill | None, list[FileDiagnostic]]:
    """Read a SKILL.md (module docstring, steps 1–3).

    Args:
        path: the file, for diagnostics.
        text: the file, or the prefix :func:`~agent_ls.instructions.frontmatter.read_head` returned.
        complete: ``text`` is the whole file (only changes the message for an unclosed frontmatter).
        dir_name: the name of the skill's directory as found (the ``name`` fallback).

    Returns:
        ``(skill, diagnostics)``: ``skill`` is ``None`` when the file is not loaded, and then
        ``diagnostics`` holds at least one error saying why; otherwise ``diagnostics`` equals
        ``skill.diagnostics``. Never raises.
    """
    yaml_text, _, _ = split_frontmatter(text)
    if yaml_text is None:
        if not frontmatter_unclosed(text):
            why = "no frontmatter: SKILL.md must start with a '---' line (Agent Skills specification)"
        elif complete:
            why = "the frontmatter opened on line 1 is never closed by a '---' line"
        else:
            why = "the frontmatter opened on line 1 is not closed within the first 64 KiB"
        return None, [FileDiagnostic(path, 0, 0, 3, "error", f"{why}; skill not loaded")]
    frontmatter, diagnostics = load_frontmatter(path, yaml_text)
    if frontmatter is None:
        return None, diagnostics
    reader = _Reader(path, frontmatter)
    reader.diagnostics.extend(diagnostics)
    for key, first, kept in frontmatter.duplicates:
        message = f"duplicate key {key!r} (also on line {first + 1}): the last one is used; others may differ"
        span = frontmatter.spans[key]
        reader.diagnostics.append(FileDiagnostic(path, kept, span.start, span.end, "warning", message))
    name, raw_name = reader.name(dir_name)
    description = reader.text("description")
    if not name or description is None:
        if not name:
            message = f"no usable name (nor directory name {dir_name!r}); skill not loaded"
            reader.report("name", "error", message)
        if description is None:
            written = "description" in frontmatter.data
            why = "'description' is empty or not text" if written else "no 'description'"
            reader.report("description", "error", f"{why} in the frontmatter; skill not loaded")
        return None, reader.diagnostics
    skill = ParsedSkill(
        name=name,
        raw_name=raw_name,
        description=description,
        description_line=reader.span("description").line,
        model_invocable=reader.model_invocable(),
        allowed_tools=reader.allowed_tools(),
        argument_hint=reader.argument_hint(),
        metadata=reader.metadata(),
        frontmatter=frontmatter,
        diagnostics=tuple(sorted(reader.diagnostics, key=lambda d: (d.line, d.character))),
    )
    return skill, list(skill.diagnostics)
