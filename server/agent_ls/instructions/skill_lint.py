"""Strict checks of skills, as diagnostics: the Agent Skills spec (``skills-ref``) and description overlap.

Lint only: a finding here never stops a skill from loading (loading is
:mod:`agent_ls.instructions.skill_parse`'s lenient job). Each finding is positioned on the line of the key it
is about, else on line 0 (the opening ``---``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from agent_ls.core.file_diagnostics import FileDiagnostic, Severity
from agent_ls.instructions.frontmatter import KeySpan
from agent_ls.instructions.skill_parse import ParsedSkill, Skill

HONOURED_FIELDS = frozenset(
    {
        "disable-model-invocation",
        "allowed-tools",
        "argument-hint",
        "metadata",
        "user-invocable",
        "when_to_use",
        "license",
        "compatibility",
    }
)
"""Keys agent-ls reads or accepts beyond ``name`` and ``description``: never reported as unexpected."""

OTHER_HARNESS_FIELDS = frozenset({"model", "context", "agent", "effort", "hooks"})
"""Claude Code extensions agent-ls ignores: reported as information, not as a warning."""

OVERLAP_THRESHOLD = 0.6
"""Jaccard similarity of two descriptions' content-word sets from which they are said to overlap strongly."""
MAX_OVERLAPS_NAMED = 3
"""Overlap warnings one skill gets at most (the rest are counted in the last one)."""

_SPEC = "Agent Skills specification, skills-ref"
_KEY_OF_FINDING = (
    (("Skill name", "Directory name", "Field 'name'"), "name"),
    (("Description", "Field 'description'"), "description"),
    (("Compatibility", "Field 'compatibility'"), "compatibility"),
)


def _finding_key(finding: str) -> str | None:
    for prefixes, key in _KEY_OF_FINDING:
        if finding.startswith(prefixes):
            return key
    return None


def spec_diagnostics(path: Path, skill: ParsedSkill, skill_dir: Path) -> list[FileDiagnostic]:
    """Validate a parsed frontmatter with the reference validator and position its findings.

    Runs ``skills_ref.validator.validate_metadata`` (PyPI ``skills-ref``, the agentskills.io reference) on
    the mapping as loaded (BOM stripped, CRLF normalized, leniently loaded if it had to be). Each finding
    becomes a warning on its key's line, except:

    - "Unexpected fields": one diagnostic per key, on its line, leaving out :data:`HONOURED_FIELDS`
      (information for :data:`OTHER_HARNESS_FIELDS`);
    - a missing or unusable ``name``: already reported by the parser (directory-name fallback).

    Args:
        path: the SKILL.md as found (diagnostics' path).
        skill: the parsed frontmatter.
        skill_dir: the skill's directory as found (its name is compared with ``name``).

    Returns:
        Diagnostics in file-line order. A crash of the validator becomes one information diagnostic; this
        function never raises.
    """
    # Imported here: skills_ref pulls in strictyaml, which only validation needs.
    from skills_ref import validator

    spans = skill.frontmatter.spans

    def at(key: str | None, severity: Severity, message: str) -> FileDiagnostic:
        span = spans.get(key, KeySpan(0, 0, 3)) if key is not None else KeySpan(0, 0, 3)
        return FileDiagnostic(path, span.line, span.start, span.end, severity, message)

    try:
        findings: list[str] = validator.validate_metadata(dict(skill.frontmatter.data), skill_dir)
    except Exception as error:  # a third-party bug must not stop discovery
        return [at(None, "information", f"the spec validator skills-ref failed: {error!r}")]
    allowed = set(validator.ALLOWED_FIELDS) | HONOURED_FIELDS
    out: list[FileDiagnostic] = []
    for finding in findings:
        if finding.startswith("Unexpected fields"):
            for key in skill.frontmatter.data:
                if key in allowed:
                    continue
                if key in OTHER_HARNESS_FIELDS:
                    out.append(at(key, "information", f"field {key!r} is a Claude Code extension; ignored"))
                else:
                    message = f"unexpected field {key!r}: not in the Agent Skills specification; ignored"
                    out.append(at(key, "warning", message))
            continue
        finding_key = _finding_key(finding)
        if (finding_key == "name" and skill.raw_name is None) or finding.endswith("frontmatter: name"):
            continue  # the parser already said which directory name is used instead
        out.append(at(finding_key, "warning", f"{finding} ({_SPEC})"))
    return sorted(out, key=lambda d: (d.line, d.character))


_WORD = re.compile(r"[^\W_]+")
_STOPWORDS = frozenset(
    """
    a about after all also an and any are as at be been before being both but by can could do does doing
    each either for from has have how if in into is it its just may more most must no not of on only or
    other our out over should so some such than that the their them then there these they this those to
    under up use used uses using via was were what when whenever where whether which while who will with
    would you your skill skills user users asks ask want wants need needs task tasks help helps
    """.split()
)


def content_words(text: str) -> frozenset[str]:
    """The lowercased words of ``text`` that carry meaning: 3+ characters, no stopword or boilerplate."""
    return frozenset(w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOPWORDS)


def overlap_warnings(skills: Sequence[Skill], threshold: float = OVERLAP_THRESHOLD) -> list[FileDiagnostic]:
    """Warnings for pairs of skills whose descriptions overlap strongly (the model may pick the wrong one).

    Similarity is the Jaccard index of the two descriptions' :func:`content_words` sets (shared words over
    all words), computed through an inverted index, so only pairs sharing a word cost anything (n ≤ 500 is
    milliseconds). A pair at or above ``threshold`` gives a warning on each file, on its ``description``
    line: ``description overlaps strongly with skill 'x' (67% of content words shared, <path>)``. A skill
    names at most :data:`MAX_OVERLAPS_NAMED` partners, the most similar first (ties by name), the last one
    saying how many more there are.

    Args:
        skills: the skills to compare (discovery passes the model-invocable winners).
        threshold: the Jaccard index from which a pair is reported, 0–1.

    Returns:
        Diagnostics sorted by path, line and message (deterministic).
    """
    words = [content_words(skill.description) for skill in skills]
    index: dict[str, list[int]] = defaultdict(list)
    partners: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for i, own in enumerate(words):
        shared: dict[int, int] = defaultdict(int)
        for word in own:
            for j in index[word]:
                shared[j] += 1
            index[word].append(i)
        for j, count in shared.items():
            similarity = count / (len(own) + len(words[j]) - count)
            if similarity >= threshold:
                partners[i].append((similarity, j))
                partners[j].append((similarity, i))
    out: list[FileDiagnostic] = []
    for i, found in partners.items():
        this = skills[i]
        found.sort(key=lambda p: (-p[0], skills[p[1]].name, str(skills[p[1]].path)))
        named = found[:MAX_OVERLAPS_NAMED]
        for rank, (similarity, j) in enumerate(named, 1):
            other = skills[j]
            message = (
                f"description overlaps strongly with skill {other.name!r} ({round(similarity * 100)}% of"
                f" content words shared, {other.path}): make their triggers distinct"
            )
            if rank == len(named) and len(found) > len(named):
                message += f"; {len(found) - len(named)} more skills overlap too"
            end = len("description")
            out.append(FileDiagnostic(this.path, this.description_line, 0, end, "warning", message))
    return sorted(out, key=lambda d: (str(d.path), d.line, d.message))
