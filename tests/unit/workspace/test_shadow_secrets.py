"""Secret files inside the folders the shadow copy links to (a gitignored ``certs/``, ``node_modules``)
stay unreadable by commands, sandboxed or not; in ``shell.mode = "workspace"`` every secret of the real
tree is masked, while git keeps working. Issue 5's review, findings 2 and 9c.

Real trees, real ``bwrap`` (``require_sandbox``) and real ``git``; the unsandboxed variants run the same
commands unisolated.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from agent_ls.core.ports import CommandResult
from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.sandbox import Sandbox
from agent_ls.workspace.secret_scan import SecretScan
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shell_runner import ShellRunner
from tests.conftest import require_tool
from tests.support.processes import require_sandbox
from tests.support.processes import run_quietly as run
from tests.unit.workspace.conftest import write

ENVIRON = {"PATH": os.environ.get("PATH", os.defpath), "HOME": "/nonexistent-home"}
TOKEN_CONFIG = '[remote "origin"]\n\turl = https://u:SENTINEL-GIT@example.com/r.git\n'


def real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def leaky_tree(root: Path) -> None:
    """The review's workspace: secrets in gitignored folders and in a dependency tree."""
    write(
        root,
        {
            ".gitignore": "certs/\ninstance/\n",
            "certs/server.pem": "SENTINEL-PEM\n",
            "certs/ca.txt": "ok ca\n",
            "instance/.env": "SENTINEL-ENV\n",
            "instance/app.cfg": "ok cfg\n",
            "node_modules/pkg/index.js": "ok index\n",
            "node_modules/pkg/test/fixtures/key.pem": "SENTINEL-NM\n",
            "node_modules/pkg/test/fixtures/data.json": "ok data\n",
            "node_modules/dep/.git/config": TOKEN_CONFIG,  # a dependency installed as a git checkout
            "node_modules/dep/main.js": "ok main\n",
            "src/app.py": "ok app\n",
        },
    )


def entries(copy: Path) -> dict[str, str]:
    """Every entry of the copy: path to ``dir``, ``file`` or ``-> target`` (links not followed)."""
    found = {}
    for directory, dirs, files in os.walk(copy):
        for name in [*dirs, *files]:
            path = Path(directory) / name
            found[path.relative_to(copy).as_posix()] = (
                f"-> {os.readlink(path)}" if path.is_symlink() else "dir" if path.is_dir() else "file"
            )
    return found


# -- The shadow copy ----------------------------------------------------------------------------------


async def test_recursive_greps_never_reach_secrets_in_linked_folders(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: Sandbox | None
) -> None:
    leaky_tree(root)
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox)
    # -R follows every link, -r the ones named; the review's probe printed both secrets.
    result = await run(runner, "grep -R SENTINEL .; grep -r SENTINEL certs/ instance/; grep -Rh ok . | sort")
    assert result == CommandResult(0, "ok app\nok ca\nok cfg\nok data\nok index\nok main\n", False)


async def test_a_folder_holding_secrets_is_linked_around_them(
    shadow: ShadowCopy, overlay: Overlay, root: Path
) -> None:
    leaky_tree(root)
    copy = await shadow.sync(overlay)
    ws = real(root)
    assert entries(copy) == {
        ".gitignore": "file",
        "certs": "dir",
        "certs/ca.txt": f"-> {ws / 'certs/ca.txt'}",
        "instance": "dir",
        "instance/app.cfg": f"-> {ws / 'instance/app.cfg'}",
        "node_modules": "dir",
        "node_modules/dep": "dir",
        "node_modules/dep/.git": "dir",  # its config left out
        "node_modules/dep/main.js": f"-> {ws / 'node_modules/dep/main.js'}",
        "node_modules/pkg": "dir",
        "node_modules/pkg/index.js": f"-> {ws / 'node_modules/pkg/index.js'}",
        "node_modules/pkg/test": "dir",
        "node_modules/pkg/test/fixtures": "dir",
        "node_modules/pkg/test/fixtures/data.json": f"-> {ws / 'node_modules/pkg/test/fixtures/data.json'}",
        "src": "dir",
        "src/app.py": "file",
    }
    # The sandbox mounts the folders whole, read-only, and masks the secrets in them.
    assert shadow.linked == (ws / "certs", ws / "instance", ws / "node_modules")
    assert shadow.masked == (
        ws / "certs/server.pem",
        ws / "instance/.env",
        ws / "node_modules/dep/.git/config",
        ws / "node_modules/pkg/test/fixtures/key.pem",
    )


async def test_the_real_secrets_behind_the_links_are_masked_in_the_sandbox(
    shadow: ShadowCopy, overlay: Overlay, root: Path
) -> None:
    leaky_tree(root)
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=require_sandbox())
    ws = real(root)
    named = ["certs/server.pem", "instance/.env", "node_modules/pkg/test/fixtures/key.pem"]
    result = await run(runner, " ".join(["cat", *(str(ws / rel) for rel in named), str(ws / "certs/ca.txt")]))
    assert result.output == "".join(f"cat: {ws / rel}: Permission denied\n" for rel in named) + "ok ca\n"
    control = await run(ShellRunner(shadow, overlay, ENVIRON, sandbox=None), f"cat {ws / 'certs/server.pem'}")
    assert control.output == "SENTINEL-PEM\n"  # unsandboxed, an absolute path is not the copy's to guard


