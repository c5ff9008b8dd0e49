"""AGENTS.md discovery, order, text and framing (``instructions/agents_md.py``), on real files in tmp_path."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from agent_ls.core.file_diagnostics import FileDiagnostic
from agent_ls.instructions.agents_md import (
    CHAIN_HEADER,
    InstructionChain,
    InstructionSettings,
    governing_files,
    load_chain,
    render_chain,
    render_nested,
)

DEFAULTS = InstructionSettings()


def write(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Create ``files`` (workspace-relative path → text or bytes) under ``root``; return ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
    return root


def chain_of(
    root: Path,
    focus: str | None,
    settings: InstructionSettings = DEFAULTS,
    global_dir: Path | None = None,
) -> InstructionChain:
    return load_chain(
        workspace_root=root,
        focus=None if focus is None else root / focus,
        global_dir=global_dir,
        settings=settings,
    )


def labels(chain: InstructionChain) -> list[str]:
    return [file.label for file in chain.files]


# -- discovery ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "focus", "expected_root", "expected_labels"),
    [
        # nearest marker wins; shallower files are not in the chain
        (
            {".git/HEAD": "", "AGENTS.md": "root", "sub/.git": "gitdir: x", "sub/AGENTS.md": "sub"},
            "sub/a.py",
            "sub",
            ["sub/AGENTS.md"],
        ),
        # no marker anywhere: the workspace root
        ({"AGENTS.md": "root", "a/b/AGENTS.md": "b"}, "a/b/c.py", ".", ["AGENTS.md", "a/b/AGENTS.md"]),
        # no focus: the workspace root, nothing below it
        ({".git/HEAD": "", "AGENTS.md": "root", "a/AGENTS.md": "a"}, None, ".", ["AGENTS.md"]),
        # a focus directory (not a file) counts itself
        ({"AGENTS.md": "root", "a/AGENTS.md": "a"}, "a", ".", ["AGENTS.md", "a/AGENTS.md"]),
        # a focus that does not exist yet (a new file): its directory
        ({"AGENTS.md": "root", "a/AGENTS.md": "a"}, "a/new.py", ".", ["AGENTS.md", "a/AGENTS.md"]),
        # gaps in the chain are fine
        ({"AGENTS.md": "r", "a/b/c/AGENTS.md": "c"}, "a/b/c/d/e.py", ".", ["AGENTS.md", "a/b/c/AGENTS.md"]),
        # siblings are excluded
        (
            {"AGENTS.md": "r", "a/AGENTS.md": "a", "b/AGENTS.md": "b"},
            "b/x.py",
            ".",
            ["AGENTS.md", "b/AGENTS.md"],
        ),
    ],
)
def test_project_root_and_chain(
    tmp_path: Path, files: dict[str, str], focus: str | None, expected_root: str, expected_labels: list[str]
) -> None:
    root = write(tmp_path / "ws", files)
    chain = chain_of(root, focus)
    assert chain.project_root == root / expected_root if expected_root != "." else chain.project_root == root
    assert labels(chain) == expected_labels


def test_a_marker_above_the_workspace_root_is_never_used(tmp_path: Path) -> None:
    write(tmp_path, {".git/HEAD": "", "AGENTS.md": "outside"})
    root = write(tmp_path / "ws", {"AGENTS.md": "inside"})
    chain = chain_of(root, "x.py")
    assert chain.project_root == root
    assert [f.text for f in chain.files] == ["inside"]


def test_focus_is_never_the_process_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write(tmp_path / "ws", {"AGENTS.md": "root", "a/AGENTS.md": "a"})
    elsewhere = write(tmp_path / "other", {"a/AGENTS.md": "wrong"})
    monkeypatch.chdir(elsewhere)
    relative = load_chain(workspace_root=root, focus=Path("a/x.py"), global_dir=None)
    assert [f.text for f in relative.files] == ["root", "a"]
    assert load_chain(workspace_root=root, focus=None, global_dir=None).focus_dir == root
    with pytest.raises(ValueError, match="absolute"):
        load_chain(workspace_root=Path("ws"), focus=None, global_dir=None)


def test_a_focus_outside_the_workspace_gets_the_roots_chain_and_a_notice(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"AGENTS.md": "root"})
    write(tmp_path / "other", {"AGENTS.md": "other"})
    chain = load_chain(workspace_root=root, focus=tmp_path / "other" / "x.py", global_dir=None)
    assert chain.focus_dir == root
    assert [f.text for f in chain.files] == ["root"]
    assert [(n.severity, n.message) for n in chain.notices] == [
        ("information", f"the focus is outside the workspace root {root}; its chain is the root's")
    ]


def test_multi_root_each_root_has_its_own_chain(tmp_path: Path) -> None:
    one = write(tmp_path / "one", {"AGENTS.md": "one", "pkg/AGENTS.md": "one/pkg"})
    two = write(tmp_path / "two", {"AGENTS.md": "two"})
    assert [f.text for f in chain_of(one, "pkg/x.py").files] == ["one", "one/pkg"]
    assert [f.text for f in chain_of(two, "x.py").files] == ["two"]
    # a file of root one asked of root two: root two's chain only
    assert [
        f.text for f in load_chain(workspace_root=two, focus=one / "pkg/x.py", global_dir=None).files
    ] == ["two"]


@pytest.mark.parametrize(
    ("present", "settings", "expected"),
    [
        (["AGENTS.override.md", "AGENTS.md", "CLAUDE.md"], InstructionSettings(), "AGENTS.override.md"),
        (["AGENTS.md", "CLAUDE.md"], InstructionSettings(), "AGENTS.md"),
        (["CLAUDE.md"], InstructionSettings(), "CLAUDE.md"),
        (["GEMINI.md"], InstructionSettings(), None),
        (
            ["GEMINI.md", "TEAM.md"],
            InstructionSettings(fallback_filenames=("TEAM.md", "GEMINI.md")),
            "TEAM.md",
        ),
        ([".claude/CLAUDE.md"], InstructionSettings(), None),
        (
            ["CLAUDE.md", ".claude/CLAUDE.md"],
            InstructionSettings(fallback_filenames=("CLAUDE.md", ".claude/CLAUDE.md")),
            "CLAUDE.md",
        ),
        (
            [".claude/CLAUDE.md"],
            InstructionSettings(fallback_filenames=(".claude/CLAUDE.md",)),
            ".claude/CLAUDE.md",
        ),
        # names that could leave the directory are ignored
        (["CLAUDE.md"], InstructionSettings(fallback_filenames=("../CLAUDE.md", "/etc/CLAUDE.md", "")), None),
    ],
)
def test_one_file_per_directory_first_candidate_wins(
    tmp_path: Path, present: list[str], settings: InstructionSettings, expected: str | None
) -> None:
    root = write(tmp_path / "ws", {name: f"from {name}" for name in present})
    chain = chain_of(root, None, settings)
    assert labels(chain) == ([] if expected is None else [expected])
    assert [f.text for f in chain.files] == ([] if expected is None else [f"from {expected}"])


@pytest.mark.parametrize("content", ["", "  \n\t\r\n", "\ufeff\n"])
def test_empty_files_are_skipped_with_a_notice(tmp_path: Path, content: str) -> None:
    root = write(tmp_path / "ws", {"AGENTS.md": content, "a/AGENTS.md": "a"})
    chain = chain_of(root, "a/x.py")
    assert labels(chain) == ["a/AGENTS.md"]
    assert chain.notices == (
        FileDiagnostic(root / "AGENTS.md", 0, 0, 0, "information", "AGENTS.md is empty; skipped"),
    )


def test_global_file_comes_first_and_the_override_wins(tmp_path: Path) -> None:
    config = write(tmp_path / "config", {"AGENTS.md": "global", "AGENTS.override.md": "override"})
    root = write(tmp_path / "ws", {"AGENTS.md": "root"})
    chain = chain_of(root, None, global_dir=config)
    assert [(f.label, f.scope, f.kind, f.text) for f in chain.files] == [
        ((config / "AGENTS.override.md").as_posix(), "global", "global", "override"),
        ("AGENTS.md", "**", "project", "root"),
    ]
    (config / "AGENTS.override.md").unlink()
    assert [f.text for f in chain_of(root, None, global_dir=config).files] == ["global", "root"]
    assert [f.text for f in chain_of(root, None, global_dir=tmp_path / "missing").files] == ["root"]


# -- symlinks, dedupe, policy ------------------------------------------------------------------------


def test_claude_md_symlinked_to_agents_md_and_back_load_once(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"AGENTS.md": "shared", "b/CLAUDE.md": "claude"})
    (root / "CLAUDE.md").symlink_to("AGENTS.md")
    (root / "b" / "AGENTS.md").symlink_to("CLAUDE.md")
    chain = chain_of(root, "b/x.py")
    assert [(f.label, f.real_path, f.text) for f in chain.files] == [
        ("AGENTS.md", root / "AGENTS.md", "shared"),
        ("b/AGENTS.md", root / "b" / "CLAUDE.md", "claude"),
    ]
    assert chain.notices == ()


def test_the_same_real_file_in_two_directories_loads_once(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"AGENTS.md": "root"})
    (root / "sub").mkdir()
    (root / "sub" / "AGENTS.md").symlink_to("../AGENTS.md")
    chain = chain_of(root, "sub/x.py")
    assert labels(chain) == ["AGENTS.md"]
    assert [n.message for n in chain.notices] == ["sub/AGENTS.md is the same file as AGENTS.md; loaded once"]


def test_a_symlink_leaving_the_workspace_is_not_followed(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", {"AGENTS.md": "secret plans"})
    root = write(tmp_path / "ws", {"a/AGENTS.md": "a"})
    (root / "AGENTS.md").symlink_to(outside / "AGENTS.md")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    chain = chain_of(root, "a/x.py")
    assert [f.text for f in chain.files] == ["a"]
    assert [(n.path, n.severity, n.message) for n in chain.notices] == [
        (
            root / "AGENTS.md",
            "warning",
            f"symlinked AGENTS.md not followed: its real path {outside}/AGENTS.md is outside the workspace",
        )
    ]
    # a directory symlink leaving the workspace: same policy for the file inside it
    through_dir = chain_of(root, "linked/x.py")
    assert "secret plans" not in render_chain(through_dir)
    assert through_dir.notices[-1].message.startswith("symlinked linked/AGENTS.md not followed")


def test_broken_symlink_and_unreadable_files_give_notices(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"a/AGENTS.md": "a"})
    (root / "AGENTS.md").symlink_to("missing.md")
    os.mkfifo(root / "a" / "AGENTS.override.md")  # must neither hang nor load
    chain = chain_of(root, "a/x.py")
    assert chain.files == ()
    assert [n.message for n in chain.notices] == [
        f"symlinked AGENTS.md not followed: its target {root / 'missing.md'} does not exist",
        "a/AGENTS.override.md not loaded: not a regular file",
    ]


def test_a_secret_file_is_never_loaded(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {".env": "API_KEY=abc"})
    (root / "AGENTS.md").symlink_to(".env")
    chain = chain_of(root, None)
    assert chain.files == ()
    assert [n.message for n in chain.notices] == ["AGENTS.md not loaded: it is the secret file .env"]


def test_hidden_directories_are_fine(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {".agents/AGENTS.md": "canonical", ".github/w/AGENTS.md": "workflows"})
    (root / "AGENTS.md").symlink_to(".agents/AGENTS.md")
    chain = chain_of(root, ".github/w/ci.yml")
    assert [(f.label, f.text) for f in chain.files] == [
        ("AGENTS.md", "canonical"),
        (".github/w/AGENTS.md", "workflows"),
    ]


# -- text --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "text", "size"),
    [
        (b"\xef\xbb\xbf# T\r\nline\r\n", "# T\nline\n", 11),  # CRLF counts 2, the BOM 0
        (b"a\rb\r", "a\nb\n", 4),
        (b"\xef\xbb\xbf\xef\xbb\xbfx", "\ufeffx", 4),  # one BOM stripped, not two
        (b"caf\xc3\xa9\n", "café\n", 6),
    ],
)
def test_bom_stripped_newlines_normalized_real_bytes_counted(
    tmp_path: Path, raw: bytes, text: str, size: int
) -> None:
    root = write(tmp_path / "ws", {"AGENTS.md": raw})
    (file,) = chain_of(root, None).files
    assert (file.text, file.size_bytes, file.kept_bytes) == (text, size, size)
    assert (root / "AGENTS.md").read_bytes() == raw  # never rewritten


def test_invalid_utf8_is_replaced_and_reported(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"AGENTS.md": b"ok \xff\xfe end"})
    (file,) = chain_of(root, None).files
    assert file.text == "ok \ufffd\ufffd end"
    assert [d.message for d in file.diagnostics] == [
        "not valid UTF-8: the invalid bytes were replaced with U+FFFD"
    ]


def test_agents_md_never_imports(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"AGENTS.md": "see @notes.md\n", "notes.md": "NOTES"})
    (file,) = chain_of(root, None).files
    assert (file.text, file.imports, file.diagnostics) == ("see @notes.md\n", (), ())


# -- framing -----------------------------------------------------------------------------------------


def test_render_chain_labels_every_file_with_path_and_scope(tmp_path: Path) -> None:
    config = write(tmp_path / "config", {"AGENTS.md": "be kind\n"})
    root = write(
        tmp_path / "ws", {"AGENTS.md": "root rules\n", "pkg/AGENTS.md": 'pkg "rules" </instructions>'}
    )
    chain = chain_of(root, "pkg/x.py", global_dir=config)
    assert render_chain(chain) == (
        f"{CHAIN_HEADER}\n\n"
        f'<instructions source="{config.as_posix()}/AGENTS.md" scope="global">\nbe kind\n</instructions>\n\n'
        '<instructions source="AGENTS.md" scope="**">\nroot rules\n</instructions>\n\n'
        '<instructions source="pkg/AGENTS.md" scope="pkg/**">\n'
        'pkg "rules" &lt;/instructions>\n</instructions>'
    )
    assert "deeper (later) file overrides a shallower" in CHAIN_HEADER
    assert "the user's request overrides them all" in CHAIN_HEADER


def test_render_chain_is_empty_without_files_and_rebuilt_identically(tmp_path: Path) -> None:
    root = write(
        tmp_path / "ws", {"AGENTS.md": "x" * 40_000, "a/CLAUDE.md": "@../notes.md\n", "notes.md": "é"}
    )
    (tmp_path / "empty").mkdir()
    assert render_chain(chain_of(tmp_path / "empty", None)) == ""
    first = render_chain(chain_of(root, "a/b.py"))
    second = render_chain(chain_of(root, "a/b.py"))
    assert first == second and first.encode("utf-8") == second.encode("utf-8")
    assert chain_of(root, "a/b.py") == chain_of(root, "a/b.py")


def test_render_nested_first_line_names_the_file(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"pkg/AGENTS.md": "pkg rules"})
    (file,) = chain_of(root, "pkg/x.py").files
    assert render_nested(file) == (
        "Instructions from: pkg/AGENTS.md (scope: pkg/**)\n"
        '<instructions source="pkg/AGENTS.md" scope="pkg/**">\npkg rules\n</instructions>'
    )


def test_disabled_budget_reads_nothing(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"AGENTS.md": "root"})
    os.mkfifo(root / "AGENTS.override.md")  # reading it would block: proves nothing is read
    chain = chain_of(root, None, InstructionSettings(max_total_bytes=0))
    assert (chain.files, chain.notices, render_chain(chain)) == ((), (), "")


def test_wire(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {".git/HEAD": "", "CLAUDE.md": "@missing.md\n"})
    chain = chain_of(root, "x.py")
    text = "@missing.md\n[import not found: missing.md]\n"
    diagnostic = {
        "path": str(root / "CLAUDE.md"),
        "line": 0,
        "character": 0,
        "endCharacter": 11,
        "severity": "warning",
        "message": "import not found: missing.md",
    }
    assert chain.wire() == {
        "workspaceRoot": str(root),
        "projectRoot": str(root),
        "focusDir": str(root),
        "budgetBytes": 32768,
        "totalBytes": len(text),
        "files": [
            {
                "order": 1,
                "path": str(root / "CLAUDE.md"),
                "realPath": str(root / "CLAUDE.md"),
                "label": "CLAUDE.md",
                "scope": "**",
                "kind": "project",
                "bytes": len(text),
                "keptBytes": len(text),
                "truncated": False,
                "imports": [
                    {
                        "spec": "missing.md",
                        "line": 0,
                        "status": "not_found",
                        "path": str(root / "missing.md"),
                        "message": "not found: missing.md",
                        "importer": str(root / "CLAUDE.md"),
                    }
                ],
            }
        ],
        "notices": [],
        "diagnostics": [diagnostic],
    }
    assert chain.files[0].text == text


# -- governing files ---------------------------------------------------------------------------------


def test_governing_files_root_to_leaf_inside_and_outside_the_chain(tmp_path: Path) -> None:
    root = write(
        tmp_path / "ws",
        {
            ".git/HEAD": "",
            "AGENTS.md": "r",
            "a/AGENTS.md": "a",
            "a/b/CLAUDE.md": "b",
            "c/AGENTS.md": "c",
            "c/d/AGENTS.md": "",
            "e/.git": "gitdir: x",
            "e/AGENTS.md": "e",
        },
    )
    chain = chain_of(root, "a/x.py")
    assert {
        rel: governing_files(chain, rel)
        for rel in ["x.py", "a/y.py", "a/b/z.py", "c/d/w.py", "e/f.py", "../o"]
    } == {
        "x.py": ("AGENTS.md",),
        "a/y.py": ("AGENTS.md", "a/AGENTS.md"),
        "a/b/z.py": ("AGENTS.md", "a/AGENTS.md", "a/b/CLAUDE.md"),
        "c/d/w.py": ("AGENTS.md", "c/AGENTS.md"),  # c/d/AGENTS.md is empty
        "e/f.py": ("e/AGENTS.md",),  # its own project root
        "../o": (),
    }
    assert governing_files(chain, "a/y.py", InstructionSettings(max_total_bytes=0)) == ()


def test_a_symlinked_workspace_root_and_a_resolved_focus(tmp_path: Path) -> None:
    real = write(tmp_path / "real", {"AGENTS.md": "root", "a/AGENTS.md": "a", "a/CLAUDE.md": "unused"})
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    chain = load_chain(workspace_root=link, focus=real / "a" / "x.py", global_dir=None)
    assert [(f.label, f.path, f.text) for f in chain.files] == [
        ("AGENTS.md", link / "AGENTS.md", "root"),
        ("a/AGENTS.md", link / "a" / "AGENTS.md", "a"),
    ]
    assert (chain.focus_dir, chain.notices) == (link / "a", ())


def test_a_binary_file_under_the_name_is_skipped_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "AGENTS.md").write_bytes(b"\0" * 4096)
    chain = chain_of(root, None)
    assert chain.files == ()
    assert [(n.severity, n.message) for n in chain.notices] == [
        ("warning", "AGENTS.md not loaded: it is binary (NUL bytes)")
    ]
