"""``@path`` imports (``instructions/imports.py``): what is an import, and how each one resolves."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_ls.instructions.agents_md import InstructionFile
from agent_ls.instructions.imports import ImportToken, find_imports
from tests.unit.instructions.test_agents_md import chain_of, write

# -- syntax ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "specs"),
    [
        ("@AGENTS.md", ["AGENTS.md"]),
        ("See @docs/style.md for style.", ["docs/style.md"]),
        ("@./notes", ["./notes"]),
        ("@../up.txt and @/abs/path.json", ["../up.txt", "/abs/path.json"]),
        ("@~/.claude/CLAUDE.local.md", ["~/.claude/CLAUDE.local.md"]),
        ("@'~/claude/rules/personal style.md'", ["~/claude/rules/personal style.md"]),
        ('@"quoted name.md" then @plain.md,', ["quoted name.md", "plain.md"]),
        ("(see @x.md)", ["x.md"]),
        ("(@x.md) x@y.md", []),  # "@" must start a word
        ("- @x.md.", ["x.md"]),
        # not imports
        ("[AGENTS.md](AGENTS.md) and AGENTS.md#language-policy", []),
        ("npm i @cline/llms @scope/package @cline/* @types/node", []),
        ("@pytest.fixture", []),
        ("@pytest.mark.parametrize('model', ['openai'])", []),
        ("@dataclass(frozen=True)", []),
        ("@dataclass Case", []),
        ("ping @alice, mail bob@example.com", []),
        ("https://x-access-token:...@github.com/...", []),
        ("@https://example.com/x.md", []),
        ("@docs/guide.md#section", []),
        ("@.env", []),  # a bare dot-file is no path shape: write @./.env
        ("@", []),
        ("@''", []),
    ],
)
def test_what_is_an_import(line: str, specs: list[str]) -> None:
    assert [token.spec for token in find_imports([line])] == specs


def test_positions_are_code_points_of_the_line() -> None:
    assert find_imports(["é @a.md"]) == [ImportToken("a.md", 0, 2, 7)]


@pytest.mark.parametrize(
    ("text", "specs"),
    [
        ("`@a.md` @b.md", ["b.md"]),
        ("``code with ` and @a.md`` @b.md", ["b.md"]),
        ("`unclosed @a.md", ["a.md"]),  # a lone backtick is literal
        ("a `span that\n@a.md runs on` @b.md", ["b.md"]),  # spans cross lines within a paragraph
        ("a `span\n\n@a.md", ["a.md"]),  # but not a blank line
        ("```\n@a.md\n```\n@b.md", ["b.md"]),
        ("~~~python\n@a.md\n~~~\n@b.md", ["b.md"]),
        ("````\n```\n@a.md\n````\n@b.md", ["b.md"]),  # a shorter fence does not close
        ("```\n@a.md\n~~~\n@b.md", []),  # another fence character does not close; unclosed runs to the end
        ("- item\n  ```\n  @a.md\n  ```\n@b.md", ["b.md"]),  # fences in list items
        ("> ```\n> @a.md\n> ```\n@b.md", ["b.md"]),  # and in block quotes
        ("```inline``` @a.md", ["a.md"]),  # a backtick in the info string: not a fence
    ],
)
def test_code_spans_and_fences_hold_no_imports(text: str, specs: list[str]) -> None:
    assert [token.spec for token in find_imports(text.split("\n"))] == specs


# -- resolution --------------------------------------------------------------------------------------


def claude_md(root: Path, focus: str | None = None) -> InstructionFile:
    chain = chain_of(root, focus)
    (file,) = [f for f in chain.files if f.label.endswith("CLAUDE.md")]
    return file


def test_relative_to_the_importing_file_and_nested_imports_inline_in_place(tmp_path: Path) -> None:
    root = write(
        tmp_path / "ws",
        {
            "pkg/CLAUDE.md": "top\n@docs/a.md\nend",
            "pkg/docs/a.md": "A1\n@../b.md\nA2\n",
            "pkg/b.md": "B",
        },
    )
    file = claude_md(root, "pkg/x.py")
    assert file.text == (
        "top\n@docs/a.md\n"
        "[imported from pkg/docs/a.md]\n"
        "A1\n@../b.md\n[imported from pkg/b.md]\nB\n[end of import pkg/b.md]\nA2\n"
        "[end of import pkg/docs/a.md]\n"
        "end"
    )
    assert [(r.spec, r.line, r.status, r.importer) for r in file.imports] == [
        ("docs/a.md", 1, "resolved", root / "pkg/CLAUDE.md"),
        ("../b.md", 1, "resolved", root / "pkg/docs/a.md"),
    ]
    assert file.diagnostics == ()


def test_depth_limit_is_five_hops(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"CLAUDE.md": "@d1.md\n"}
    files |= {f"d{n}.md": f"level {n}\n@d{n + 1}.md\n" for n in range(1, 7)}
    root = write(tmp_path / "ws", files)
    file = claude_md(root)
    assert [(r.spec, r.status) for r in file.imports] == [
        *((f"d{n}.md", "resolved") for n in range(1, 6)),
        ("d6.md", "too_deep"),
    ]
    assert "level 5" in file.text and "level 6" not in file.text
    assert "[import too deep: d6.md is more than 5 imports away]" in file.text
    (diagnostic,) = file.diagnostics
    assert (diagnostic.path, diagnostic.line, diagnostic.severity) == (root / "d5.md", 1, "warning")


@pytest.mark.parametrize(
    ("files", "status", "message"),
    [
        (
            {"CLAUDE.md": "@a.md", "a.md": "@b.md", "b.md": "@a.md"},
            "cycle",
            "cycle: a.md is already being imported (CLAUDE.md → a.md → b.md → a.md)",
        ),
        (
            {"CLAUDE.md": "x\n@CLAUDE.md"},
            "cycle",
            "cycle: CLAUDE.md is already being imported (CLAUDE.md → CLAUDE.md)",
        ),
        ({"CLAUDE.md": "@missing.md"}, "not_found", "not found: missing.md"),
        ({"CLAUDE.md": "@./docs", "docs/x.md": "x"}, "not_found", "not found: docs: not a regular file"),
        ({"CLAUDE.md": "@../outside.md"}, "refused", "refused: ../outside.md resolves outside the workspace"),
        (
            {"CLAUDE.md": "@sub/../../outside.md"},
            "refused",
            "refused: sub/../../outside.md resolves outside the workspace",
        ),
        (
            {"CLAUDE.md": "@~/notes.md"},
            "refused",
            "refused: ~/notes.md is outside the workspace (home paths are never read)",
        ),
        ({"CLAUDE.md": "@./.env", ".env": "KEY=1"}, "refused", "refused: .env is a secret file"),
        (
            {"CLAUDE.md": "@a.md\n@a.md", "a.md": "A"},
            "duplicate",
            "already loaded: a.md is not inlined twice",
        ),
    ],
)
def test_imports_that_are_not_inlined_leave_a_notice_and_a_diagnostic(
    tmp_path: Path, files: dict[str, str | bytes], status: str, message: str
) -> None:
    write(tmp_path, {"outside.md": "OUTSIDE"})
    root = write(tmp_path / "ws", files)
    file = claude_md(root)
    record = file.imports[-1]
    assert (record.status, record.message) == (status, message)
    assert f"[import {message}]" in file.text
    assert "OUTSIDE" not in file.text and "KEY=1" not in file.text
    diagnostic = file.diagnostics[-1]
    assert diagnostic.message == f"import {message}"
    assert diagnostic.severity == ("information" if status == "duplicate" else "warning")


def test_an_import_through_a_symlink_leaving_the_workspace_is_refused(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", {"rules.md": "OUTSIDE", "dir/x.md": "OUTSIDE TOO"})
    root = write(tmp_path / "ws", {"CLAUDE.md": "@rules.md\n@linked/x.md\n"})
    (root / "rules.md").symlink_to(outside / "rules.md")
    (root / "linked").symlink_to(outside / "dir", target_is_directory=True)
    file = claude_md(root)
    assert [(r.status, r.message) for r in file.imports] == [
        ("refused", "refused: rules.md resolves through a symlink outside the workspace"),
        ("refused", "refused: linked/x.md resolves through a symlink outside the workspace"),
    ]
    assert "OUTSIDE" not in file.text


def test_absolute_imports_inside_the_workspace_are_fine(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root, {"CLAUDE.md": f"@{root / 'docs/a.md'}\n", "docs/a.md": "A"})
    assert claude_md(root).imports[0].status == "resolved"


def test_an_import_of_a_chain_file_is_not_inlined_twice(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"CLAUDE.md": "@sub/AGENTS.md\n", "sub/AGENTS.md": "SUB RULES"})
    chain = chain_of(root, "sub/x.py")
    top, sub = chain.files
    assert [(r.status, r.message) for r in top.imports] == [
        ("duplicate", "already loaded: sub/AGENTS.md is not inlined twice")
    ]
    assert sub.text == "SUB RULES"
    assert sum(f.text.count("SUB RULES") for f in chain.files) == 1


def test_a_file_imported_by_two_instruction_files_is_inlined_once(tmp_path: Path) -> None:
    root = write(
        tmp_path / "ws", {"CLAUDE.md": "@shared.md\n", "a/CLAUDE.md": "@../shared.md\n", "shared.md": "S"}
    )
    top, leaf = chain_of(root, "a/x.py").files
    assert [r.status for r in top.imports] == ["resolved"]
    assert [r.status for r in leaf.imports] == ["duplicate"]


def test_import_line_without_final_newline(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"CLAUDE.md": b"see @a.md", "a.md": b"A\r\nB"})
    file = claude_md(root)
    assert file.text == "see @a.md\n[imported from a.md]\nA\nB\n[end of import a.md]\n"


def test_imports_in_code_are_left_alone(tmp_path: Path) -> None:
    text = "Use `@a.md` literally.\n```\n@a.md\n```\n"
    root = write(tmp_path / "ws", {"CLAUDE.md": text, "a.md": "A"})
    file = claude_md(root)
    assert (file.text, file.imports, file.diagnostics) == (text, (), ())


def test_fifo_import_does_not_hang(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"CLAUDE.md": "@pipe.md\n"})
    os.mkfifo(root / "pipe.md")
    assert [r.status for r in claude_md(root).imports] == ["not_found"]
