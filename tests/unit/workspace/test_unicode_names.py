"""Issue 12.3: a name written composed (NFC) finds the entry stored decomposed (NFD), and only it."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from agent_ls.core.errors import ToolError
from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.unicode_names import AmbiguousName, closest_entry, match_entry, not_found_hint

NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / f"{NFD}-dir").mkdir(parents=True)
    (ws / f"{NFD}-dir" / f"{NFD}.py").write_text("x = 1\n")
    (ws / "plain.txt").write_text("p\n")
    return ws


@pytest.mark.parametrize("written", [NFC, NFD])
def test_either_spelling_resolves_to_the_stored_entry(root: Path, written: str) -> None:
    policy = PathPolicy(root)
    assert policy.resolve(f"{written}-dir/{written}.py") == f"{NFD}-dir/{NFD}.py"
    assert policy.read_bytes(policy.resolve(f"{written}-dir/{written}.py")) == b"x = 1\n"


def test_a_new_name_stays_as_written(root: Path) -> None:
    assert PathPolicy(root).resolve(f"{NFD}-dir/new-{NFC}.py") == f"{NFD}-dir/new-{NFC}.py"


def test_two_entries_equal_after_normalization_are_an_error_naming_both(root: Path) -> None:
    (root / f"{NFC}.md").write_text("composed\n")
    (root / f"{NFD}.md").write_text("decomposed\n")
    for written in (NFC, NFD):
        with pytest.raises(ToolError) as caught:
            PathPolicy(root).resolve(f"{written}.md")
        assert repr(f"{NFC}.md") in str(caught.value) and repr(f"{NFD}.md") in str(caught.value)
    with pytest.raises(AmbiguousName):
        match_entry(root, f"{NFC}.md")


def test_a_not_found_names_the_closest_existing_entry(root: Path) -> None:
    assert closest_entry(root, "plain.txx") == "plain.txt"
    assert not_found_hint(root, "plian.txt") == "; the closest existing entry is 'plain.txt'"
    nearest = f"; the closest existing entry is '{NFD}-dir/{NFD}.py'"
    assert not_found_hint(root, f"{NFD}-dir/cafe.py") == nearest  # resolve() already mapped the folder
    assert not_found_hint(root, "zzzzzz/qqq") == ""
