"""Overlay: read precedence, proposals with their base, byte-exact line endings, listing, search."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.core.errors import PathRefused, ToolError
from agent_ls.core.file_views import SearchResult
from agent_ls.core.ports import Workspace
from agent_ls.core.proposal import FileChange, TextEncoding
from agent_ls.workspace.overlay import OpenBuffer, Overlay
from tests.unit.workspace.conftest import FakeBuffers, write

WORKSPACE_METHODS = (
    "resolve",
    "exists",
    "is_dir",
    "read_text",
    "read_page",
    "propose",
    "list_files",
    "search",
    "proposal",
)

# -- reads -------------------------------------------------------------------------------------------


def test_read_precedence_pending_over_buffer_over_disk(
    overlay: Overlay, buffers: FakeBuffers, root: Path
) -> None:
    write(root, {"a.py": "disk\n"})
    assert overlay.read_text("a.py") == "disk\n"
    buffers.open[root / "a.py"] = OpenBuffer("buffer\n", 4)
    assert overlay.read_text("a.py") == "buffer\n"
    overlay.propose("a.py", "pending\n")
    assert overlay.read_text("a.py") == "pending\n"
    assert (root / "a.py").read_text() == "disk\n"


def test_crlf_and_lone_cr_are_read_and_proposed_back_byte_for_byte(overlay: Overlay, root: Path) -> None:
    raw = b"one\r\ntwo\rthree\n\xc3\xa9\r\n"
    write(root, {"win.txt": raw})
    text = overlay.read_text("win.txt")
    assert text.encode("utf-8") == raw
    overlay.propose("win.txt", text.replace("two", "2"))
    [change] = overlay.proposal()
    assert change.base_text.encode("utf-8") == raw
    assert change.new_text.encode("utf-8") == b"one\r\n2\rthree\n\xc3\xa9\r\n"


def test_utf8_bom_is_kept_apart_from_the_text_and_written_back(overlay: Overlay, root: Path) -> None:
    write(root, {"bom.txt": b"\xef\xbb\xbfhi\n"})
    assert overlay.read_text("bom.txt") == "hi\n"
    overlay.propose("bom.txt", "hello\n")
    assert overlay.unsaved_files() == {"bom.txt": b"\xef\xbb\xbfhello\n"}
    assert overlay.proposal()[0].encoding == TextEncoding("utf-8", b"\xef\xbb\xbf")


def test_read_errors_are_one_line_tool_errors(overlay: Overlay, root: Path) -> None:
    write(root, {"bin.dat": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff", "src/a.py": ""})
    with pytest.raises(ToolError) as caught:
        overlay.read_text("bin.dat")
    assert str(caught.value) == "'bin.dat' cannot be read as text: it is binary"
    with pytest.raises(ToolError) as caught:
        overlay.read_text("missing.py")
    assert str(caught.value) == "file not found: 'missing.py'"
    with pytest.raises(ToolError) as caught:
        overlay.read_text("src")
    assert str(caught.value) == "'src' is a directory, not a file; list it instead"


def test_resolve_refuses_like_the_path_policy(overlay: Overlay) -> None:
    with pytest.raises(PathRefused, match="outside the workspace"):
        overlay.resolve("../x")
    with pytest.raises(PathRefused, match="may hold secrets"):
        overlay.resolve(".env")


def test_exists_and_is_dir_see_pending_new_files(overlay: Overlay, root: Path) -> None:
    write(root, {"src/a.py": ""})
    assert overlay.exists("src/a.py") and not overlay.is_dir("src/a.py")
    assert overlay.is_dir("src") and overlay.is_dir(".")
    assert not overlay.exists("pkg/mod.py")
    overlay.propose("pkg/mod.py", "x = 1\n")
    assert overlay.exists("pkg/mod.py") and not overlay.is_dir("pkg/mod.py")
    assert overlay.exists("pkg") and overlay.is_dir("pkg")


# -- proposals ---------------------------------------------------------------------------------------


def test_proposal_bases_are_captured_on_first_propose(
    overlay: Overlay, buffers: FakeBuffers, root: Path
) -> None:
    write(root, {"open.py": "disk\n", "closed.py": "closed\n"})
    buffers.open[root / "open.py"] = OpenBuffer("unsaved\n", 7)
    assert overlay.propose("open.py", "agent 1\n") is True
    buffers.open[root / "open.py"] = OpenBuffer("typed more\n", 8)  # the base does not move
    assert overlay.propose("open.py", "agent 2\n") is True
    assert overlay.propose("closed.py", "closed 2\n") is True
    assert overlay.propose("new/file.py", "") is True
    assert overlay.proposal() == [
        FileChange("closed.py", False, "closed\n", None, "closed 2\n"),
        FileChange("new/file.py", True, "", None, ""),
        FileChange("open.py", False, "unsaved\n", 7, "agent 2\n"),
    ]


def test_propose_reports_whether_the_proposal_changed(overlay: Overlay, root: Path) -> None:
    write(root, {"a.py": "a\n"})
    assert overlay.propose("a.py", "a\n") is False
    assert overlay.proposal() == []
    assert overlay.propose("a.py", "b\n") is True
    assert overlay.propose("a.py", "b\n") is False
    assert overlay.propose("a.py", "a\n") is True  # back to the base: left out of the proposal
    assert overlay.proposal() == []


def test_propose_refuses_directories_and_files_as_parents(overlay: Overlay, root: Path) -> None:
    write(root, {"src/a.py": ""})
    with pytest.raises(ToolError, match="'src' is a directory"):
        overlay.propose("src", "x")
    with pytest.raises(ToolError, match=r"cannot create 'src/a\.py/b\.py': 'src/a\.py' is a file"):
        overlay.propose("src/a.py/b.py", "x")


def test_discard_drops_pending_edits(overlay: Overlay, root: Path) -> None:
    write(root, {"a.py": "a\n"})
    overlay.propose("a.py", "b\n")
    overlay.discard()
    assert overlay.proposal() == []
    assert overlay.read_text("a.py") == "a\n"


def test_drop_takes_some_files_out_of_the_proposal_and_keeps_the_others(overlay: Overlay, root: Path) -> None:
    write(root, {"a.py": "a\n", "b.py": "b\n"})
    overlay.propose("a.py", "a agent\n")
    overlay.propose("b.py", "b agent\n")
    overlay.drop(["a.py", "not-pending.py"])
    assert [change.path for change in overlay.proposal()] == ["b.py"]
    assert (overlay.read_text("a.py"), overlay.read_text("b.py")) == ("a\n", "b agent\n")


def test_unsaved_texts_hold_buffers_and_pending_edits(
    overlay: Overlay, buffers: FakeBuffers, root: Path, tmp_path: Path
) -> None:
    write(root, {"a.py": "a\n", "b.py": "b\n", ".env": "K=1\n"})
    buffers.open[root / "a.py"] = OpenBuffer("a unsaved\n", 2)
    buffers.open[root / "b.py"] = OpenBuffer("b unsaved\n", 3)
    buffers.open[root / ".env"] = OpenBuffer("K=2\n", 1)
    buffers.open[tmp_path / "elsewhere.py"] = OpenBuffer("x\n", 1)
    overlay.propose("b.py", "b agent\n")
    assert overlay.unsaved_files() == {"a.py": b"a unsaved\n", "b.py": b"b agent\n"}


# -- list_files --------------------------------------------------------------------------------------


@pytest.fixture
def tree(root: Path) -> Path:
    write(
        root,
        {
            ".gitignore": "build/\n*.log\n!keep.log\n",
            ".git/HEAD": "ref: refs/heads/main\n",
            ".github/workflows/ci.yml": "on: push\n",
            ".env": "K=1\n",
            "README.md": "# r\n",
            "app.log": "",
            "keep.log": "",
            "build/out.js": "",
            "src/app.py": "",
            "src/b.py": "",
            "src/.hidden.py": "",
            "src/gen/.gitignore": "*.gen.py\n",
            "src/gen/x.gen.py": "",
            "src/gen/y.py": "",
        },
    )
    return root


def test_list_files_respects_gitignore_and_hides_dotfiles(overlay: Overlay, tree: Path) -> None:
    assert overlay.list_files(".", None, 100) == (
        ["README.md", "keep.log", "src/app.py", "src/b.py", "src/gen/y.py"],
        5,
    )


def test_list_files_shows_hidden_entries_a_pattern_names(overlay: Overlay, tree: Path) -> None:
    assert overlay.list_files(".", ".github/**", 100) == ([".github/workflows/ci.yml"], 1)
    assert overlay.list_files(".", "*.py", 100) == (["src/app.py", "src/b.py", "src/gen/y.py"], 3)
    assert overlay.list_files(".", "src/.*.py", 100) == (["src/.hidden.py"], 1)
    paths, _ = overlay.list_files(".", ".*", 100)
    assert ".git/HEAD" not in paths and ".gitignore" in paths


def test_list_files_limit_and_total(overlay: Overlay, tree: Path) -> None:
    assert overlay.list_files(".", None, 2) == (["README.md", "keep.log"], 5)
    assert overlay.list_files("src", None, 1) == (["src/app.py"], 3)


def test_list_files_pattern_relative_to_the_directory(overlay: Overlay, tree: Path) -> None:
    assert overlay.list_files("src", "gen/*.py", 10) == (["src/gen/y.py"], 1)
    assert overlay.list_files("src", "src/gen/*.py", 10) == (["src/gen/y.py"], 1)


def test_list_files_includes_pending_new_files_sorted(overlay: Overlay, tree: Path) -> None:
    overlay.propose("src/aa.py", "x\n")
    overlay.propose("zz/new.py", "y\n")
    assert overlay.list_files(".", None, 100) == (
        ["README.md", "keep.log", "src/aa.py", "src/app.py", "src/b.py", "src/gen/y.py", "zz/new.py"],
        7,
    )
    assert overlay.list_files("zz", None, 100) == (["zz/new.py"], 1)


def test_list_files_of_an_ignored_directory_named_explicitly(overlay: Overlay, tree: Path) -> None:
    assert overlay.list_files("build", None, 10) == (["build/out.js"], 1)


def test_list_files_skips_symlinks_leaving_the_root(overlay: Overlay, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    write(root, {"a.txt": ""})
    (root / "out.txt").symlink_to(outside)
    (root / "in.txt").symlink_to("a.txt")
    (root / "dirlink").symlink_to(root)
    assert overlay.list_files(".", None, 10) == (["a.txt", "in.txt"], 2)


def test_list_files_errors(overlay: Overlay, tree: Path) -> None:
    with pytest.raises(ToolError, match=r"'README\.md' is a file, not a directory"):
        overlay.list_files("README.md", None, 10)
    with pytest.raises(ToolError, match="directory not found: 'nope'"):
        overlay.list_files("nope", None, 10)


# -- search ------------------------------------------------------------------------------------------


async def test_search_sees_unsaved_buffer_and_pending_edit(
    overlay: Overlay, buffers: FakeBuffers, root: Path
) -> None:
    write(root, {"a.py": "alpha = 1\n", "b.py": "beta = 2\n", "c.py": "needle on disk\n"})
    buffers.open[root / "a.py"] = OpenBuffer("alpha = 1\nneedle in buffer\n", 2)
    overlay.propose("b.py", "beta = 2\r\nneedle pending\r\n")
    overlay.propose("new/d.py", "needle new\n")
    out = _lines(await overlay.search("needle", ".", None))
    assert out == (
        "a.py:2:needle in buffer\nb.py:2:needle pending\nc.py:1:needle on disk\nnew/d.py:1:needle new\n"
    )
    assert (root / "a.py").read_text() == "alpha = 1\n"
    assert not (root / "new").exists()


async def test_search_scoped_to_a_path_and_glob(overlay: Overlay, root: Path) -> None:
    write(root, {"src/a.py": "x\n", "src/a.txt": "x\n", "lib/b.py": "x\n", ".github/c.yml": "x\n"})
    assert _lines(await overlay.search("x", "src", None)) == "src/a.py:1:x\nsrc/a.txt:1:x\n"
    assert _lines(await overlay.search("x", ".", "*.py")) == "lib/b.py:1:x\nsrc/a.py:1:x\n"
    assert _lines(await overlay.search("x", "src/a.py", None)) == "src/a.py:1:x\n"
    assert _lines(await overlay.search("x", ".", ".github/*")) == ".github/c.yml:1:x\n"


async def test_search_in_an_empty_workspace_finds_nothing_without_error(overlay: Overlay) -> None:
    assert await overlay.search("anything", ".", None) == SearchResult()


async def test_search_respects_gitignore_and_skips_secrets(overlay: Overlay, root: Path) -> None:
    write(root, {".gitignore": "dist/\n", "dist/x.js": "token\n", "keys/a.pem": "token\n", "a.py": "token\n"})
    assert _lines(await overlay.search("token", ".", None)) == "a.py:1:token\n"


async def test_search_no_match_is_empty(overlay: Overlay, root: Path) -> None:
    write(root, {"a.py": "x\n"})
    assert await overlay.search("nothing-here", ".", None) == SearchResult()


async def test_search_invalid_regex_is_a_tool_error(overlay: Overlay, root: Path) -> None:
    write(root, {"a.py": "x\n"})
    with pytest.raises(ToolError) as caught:
        await overlay.search("(unclosed", ".", None)
    assert str(caught.value) == (
        "invalid regex '(unclosed': unclosed group; "
        "fix the pattern or escape special characters with a backslash"
    )


async def test_search_after_discard_sees_disk_again(overlay: Overlay, root: Path) -> None:
    write(root, {"a.py": "old\n"})
    overlay.propose("a.py", "new\n")
    overlay.propose("b.py", "new\n")
    assert _lines(await overlay.search("new", ".", None)) == "a.py:1:new\nb.py:1:new\n"
    overlay.discard()
    assert await overlay.search("new", ".", None) == SearchResult()
    assert _lines(await overlay.search("old", ".", None)) == "a.py:1:old\n"


def test_overlay_implements_the_workspace_port(overlay: Overlay) -> None:
    workspace: Workspace = overlay  # checked by mypy; at runtime the port's methods are all there
    assert all(callable(getattr(workspace, name)) for name in WORKSPACE_METHODS)
    assert workspace.root == overlay.root


def _lines(found: SearchResult) -> str:
    """The hits as ``path:line:text`` lines (the tool adds columns and windows)."""
    return "".join(f"{hit.path}:{hit.line}:{hit.text}\n" for hit in found.hits)
