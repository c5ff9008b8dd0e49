"""The workspace's secret index (``secret_index``): what it masks, and that after its one walk a file
watch keeps it current, so a command costs what changed (issue 14)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.secret_index import SecretIndex
from tests.unit.workspace.conftest import write


@pytest.fixture
def index(root: Path, tmp_path: Path) -> Iterator[SecretIndex]:
    found = SecretIndex(root, PathPolicy(root).is_secret, temp_parent=tmp_path)
    yield found
    found.close()


def masked(index: SecretIndex) -> dict[str, str]:
    return {rel: why for rel, why, _ in index.masks().entries}


def test_it_masks_secrets_git_special_files_and_hard_links_outside_dependency_folders(
    index: SecretIndex, root: Path, tmp_path: Path
) -> None:
    (tmp_path / "store.js").write_text("x\n")
    write(
        root,
        {
            ".env": "K=1\n",
            "app/config/.env.local": "K=2\n",
            "node_modules/pkg/.env": "K=3\n",  # dependency folders are looked into too
            ".git/config": "[core]\n",
            "vendor/lib/.git": "gitdir: ../../.git/modules/lib\n",
            "src/a.py": "a\n",
            "node_modules/pkg/index.js": "x\n",
        },
    )
    os.link(root / ".env", root / "src/notes.txt")
    os.link(tmp_path / "store.js", root / "node_modules/pkg/a.js")  # pnpm links from its store: fine
    os.mkfifo(root / "src/pipe")
    assert masked(index) == {
        ".env": "secret",
        ".git": "git",
        "app/config/.env.local": "secret",
        "node_modules/pkg/.env": "secret",
        "src/notes.txt": "alias",
        "src/pipe": "special",
        "vendor/lib/.git": "git",
    }
    assert index.masks().secret_paths() == (
        ".env",
        "app/config/.env.local",
        "node_modules/pkg/.env",
        "src/notes.txt",
    )


def test_changes_are_found_by_the_watch_without_walking_again(index: SecretIndex, root: Path) -> None:
    write(root, {f"src/p{i}/m.py": "x\n" for i in range(20)})
    assert masked(index) == {}
    write(root, {"src/p3/.env": "K=1\n", "new/deep/id_rsa": "K\n"})  # a file, and a new folder
    assert masked(index) == {"src/p3/.env": "secret", "new/deep/id_rsa": "secret"}
    (root / "src/p3/.env").unlink()
    os.rename(root / "new", root / "renamed")
    assert masked(index) == {"renamed/deep/id_rsa": "secret"}
    assert index.walks == 1


def test_changed_since_names_what_changed_after_a_generation(index: SecretIndex, root: Path) -> None:
    write(root, {"a.py": "a\n", "b.py": "b\n"})
    generation = index.masks().generation
    (root / "b.py").write_text("saved\n")
    assert "b.py" in index.changed_since(generation)
    assert "a.py" not in index.changed_since(generation)


def test_a_closed_index_answers_too_large(index: SecretIndex, root: Path) -> None:
    write(root, {"a.py": "a\n"})
    index.close()
    assert index.masks().too_large
