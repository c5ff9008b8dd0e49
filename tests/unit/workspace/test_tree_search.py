"""grep on the real tree plus the pending texts (``tree_search``), and list_files through ``rg --files``.

The search makes no copy of the workspace: these tests pin what the copy used to guarantee (secrets,
links, ignore rules) now that ripgrep walks the user's tree, and that pending texts win over the disk.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_ls.core.errors import PathRefused, ToolError
from agent_ls.core.file_views import SearchResult
from agent_ls.workspace.listing import Selection
from agent_ls.workspace.overlay import OpenBuffer, Overlay
from agent_ls.workspace.sandbox import Sandbox
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.tree_search import PENDING_PREFIX
from tests.unit.workspace.conftest import FakeBuffers, write


@pytest.fixture
def overlay(root: Path, buffers: FakeBuffers, shadow: ShadowCopy) -> Overlay:
    """An overlay whose commands would use this machine's bubblewrap (grep does not: see below)."""
    return Overlay(root, buffers, shadow=shadow, sandbox="detect")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "id_rsa").write_text("PRIVATE KEY\n")
    return folder


def _lines(found: SearchResult) -> list[str]:
    return [f"{hit.path}:{hit.line}:{hit.text}" for hit in found.hits]


async def test_a_search_without_pending_edits_makes_no_copy(
    overlay: Overlay, shadow: ShadowCopy, root: Path, temp: Path
) -> None:
    write(root, {"src/a.py": "needle\n", "b.txt": "needle too\n"})
    assert _lines(await overlay.search("needle", ".", None)) == ["b.txt:1:needle too", "src/a.py:1:needle"]
    assert shadow.path is None
    assert not any(temp.iterdir())  # noqa: ASYNC240 (a test's directory listing)


async def test_grep_runs_ripgrep_itself_never_through_bubblewrap(
    root: Path, shadow: ShadowCopy, tmp_path: Path
) -> None:
    """Starting bubblewrap cost as much as ripgrep's whole search of a 1,000-file tree (issue 14), so grep
    runs ripgrep directly, on the disk and on the pending texts; its own checks keep secrets and links
    out (the other tests here run the same way)."""
    started = tmp_path / "bwrap-started"
    fake = tmp_path / "bwrap"
    fake.write_text(f'#!/bin/sh\ntouch {started}\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n')
    fake.chmod(0o755)
    overlay = Overlay(root, None, shadow=shadow, sandbox=Sandbox(str(fake)))
    write(root, {"a.py": "needle\n"})
    overlay.propose("b.py", "needle\n")
    assert _lines(await overlay.search("needle", ".", None)) == ["a.py:1:needle", "b.py:1:needle"]
    assert not started.exists()


