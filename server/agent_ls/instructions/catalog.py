"""What the model reads about skills: the catalog (prompt prefix) and an activation (``skill`` tool result).

Progressive disclosure (Agent Skills specification): the catalog carries only names and descriptions; the
body is read from disk (:func:`load_body`) and framed by :func:`render_activation` only when the model calls
``skill(name)`` or the user types ``/name args``; the skill's other files are only listed
(:func:`skill_files`), and read on demand.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from agent_ls.instructions.frontmatter import split_frontmatter
from agent_ls.instructions.skill_parse import Skill
from agent_ls.workspace.dependency_folders import dependency_name
from agent_ls.workspace.regular_files import open_regular

CATALOG_INTRO = "Skills: when a task matches one, call the skill tool with its name first, then follow it."
"""Short on purpose, like the list below: the catalog is in every request (DESIGN.md first-request budget)."""
MAX_DESCRIPTION_CHARS = 1024
"""Longest description the catalog shows (the Agent Skills spec maximum); longer ones end with "…"."""
ELLIPSIS = "…"
ARGUMENTS = "$ARGUMENTS"
_WORD_SLACK = 24
"""Never walked, neither by discovery nor by :func:`skill_files`."""
MAX_LISTED_WALK = 10_000
""":func:`skill_files` stops counting after this many files (the total is then a lower bound)."""

_SKILL_CONTENT_TAG = re.compile(r"<(?=\s*/?\s*skill_content)", re.IGNORECASE)


def _shorten(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its start and "…" (``limit`` characters at most).

    The cut goes back to the end of the last whole word when one ends in the last :data:`_WORD_SLACK`
    characters kept.
    """
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    kept = text[: limit - 1]
    if not text[limit - 1].isspace():
        space = kept.rfind(" ")
        if space > 0 and space >= len(kept) - _WORD_SLACK:
            kept = kept[:space]
    return kept.rstrip() + ELLIPSIS


def _render(entries: list[tuple[str, str]], limit: int) -> str:
    lines = [CATALOG_INTRO, "<available_skills>"]
    for name, description in entries:
        shown = _shorten(description, limit)
        lines.append(f"- {escape(name)}: {escape(shown)}" if shown else f"- {escape(name)}")
    lines.append("</available_skills>")
    return "\n".join(lines)


def render_catalog(skills: Sequence[Skill], budget_chars: int) -> str:
    """The skills catalog for the stable prompt prefix.

    Shape (one line per skill, ``&``/``<``/``>``/quotes escaped so that no text can close the element)::

        <intro line>
        <available_skills>
        - code-review: Review …
        </available_skills>

    A list inside the element rather than Pi's nested XML: the same information in about 45 fewer bytes
    per skill, in every request (the Agent Skills client guide allows XML, JSON or a list).

    Only model-invocable skills appear, sorted by name. Each description is put on one line (runs of
    blanks and newlines become one space) and cut at :data:`MAX_DESCRIPTION_CHARS` with a visible "…".
    When the whole text is longer than ``budget_chars``, one common per-description limit is lowered (binary
    search) until it fits: the longest descriptions are cut first, short ones stay whole, every cut ends with
    "…", and descriptions go entirely only when even names alone barely fit. Names are never dropped, even
    if the names alone exceed the budget. Deterministic: same skills and budget, byte-identical text.
    Behaviour follows Claude Code's skill listing budget (1% of the context window) and Pi's
    ``<available_skills>`` format.

    Args:
        skills: candidates (non-model-invocable ones are left out here).
        budget_chars: the size allowed for the whole text (characters; the caller's ~1% of the window × 4).

    Returns:
        The catalog, or ``""`` when no skill is model-invocable.
    """
    entries = sorted(
        ((s.name, " ".join(s.description.split())) for s in skills if s.model_invocable), key=lambda e: e[0]
    )
    if not entries:
        return ""
    full = _render(entries, MAX_DESCRIPTION_CHARS)
    if len(full) <= budget_chars:
        return full
    low, high = 0, MAX_DESCRIPTION_CHARS  # the answer is the largest limit that fits, or 0
    while low < high:
        middle = (low + high + 1) // 2
        if len(_render(entries, middle)) <= budget_chars:
            low = middle
        else:
            high = middle - 1
    return _render(entries, low)


