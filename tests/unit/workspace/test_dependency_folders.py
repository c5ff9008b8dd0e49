"""Dependency folders (issue 11.7): one catalogue says which folders hold other people's code, by name,
by a condition, or by a marker the folder carries; instructions and skills there are data, and the shadow
copy links the ones tools install."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.workspace.dependency_folders import (
    CATALOGUE,
    dependency_folder,
    dependency_name,
    first_party,
    linked_dependency,
)
from agent_ls.workspace.shadow_tree import walk_workspace
from tests.unit.workspace.conftest import write

# A folder for every entry: (workspace-relative folder, files that make it one).
EXAMPLES: list[tuple[str, dict[str, str | bytes]]] = [
    ("node_modules", {}),
    ("bower_components", {}),
    ("jspm_packages", {}),
    (".pnpm-store", {}),
    (".yarn", {}),
    (".venv", {}),
    ("venv", {}),
    ("env", {"env/pyvenv.cfg": "home = /usr/bin\n"}),
    ("tools/conda-env", {"tools/conda-env/conda-meta/history": ""}),
    ("site-packages", {}),
    ("dist-packages", {}),
    ("__pypackages__", {}),
    (".tox", {}),
    (".nox", {}),
    (".eggs", {}),
    (".pixi", {}),
    ("vendor", {}),
    (".bundle", {}),
    ("gopath/pkg/mod", {"gopath/pkg/mod/cache/download/x": ""}),
    ("deps", {}),
    ("_build", {}),
    ("_checkouts", {}),
    (".dart_tool", {}),
    (".pub-cache", {}),
    (".build", {}),
    ("ios/Pods", {}),
    ("Carthage", {}),
    (".stack-work", {}),
    ("dist-newstyle", {}),
    ("_opam", {}),
    ("_esy", {}),
    ("nimbledeps", {}),
    (".zig-cache", {}),
    ("zig-cache", {}),
    ("lib", {"shard.yml": "name: app\n"}),
    ("elm-stuff", {}),
    (".spago", {}),
    ("third_party", {}),
    ("third-party", {}),
    ("thirdparty", {}),
    ("3rdparty", {}),
    ("3rd_party", {}),
    ("vcpkg_installed", {}),
    ("build/_deps", {}),
    ("bazel-out", {}),
    ("buck-out", {}),
    (".gradle", {}),
    (".m2", {}),
    (".terraform", {}),
    (".terragrunt-cache", {}),
    ("renv/library", {}),
    ("packrat/lib", {}),
    ("packrat/lib-R", {}),
    ("packrat/lib-ext", {}),
    ("lua_modules", {}),
    (".luarocks", {}),
    ("local", {"cpanfile": "requires 'Plack';\n"}),
    (".git", {}),
    (".hg", {}),
    (".svn", {}),
]


def _make(root: Path, rel: str, files: dict[str, str | bytes]) -> Path:
    (root / rel).mkdir(parents=True, exist_ok=True)
    write(root, files)
    return root / rel


@pytest.mark.parametrize(("rel", "files"), EXAMPLES)
def test_every_entry_is_recognized(tmp_path: Path, rel: str, files: dict[str, str | bytes]) -> None:
    folder = _make(tmp_path, rel, files)
    assert dependency_folder(folder, tmp_path) is not None
    assert first_party(tmp_path, folder / "pkg" / "src") == folder.parent


def test_every_entry_has_an_example(tmp_path: Path) -> None:
    found = set()
    for rel, files in EXAMPLES:
        entry = dependency_folder(
            _make(tmp_path / rel.replace("/", "_"), rel, files), tmp_path / rel.replace("/", "_")
        )
        found.add(entry)
    assert set(CATALOGUE) - found == set()


@pytest.mark.parametrize(
    ("rel", "files"),
    [
        ("lib", {}),  # a project's own lib/: only Crystal's (beside shard.yml) is a dependency folder
        ("src/lib", {"package.json": "{}\n"}),
        ("local", {}),  # Carton's only beside a cpanfile
        ("env", {}),  # a virtual environment only with its pyvenv.cfg
        ("external", {}),
        ("extern", {}),
        ("packages", {}),
        ("library", {}),  # renv's only inside renv/
        ("mod", {}),  # the Go module cache's only as pkg/mod holding cache/download
        ("pkg/mod", {}),
        ("build", {}),
        ("src", {}),
        ("nested-repo", {"nested-repo/.git/HEAD": "ref: refs/heads/main\n"}),  # a project, not a dependency
        ("worktree", {"worktree/.git": "gitdir: /repo/.git/worktrees/feature\n"}),
    ],
)
def test_first_party_folders(tmp_path: Path, rel: str, files: dict[str, str | bytes]) -> None:
    folder = _make(tmp_path, rel, files)
    assert dependency_folder(folder, tmp_path) is None
    assert first_party(tmp_path, folder / "x") == folder / "x"


def test_names_match_in_any_case_and_as_windows_reads_them(tmp_path: Path) -> None:
    for name in ("Node_Modules", "DEPS", "deps.", "Third_Party ", "Bazel-Bin"):
        assert dependency_folder(tmp_path / name) is not None, name
    assert dependency_name("NODE_MODULES") and dependency_name(".git")
    assert not dependency_name("lib") and not dependency_name("src")


def test_git_submodules_are_dependency_folders(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "extern/json/.git": "gitdir: ../../.git/modules/extern/json\n",
            "extern/json/AGENTS.md": "theirs\n",
            "old-style/.git/HEAD": "ref: refs/heads/main\n",
            ".gitmodules": '[submodule "old"]\n\tpath = old-style\n\turl = https://example.com/old.git\n',
        },
    )
    assert dependency_folder(tmp_path / "extern" / "json", tmp_path) is not None
    assert dependency_folder(tmp_path / "old-style", tmp_path) is not None
    assert dependency_folder(tmp_path / "extern", tmp_path) is None
    assert first_party(tmp_path, tmp_path / "extern" / "json" / "src") == tmp_path / "extern"


def test_the_root_is_never_cut(tmp_path: Path) -> None:
    root = tmp_path / "node_modules" / "pkg"
    root.mkdir(parents=True)
    assert first_party(root, root / "src") == root / "src"


def test_the_shadow_copy_links_what_tools_install_and_copies_the_rest(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "node_modules/x/index.js": "",
            "__pypackages__/3.12/lib/x.py": "",
            "tools/env/conda-meta/history": "",
            "py/pyvenv.cfg": "",
            "deps/phoenix/mix.exs": "",
            "third_party/zlib/zlib.h": "",
            "vendor/github.com/x/y.go": "",
        },
    )
    kinds = {entry.rel: entry.kind for entry in walk_workspace(tmp_path, lambda rel: False)}
    assert {
        rel: kinds[rel] for rel in ("node_modules", "__pypackages__", "tools/env", "py")
    } == dict.fromkeys(("node_modules", "__pypackages__", "tools/env", "py"), "linked")
    assert kinds["deps/phoenix/mix.exs"] == kinds["third_party/zlib/zlib.h"] == "file"
    assert kinds["vendor/github.com/x/y.go"] == "file"
    assert linked_dependency(tmp_path / "py") and not linked_dependency(tmp_path / "deps")