def test_grep_starts_only_ripgrep_no_orphan_watchdog(root: Path) -> None:
    """ripgrep starts no children and ends by itself, so grep starts it without ``orphan_guard``'s gate,
    whose ``/bin/sh`` (and, the first time, the watchdog ``/bin/sh``) cost about 1 ms a search: in a
    fresh process, a grep leaves no child behind."""
    write(root, {"a.py": "needle\n"})
    script = (
        "import asyncio, glob, pathlib, sys\n"
        "from agent_ls.workspace.overlay import Overlay\n"
        "found = asyncio.run(Overlay(pathlib.Path(sys.argv[1]), sandbox=None).search('needle', '.', None))\n"
        "assert found.counts == {'a.py': 1}, found\n"
        "print(' '.join(open(f'{task}/children').read() for task in glob.glob('/proc/self/task/*')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, root], capture_output=True, text=True, check=True)
    assert done.stdout.split() == []  # the pids of this process's children


async def test_pending_text_replaces_the_disk_text_and_leaves_no_files_behind(
    overlay: Overlay, buffers: FakeBuffers, root: Path, temp: Path
) -> None:
    write(root, {"a.py": "needle on disk\n", "b.py": "plain\n", "c.py": "needle c\n"})
    overlay.propose("a.py", "gone\n")
    buffers.open[root / "b.py"] = OpenBuffer("plain\nneedle typed\n", 3)
    overlay.propose("sub/new.py", "needle new\n")
    found = await overlay.search("needle", ".", None)
    assert _lines(found) == ["b.py:2:needle typed", "c.py:1:needle c", "sub/new.py:1:needle new"]
    assert found.counts == {"b.py": 1, "c.py": 1, "sub/new.py": 1}
    assert _lines(await overlay.search("needle", "sub", None)) == ["sub/new.py:1:needle new"]
    assert _lines(await overlay.search("needle", "a.py", None)) == []
    assert not any(p.name.startswith(PENDING_PREFIX) for p in temp.iterdir())  # noqa: ASYNC240


async def test_pending_files_follow_the_ignore_rules_of_their_folders(overlay: Overlay, root: Path) -> None:
    write(root, {".gitignore": "dist/\n", "src/.gitignore": "*.gen.py\n", "src/a.py": ""})
    overlay.propose("dist/out.js", "needle\n")
    overlay.propose("src/x.gen.py", "needle\n")
    overlay.propose("src/b.py", "needle\n")
    assert _lines(await overlay.search("needle", ".", None)) == ["src/b.py:1:needle"]


async def test_links_in_the_tree_are_not_followed_to_secrets_or_out_of_it(
    overlay: Overlay, root: Path, outside: Path
) -> None:
    write(root, {".env": "PRIVATE=1\n", "keys/server.pem": "PRIVATE\n", "src/a.py": "x\n"})
    (root / "src" / "key").symlink_to(outside / "id_rsa")
    (root / "src" / "home").symlink_to(outside)
    (root / "src" / "env.txt").symlink_to(root / ".env")
    assert await overlay.search("PRIVATE", ".", None) == SearchResult()
    assert await overlay.search("PRIVATE", ".", "*") == SearchResult()
    assert await overlay.search("PRIVATE", "keys", None) == SearchResult()
    with pytest.raises(PathRefused):
        await overlay.search("PRIVATE", "src/home", None)  # a path the tool did not resolve


async def test_ignore_files_above_the_workspace_do_not_apply(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home, {".gitignore": "*\n", "ws/.gitignore": "*.log\n", "ws/src/a.py": "x\n", "ws/src/b.log": ""})
    overlay = Overlay(home / "ws", None, shadow=ShadowCopy(home / "ws", temp_parent=tmp_path))
    assert _lines(await overlay.search("x", ".", None)) == ["src/a.py:1:x"]
    assert _lines(await overlay.search("x", "src", None)) == ["src/a.py:1:x"]
    assert overlay.list_files(".", None, 10) == (["src/a.py"], 1)
    assert overlay.list_files("src", None, 10) == (["src/a.py"], 1)


async def test_a_subfolder_keeps_the_root_rules_and_an_ignored_one_named_is_searched(
    overlay: Overlay, root: Path
) -> None:
    write(root, {".gitignore": "*.log\nbuild/\n", "src/a.py": "x\n", "src/b.log": "x", "build/out.js": "x\n"})
    assert _lines(await overlay.search("x", "src", None)) == ["src/a.py:1:x"]
    assert _lines(await overlay.search("x", "build", None)) == ["build/out.js:1:x"]
    assert _lines(await overlay.search("x", ".", None)) == ["src/a.py:1:x"]


async def test_tool_caches_and_dependency_trees_are_not_searched(overlay: Overlay, root: Path) -> None:
    write(root, {"node_modules/m/i.js": "x\n", "__pycache__/a.txt": "x\n", ".git/HEAD": "x\n", "a.py": "x\n"})
    assert _lines(await overlay.search("x", ".", None)) == ["a.py:1:x"]
    assert _lines(await overlay.search("x", ".", ".*")) == []
    assert _lines(await overlay.search("x", "node_modules", None)) == ["node_modules/m/i.js:1:x"]


def test_list_files_names_links_to_files_inside_and_nothing_in_linked_folders(
    overlay: Overlay, root: Path, outside: Path
) -> None:
    write(root, {".gitignore": "ignored.txt\n", "src/a.txt": "", "only_links/.keep": ""})
    (root / "src" / "in.txt").symlink_to("a.txt")
    (root / "src" / "ignored.txt").symlink_to("a.txt")
    (root / "src" / "out.txt").symlink_to(outside / "id_rsa")
    (root / "src" / "folder").symlink_to(root / "only_links")
    (root / "src" / "secret.txt").symlink_to(root / ".env")
    (root / ".env").write_text("K=1\n")
    assert overlay.list_files(".", None, 10) == (["src/a.txt", "src/in.txt"], 2)
    assert overlay.list_files("src", "in.*", 10) == (["src/in.txt"], 1)


async def test_an_invalid_regex_with_pending_edits_fails_once_and_leaves_nothing(
    overlay: Overlay, root: Path, temp: Path
) -> None:
    write(root, {"a.py": "x\n"})
    overlay.propose("b.py", "x\n")
    with pytest.raises(ToolError, match="invalid regex '\\(unclosed'"):
        await overlay.search("(unclosed", ".", None)
    assert not any(temp.iterdir())  # noqa: ASYNC240


PATHS = ["a.py", "src/a.py", "src/gen/b.py", "src/.h.py", "docs/x.md", "src", "src/py", "a.pyc", "x/src/a.py"]


@pytest.mark.parametrize(
    "pattern",
    ["*.py", "src/*.py", "src/**", "**/gen/*.py", "src", "/src/*.py", "!*.py", "# c", "*.[mp][dy]", "a?py"],
)
def test_a_listing_filters_many_paths_as_it_filters_one(pattern: str) -> None:
    for rel_dir in (".", "src"):
        selection = Selection.of(rel_dir, pattern)
        paths = PATHS if rel_dir == "." else [p for p in PATHS if p.startswith("src/")]
        assert selection.wanted(paths) == [p for p in paths if selection.wants(p)]
