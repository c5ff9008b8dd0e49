"""Discovery on real directory trees: roots, precedence and clashes, limits, symlinks, reading bodies late."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from agent_ls.instructions.skills import (
    Skill,
    SkillSet,
    SkillSettings,
    discover_skills,
    load_body,
    skill_files,
    skill_roots,
)


def write_skill(
    folder: Path, name: str | None = None, description: str = "Does a thing.", extra: str = ""
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    name_line = f"name: {name}\n" if name is not None else ""
    path = folder / "SKILL.md"
    path.write_text(
        f"---\n{name_line}description: {description}\n{extra}---\n\n# {name}\n\nBody of {name}.\n"
    )
    return path


@dataclasses.dataclass
class Tree:
    ws: Path
    home: Path
    config: Path
    bundled: Path

    def discover(self, focus: Path | None = None, **settings: object) -> SkillSet:
        return discover_skills(
            workspace_root=self.ws,
            project_root=self.ws,
            focus_dir=focus,
            home=self.home,
            user_config_dir=self.config,
            bundled_dir=self.bundled,
            settings=SkillSettings(**settings),  # type: ignore[arg-type]
        )


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    paths = [tmp_path / d for d in ("ws", "home", "config", "bundled")]
    for path in paths:
        path.mkdir()
    return Tree(*paths)


LOCATIONS = {
    "sub .agents": "ws/pkg/sub/.agents/skills",
    "root .agents": "ws/.agents/skills",
    "root .claude": "ws/.claude/skills",
    "configured": "ws/.gemini/skills",
    "home .agents": "home/.agents/skills",
    "config dir": "config/skills",
    "bundled": "bundled",
}
SOURCES = {
    "sub .agents": "project",
    "root .agents": "project",
    "root .claude": "project",
    "configured": "configured",
    "home .agents": "user",
    "config dir": "user",
    "bundled": "bundled",
}

PRECEDENCE = [
    # (present, winner)
    (["bundled", "config dir"], "config dir"),
    (["config dir", "home .agents"], "home .agents"),
    (["home .agents", "root .claude"], "root .claude"),
    (["home .agents", "configured"], "configured"),
    (["configured", "root .claude"], "root .claude"),
    (["root .claude", "root .agents"], "root .agents"),
    (["root .agents", "sub .agents"], "sub .agents"),
    (list(LOCATIONS), "sub .agents"),
]


@pytest.mark.parametrize(("present", "winner"), PRECEDENCE, ids=[w for _, w in PRECEDENCE])
def test_precedence_on_a_name_clash(tree: Tree, present: list[str], winner: str) -> None:
    base = tree.ws.parent
    for where in present:
        write_skill(base / LOCATIONS[where] / "review", "review", f"Review, from {where}.")
    found = tree.discover(focus=tree.ws / "pkg" / "sub", extra_roots=(tree.ws / ".gemini" / "skills",))
    assert [(s.name, s.description, s.source) for s in found.skills] == [
        ("review", f"Review, from {winner}.", SOURCES[winner])
    ]
    losers = [where for where in LOCATIONS if where in present and where != winner]
    assert [s.description for s in found.shadowed] == [f"Review, from {where}." for where in losers]
    winning = found.skills[0]
    assert winning.diagnostics == ()
    for loser in found.shadowed:
        (warning,) = loser.diagnostics
        assert (warning.line, warning.severity) == (1, "warning")
        assert warning.message == (
            f"skill 'review' is shadowed by {winning.path} ({winning.source}), which takes precedence"
        )
    assert [d for d in found.diagnostics if "shadowed" in d.message] == [
        s.diagnostics[0] for s in found.shadowed
    ]


def test_a_nested_agents_folder_counts_only_on_the_focus_path(tree: Tree) -> None:
    write_skill(tree.ws / "pkg" / ".agents" / "skills" / "pkg-only", "pkg-only")
    assert tree.discover().skills == ()
    assert tree.discover(focus=tree.ws / "other").skills == ()
    assert [s.name for s in tree.discover(focus=tree.ws / "pkg" / "deeper").skills] == ["pkg-only"]
    assert tree.discover(focus=tree.ws.parent / "elsewhere").skills == ()


def test_skill_roots_in_precedence_order(tree: Tree) -> None:
    roots = skill_roots(
        workspace_root=tree.ws,
        project_root=tree.ws,
        focus_dir=tree.ws / "a" / "b",
        home=tree.home,
        user_config_dir=tree.config,
        bundled_dir=tree.bundled,
        settings=SkillSettings(extra_roots=(tree.ws / ".gemini" / "skills", tree.home / "extra")),
    )
    ws, home = tree.ws.resolve(), tree.home.resolve()
    assert [(r.path, r.source, r.zone) for r in roots] == [
        (tree.ws / "a" / "b" / ".agents" / "skills", "project", ws),
        (tree.ws / "a" / ".agents" / "skills", "project", ws),
        (tree.ws / ".agents" / "skills", "project", ws),
        (tree.ws / ".claude" / "skills", "project", ws),
        (tree.ws / ".gemini" / "skills", "configured", ws),
        (tree.home / "extra", "configured", home / "extra"),
        (tree.home / ".agents" / "skills", "user", home / ".agents" / "skills"),
        (tree.config / "skills", "user", tree.config.resolve() / "skills"),
        (tree.bundled, "bundled", tree.bundled.resolve()),
    ]


def test_the_same_file_through_two_roots_loads_once_without_a_clash(tree: Tree) -> None:
    write_skill(tree.ws / ".agents" / "skills" / "review", "review")
    (tree.ws / ".claude").mkdir()
    (tree.ws / ".claude" / "skills").symlink_to("../.agents/skills")
    found = tree.discover()
    assert [(s.name, s.path) for s in found.skills] == [
        ("review", tree.ws / ".agents/skills/review/SKILL.md")
    ]
    assert found.shadowed == () and found.diagnostics == ()


def test_walk_order_limits_and_skipped_folders(tree: Tree) -> None:
    root = tree.ws / ".agents" / "skills"
    write_skill(root / "b", "b")
    write_skill(root / "a", "a")
    write_skill(root / ".system" / "hidden", "hidden")  # hidden folders inside a root are walked
    write_skill(root / "group" / "x" / "y", "deep")  # depth 3
    write_skill(root / "node_modules" / "pkg", "from-node-modules")
    write_skill(root / ".git" / "x", "from-git")
    write_skill(root / "a" / "references" / "inner", "inner")  # inside a skill: a resource, not a skill
    assert [s.name for s in tree.discover().skills] == ["a", "b", "deep", "hidden"]

    shallow = tree.discover(max_depth=2)
    assert [s.name for s in shallow.skills] == ["a", "b", "hidden"]
    assert [(d.path, d.severity, d.message) for d in shallow.skipped] == [
        (root, "information", "1 directories deeper than 2 levels not scanned (max_depth)")
    ]

    few = tree.discover(max_skills=2)
    assert [s.name for s in few.skills] == ["a", "hidden"]  # walked: .system/hidden, a, then over the limit
    assert [(d.path.parent.name, d.severity) for d in few.skipped] == [("b", "error"), ("y", "error")]
    assert few.skipped[0].message == "over the limit of 2 skills (max_skills); not loaded"

    write_skill(tree.bundled / "code-review", "code-review")
    capped = tree.discover(max_skills=2)  # the bundled skills never count against the limit
    assert [s.name for s in capped.skills] == ["a", "code-review", "hidden"]
    (tree.bundled / "code-review" / "SKILL.md").unlink()
    (tree.bundled / "code-review").rmdir()

    walked = tree.discover(max_dirs=3)  # the root, ".system", ".system/hidden"
    assert [s.name for s in walked.skills] == ["hidden"]
    assert [d.message for d in walked.skipped] == ["stopped after 3 directories (max_dirs)"]


def test_a_bad_skill_never_stops_the_others(tree: Tree) -> None:
    root = tree.ws / ".agents" / "skills"
    write_skill(root / "good", "good")
    (root / "no-frontmatter").mkdir()
    (root / "no-frontmatter" / "SKILL.md").write_text("# Just a README\n")
    (root / "bad-yaml").mkdir()
    (root / "bad-yaml" / "SKILL.md").write_text("---\nname: bad\ndescription: [unclosed\n---\n")
    write_skill(root / "no-description", "nodesc", description="''")
    (root / "latin1").mkdir()
    (root / "latin1" / "SKILL.md").write_bytes(b"---\nname: latin1\ndescription: caf\xe9\n---\n")
    (root / "dangling").mkdir()
    (root / "dangling" / "SKILL.md").symlink_to("missing.md")
    found = tree.discover()
    assert [s.name for s in found.skills] == ["good"]
    assert [(d.path.parent.name, d.line, d.severity) for d in found.skipped] == [
        ("bad-yaml", 3, "error"),
        ("dangling", 0, "error"),
        ("latin1", 0, "error"),
        ("no-description", 2, "error"),
        ("no-frontmatter", 0, "error"),
    ]
    messages = [d.message for d in found.skipped]
    assert messages[1] == "SKILL.md is a broken link; not loaded"
    assert messages[2].startswith("SKILL.md cannot be read as UTF-8 text (")
    assert messages[4].startswith("no frontmatter: ")
    assert set(found.skipped) <= set(found.diagnostics)


def test_symlinks_are_followed_only_inside_the_trust_zone(tree: Tree) -> None:
    outside = tree.ws.parent / "outside"
    write_skill(outside / "evil", "evil")
    write_skill(outside / "evil-file", "evil-file")
    root = tree.ws / ".agents" / "skills"
    write_skill(tree.ws / "shared" / "linked", "linked")
    root.mkdir(parents=True)
    (root / "linked").symlink_to(tree.ws / "shared" / "linked")
    (root / "evil").symlink_to(outside / "evil")
    (root / "file-link").mkdir()
    (root / "file-link" / "SKILL.md").symlink_to(outside / "evil-file" / "SKILL.md")
    (root / "commands").mkdir()
    write_skill(tree.ws / "commands-src", "changelog")
    (root / "changelog").mkdir()
    (root / "changelog" / "SKILL.md").symlink_to("../../../commands-src/SKILL.md")
    (root / "loop").symlink_to(".")  # a cycle must not hang the walk
    found = tree.discover()
    assert [(s.name, s.path, s.base_dir) for s in found.skills] == [
        ("changelog", root / "changelog" / "SKILL.md", (root / "changelog").resolve()),
        ("linked", root / "linked" / "SKILL.md", (tree.ws / "shared" / "linked").resolve()),
    ]
    real_outside, zone = outside.resolve(), tree.ws.resolve()
    assert [(d.path, d.message) for d in found.skipped] == [
        (
            root / "evil" / "SKILL.md",
            f"skill folder links to {real_outside / 'evil'}, outside {zone}; not loaded",
        ),
        (
            root / "file-link" / "SKILL.md",
            f"SKILL.md links to {real_outside / 'evil-file' / 'SKILL.md'}, outside {zone}; not loaded",
        ),
    ]


def test_a_project_root_linking_out_of_the_workspace_is_not_scanned(tree: Tree) -> None:
    write_skill(tree.home / "dotfiles" / "skills" / "mine", "mine")
    (tree.ws / ".agents").mkdir()
    (tree.ws / ".agents" / "skills").symlink_to(tree.home / "dotfiles" / "skills")
    found = tree.discover()
    assert found.skills == ()
    (notice,) = found.skipped
    assert (notice.path, notice.severity) == (tree.ws / ".agents" / "skills", "warning")
    assert notice.message.endswith(f"outside {tree.ws.resolve()}; not scanned")


def test_a_user_root_may_be_a_link_but_its_skills_stay_inside_it(tree: Tree) -> None:
    write_skill(tree.home / "dotfiles" / "skills" / "mine", "mine")
    write_skill(tree.home / "private" / "secret", "secret")
    (tree.home / "dotfiles" / "skills" / "secret").symlink_to(tree.home / "private" / "secret")
    (tree.home / ".agents").mkdir()
    (tree.home / ".agents" / "skills").symlink_to(tree.home / "dotfiles" / "skills")
    found = tree.discover()
    assert [(s.name, s.source) for s in found.skills] == [("mine", "user")]
    assert [d.path.parent.name for d in found.skipped] == ["secret"]


def test_the_workspace_trust_zone_is_the_project_root_when_the_workspace_is_inside_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_skill(repo / "tools" / "review", "review")
    (repo / ".agents" / "skills").mkdir(parents=True)
    (repo / ".agents" / "skills" / "review").symlink_to(repo / "tools" / "review")
    found = discover_skills(
        workspace_root=repo / "app",
        project_root=repo,
        focus_dir=None,
        home=None,
        user_config_dir=None,
        bundled_dir=None,
    )
    assert [s.name for s in found.skills] == ["review"]


def test_skill_fields_wire_and_lookup(tree: Tree) -> None:
    path = write_skill(
        tree.ws / ".agents" / "skills" / "astrolicious-astro",
        "astro",
        "Build Astro sites.",
        "allowed-tools: Read Bash(npx astro:*)\nargument-hint: '[page]'\nmetadata:\n  version: '0.0.1'\n",
    )
    write_skill(tree.bundled / "quiet", "quiet", "Only on request.", "disable-model-invocation: true\n")
    found = tree.discover()
    astro = found.get("astro")
    assert astro is not None and found.get("astrolicious-astro") is None
    assert astro.size_bytes == path.stat().st_size
    assert astro.root == tree.ws / ".agents" / "skills"
    assert astro.metadata == {"version": "0.0.1"}
    assert astro.wire() == {
        "name": "astro",
        "description": "Build Astro sites.",
        "source": "project",
        "path": str(path),
        "baseDir": str(path.parent.resolve()),
        "modelInvocable": True,
        "allowedTools": ["Read", "Bash(npx astro:*)"],
        "argumentHint": "[page]",
        "diagnostics": [d.wire() for d in astro.diagnostics],
    }
    assert [d.message.split(" (")[0] for d in astro.diagnostics] == [
        "Directory name 'astrolicious-astro' must match skill name 'astro'"
    ]
    assert [s.name for s in found.skills] == ["astro", "quiet"]
    assert [s.name for s in found.model_invocable()] == ["astro"]
    assert found.wire() == {
        "skills": [s.wire() for s in found.skills],
        "shadowed": [],
        "skipped": [],
    }


def test_overlap_warnings_land_on_both_skills_and_in_the_set(tree: Tree) -> None:
    root = tree.ws / ".agents" / "skills"
    write_skill(root / "review", "review", "Review Python code for bugs, security issues and missing tests.")
    write_skill(root / "audit", "audit", "Review Python code for security bugs and missing tests.")
    write_skill(root / "hidden", "hidden", "Review Python code for bugs, security issues and missing tests.",
                "disable-model-invocation: true\n")  # fmt: skip
    found = tree.discover()
    for skill in found.model_invocable():
        assert [d.message.split(" (")[0] for d in skill.diagnostics] == [
            "description overlaps strongly with skill " + ("'review'" if skill.name == "audit" else "'audit'")
        ]
        assert skill.diagnostics[0].line == 2
    hidden = found.get("hidden")
    assert hidden is not None and hidden.diagnostics == ()
    assert sum("overlaps" in d.message for d in found.diagnostics) == 2


def test_the_body_is_read_only_on_activation(tree: Tree) -> None:
    folder = tree.ws / ".agents" / "skills" / "crlf"
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_bytes(b"\xef\xbb\xbf---\r\nname: crlf\r\ndescription: d\r\n---\r\n\r\nStep 1.\r\nStep 2.\r\n")
    skill = tree.discover().skills[0]
    assert "body" not in {f.name for f in dataclasses.fields(Skill)}
    assert load_body(skill) == "\nStep 1.\nStep 2.\n"
    path.write_text("---\nname: crlf\ndescription: d\n---\nChanged.\n")
    assert load_body(skill) == "Changed.\n"
    path.unlink()
    with pytest.raises(OSError):
        load_body(skill)


def test_skill_files_lists_resources_sorted_and_capped(tree: Tree) -> None:
    folder = tree.ws / ".agents" / "skills" / "docx"
    write_skill(folder, "docx")
    for rel in ("scripts/b.py", "scripts/a.py", "references/x.md", "LICENSE.txt", "sub/SKILL.md",
                ".git/HEAD", "node_modules/m/index.js", "ooxml/schemas/w.xsd"):  # fmt: skip
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text("x")
    os.symlink(tree.ws, folder / "linked-dir")  # not followed
    skill = tree.discover().skills[0]
    everything = ["LICENSE.txt", "linked-dir/", "ooxml/schemas/w.xsd", "references/x.md", "scripts/a.py",
                  "scripts/b.py", "sub/SKILL.md"]  # fmt: skip
    assert skill_files(skill) == (everything, 7)
    assert skill_files(skill, cap=2) == (everything[:2], 7)
