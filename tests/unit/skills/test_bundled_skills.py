"""Static checks of the bundled skills (``skills/<name>/SKILL.md``, shipped as ``agent_ls/bundled_skills``).

Each skill must hold to the Agent Skills specification (agentskills.io/specification), checked with its
reference validator ``skills-ref`` (PyPI), and to issue 6's rules for bundled skills:

- frontmatter parsed with pyyaml ``safe_load``, valid for ``skills_ref.validator.validate_metadata`` except
  for the extension keys we honour, read identically by skills-ref's own strictyaml parser (so other
  harnesses see the same name and description);
- ``name`` equals its directory;
- a short description (every one sits in every first request, whose budget is 1,400 estimated tokens)
  with a trigger ("Use when"/"Use for") and an exclusion ("Not for"/"Do not use");
- a body under the spec's guidance (< 500 lines, < 5,000 tokens estimated as bytes / 4) written as a
  procedure in the seeds' format: Inputs, Steps, Evidence, Output format, Stop condition, Forbidden actions;
- per-skill essentials from the issue (e.g. code-review takes ``$ARGUMENTS`` and every finding cites a line).

The set of bundled skills is pinned, so a new skill cannot ship without being added here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from skills_ref.parser import parse_frontmatter as skills_ref_parse
from skills_ref.validator import validate_metadata

REPO = Path(__file__).resolve().parents[3]
SKILLS_DIR = REPO / "skills"
PACKAGE_LINK = REPO / "server" / "agent_ls" / "bundled_skills"

BUNDLED = ("code-review", "explain", "fix-diagnostics", "write-tests")
SECTIONS = ("Inputs", "Steps", "Evidence", "Output format", "Stop condition", "Forbidden actions")

# Claude Code extensions the server honours; skills-ref reports them as "Unexpected fields".
HONOURED_KEYS = frozenset({"disable-model-invocation", "allowed-tools", "argument-hint", "metadata"})

MAX_DESCRIPTION_CHARS = 1024  # Agent Skills specification
MAX_DESCRIPTION_WORDS = 60
MAX_CATALOG_DESCRIPTION_CHARS = 1000  # all four together: about 250 of the first request's 1,400 tokens
MAX_BODY_LINES = 500  # Agent Skills specification: "Keep SKILL.md under 500 lines"
MAX_BODY_TOKENS = 5000  # Agent Skills specification: body "under 5000 tokens recommended"

TRIGGERS = ("Use when", "Use for")
EXCLUSIONS = ("Not for", "Do not use")

# What each procedure must say (case-insensitive substrings), from issue 6 "Bundled skills" and the brief.
ESSENTIALS: dict[str, tuple[str, ...]] = {
    "code-review": (
        "$ARGUMENTS",
        "path:line",
        "security",
        "robustness",
        "maintainability",
        "nits",
        "critical",
        "major",
        "minor",
        "No findings",
        "grep",
        "read_file",
        "review_findings",
        "path:line: severity: message",
    ),
    "write-tests": (
        "$ARGUMENTS",
        "bash",
        "edit_file",
        "write_file",
        "without saying so",
        "Deleting, skipping or weakening existing tests",
        "Network",
    ),
    "fix-diagnostics": (
        "$ARGUMENTS",
        "Diagnostics (from the editor, data):",
        "root cause",
        "bash",
        "noqa",
        "type: ignore",
        "unless the user asks",
    ),
    "explain": (
        "$ARGUMENTS",
        "purpose",
        "inputs",
        "outputs",
        "edge cases",
        "Editing files",
        "change anything",
    ),
}


def split_skill(text: str) -> tuple[str, str]:
    """The YAML between the first two ``---`` lines, and the body after them."""
    lines = text.split("\n")
    assert lines[0] == "---", "SKILL.md must start with a --- line"
    end = lines.index("---", 1)
    return "\n".join(lines[1:end]), "\n".join(lines[end + 1 :])


def spec_findings(metadata: dict[str, Any], skill_dir: Path) -> list[str]:
    """skills-ref findings, minus "Unexpected fields" for HONOURED_KEYS (other unexpected keys stay)."""
    kept: list[str] = []
    for finding in validate_metadata(metadata, skill_dir):
        unexpected = re.match(r"Unexpected fields in frontmatter: (.*?)\. Only ", finding)
        if unexpected is None:
            kept.append(finding)
            continue
        others = sorted(set(unexpected.group(1).split(", ")) - HONOURED_KEYS)
        if others:
            kept.append(f"Unexpected fields in frontmatter: {', '.join(others)}")
    return kept


def load(name: str) -> tuple[str, dict[str, Any], str]:
    """(raw text, pyyaml metadata, body) of a bundled skill."""
    text = (SKILLS_DIR / name / "SKILL.md").read_text(encoding="utf-8")
    frontmatter, body = split_skill(text)
    metadata = yaml.safe_load(frontmatter)
    assert isinstance(metadata, dict)
    return text, metadata, body


def test_bundled_skills_are_exactly_the_tested_ones() -> None:
    found = sorted(p.name for p in SKILLS_DIR.iterdir())
    assert found == sorted(BUNDLED), "a new bundled skill needs its entry (and essentials) in this test"
    assert all((SKILLS_DIR / name / "SKILL.md").is_file() for name in BUNDLED)
    assert PACKAGE_LINK.resolve() == SKILLS_DIR.resolve(), "the package data must be the skills/ folder"


def test_filter_keeps_unknown_keys_and_real_errors(tmp_path: Path) -> None:
    skill_dir = tmp_path / "demo"
    metadata = {"name": "other", "description": "d", "argument-hint": "[x]", "modle": "m"}
    assert spec_findings(metadata, skill_dir) == [
        "Unexpected fields in frontmatter: modle",
        "Directory name 'demo' must match skill name 'other'",
    ]


@pytest.mark.parametrize("name", BUNDLED)
def test_file_is_plain_utf8_with_lf(name: str) -> None:
    raw = (SKILLS_DIR / name / "SKILL.md").read_bytes()
    # skills-ref rejects a BOM before "---"; CRLF has tripped many parsers (corpus README, SK16).
    assert not raw.startswith(b"\xef\xbb\xbf")
    assert b"\r" not in raw
    assert raw.endswith(b"\n")


@pytest.mark.parametrize("name", BUNDLED)
def test_frontmatter_validates(name: str) -> None:
    _, metadata, _ = load(name)
    assert spec_findings(metadata, SKILLS_DIR / name) == []
    assert metadata["name"] == name
    assert set(metadata) <= {"name", "description", "license", "compatibility"} | HONOURED_KEYS
    assert isinstance(metadata.get("argument-hint", ""), str)


@pytest.mark.parametrize("name", BUNDLED)
def test_reference_parser_reads_the_same_metadata(name: str) -> None:
    text, metadata, _ = load(name)
    strict_metadata, _ = skills_ref_parse(text)
    assert strict_metadata == metadata


@pytest.mark.parametrize("name", BUNDLED)
def test_description_is_short_with_triggers_and_exclusions(name: str) -> None:
    _, metadata, _ = load(name)
    description = metadata["description"]
    assert isinstance(description, str)
    assert len(description) <= MAX_DESCRIPTION_CHARS
    assert len(description.split()) <= MAX_DESCRIPTION_WORDS
    assert any(trigger in description for trigger in TRIGGERS), description
    assert any(exclusion in description for exclusion in EXCLUSIONS), description


def test_descriptions_together_fit_the_catalog_share() -> None:
    total = sum(len(load(name)[1]["description"]) for name in BUNDLED)
    assert total <= MAX_CATALOG_DESCRIPTION_CHARS


@pytest.mark.parametrize("name", BUNDLED)
def test_body_is_under_the_size_guidance(name: str) -> None:
    _, _, body = load(name)
    assert len(body.splitlines()) < MAX_BODY_LINES
    assert len(body.encode("utf-8")) / 4 < MAX_BODY_TOKENS


@pytest.mark.parametrize("name", BUNDLED)
def test_body_has_the_procedure_sections_in_order(name: str) -> None:
    _, _, body = load(name)
    headings = re.findall(r"^## (.+)$", body, flags=re.MULTILINE)
    assert headings == list(SECTIONS)
    for section in re.split(r"^## .+$", body, flags=re.MULTILINE)[1:]:
        assert section.strip(), "every section has content"


@pytest.mark.parametrize("name", BUNDLED)
def test_body_states_the_essentials(name: str) -> None:
    _, _, body = load(name)
    missing = [phrase for phrase in ESSENTIALS[name] if phrase.lower() not in body.lower()]
    assert missing == []


@pytest.mark.parametrize("name", BUNDLED)
def test_arguments_placeholder_appears_once(name: str) -> None:
    # substitute_arguments replaces every "$ARGUMENTS": more than one would repeat the user's text.
    _, _, body = load(name)
    assert body.count("$ARGUMENTS") == 1


def test_code_review_asks_every_finding_to_cite_its_line() -> None:
    _, _, body = load("code-review")
    # The stop condition and the evidence both demand it (the prose may wrap between words).
    assert re.search(r"every\s+finding\s+cites\s+its\s+`path:line`", body)
    assert re.search(r"For\s+every\s+finding:\s+`path:line`", body)
    security, robustness, maintainability = (
        body.index(word) for word in ("Security first", "Then robustness", "Then maintainability")
    )
    assert security < robustness < maintainability