async def test_a_secret_appearing_in_a_linked_folder_splits_it_and_leaving_links_it_again(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: Sandbox | None
) -> None:
    write(root, {"node_modules/pkg/index.js": "ok index\n"})
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox)
    assert await run(runner, "grep -R ok .") == CommandResult(
        0, "./node_modules/pkg/index.js:ok index\n", False
    )
    ws = real(root)
    assert shadow.linked == (ws / "node_modules",) and shadow.masked == ()
    write(root, {"node_modules/pkg/.env": "SENTINEL-ENV\n"})
    assert await run(runner, "grep -R SENTINEL .; cat node_modules/pkg/index.js") == CommandResult(
        0, "ok index\n", False
    )
    assert shadow.masked == (ws / "node_modules/pkg/.env",)
    (root / "node_modules/pkg/.env").unlink()
    assert await run(runner, "ls -l node_modules | cut -c1") == CommandResult(0, "l\n", False)  # a link again
    assert shadow.masked == ()


async def test_links_to_secrets_are_secrets(
    shadow: ShadowCopy, overlay: Overlay, root: Path, sandbox: Sandbox | None
) -> None:
    write(
        root,
        {".gitignore": "data/\n", ".env": "SENTINEL-ENV\n", "data/rows.csv": "ok rows\n", "src/a.py": ""},
    )
    (root / "data/settings").symlink_to("../.env")  # in a linked folder
    (root / "src/settings").symlink_to(real(root) / ".env")  # absolute: would reach the real file
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=sandbox)
    result = await run(runner, "grep -R . data src; cat data/settings src/settings")
    assert result.output == (
        "data/rows.csv:ok rows\n"
        "cat: data/settings: No such file or directory\ncat: src/settings: No such file or directory\n"
    )


async def test_a_folder_too_large_to_scan_is_left_out_and_said_so_once(
    root: Path, tmp_path: Path, sandbox: Sandbox | None
) -> None:
    write(root, {"app.py": "", **{f"node_modules/p/{n}.js": "" for n in range(5)}})
    shadow = ShadowCopy(root, temp_parent=tmp_path, max_scan_entries=4)
    try:
        runner = ShellRunner(shadow, Overlay(root, shadow=shadow), ENVIRON, sandbox=sandbox)
        first = await run(runner, "ls")
        second = await run(runner, "ls")
    finally:
        shadow.close()
    note = (
        "[agent-ls: left out of the workspace copy (too many files to check for secret files): node_modules]"
    )
    assert first == CommandResult(0, f"{note}\napp.py\n", False)
    assert second == CommandResult(0, "app.py\n", False)


# -- shell.mode = "workspace" ---------------------------------------------------------------------------


async def test_workspace_mode_masks_secrets_anywhere_in_the_tree(
    shadow: ShadowCopy, overlay: Overlay, root: Path
) -> None:
    leaky_tree(root)
    write(
        root,
        {
            ".gitignore": "certs/\ninstance/\nbuild/\n",
            "build/keys/id_rsa": "SENTINEL-BUILD\n",  # a skipped build output
            "src/__pycache__/leak.pem": "SENTINEL-CACHE\n",  # a skipped cache
            "vendor/lib/.git/config": TOKEN_CONFIG,  # a nested repository, not ignored
            ".env": "SENTINEL-ROOT\n",
        },
    )
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=require_sandbox(), mode="workspace")
    result = await run(runner, "grep -R SENTINEL .")
    assert sorted(result.output.splitlines()) == [
        f"grep: ./{rel}: Permission denied"
        for rel in (
            ".env",
            "build/keys/id_rsa",
            "certs/server.pem",
            "instance/.env",
            "node_modules/dep/.git/config",
            "node_modules/pkg/test/fixtures/key.pem",
            "src/__pycache__/leak.pem",
            "vendor/lib/.git/config",
        )
    ]


async def test_workspace_mode_hides_a_folder_too_large_to_scan(root: Path, tmp_path: Path) -> None:
    write(root, {"app.py": "", **{f"node_modules/p/{n}.js": "" for n in range(5)}})
    shadow = ShadowCopy(root, temp_parent=tmp_path, max_scan_entries=4)
    try:
        overlay = Overlay(root, shadow=shadow)
        runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=require_sandbox(), mode="workspace")
        result = await run(runner, "ls -A node_modules; echo ran")
    finally:
        shadow.close()
    note = "[agent-ls: hidden from commands (too many files to check for secret files): node_modules]"
    assert result == CommandResult(0, f"{note}\nran\n", False)
    assert len(list((root / "node_modules/p").iterdir())) == 5  # hidden, not touched


