"""Skills discovery over every SKILL.md of the real-world corpus (``../shared/corpus/skills``, README §2).

Each corpus repository is copied into ``tmp_path`` (the corpus is never written) and discovered as a
workspace whose root is also a configured skills root, so every SKILL.md in it is reached: skills under
``.claude/skills`` and ``.agents/skills`` come from the project roots, the others from the configured root.
The corpus stores symlinks (SK12, SK13) as small text files holding the link target (a checkout without
``core.symlinks``); the copy turns them back into symlinks, from the repository's ``_FILES`` listing.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent_ls.instructions.skills import (
    Skill,
    SkillSet,
    SkillSettings,
    discover_skills,
    load_body,
    render_catalog,
)
from tests.support.corpus import CORPUS, require_corpus

require_corpus()

SKILLS = CORPUS / "skills"
_LINK = re.compile(r"\s*120000 \d+ (?P<path>\S+) -> (?P<target>\S+)$")


def copy_repo(repo: str, into: Path) -> Path:
    """A writable copy of one corpus repository, its symlinks restored."""
    workspace = into / repo
    shutil.copytree(SKILLS / repo, workspace, symlinks=True)
    for path in [workspace, *workspace.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    for listing in sorted((workspace / "_FILES").glob("*.txt")):
        folder = ""
        for line in listing.read_text(encoding="utf-8").splitlines():
            if line.startswith("skill folder:"):
                folder = line.split(":", 1)[1].strip()
            link = _LINK.match(line)
            if link is not None and not (workspace / folder / link["path"]).is_symlink():
                stored = workspace / folder / link["path"]
                assert stored.read_text(encoding="utf-8").strip() == link["target"]
                stored.unlink()
                stored.symlink_to(link["target"])
    return workspace


def discover(workspace: Path, *, configured: bool = True) -> SkillSet:
    return discover_skills(
        workspace_root=workspace,
        project_root=workspace,
        focus_dir=None,
        home=None,
        user_config_dir=None,
        bundled_dir=None,
        settings=SkillSettings(extra_roots=(workspace,) if configured else ()),
    )


@dataclass(frozen=True)
class Expected:
    """What a corpus SKILL.md gives. ``name`` None: not loaded (``diagnostics`` say why)."""

    id: str
    name: str | None
    diagnostics: list[tuple[int, str, str]]  # (0-based line, severity, message prefix), all of them
    source: str = "configured"
    description: str | None = None  # exact
    starts: str = ""
    contains: tuple[str, ...] = ()
    length: int | None = None
    multiline: bool | None = None  # whether the description keeps a newline
    model_invocable: bool = True
    allowed_tools: tuple[str, ...] = ()
    metadata: dict[str, str] = field(default_factory=dict)


SPEC = "(Agent Skills specification, skills-ref)"
UNEXPECTED = "not in the Agent Skills specification; ignored"
EXPECTED: dict[str, Expected] = {
    "anthropics__skills/skills/claude-api/SKILL.md": Expected(
        "SK01", "claude-api",
        [(2, "warning", f"Description exceeds 1024 character limit (1068 chars) {SPEC}")],
        starts="Reference for the Claude API / Anthropic SDK — model ids, pricing",
        contains=("\nTRIGGER — read BEFORE", "\nSKIP only when"),
        length=1068, multiline=True,
    ),
    "anthropics__skills/skills/docx/SKILL.md": Expected(
        "SK02", "docx", [],
        starts="Use this skill whenever the user wants to create, read, edit, or manipulate Word documents",
        contains=("Triggers include: any mention of 'Word doc'",), length=785, multiline=False,
    ),
    "anthropics__skills/template/SKILL.md": Expected(
        "SK03", "template-skill",
        [(1, "warning", f"Directory name 'template' must match skill name 'template-skill' {SPEC}")],
        description="Replace with description of the skill and when Claude should use it.",
    ),
    "K-Dense-AI__claude-scientific-skills/scientific-skills/geomaster/SKILL.md": Expected(
        "SK04", "geomaster", [],
        starts="Comprehensive geospatial science skill covering remote sensing, GIS",
        length=717, multiline=False, metadata={"skill-author": "K-Dense Inc."},
    ),
    "K-Dense-AI__claude-scientific-skills/scientific-skills/database-lookup/SKILL.md": Expected(
        "SK05", "database-lookup",
        [(2, "warning", f"Description exceeds 1024 character limit (1929 chars) {SPEC}")],
        starts="Search 78 public scientific, biomedical", length=1929,
        metadata={"skill-author": "K-Dense Inc."},
    ),
    "pydantic__pydantic-ai/.claude/skills/pre-push-review/SKILL.md": Expected(
        "SK06", "pre-push-review",
        [(0, "warning", "no 'name' in the frontmatter; the skill is named after its directory, "
          "'pre-push-review'")],
        source="project",
        description="Run a high-judgment local review of the current branch before pushing, both before a PR "
        "exists and between PR iterations",
        allowed_tools=("Read", "Glob", "Grep", "Bash(gh issue view:*)", "Bash(gh pr view:*)",
                       "Bash(git diff:*)", "Bash(git log:*)", "Bash(git merge-base:*)", "Bash(git status:*)",
                       "Bash(git rev-parse:*)", "WebSearch", "WebFetch"),
    ),
    "pydantic__pydantic-ai/.claude/skills/testing-skill/SKILL.md": Expected(
        "SK07", "testing-skill", [], source="project",
        starts="Record, rewrite, and debug VCR cassettes for HTTP recordings.",
        allowed_tools=("Bash(uv run pytest *)",
                       "Bash(uv run python .claude/skills/testing-skill/parse_cassette.py *)",
                       "Bash(source .env && uv run pytest *)", "Bash(git diff *)"),
    ),
    "dallay__agentsync/.agents/skills/astrolicious-astro/SKILL.md": Expected(
        "SK08", "astro",
        [(1, "warning", f"Directory name 'astrolicious-astro' must match skill name 'astro' {SPEC}")],
        source="project", starts="Skill for building with the Astro web framework.", multiline=False,
        metadata={"authors": "Astro Team", "version": "0.0.1"},
    ),
    "google-gemini__gemini-cli/.gemini/skills/agent-tui/SKILL.md": Expected(
        "SK09", "agent-tui", [],
        starts="Main Agents: Do NOT use this skill directly. If you need to test the TUI, invoke the "
        "`tui_tester` subagent. Drive terminal UI",
        contains=(' or wants to see it in action.',), multiline=False,
    ),
    "ComposioHQ__awesome-claude-skills/composio-skills/ahrefs-automation/SKILL.md": Expected(
        "SK10", "ahrefs-automation",
        [
            (1, "warning", "name 'Ahrefs Automation' is not a valid skill name; addressed as "
             "'ahrefs-automation'"),
            (1, "warning", f"Skill name 'Ahrefs Automation' must be lowercase {SPEC}"),
            (1, "warning", "Skill name 'Ahrefs Automation' contains invalid characters."),
            (1, "warning", "Directory name 'ahrefs-automation' must match skill name 'Ahrefs Automation' "
             f"{SPEC}"),
            (3, "warning", f"unexpected field 'requires': {UNEXPECTED}"),
        ],
        starts="Automate SEO research with Ahrefs -- analyze backlink profiles",
    ),
    "alirezarezvani__claude-skills/product-team/code-to-prd/skills/code-to-prd/SKILL.md": Expected(
        "SK11", "code-to-prd",
        [(line, "warning", f"unexpected field '{key}': {UNEXPECTED}")
         for line, key in enumerate(("Name", "Tier", "Category", "Dependencies", "Author", "Version"), 1)],
        starts="Reverse-engineer any codebase into a complete Product Requirements Document (PRD).\nAnalyzes",
        contains=("fullstack applications.\n\nTrigger when users mention: generate PRD",),
        multiline=True, metadata={"updated": "2026-03-17"},
    ),
    "alirezarezvani__claude-skills/.gemini/skills/changelog/SKILL.md": Expected(
        "SK12", "changelog",
        [(2, "warning", "loaded leniently: the frontmatter is not valid YAML (mapping values")],
        description="Generate changelogs from git history and validate conventional commits. "
        "Usage: /changelog <generate|lint> [options]",
    ),
    "alirezarezvani__claude-skills/.gemini/skills/README/SKILL.md": Expected(
        "SK13", None, [(0, "error", "no frontmatter: SKILL.md must start with a '---' line")]
    ),
    "openai__skills/skills/.system/skill-installer/SKILL.md": Expected(
        "SK14", "skill-installer", [],
        starts="Install Codex skills into $CODEX_HOME/skills from a curated list",
        metadata={"short-description": "Install curated skills from openai/skills or other repos"},
    ),
    "Mr-DooSun__fastapi-agent-blueprint/.claude/skills/sync-guidelines/SKILL.md": Expected(
        "SK15", "sync-guidelines", [], source="project", model_invocable=False,
        starts='This skill should be used when the user asks to "sync guidelines",\n"document inspection"',
        multiline=True,
    ),
    "_derived/bom-skill/SKILL.md": Expected(
        "SK16", "bom-skill", [],
        description="Demo skill saved as UTF-8 with a byte order mark (Windows Notepad / PowerShell "
        "Set-Content style).",
    ),
    "_derived/crlf-bom-skill/SKILL.md": Expected(
        "SK16", "crlf-bom-skill", [], description="Same skill saved with BOM and CRLF line endings."
    ),
}  # fmt: skip
IDS = [f"{e.id}:{path.split('/')[0]}/{path.split('/')[-2]}" for path, e in EXPECTED.items()]


def test_the_table_covers_every_skill_in_the_corpus() -> None:
    found = {p.relative_to(SKILLS).as_posix() for p in SKILLS.rglob("SKILL.md")}
    assert found == set(EXPECTED)
    assert {e.id for e in EXPECTED.values()} == {f"SK{i:02d}" for i in range(1, 17)}


@pytest.fixture(scope="module")
def discovered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, SkillSet]]:
    into = tmp_path_factory.mktemp("corpus-skills")
    repos = sorted({path.split("/")[0] for path in EXPECTED})
    return {repo: (workspace, discover(workspace)) for repo in repos for workspace in [copy_repo(repo, into)]}


@pytest.mark.parametrize(("path", "expected"), list(EXPECTED.items()), ids=IDS)
def test_corpus_skill(discovered: dict[str, tuple[Path, SkillSet]], path: str, expected: Expected) -> None:
    repo, relative = path.split("/", 1)
    workspace, found = discovered[repo]
    where = workspace / relative
    diagnostics = [d for d in found.diagnostics if d.path == where]
    assert len(diagnostics) == len(expected.diagnostics), [str(d) for d in diagnostics]
    for diagnostic, (line, severity, prefix) in zip(diagnostics, expected.diagnostics, strict=True):
        assert (diagnostic.line, diagnostic.severity) == (line, severity), str(diagnostic)
        assert diagnostic.message.startswith(prefix), str(diagnostic)
    skill = next((s for s in found.skills if s.path == where), None)
    if expected.name is None:
        assert skill is None
        assert [d for d in found.skipped if d.path == where] == diagnostics
        return
    assert skill is not None and found.get(expected.name) is skill
    assert (skill.name, skill.source) == (expected.name, expected.source)
    assert skill.model_invocable is expected.model_invocable
    assert skill.base_dir == where.parent.resolve()
    assert skill.size_bytes == where.stat().st_size  # the real file's, for a link (SK12)
    assert skill.allowed_tools == expected.allowed_tools
    assert dict(skill.metadata) == expected.metadata
    assert skill.diagnostics == tuple(diagnostics)
    description = skill.description
    assert "\r" not in description and description == description.strip()
    if expected.description is not None:
        assert description == expected.description
    assert description.startswith(expected.starts)
    for part in expected.contains:
        assert part in description
    if expected.length is not None:
        assert len(description) == expected.length
    if expected.multiline is not None:
        assert ("\n" in description) is expected.multiline


def test_sk12_and_sk13_are_real_symlinks_in_the_copy(discovered: dict[str, tuple[Path, SkillSet]]) -> None:
    workspace, found = discovered["alirezarezvani__claude-skills"]
    changelog = workspace / ".gemini/skills/changelog/SKILL.md"
    assert changelog.is_symlink() and (workspace / ".gemini/skills/README/SKILL.md").is_symlink()
    skill = found.get("changelog")
    assert skill is not None and skill.path == changelog
    assert load_body(skill).startswith("\n# /changelog\n")


def test_sk09_is_found_only_when_its_root_is_configured(tmp_path: Path) -> None:
    workspace = copy_repo("google-gemini__gemini-cli", tmp_path)
    nothing = discover(workspace, configured=False)
    assert (nothing.skills, nothing.skipped) == ((), ())
    found = discover_skills(
        workspace_root=workspace, project_root=workspace, focus_dir=None, home=None, user_config_dir=None,
        bundled_dir=None, settings=SkillSettings(extra_roots=(workspace / ".gemini" / "skills",)),
    )  # fmt: skip
    assert [s.name for s in found.skills] == ["agent-tui"]


def test_sk12_symlink_leaving_the_workspace_is_not_followed(tmp_path: Path) -> None:
    workspace = copy_repo("alirezarezvani__claude-skills", tmp_path)
    moved = tmp_path / "outside.md"
    shutil.move(workspace / "commands" / "changelog.md", moved)
    link = workspace / ".gemini/skills/changelog/SKILL.md"
    link.unlink()
    link.symlink_to(moved)
    found = discover(workspace)
    assert found.get("changelog") is None
    assert [d.message for d in found.skipped if d.path == link] == [
        f"SKILL.md links to {moved.resolve()}, outside {workspace.resolve()}; not loaded"
    ]
    assert [s.name for s in found.skills] == ["code-to-prd"]  # the others are unaffected


def test_sk16_bom_and_crlf_parse_identically_to_the_plain_file(
    discovered: dict[str, tuple[Path, SkillSet]], tmp_path: Path
) -> None:
    _, found = discovered["_derived"]
    for name in ("bom-skill", "crlf-bom-skill"):
        original = (SKILLS / "_derived" / name / "SKILL.md").read_bytes()
        assert original.startswith(b"\xef\xbb\xbf---")
        plain_dir = tmp_path / name
        plain_dir.mkdir()
        (plain_dir / "SKILL.md").write_bytes(original[3:].replace(b"\r\n", b"\n"))
        (plain,) = discover(plain_dir).skills

        def shape(skill: Skill) -> tuple[object, ...]:
            diagnostics = [(d.line, d.character, d.severity, d.message) for d in skill.diagnostics]
            return (skill.name, skill.description, skill.metadata, skill.allowed_tools, diagnostics)

        skill = found.get(name)
        assert skill is not None and shape(skill) == shape(plain)
        assert load_body(skill) == load_body(plain) == "\nBody.\n"


def test_catalog_of_the_whole_corpus(discovered: dict[str, tuple[Path, SkillSet]]) -> None:
    skills = [s for _, found in discovered.values() for s in found.skills]
    catalog = render_catalog(skills, 1_000_000)
    names = re.findall(r"(?m)^- ([^:\n]+?)(?::|$)", catalog)
    expected_names = sorted(e.name for e in EXPECTED.values() if e.name is not None and e.model_invocable)
    assert names == expected_names and "sync-guidelines" not in catalog
    descriptions = dict(re.findall(r"(?m)^- ([^:\n]+): (.*)$", catalog))
    for name in ("claude-api", "database-lookup"):  # SK01, SK05: bounded with a visible ellipsis
        assert len(descriptions[name]) <= 1024 and descriptions[name].endswith("…")
    assert "Building LLM-Powered Applications" not in catalog  # SK01's body: only on activation
    assert "Persona-Based Agents" not in catalog  # SK13's README is never injected
    small = render_catalog(skills, 2_000)
    assert len(small) <= 2_000 and re.findall(r"(?m)^- ([^:\n]+?)(?::|$)", small) == expected_names


def test_sk01_body_only_on_activation(discovered: dict[str, tuple[Path, SkillSet]]) -> None:
    workspace, found = discovered["anthropics__skills"]
    skill = found.get("claude-api")
    assert skill is not None and skill.size_bytes == 73_938
    text = (SKILLS / "anthropics__skills/skills/claude-api/SKILL.md").read_text(encoding="utf-8")
    body = load_body(skill)
    assert body.startswith("\n# Building LLM-Powered Applications with Claude\n")
    assert text.endswith(body) and "description: |-" not in body
    assert os.path.samefile(skill.path, workspace / "skills/claude-api/SKILL.md")
