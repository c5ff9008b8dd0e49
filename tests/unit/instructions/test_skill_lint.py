"""Strict checks: the reference validator's findings as positioned diagnostics, and description overlap."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.instructions.skill_lint import content_words, overlap_warnings, spec_diagnostics
from agent_ls.instructions.skill_parse import parse_skill
from agent_ls.instructions.skills import Skill

DIR = Path("/ws/.agents/skills/demo")


def lint(frontmatter: str, dir_name: str = "demo") -> list[tuple[int, int, int, str, str]]:
    skill_dir = DIR.parent / dir_name
    path = skill_dir / "SKILL.md"
    parsed, _ = parse_skill(path, f"---\n{frontmatter}---\n", complete=True, dir_name=dir_name)
    assert parsed is not None
    return [
        (d.line, d.character, d.end_character, d.severity, d.message)
        for d in spec_diagnostics(path, parsed, skill_dir)
    ]


SPEC = "(Agent Skills specification, skills-ref)"
UNEXPECTED = "not in the Agent Skills specification; ignored"
HONOURED = (
    "disable-model-invocation: true\nallowed-tools: Read\nargument-hint: x\nmetadata:\n  a: b\n"
    "user-invocable: false\nwhen_to_use: x\nlicense: MIT\ncompatibility: Python 3.11\n"
)

CASES = [
    # (id, frontmatter, skill dir name, expected diagnostics)
    ("valid", "name: demo\ndescription: d\n", "demo", []),
    ("honoured keys are not unexpected", "name: demo\ndescription: d\n" + HONOURED, "demo", []),
    (
        "name does not match its folder",
        "name: template-skill\ndescription: d\n",
        "template",
        [(1, 0, 4, "warning", f"Directory name 'template' must match skill name 'template-skill' {SPEC}")],
    ),
    (
        "over-long description on its key's line",
        "name: demo\nlicense: MIT\ndescription: " + "x" * 1025 + "\n",
        "demo",
        [(3, 0, 11, "warning", f"Description exceeds 1024 character limit (1025 chars) {SPEC}")],
    ),
    (
        "over-long compatibility",
        "name: demo\ndescription: d\ncompatibility: " + "y" * 501 + "\n",
        "demo",
        [(3, 0, 13, "warning", f"Compatibility exceeds 500 character limit (501 chars) {SPEC}")],
    ),
    (
        "unexpected fields one by one, in file order",
        "Name: demo\nname: demo\ndescription: d\nrequires:\n  mcp: [rube]\nmodel: opus\n",
        "demo",
        [
            (1, 0, 4, "warning", f"unexpected field 'Name': {UNEXPECTED}"),
            (4, 0, 8, "warning", f"unexpected field 'requires': {UNEXPECTED}"),
            (6, 0, 5, "information", "field 'model' is a Claude Code extension; ignored"),
        ],
    ),
    (
        "invalid name",
        "name: Upper_Name\ndescription: d\n",
        "upper-name",
        [
            (1, 0, 4, "warning", f"Skill name 'Upper_Name' must be lowercase {SPEC}"),
            (1, 0, 4, "warning", "Skill name 'Upper_Name' contains invalid characters. Only letters, digits, "
             f"and hyphens are allowed. {SPEC}"),
            (1, 0, 4, "warning", f"Directory name 'upper-name' must match skill name 'Upper_Name' {SPEC}"),
        ],
    ),
    ("a missing name is the parser's warning, not repeated", "description: d\n", "demo", []),
    ("an empty name is the parser's warning, not repeated", "name: ''\ndescription: d\n", "demo", []),
    (
        "a description that is not a string",
        "name: demo\ndescription: 42\n",
        "demo",
        [(2, 0, 11, "warning", f"Field 'description' must be a non-empty string {SPEC}")],
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("frontmatter", "dir_name", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_spec_diagnostics(
    frontmatter: str, dir_name: str, expected: list[tuple[int, int, int, str, str]]
) -> None:
    assert lint(frontmatter, dir_name) == expected


def test_content_words_drop_stopwords_and_short_words() -> None:
    assert content_words("Use this skill when the user asks to REVIEW a Python file: review!") == frozenset(
        {"review", "python", "file"}
    )


def skill(name: str, description: str, line: int = 2) -> Skill:
    path = Path(f"/ws/.agents/skills/{name}/SKILL.md")
    return Skill(
        name=name,
        description=description,
        source="project",
        path=path,
        base_dir=path.parent,
        root=Path("/ws/.agents/skills"),
        model_invocable=True,
        allowed_tools=(),
        argument_hint=None,
        metadata={},
        size_bytes=100,
        diagnostics=(),
        description_line=line,
    )


def test_overlapping_descriptions_warn_on_both_files() -> None:
    a = skill("review", "Review Python code for bugs, security issues and missing tests.", line=3)
    b = skill("audit", "Review Python code for security bugs and missing tests, then report.")
    c = skill("explain", "Explain what the selected code does, step by step.")
    warnings = overlap_warnings([a, b, c])
    assert [(str(d.path), d.line, d.character, d.end_character, d.severity) for d in warnings] == [
        ("/ws/.agents/skills/audit/SKILL.md", 2, 0, 11, "warning"),
        ("/ws/.agents/skills/review/SKILL.md", 3, 0, 11, "warning"),
    ]
    assert warnings[0].message == (
        "description overlaps strongly with skill 'review' (78% of content words shared,"
        " /ws/.agents/skills/review/SKILL.md): make their triggers distinct"
    )
    assert "skill 'audit' (78%" in warnings[1].message


def test_overlap_below_the_threshold_is_silent() -> None:
    a = skill("review", "Review Python code for bugs and security issues.")
    b = skill("tests", "Write pytest tests for Python code that has none.")
    assert overlap_warnings([a, b]) == []
    assert overlap_warnings([a, b], threshold=0.1) != []


def test_a_skill_names_at_most_three_overlapping_skills_and_counts_the_rest() -> None:
    clones = [skill(f"s{i}", "Deploy the staging cluster with terraform and helm charts.") for i in range(6)]
    warnings = [d for d in overlap_warnings(clones) if d.path == clones[0].path]
    assert len(warnings) == 3
    assert [d.message.split("'")[1] for d in warnings] == ["s1", "s2", "s3"]
    assert warnings[-1].message.endswith("; 2 more skills overlap too")


def test_overlap_warnings_are_deterministic() -> None:
    skills = [skill(f"s{i}", f"Deploy cluster {i % 2} with terraform helm charts.") for i in range(8)]
    assert overlap_warnings(skills) == overlap_warnings(list(reversed(skills)))