def git(root: Path, *args: str) -> str:
    identity = ("-c", "user.name=Test", "-c", "user.email=test@example.com")
    done = subprocess.run(
        ["git", *identity, "-C", str(root), *args], check=True, capture_output=True, text=True
    )
    return done.stdout


async def test_workspace_mode_keeps_git_working_but_its_config_and_hooks_read_only(
    shadow: ShadowCopy, overlay: Overlay, root: Path
) -> None:
    require_tool("git")
    write(root, {"app.py": "print(1)\n"})
    git(root, "init", "-q")
    git(root, "add", "app.py")
    git(root, "commit", "-q", "-m", "init")
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=require_sandbox(), mode="workspace")
    result = await run(
        runner,
        "echo 'print(2)' > app.py; git status --short; git -c user.name=A -c user.email=a@b commit -qam two"
        " && git log --format=%s; git config core.fsmonitor 'touch pwned' || echo config refused;"
        " echo 'touch pwned' > .git/hooks/post-checkout || echo hook refused",
    )
    assert result.exit_code == 0
    assert result.output.startswith(" M app.py\ntwo\ninit\n")  # git reads its config, writes commits
    assert "config refused\n" in result.output and "hook refused\n" in result.output
    assert "fsmonitor" not in (root / ".git/config").read_text()
    assert not (root / ".git/hooks/post-checkout").exists()


async def test_workspace_mode_masks_a_git_config_holding_a_token(
    shadow: ShadowCopy, overlay: Overlay, root: Path
) -> None:
    require_tool("git")
    write(root, {"app.py": "print(1)\n"})
    git(root, "init", "-q")
    git(root, "config", "remote.origin.url", "https://u:SENTINEL-GIT@example.com/r.git")
    runner = ShellRunner(shadow, overlay, ENVIRON, sandbox=require_sandbox(), mode="workspace")
    result = await run(runner, "git remote -v; cat .git/config; grep -R SENTINEL .git")
    assert "SENTINEL" not in result.output
    assert "cat: .git/config: Permission denied\n" in result.output
    assert "SENTINEL-GIT" in (root / ".git/config").read_text()  # untouched, only hidden


# -- SecretScan -----------------------------------------------------------------------------------------


def test_listings_are_remembered_until_their_directory_changes(tmp_path: Path) -> None:
    write(tmp_path, {"nm/a/x.js": "", "nm/a/key.pem": "", "nm/b/y.js": ""})
    asked: list[str] = []

    def is_secret(rel: str) -> bool:
        asked.append(rel)
        return rel.endswith(".pem")

    time.sleep(0.1)  # the directories settle
    scan = SecretScan(tmp_path, is_secret, settle_ns=50_000_000)
    assert scan.secrets_under("nm") == ["nm/a/key.pem"]
    assert sorted(asked) == ["nm/a", "nm/a/key.pem", "nm/a/x.js", "nm/b", "nm/b/y.js"]
    asked.clear()
    assert scan.secrets_under("nm") == ["nm/a/key.pem"]
    assert asked == []  # one lstat per directory, no pattern match
    write(tmp_path, {"nm/b/z.pem": ""})
    assert scan.secrets_under("nm") == ["nm/a/key.pem", "nm/b/z.pem"]
    assert sorted(asked) == ["nm/b/y.js", "nm/b/z.pem"]  # only the changed directory again


def test_a_directory_changed_just_before_its_listing_is_listed_again(tmp_path: Path) -> None:
    write(tmp_path, {"nm/a/x.js": ""})
    asked: list[str] = []

    def is_secret(rel: str) -> bool:
        asked.append(rel)
        return False

    scan = SecretScan(tmp_path, is_secret)  # settles for 2 s by default
    assert scan.secrets_under("nm") == []
    asked.clear()
    assert scan.secrets_under("nm") == []
    assert sorted(asked) == ["nm/a", "nm/a/x.js"]  # a coarse clock could hide a change in the same tick


def test_the_scan_gives_up_over_its_budget_and_skips_git_objects(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "nm/a.js": "",
            "nm/b.pem": "",
            "nm/c.pem": "",
            "nm/.git/config": "",
            "nm/.git/objects/ab/cd.pem": "",  # never looked at: object names are hashes
            "nm/.git/lfs/objects/ef/gh.pem": "",
        },
    )

    def is_secret(rel: str) -> bool:
        return rel.endswith((".pem", ".git/config"))

    assert SecretScan(tmp_path, is_secret).secrets_under("nm") == ["nm/.git/config", "nm/b.pem", "nm/c.pem"]
    assert SecretScan(tmp_path, is_secret, max_entries=8).secrets_under("nm") == [
        "nm/.git/config",
        "nm/b.pem",
        "nm/c.pem",
    ]  # nm: 4 entries, nm/.git: 3 (objects and lfs counted, not entered)
    assert SecretScan(tmp_path, is_secret, max_entries=6).secrets_under("nm") is None
    assert SecretScan(tmp_path, is_secret, max_secrets=2).secrets_under("nm") is None
