"""The hover text of agent files: token estimates, invocability, scope and governed files."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.instructions.agents_md import InstructionSettings, load_chain
from agent_ls.instructions.catalog import render_catalog
from agent_ls.instructions.skills import Skill
from agent_ls.lsp.handlers.agent_hover import catalog_entry_bytes, instruction_hover, skill_hover, tokens


@pytest.mark.parametrize(("size", "expected"), [(0, 0), (1, 1), (4, 1), (5, 2), (32768, 8192)])
def test_tokens_are_bytes_over_four_rounded_up(size: int, expected: int) -> None:
    assert tokens(size) == expected


def make_skill(tmp_path: Path, *, model_invocable: bool) -> Skill:
    folder = tmp_path / "sync"
    folder.mkdir()
    path = folder / "SKILL.md"
    path.write_text("---\nname: sync\ndescription: Sync the docs\n---\n" + "body é\n" * 10, encoding="utf-8")
    return Skill(
        name="sync",
        description="Sync the docs",
        source="project",
        path=path,
        base_dir=folder,
        root=tmp_path,
        model_invocable=model_invocable,
        allowed_tools=(),
        argument_hint=None,
        metadata={},
        size_bytes=path.stat().st_size,
        diagnostics=(),
    )


def test_a_model_invocable_skill(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, model_invocable=True)
    entry = catalog_entry_bytes(skill)
    assert "sync" in render_catalog([skill], 10_000)
    assert len("sync: Sync the docs") < entry < len("sync: Sync the docs") + 60  # the name, text and markup
    assert skill_hover(skill) == (
        "**Skill `sync`** · project skill · the model may invoke it (it is in the catalog)\n"
        "\n"
        f"- Catalog: ~{tokens(entry)} tokens in every request (catalog entry: name and description)\n"
        "- Activation: ~20 tokens (80 bytes of body) when activated\n"
        "- Description: 13 characters\n"
        "\n"
        "_Tokens are estimates: bytes / 4._"
    )


def test_a_skill_only_invoked_explicitly_costs_nothing_per_request(tmp_path: Path) -> None:
    text = skill_hover(make_skill(tmp_path, model_invocable=False))
    assert text.splitlines()[0] == (
        "**Skill `sync`** · project skill · "
        "only explicit `/sync` invokes it (`disable-model-invocation: true`)"
    )
    assert "- Catalog: none: not in the catalog" in text


def test_a_skill_the_lint_did_not_load() -> None:
    assert skill_hover(None).startswith("**Skill** — agent-ls does not load this skill")


def test_an_instruction_file_governs_its_folder(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "AGENTS.md").write_text("# pkg rules\n", encoding="utf-8")
    for index in range(12):
        (tmp_path / "pkg" / "sub" / f"m{index:02}.py").write_text("", encoding="utf-8")
    (tmp_path / "other.py").write_text("", encoding="utf-8")
    chain = load_chain(workspace_root=tmp_path, focus=tmp_path / "pkg", global_dir=None)
    text = instruction_hover(chain, tmp_path / "pkg" / "AGENTS.md", tmp_path / "pkg")
    assert text.splitlines() == [
        "**Instructions `pkg/AGENTS.md`** · scope `pkg/**`",
        "",
        "- Cost: ~3 tokens (12 bytes) in each request about a file under `pkg/`",
        "- Governs 13 files (not ignored by Git), e.g.:",
        "  - `pkg/AGENTS.md`",
        *(f"  - `pkg/sub/m{index:02}.py`" for index in range(9)),
        "  - … and 3 more",
        "",
        "_Tokens are estimates: bytes / 4._",
    ]


def test_an_instruction_file_that_is_not_loaded_says_why(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("# rules\n", encoding="utf-8")
    (tmp_path / "CLAUDE.md").write_text("@AGENTS.md\n", encoding="utf-8")
    chain = load_chain(
        workspace_root=tmp_path, focus=tmp_path, global_dir=None, settings=InstructionSettings()
    )
    assert instruction_hover(chain, tmp_path / "CLAUDE.md", tmp_path) == (
        "**Instructions `CLAUDE.md`** · not loaded: AGENTS.md is this folder's instruction file (one per "
        "folder: the first found of AGENTS.override.md, AGENTS.md, then the fallbacks)."
    )
