"""Instruction budgets (``instructions/budget.py`` and how ``load_chain`` applies them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.instructions.agents_md import InstructionSettings, load_chain
from agent_ls.instructions.budget import allocate, cut_point
from tests.unit.instructions.test_agents_md import chain_of, write

KIB = 1024


@pytest.mark.parametrize(
    ("costs", "per_file", "total", "expected"),
    [
        ([40 * KIB, 1 * KIB], 32 * KIB, 32 * KIB, [31 * KIB, 1 * KIB]),  # Codex starvation case reversed
        ([10, 20, 30], 100, 100, [10, 20, 30]),
        ([10, 20, 30], 100, 40, [0, 10, 30]),  # the shallowest cut first, then dropped
        ([50, 50, 50], 20, 100, [20, 20, 20]),  # per-file cap
        ([50, 50, 50], 20, 30, [0, 10, 20]),
        ([5, 60], 100, 50, [0, 50]),  # a big leaf takes all: the root is dropped
        ([], 10, 10, []),
        ([10], 10, 0, [0]),
    ],
)
def test_allocate_nearest_first(costs: list[int], per_file: int, total: int, expected: list[int]) -> None:
    assert allocate(costs, max_file_bytes=per_file, max_total_bytes=total) == expected


@pytest.mark.parametrize(
    ("data", "limit", "expected"),
    [
        (b"abcdef", 4, 4),
        (b"abc", 10, 3),
        (b"abc", -1, 0),
        ("a\u00e9b".encode(), 2, 1),  # é = C3 A9: never keep C3 alone
        ("a\u00e9b".encode(), 3, 3),
        ("\ud55c\uad6d".encode(), 4, 3),  # Hangul, 3 bytes each
        ("\ud55c\uad6d".encode(), 5, 3),
        ("x\U0001f600".encode(), 4, 1),  # emoji, 4 bytes
        ("x\U0001f600".encode(), 5, 5),
        (b"ab\r\ncd", 3, 2),  # never between CR and LF
        (b"ab\r\ncd", 4, 4),
        (b"ab\rcd", 3, 3),  # a lone CR may end the head
    ],
)
def test_cut_point_is_a_character_boundary(data: bytes, limit: int, expected: int) -> None:
    n = cut_point(data, limit)
    assert n == expected
    data[:n].decode("utf-8")  # strict: raises if a sequence was split


def test_codex_starvation_case_the_leaf_survives_whole(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {".git/HEAD": "", "AGENTS.md": "r" * 40 * KIB, "pkg/AGENTS.md": "L" * KIB})
    chain = chain_of(root, "pkg/x.py")
    top, leaf = chain.files
    assert (leaf.text, leaf.kept_bytes, leaf.truncated, leaf.diagnostics) == ("L" * KIB, KIB, False, ())
    assert top.text == "r" * 31 * KIB + f"\n[truncated: {31 * KIB} of {40 * KIB} bytes]"
    assert [(d.severity, d.message) for d in top.diagnostics] == [
        (
            "warning",
            f"truncated: only the first {31 * KIB} of {40 * KIB} bytes reach the model; deeper instruction "
            "files used the rest of the instruction budget (max_total_bytes = 32768)",
        )
    ]
    assert chain.total_bytes == 32 * KIB


def test_the_global_file_is_cut_before_project_files(tmp_path: Path) -> None:
    config = write(tmp_path / "config", {"AGENTS.md": "g" * 20 * KIB})
    root = write(tmp_path / "ws", {"AGENTS.md": "r" * 20 * KIB})
    chain = load_chain(workspace_root=root, focus=None, global_dir=config)
    assert [(f.kind, f.kept_bytes) for f in chain.files] == [("global", 12 * KIB), ("project", 20 * KIB)]


def test_per_file_cap_names_its_setting(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"AGENTS.md": "a" * 100, "b/AGENTS.md": "b" * 100})
    settings = InstructionSettings(max_file_bytes=60, max_total_bytes=1000)
    chain = chain_of(root, "b/x.py", settings)
    assert [f.kept_bytes for f in chain.files] == [60, 60]
    assert chain.files[1].diagnostics[0].message == (
        "truncated: only the first 60 of 100 bytes reach the model (per-file limit max_file_bytes = 60)"
    )


@pytest.mark.parametrize(
    ("budget", "text", "kept"),
    [
        (12, "ab\ncd\nef\n", 12),
        (11, "ab\ncd\nef\n[truncated: 10 of 12 bytes]", 10),  # not between CR and LF
        (9, "ab\ncd\ne\n[truncated: 9 of 12 bytes]", 9),
        (8, "ab\ncd\n\n[truncated: 8 of 12 bytes]", 8),
    ],
)
def test_budget_counts_real_bytes_crlf_as_two(tmp_path: Path, budget: int, text: str, kept: int) -> None:
    root = write(tmp_path / "ws", {"AGENTS.md": b"ab\r\ncd\r\nef\r\n"})  # 12 bytes, 9 in the prompt
    (file,) = chain_of(root, None, InstructionSettings(max_total_bytes=budget)).files
    assert (file.text, file.kept_bytes, file.size_bytes) == (text, kept, 12)


def test_cut_in_multibyte_text_and_the_diagnostic_line(tmp_path: Path) -> None:
    text = "첫 줄\n둘째 줄\n셋째 줄\n"  # 30 bytes: Hangul syllables are 3 bytes each
    root = write(tmp_path / "ws", {"AGENTS.md": text})
    (file,) = chain_of(root, None, InstructionSettings(max_file_bytes=16)).files  # byte 16 is inside 줄
    assert "\ufffd" not in file.text
    assert file.text == "첫 줄\n둘째 \n[truncated: 15 of 30 bytes]"
    assert [(d.line, d.character, d.end_character) for d in file.diagnostics] == [(1, 0, 4)]


def test_a_file_dropped_to_zero_stays_visible(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"AGENTS.md": "root", "a/AGENTS.md": "x" * 50})
    chain = chain_of(root, "a/x.py", InstructionSettings(max_file_bytes=100, max_total_bytes=50))
    dropped, leaf = chain.files
    assert (dropped.text, dropped.kept_bytes, dropped.truncated) == ("[truncated: 0 of 4 bytes]", 0, True)
    assert dropped.diagnostics[0].message.startswith("dropped: none of its 4 bytes reach the model")
    assert leaf.text == "x" * 50


def test_imported_text_counts_against_the_importing_file(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"CLAUDE.md": "@big.md\n", "big.md": "B" * 100})
    (file,) = chain_of(root, None, InstructionSettings(max_file_bytes=50)).files
    frame = "[imported from big.md]\n"
    assert file.size_bytes == len("@big.md\n") + len(frame) + 100 + 1 + len("[end of import big.md]\n")
    assert file.kept_bytes == 50
    assert (
        file.text
        == "@big.md\n" + frame + "B" * (50 - 8 - len(frame)) + f"\n[truncated: 50 of {file.size_bytes} bytes]"
    )
    assert file.diagnostics[0].line == 0  # the cut falls in the text imported on line 0


def test_a_huge_file_is_measured_on_disk_and_cut(tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"AGENTS.md": "é" * (3 * 1024 * 1024)})  # 6 MiB
    (file,) = chain_of(root, None).files
    assert file.size_bytes == 6 * 1024 * 1024
    assert file.kept_bytes == 32 * KIB
    assert file.text.endswith(f"\n[truncated: {32 * KIB} of {6 * 1024 * 1024} bytes]")
