"""An edit the agent proposes inside a linked dependency folder (``node_modules``, a ``.venv``): the copy
splits the folder around the file instead of replacing the link with an empty folder, so commands still
see the rest of the dependency tree (found by the issue 11.7 review)."""

from __future__ import annotations

from pathlib import Path

from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shell_runner import ShellRunner
from tests.unit.workspace.conftest import write
from tests.unit.workspace.test_shadow import ENVIRON, run

TREE = {
    "node_modules/pkg/index.js": "original index\n",
    "node_modules/pkg/lib/other.js": "other\n",
    "node_modules/dep/main.js": "dep main\n",
    "src/app.js": "app\n",
}


async def test_the_folder_is_split_around_the_pending_file_and_linked_again_after(
    shadow: ShadowCopy, overlay: Overlay, root: Path
) -> None:
    write(root, TREE)
    overlay.propose("node_modules/pkg/index.js", "patched index\n")
    copy = await shadow.sync(overlay)
    assert not (copy / "node_modules").is_symlink() and not (copy / "node_modules" / "pkg").is_symlink()
    assert (copy / "node_modules" / "dep").is_symlink()  # the rest stays linked, not copied
    assert (copy / "node_modules" / "pkg" / "lib").is_symlink()
    assert (copy / "node_modules" / "pkg" / "lib" / "other.js").read_text() == "other\n"
    assert (copy / "node_modules" / "dep" / "main.js").read_text() == "dep main\n"
    index = copy / "node_modules" / "pkg" / "index.js"
    assert (index.is_symlink(), index.read_text()) == (False, "patched index\n")
    assert (root / "node_modules" / "pkg" / "index.js").read_text() == "original index\n"

    overlay.discard()
    await shadow.sync(overlay)
    assert (copy / "node_modules").is_symlink()
    assert (copy / "node_modules" / "pkg" / "index.js").read_text() == "original index\n"


async def test_commands_see_the_patched_file_and_the_rest_of_the_tree(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: object
) -> None:
    write(root, TREE)
    overlay.propose("node_modules/pkg/index.js", "patched index\n")
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox)  # type: ignore[arg-type]
    result = await run(
        runner, "cat node_modules/pkg/index.js node_modules/pkg/lib/other.js node_modules/dep/main.js"
    )
    assert (result.exit_code, result.output) == (0, "patched index\nother\ndep main\n")
    assert (root / "node_modules" / "pkg" / "index.js").read_text() == "original index\n"
