"""The editor's lint of a workspace's agent files, over corpus copies and small trees in tmp_path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_ls.config import load_config
from agent_ls.instructions.agents_md import InstructionSettings, load_chain
from agent_ls.instructions.workspace_lint import (
    NOT_DISCOVERED,
    RootLint,
    chain_dir,
    lint_root,
    list_files,
    not_loaded_reason,
)
from agent_ls.settings import EnvSnapshot
from tests.support.corpus import CORPUS, require_corpus

NOT_LOADED = (
    "not loaded: AGENTS.md is this folder's instruction file (one per folder: the first found of "
    "AGENTS.override.md, AGENTS.md, then the fallbacks)"
)


def lint(root: Path, home: Path) -> RootLint:
    """``lint_root`` with an empty home and config dir (the developer's own files never leak in)."""
    env = EnvSnapshot({"HOME": str(home), "AGENT_LS_CONFIG_DIR": str(home / "config")})
    return lint_root(root, config=load_config(env, root), env=env)


def summary(result: RootLint) -> dict[str, list[tuple[int, str, str]]]:
    return {
        path.relative_to(result.root).as_posix(): [(d.line, d.severity, d.message) for d in found]
        for path, found in sorted(result.diagnostics.items())
    }


def corpus_copy(tmp_path: Path, *parts: str) -> Path:
    require_corpus()
    root = tmp_path / "ws"
    shutil.copytree(CORPUS.joinpath(*parts), root, symlinks=True)
    for path in (root, *root.rglob("*")):  # the corpus is read-only; the copy must be writable
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    return root


@pytest.mark.parametrize(
    ("corpus", "expected"),
    [
        (
            "sebastienros__jint",  # AM01: 126 KB AGENTS.md, CLAUDE.md holding only "@AGENTS.md"
            {
                "AGENTS.md": [
                    (
                        224,
                        "warning",
                        "truncated: only the first 32768 of 126123 bytes reach the model "
                        "(per-file limit max_file_bytes = 32768)",
                    )
                ],
                "CLAUDE.md": [(0, "information", NOT_LOADED)],
            },
        ),
        (
            "mkarrmann__dotfiles",  # AM10: home-directory imports, one of them quoted
            {
                "claude_config/CLAUDE.md": [
                    (
                        0,
                        "warning",
                        "import refused: ~/.claude/CLAUDE.local.md is outside the workspace "
                        "(home paths are never read)",
                    ),
                    (
                        1,
                        "warning",
                        "import refused: ~/claude/rules/personal-style.md is outside the workspace "
                        "(home paths are never read)",
                    ),
                ]
            },
        ),
        ("agentsmd__agents.md", {"AGENTS.md": []}),  # AM11: a clean file is listed, with nothing to show
    ],
)
def test_agents_md_sets(tmp_path: Path, corpus: str, expected: dict[str, list[tuple[int, str, str]]]) -> None:
    root = corpus_copy(tmp_path, "agents-md", corpus)
    result = lint(root, tmp_path / "home")
    assert summary(result) == expected
    assert result.complete


def test_skills_lint_with_overlaps_and_a_skill_outside_the_scanned_folders(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    require_corpus()
    template = CORPUS / "skills" / "anthropics__skills" / "template" / "SKILL.md"  # SK03: name/dir mismatch
    for folder, text in (
        (".agents/skills/template", template.read_text(encoding="utf-8")),
        (
            ".agents/skills/one",
            "---\nname: one\ndescription: Deploy the web service to staging with helm\n---\n",
        ),
        (
            ".agents/skills/two",
            "---\nname: two\ndescription: Deploy the web service to staging using helm\n---\n",
        ),
        ("docs/skills/draft", "---\nname: draft\ndescription: A draft skill: unquoted colon\n---\n"),
    ):
        (root / folder).mkdir(parents=True)
        (root / folder / "SKILL.md").write_text(text, encoding="utf-8")
    result = lint(root, tmp_path / "home")
    found = summary(result)
    assert [m for _, _, m in found[".agents/skills/template/SKILL.md"]] == [
        "Directory name 'template' must match skill name 'template-skill' "
        "(Agent Skills specification, skills-ref)"
    ]
    for mine, other in (("one", "two"), ("two", "one")):
        [(line, severity, message)] = found[f".agents/skills/{mine}/SKILL.md"]
        assert (line, severity) == (2, "warning")
        assert message.startswith(f"description overlaps strongly with skill '{other}'")
    draft = found["docs/skills/draft/SKILL.md"]
    assert (0, "information", NOT_DISCOVERED) in draft
    assert any(severity == "warning" and m.startswith("loaded leniently") for _, severity, m in draft)
    assert {p.relative_to(root).as_posix(): s.name for p, s in result.skills.items()} == {
        ".agents/skills/one/SKILL.md": "one",
        ".agents/skills/template/SKILL.md": "template-skill",
        ".agents/skills/two/SKILL.md": "two",
    }


def test_a_nested_skills_folder_is_linted_from_its_own_folder(tmp_path: Path) -> None:
    """``pkg/.agents/skills`` is only visible with ``pkg`` in focus: the lint discovers from there."""
    root = tmp_path / "ws"
    folder = root / "pkg" / ".agents" / "skills" / "nested"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: other\ndescription: Nested skill\n---\n", encoding="utf-8")
    result = lint(root, tmp_path / "home")
    [(line, _, message)] = summary(result)["pkg/.agents/skills/nested/SKILL.md"]
    assert line == 1 and message.startswith("Directory name 'nested' must match skill name 'other'")


def test_ignored_and_vendored_files_are_not_linted(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for rel in ("node_modules/pkg/AGENTS.md", "build/AGENTS.md", ".git/AGENTS.md", "src/AGENTS.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("# rules\n", encoding="utf-8")
    (root / ".gitignore").write_text("build/\n", encoding="utf-8")
    assert list(summary(lint(root, tmp_path / "home"))) == ["src/AGENTS.md"]


@pytest.mark.parametrize(
    ("rel", "fallbacks", "expected"),
    [
        ("AGENTS.md", ("CLAUDE.md",), "."),
        ("pkg/AGENTS.override.md", ("CLAUDE.md",), "pkg"),
        ("pkg/CLAUDE.md", ("CLAUDE.md",), "pkg"),
        ("pkg/CLAUDE.md", (), None),
        ("pkg/.claude/CLAUDE.md", (".claude/CLAUDE.md",), "pkg"),
        ("README.md", ("CLAUDE.md",), None),
        ("pkg/SKILL.md", ("CLAUDE.md",), None),
    ],
)
def test_chain_dir(rel: str, fallbacks: tuple[str, ...], expected: str | None) -> None:
    root = Path("/ws")
    found = chain_dir(root / rel, InstructionSettings(fallback_filenames=fallbacks))
    assert found == (None if expected is None else root / expected)


def test_not_loaded_reason_names_the_file_that_is(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.override.md").write_text("# override\n", encoding="utf-8")
    (tmp_path / "AGENTS.md").write_text("# rules\n", encoding="utf-8")
    chain = load_chain(workspace_root=tmp_path, focus=tmp_path, global_dir=None)
    assert not_loaded_reason(chain, tmp_path / "AGENTS.override.md") is None
    reason = not_loaded_reason(chain, tmp_path / "AGENTS.md")
    assert reason is not None and reason.startswith("AGENTS.override.md is this folder's instruction file")


def test_list_files_is_bounded_and_says_so(tmp_path: Path) -> None:
    for index in range(30):
        (tmp_path / f"f{index:02}.txt").write_text("x", encoding="utf-8")
    (tmp_path / ".hidden").write_text("x", encoding="utf-8")
    capped = list_files(tmp_path, max_files=10)
    assert (len(capped.files), capped.complete) == (10, False)
    whole = list_files(tmp_path)
    assert (len(whole.files), whole.complete) == (30, True)
    assert whole.files[0] == tmp_path / "f00.txt"
    assert len(list_files(tmp_path, hidden=True).files) == 31
    assert list_files(tmp_path, ["f1*.txt"]).files == tuple(tmp_path / f"f1{i}.txt" for i in range(10))
    assert list_files(tmp_path / "missing").files == ()
