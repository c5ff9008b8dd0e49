"""AGENTS.md chains over the real-world corpus (``../shared/corpus/agents-md``, README section 1, AM01–AM12).

Each set is copied to ``tmp_path`` (the corpus is never written), its symlinks restored from
``LAYOUT.txt`` (the corpus stores a git symlink as a small file holding the target, mode ``120000``), and
a ``.git`` directory added as the project root marker. Then, per case: the chain's labels in order, the
bytes brought and kept, the prompt text, and the notices and diagnostics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent_ls.instructions.agents_md import (
    InstructionChain,
    InstructionFile,
    InstructionSettings,
    load_chain,
    render_chain,
)
from agent_ls.instructions.imports import find_imports
from tests.support.corpus import CORPUS, copy_set, require_corpus

require_corpus()

AGENTS_MD = CORPUS / "agents-md"
SETS = sorted(
    [p.relative_to(AGENTS_MD).as_posix() for p in AGENTS_MD.iterdir() if p.name != "_derived"]
    + [p.relative_to(AGENTS_MD).as_posix() for p in (AGENTS_MD / "_derived").iterdir()]
)
KIB32 = 32 * 1024
HOME_REFUSED = "is outside the workspace (home paths are never read)"
AM10_NOTICES = (  # the notices left in the text count against the file's budget
    f"[import refused: ~/.claude/CLAUDE.local.md {HOME_REFUSED}]\n"
    f"[import refused: ~/claude/rules/personal-style.md {HOME_REFUSED}]\n"
)
AM11_TEXT = (AGENTS_MD / "agentsmd__agents.md" / "AGENTS.md").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Case:
    """One chain: ``files`` are ``(label, size_bytes, kept_bytes)``; kept None: cut just under 32 KiB;
    size -1: checked by a test of its own."""

    id: str
    set: str
    focus: str | None
    files: tuple[tuple[str, int, int | None], ...]
    real_paths: tuple[str, ...] = ()
    settings: InstructionSettings = field(default_factory=InstructionSettings)
    notices: tuple[str, ...] = ()


CASES = [
    Case("AM01", "sebastienros__jint", None, (("AGENTS.md", 126_123, None),)),
    Case("AM02", "Mr-DooSun__fastapi-agent-blueprint", None, (("AGENTS.md", 34_534, None),)),
    Case("AM03", "openai__openai-agents-js", "src/index.ts", (("AGENTS.md", 34_656, None),)),
    Case(
        "AM04-models",
        "pydantic__pydantic-ai",
        "pydantic_ai_slim/pydantic_ai/models/openai.py",
        (
            ("AGENTS.md", 15_525, 15_525),
            ("pydantic_ai_slim/pydantic_ai/AGENTS.md", 4_457, 4_457),
            ("pydantic_ai_slim/pydantic_ai/models/AGENTS.md", 6_738, 6_738),
        ),
    ),
    Case(
        "AM04-tests",
        "pydantic__pydantic-ai",
        "tests/x.py",
        (("AGENTS.md", 15_525, KIB32 - 20_903), ("tests/AGENTS.md", 20_903, 20_903)),
    ),
    Case(
        "AM04-hidden-dir",
        "pydantic__pydantic-ai",
        ".github/workflows/ci.yml",
        (("AGENTS.md", 15_525, 15_525), (".github/workflows/AGENTS.md", 13_914, 13_914)),
    ),
    Case(
        "AM05-core",
        "microsoft__agent-framework",
        "python/packages/core/x.py",
        (("python/AGENTS.md", 7_303, 0), ("python/packages/core/AGENTS.md", 46_938, None)),
    ),
    Case(
        "AM05-bom",
        "microsoft__agent-framework",
        "dotnet/samples/x.cs",
        (("dotnet/AGENTS.md", 4_188, 4_188), ("dotnet/samples/AGENTS.md", 7_139, 7_139)),
    ),
    Case(
        "AM06",
        "cline__cline",
        "sdk/packages/llms/src/x.ts",
        (
            ("AGENTS.md", 5_279, 5_279),
            ("sdk/AGENTS.md", 5_261, 5_261),
            ("sdk/packages/llms/AGENTS.md", 1_725, 1_725),
        ),
    ),
    Case("AM07", "dallay__agentsync", None, (("AGENTS.md", 6_463, 6_463),), (".agents/AGENTS.md",)),
    Case(
        "AM07-inside-hidden-dir",
        "dallay__agentsync",
        ".agents/x.md",
        (("AGENTS.md", 6_463, 6_463),),
        (".agents/AGENTS.md",),
        notices=(".agents/AGENTS.md is the same file as AGENTS.md; loaded once",),
    ),
    Case("AM08", "obra__superpowers", None, (("AGENTS.md", 8_873, 8_873),), ("CLAUDE.md",)),
    Case("AM09-default", "fdshg693__ai_assist_todo_app", None, ()),
    Case(
        "AM09-fallback",
        "fdshg693__ai_assist_todo_app",
        None,
        ((".claude/CLAUDE.md", -1, -1),),  # sizes: test_am09_imports_inline_in_order
        settings=InstructionSettings(fallback_filenames=(".claude/CLAUDE.md",)),
    ),
    Case(
        "AM10",
        "mkarrmann__dotfiles",
        "claude_config/x.sh",
        (("claude_config/CLAUDE.md", 645 + len(AM10_NOTICES), 645 + len(AM10_NOTICES)),),
    ),
    Case("AM11", "agentsmd__agents.md", None, (("AGENTS.md", 2_031, 2_031),)),
    Case("AM12", "_derived/crlf_from_agentsmd", None, (("AGENTS.md", 2_074, 2_074),)),
]


def chain_focus(workspace: Path, case: Case) -> Path | None:
    return None if case.focus is None else workspace / case.focus


def load(case: Case, tmp_path: Path) -> tuple[Path, InstructionChain]:
    workspace = copy_set(case.set, tmp_path)
    focus = chain_focus(workspace, case)
    chain = load_chain(workspace_root=workspace, focus=focus, global_dir=None, settings=case.settings)
    return workspace, chain


def test_every_corpus_set_has_a_case() -> None:
    assert sorted({case.set for case in CASES}) == SETS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_chain(case: Case, tmp_path: Path) -> None:
    workspace, chain = load(case, tmp_path)

    assert [file.label for file in chain.files] == [label for label, _, _ in case.files]
    for file, (_, size, kept) in zip(chain.files, case.files, strict=True):
        if size < 0:
            continue
        assert file.size_bytes == size, file.label
        if kept is None:  # cut by the 32 KiB cap, at a character boundary (at most 3 bytes back)
            assert KIB32 - 3 <= file.kept_bytes < KIB32 + 1 < size
        else:
            assert file.kept_bytes == kept
        assert file.text.endswith(f"[truncated: {file.kept_bytes} of {size} bytes]") == file.truncated
        assert "\r" not in file.text and "\ufeff" not in file.text and "\ufffd" not in file.text
    if case.real_paths:
        assert [f.real_path for f in chain.files] == [(workspace / p).resolve() for p in case.real_paths]
    assert [n.message for n in chain.notices] == list(case.notices)
    assert chain.project_root == workspace
    assert chain.total_bytes <= KIB32
    assert render_chain(chain).count("<instructions source=") == len(case.files)
    # rebuilt from disk (as after a compaction): the same chain, byte-identical text
    again = load_chain(
        workspace_root=workspace, focus=chain_focus(workspace, case), global_dir=None, settings=case.settings
    )
    assert again == chain
    assert render_chain(again).encode("utf-8") == render_chain(chain).encode("utf-8")


def _only(chain: InstructionChain) -> InstructionFile:
    assert len(chain.files) == 1
    return chain.files[0]


def _case(case_id: str) -> Case:
    return next(case for case in CASES if case.id == case_id)


@pytest.mark.parametrize(
    ("case_id", "file_name"),
    [("AM01", "AGENTS.md"), ("AM02", "AGENTS.md"), ("AM05-core", "python/packages/core/AGENTS.md")],
)
def test_cut_at_a_utf8_boundary_with_a_visible_marker_and_diagnostic(
    case_id: str, file_name: str, tmp_path: Path
) -> None:
    case = _case(case_id)
    _, chain = load(case, tmp_path)
    file = next(f for f in chain.files if f.label == file_name)
    raw = (AGENTS_MD / case.set / file_name).read_bytes()

    head, marker = file.text.rsplit("\n", 1)
    assert marker == f"[truncated: {file.kept_bytes} of {len(raw)} bytes]"
    assert head == raw[: file.kept_bytes].decode("utf-8")  # strict: the cut splits no character
    assert [d.severity for d in file.diagnostics] == ["warning"]
    assert file.diagnostics[0].message.startswith(
        f"truncated: only the first {file.kept_bytes} of {len(raw)}"
    )
    assert file.diagnostics[0].line == raw[: file.kept_bytes].count(b"\n")


def test_am01_claude_md_import_of_its_sibling_is_not_loaded_twice(tmp_path: Path) -> None:
    _, chain = load(_case("AM01"), tmp_path)
    assert _only(chain).imports == ()
    assert render_chain(chain).count("Jint is a JavaScript interpreter for .NET.") == 1


def test_am02_markdown_links_are_not_imports() -> None:
    lines = (AGENTS_MD / "Mr-DooSun__fastapi-agent-blueprint" / "CLAUDE.md").read_text("utf-8").splitlines()
    assert any("](AGENTS.md" in line for line in lines)
    assert find_imports(lines) == []


def test_am03_symlinked_claude_md_loads_once(tmp_path: Path) -> None:
    workspace, chain = load(_case("AM03"), tmp_path)
    assert (workspace / "CLAUDE.md").is_symlink()
    only = _only(chain)
    assert only.real_path == (workspace / "AGENTS.md").resolve()
    first_line = (
        AGENTS_MD.joinpath("openai__openai-agents-js", "AGENTS.md").read_text("utf-8").splitlines()[0]
    )
    assert render_chain(chain).count(first_line) == 1


@pytest.mark.parametrize(
    "relative",
    ["pydantic__pydantic-ai/tests/AGENTS.md", "cline__cline/AGENTS.md", "cline__cline/sdk/AGENTS.md"],
)
def test_decorators_and_npm_scopes_are_not_imports(relative: str) -> None:
    """Even read as a CLAUDE.md: ``@pytest.fixture``, ``@dataclass``, ``@cline/llms``, ``@cline/*``."""
    text = (AGENTS_MD / relative).read_text("utf-8")
    assert re.search(r"@(pytest\.fixture|cline/llms|cline/\*)", text)
    assert find_imports(text.splitlines()) == []


def test_am04_each_file_once_and_nearest_last(tmp_path: Path) -> None:
    _, chain = load(_case("AM04-models"), tmp_path)
    assert [f.scope for f in chain.files] == [
        "**",
        "pydantic_ai_slim/pydantic_ai/**",
        "pydantic_ai_slim/pydantic_ai/models/**",
    ]
    assert chain.total_bytes == 26_720
    assert all(f.imports == () and f.diagnostics == () for f in chain.files)


def test_am05_nearest_file_is_never_starved_and_the_dropped_root_says_so(tmp_path: Path) -> None:
    _, chain = load(_case("AM05-core"), tmp_path)
    python, core = chain.files
    assert python.text == "[truncated: 0 of 7303 bytes]"
    assert [d.message for d in python.diagnostics] == [
        "dropped: none of its 7303 bytes reach the model; deeper instruction files used the instruction "
        "budget (max_total_bytes = 32768)"
    ]
    assert core.kept_bytes > 32_000


def test_am05_bom_is_stripped_and_not_counted(tmp_path: Path) -> None:
    _, chain = load(_case("AM05-bom"), tmp_path)
    raw = (AGENTS_MD / "microsoft__agent-framework" / "dotnet" / "samples" / "AGENTS.md").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    assert chain.files[1].text == raw[3:].decode("utf-8")


def test_am06_frontmatter_is_passed_through_as_text(tmp_path: Path) -> None:
    _, chain = load(_case("AM06"), tmp_path)
    leaf = chain.files[-1]
    assert leaf.text.startswith("---\ndescription: Development guidance for the @cline/llms package.\n")
    assert leaf.diagnostics == () and leaf.imports == ()


def test_am08_agents_md_symlink_to_claude_md_loads_once_and_gemini_md_is_not_read(tmp_path: Path) -> None:
    _, chain = load(_case("AM08"), tmp_path)
    only = _only(chain)
    assert only.text == (AGENTS_MD / "obra__superpowers" / "CLAUDE.md").read_text("utf-8")
    assert only.imports == ()
    assert "skills/using-superpowers" not in render_chain(chain)


def test_am09_imports_inline_in_order(tmp_path: Path) -> None:
    workspace, chain = load(_case("AM09-fallback"), tmp_path)
    only = _only(chain)
    names = ["overview", "commands", "architecture", "implementation_detail", "phase", "notes"]
    docs = AGENTS_MD / "fdshg693__ai_assist_todo_app" / ".claude_docs"

    assert [(r.spec, r.status, r.path) for r in only.imports] == [
        (f"./../.claude_docs/{n}.md", "resolved", workspace / ".claude_docs" / f"{n}.md") for n in names
    ]
    positions = [
        only.text.index(f"[imported from .claude_docs/{n}.md]\n" + (docs / f"{n}.md").read_text("utf-8"))
        for n in names
    ]
    assert positions == sorted(positions)
    frames = sum(
        len(f"[imported from .claude_docs/{n}.md]\n[end of import .claude_docs/{n}.md]\n") for n in names
    )
    inlined = sum((docs / f"{n}.md").stat().st_size for n in names)
    assert only.size_bytes == only.kept_bytes == 444 + inlined + frames
    assert only.diagnostics == ()


def test_am10_home_imports_are_refused_and_prose_is_untouched(tmp_path: Path) -> None:
    _, chain = load(_case("AM10"), tmp_path)
    only = _only(chain)
    assert [(r.spec, r.line, r.status, r.path) for r in only.imports] == [
        ("~/.claude/CLAUDE.local.md", 0, "refused", None),
        ("~/claude/rules/personal-style.md", 1, "refused", None),
    ]
    assert [(d.line, d.character, d.end_character, d.severity) for d in only.diagnostics] == [
        (0, 0, 26, "warning"),
        (1, 0, 35, "warning"),
    ]
    assert only.text.startswith(
        "@~/.claude/CLAUDE.local.md\n"
        f"[import refused: ~/.claude/CLAUDE.local.md {HOME_REFUSED}]\n"
        "@'~/claude/rules/personal-style.md'\n"
        f"[import refused: ~/claude/rules/personal-style.md {HOME_REFUSED}]\n"
        "\nRead the instructions under `~/.claude/rules`\n"
    )


def test_am11_loaded_verbatim_and_am12_equal_modulo_line_endings(tmp_path: Path) -> None:
    _, am11 = load(_case("AM11"), tmp_path / "a")
    _, am12 = load(_case("AM12"), tmp_path / "b")
    assert _only(am11).text == AM11_TEXT
    assert _only(am12).text == AM11_TEXT
    assert render_chain(am11) == render_chain(am12)