def substitute_arguments(body: str, args: str) -> str:
    """Put the user's arguments into a skill body (explicit ``/name args`` invocation).

    Every ``$ARGUMENTS`` becomes ``args`` (Claude Code). A body without ``$ARGUMENTS`` gets
    ``"\\n\\nARGUMENTS: <args>"`` appended (after its trailing blank lines are removed) when ``args`` is not
    blank, so the arguments are never lost; with blank ``args`` it is returned unchanged.
    """
    if ARGUMENTS in body:
        return body.replace(ARGUMENTS, args)
    if not args.strip():
        return body
    return f"{body.rstrip()}\n\nARGUMENTS: {args}"


def render_activation(skill: Skill, body: str, files: list[str], total_files: int, base_label: str) -> str:
    """What activating a skill gives the model: its body, where it lives, and which files it has.

    Shape::

        <skill_content name="code-review">
        # Skill: code-review

        <body>

        Base directory for this skill: <base_label>
        Relative paths in this skill are relative to this base directory; read its files with read_file.
        <skill_files>
        <file>scripts/check.py</file>
        </skill_files>
        (3 more files not listed: list_files on the base directory shows them)
        </skill_content>

    The ``<skill_files>`` block is left out when the skill has no other file. A ``<skill_content`` or
    ``</skill_content`` inside the body is neutralized (``&lt;``), so the body cannot close the block.
    Behaviour follows OpenCode ``tool/skill.ts`` and the Agent Skills client implementation guide.

    Args:
        skill: the activated skill.
        body: its body (from ``load_body``, with arguments substituted, possibly truncated by the caller).
        files: the listed files, relative POSIX (from ``skill_files``).
        total_files: how many files the skill has in all.
        base_label: how the base directory is shown (workspace-relative or absolute).
    """
    lines = [
        f"<skill_content name={quoteattr(skill.name)}>",
        f"# Skill: {skill.name}",
        "",
        _SKILL_CONTENT_TAG.sub("&lt;", body.strip("\n")),
        "",
        f"Base directory for this skill: {base_label}",
        "Relative paths in this skill are relative to this base directory; read its files with read_file.",
    ]
    if files:
        lines.append("<skill_files>")
        lines += [f"<file>{escape(path)}</file>" for path in files]
        lines.append("</skill_files>")
    more = total_files - len(files)
    if more > 0:
        lines.append(f"({more} more files not listed: list_files on the base directory shows them)")
    lines.append("</skill_content>")
    return "\n".join(lines)


def load_body(skill: Skill, max_bytes: int | None = None) -> str:
    """The body of a skill, read now (at activation): frontmatter removed, BOM stripped, LF line endings.

    Args:
        skill: the skill.
        max_bytes: read at most this many bytes of SKILL.md (a code point split at the end is dropped);
            None reads it whole. A huge file must not be read into memory to show its first 40 KB.

    Raises:
        OSError: SKILL.md can no longer be read, is no longer a regular file, or is a hard link
            (``regular_files.open_regular``). UnicodeDecodeError: it is no longer UTF-8.
    """
    # Not blocking on a SKILL.md replaced by a FIFO since discovery; not reading a second name of a secret.
    with open_regular(skill.path, hard_links_base=skill.path.parent) as file:
        data = file.read() if max_bytes is None else file.read(max_bytes)
    text = codecs.getincrementaldecoder("utf-8")().decode(data, final=max_bytes is None)
    _, body, _ = split_frontmatter(text)
    return body


def skill_files(skill: Skill, cap: int = 20) -> tuple[list[str], int]:
    """The files of a skill (its resources), listed but not read.

    Args:
        skill: the skill.
        cap: how many paths to return at most.

    Returns:
        ``(paths, total)``: the first ``cap`` paths relative to ``base_dir`` (POSIX, sorted; the top-level
        SKILL.md left out; dependency folders (``.git``, ``node_modules``, ...) skipped; a symlinked
        directory listed as ``name/``, not followed) and how many there are (counting stops at
        :data:`MAX_LISTED_WALK`).
    """
    found: list[str] = []
    for directory, dirnames, filenames in os.walk(skill.base_dir):
        relative = Path(directory).relative_to(skill.base_dir)
        links = [d for d in dirnames if os.path.islink(os.path.join(directory, d))]
        found += [f"{(relative / d).as_posix()}/" for d in links]
        dirnames[:] = sorted(d for d in dirnames if not dependency_name(d) and d not in links)
        for name in filenames:
            if relative == Path(".") and name == "SKILL.md":
                continue
            found.append((relative / name).as_posix())
        if len(found) >= MAX_LISTED_WALK:
            break
    found.sort()
    return found[:cap], len(found)
