"""The bubblewrap sandbox: each escape found against the unsandboxed shell now fails, normal work still runs.

Real processes throughout: a real ``bwrap``, a real workspace, home and victim directories on disk,
real listening sockets, a real git worktree. The workspace and the home live under ``/var/tmp`` (when
writable), outside the sandbox's private ``/tmp``, so their own mounts are what hides them; their names
hold spaces.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_ls.core.ports import CommandResult
from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.sandbox import (
    NAMESPACE_ARGS,
    Sandbox,
    SandboxStatus,
    default_tool_dirs,
    find_sandbox,
    git_config_holds_credentials,
    probe,
    sandbox_status,
)
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shell_runner import NO_SANDBOX_NOTE, ShellRunner
from tests.conftest import require_tool
from tests.support.processes import processes_with, require_sandbox
from tests.unit.workspace.conftest import write

API_KEY = f"al-sandbox-test-{uuid.uuid4().hex}"
PASSWORD_HASH_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
HOME_SECRETS = ("PRIVATE KEY", "sk_live_other_project", "rclone-secret", "cargo-token")  # the scene's


@dataclass
class Scene:
    """A user's machine: the real workspace, home and a victim directory, and a session's shadow."""

    ws: Path
    home: Path
    victim: Path
    shadow: ShadowCopy
    overlay: Overlay
    environ: dict[str, str]

    def runner(self, sandbox: Sandbox | None) -> ShellRunner:
        return ShellRunner(self.shadow, self.overlay, self.environ, sandbox=sandbox)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside /tmp (under /var/tmp when writable), with a space in its name."""
    parent = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    path = Path(os.path.realpath(tempfile.mkdtemp(prefix="agent-ls sandbox-", dir=parent)))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def scene(outside: Path, tmp_path: Path) -> Iterator[Scene]:
    ws = outside / "real ws"
    write(
        ws,
        {
            "app.py": "def answer():\n    return 0\n",
            "test_app.py": "from app import answer\n\n\ndef test_answer():\n    assert answer() == 42\n",
            "notes.txt": "notes\n",
            ".env": "SECRET=hunter2\n",
        },
    )
    (ws / "build").mkdir()
    (ws / "out").symlink_to(ws / "build")  # absolute: the copy in the shadow points at the real dir
    home = outside / "home"
    write(
        home,
        {
            ".ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n",
            "projects/other/.env": "STRIPE_KEY=sk_live_other_project\n",
            ".config/rclone/rclone.conf": "[s3]\nsecret_access_key = rclone-secret\n",
            ".cargo/bin/mytool": "#!/bin/sh\necho ok\n",  # a toolchain installed in the home
            ".cargo/credentials.toml": '[registry]\ntoken = "cargo-token"\n',
        },
    )
    (home / ".cargo/bin/mytool").chmod(0o755)
    victim = outside / "victim"
    write(victim, {"keep.txt": "keep\n"})
    shadows = tmp_path / "shadow parent"
    shadows.mkdir()
    shadow = ShadowCopy(ws, temp_parent=shadows)
    search_path = os.pathsep.join([str(home / ".cargo/bin"), os.environ.get("PATH", os.defpath)])
    environ = {"PATH": search_path, "HOME": str(home), "AGENT_LS_API_KEY": API_KEY}
    yield Scene(ws, home, victim, shadow, Overlay(ws, shadow=shadow), environ)
    shadow.close()


@pytest.fixture
def server_pid() -> Iterator[int]:
    """A stand-in for the agent-ls server: a process started with the API key in its environment.

    ``/proc/<pid>/environ`` shows the environment a process was started with; a variable set later
    (``monkeypatch.setenv`` in this process) never appears there, so a child process is needed.
    """
    server = subprocess.Popen(["sleep", "60"], env={"AGENT_LS_API_KEY": API_KEY, "PATH": os.defpath})
    yield server.pid
    server.kill()
    server.wait()


@pytest.fixture
def home_socket(scene: Scene) -> Iterator[Path]:
    """A listening Unix socket in the home, as a desktop service keeps under ``~/.local/share``."""
    path = scene.home / ".local/share/sock"
    path.parent.mkdir(parents=True)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen()
        yield path


@pytest.fixture
def runner(scene: Scene) -> ShellRunner:
    return scene.runner(require_sandbox())


def q(path: Path | str) -> str:
    return shlex.quote(str(path))


def connect_command(path: Path) -> str:
    """A shell command that connects to the Unix socket at ``path`` and prints "connected"."""
    code = "import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1]); print('connected')"
    return f"python3 -c {q(code)} {q(path)}"


def git(*args: str | Path) -> None:
    identity = ("-c", "user.name=Test", "-c", "user.email=test@example.com")
    subprocess.run(["git", *identity, *map(str, args)], check=True, capture_output=True)


# -- The bwrap command line --------------------------------------------------------------------------


def test_wrap_builds_the_mounts_in_order(tmp_path: Path, outside: Path) -> None:
    if outside.is_relative_to("/tmp"):
        pytest.skip("/var/tmp is not writable: the home and the main repository would be under /tmp")
    tmp = Path(os.path.realpath(tmp_path))  # under the sandbox's private /tmp
    venv = tmp / "venv"
    (venv / "bin").mkdir(parents=True)
    tools = tmp / "tools bin"
    tools.mkdir()
    home = outside / "home"
    write(
        home,
        {
            ".ssh/id_rsa": "k",
            ".netrc": "machine x password y\n",
            "notes.txt": "",
            "bin/tool": "",
            ".cargo/bin/cargo": "",
            ".cargo/credentials.toml": "",
            ".rustup/settings.toml": "",
            "dotfiles/nvm/versions/node/v22/etc/npmrc": "//registry.npmjs.org/:_authToken=t\n",
        },
    )
    (home / ".nvm").symlink_to(home / "dotfiles/nvm")
    write(outside, {"aws keys/credentials": ""})
    (home / ".aws").symlink_to(outside / "aws keys")
    main = outside / "main repo"
    write(
        main,
        {
            ".git/config": "",
            ".git/worktrees/ws/commondir": "../..\n",
            ".git/worktrees/ws/config.worktree": "",
        },
    )
    ws = home / "projects" / "real ws"
    write(ws, {".venv/bin/python": "", ".git": f"gitdir: {main}/.git/worktrees/ws\n"})
    shadow = tmp / "shadow dir" / "real ws"
    shadow.mkdir(parents=True)
    (tmp / "link to shadow").symlink_to(shadow)
    sandbox = Sandbox("/usr/bin/bwrap", (venv, Path("/usr"), venv / "bin"))
    search_path = os.pathsep.join(
        [
            *("/usr/bin", str(venv / "bin"), str(tools), str(ws / ".venv/bin")),
            *(str(home / ".cargo/bin"), str(home / "bin"), str(home / "projects"), "relative/bin"),
        ]
    )
    argv = sandbox.wrap(
        ["/bin/bash", "-c", "echo 'a b'"],
        shadow=tmp / "link to shadow",
        workspace_root=ws,
        environ={"PATH": search_path, "HOME": str(home)},
    )
    password_hashes = [
        arg
        for name in PASSWORD_HASH_FILES
        if os.path.exists(name)
        for arg in ("--ro-bind", "/dev/null", name)
    ]
    npmrc = Path("versions/node/v22/etc/npmrc")
    assert argv == [
        "/usr/bin/bwrap",
        *("--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session"),
        *("--ro-bind", "/", "/"),
        *("--dev", "/dev"),
        *("--proc", "/proc"),
        *("--tmpfs", "/tmp"),
        *("--tmpfs", "/run"),
        *other_homes(),  # the workspace's parent lies in the home: hidden with it
        *("--tmpfs", str(ws)),
        *("--tmpfs", str(home)),
        # Sorted, each once: PATH directories under /tmp or the home, our venv under /tmp, and the
        # home's toolchains (.nvm under both its names). venv/bin and .cargo/bin lie inside others,
        # /usr was never hidden, the workspace's .venv/bin stays hidden, and ~/projects holds the
        # workspace.
        *("--ro-bind", str(tools), str(tools)),
        *("--ro-bind", str(venv), str(venv)),
        *("--ro-bind", str(home / ".cargo"), str(home / ".cargo")),
        *("--ro-bind", str(home / ".nvm"), str(home / ".nvm")),
        *("--ro-bind", str(home / ".rustup"), str(home / ".rustup")),
        *("--ro-bind", str(home / "bin"), str(home / "bin")),
        *("--ro-bind", str(home / "dotfiles/nvm"), str(home / "dotfiles/nvm")),
        # Credentials where they are still visible: through a link out of the home, and inside a
        # re-exposed toolchain under each of its names; ~/.ssh and ~/.netrc went with the home.
        *("--tmpfs", str(outside / "aws keys")),
        *("--ro-bind", "/dev/null", str(home / ".cargo/credentials.toml")),
        *("--ro-bind", "/dev/null", str(home / ".nvm" / npmrc)),
        *("--ro-bind", "/dev/null", str(home / "dotfiles/nvm" / npmrc)),
        *password_hashes,
        # The worktree's own git directory, then the main repository's, outside the workspace.
        *("--ro-bind", "/dev/null", str(main / ".git/worktrees/ws/config.worktree")),
        *("--ro-bind", "/dev/null", str(main / ".git/config")),
        *("--bind", str(shadow), str(shadow)),
        *("--chdir", str(shadow)),
        *("--unsetenv", "TMPDIR"),
        "--",
        *("/bin/bash", "-c", "echo 'a b'"),
    ]


def test_a_submodules_git_dir_and_its_superprojects_config_are_masked(outside: Path) -> None:
    if outside.is_relative_to("/tmp"):
        pytest.skip("/var/tmp is not writable: the superproject would be under /tmp")
    superproject = outside / "super"
    write(
        superproject,
        {".git/config": "", ".git/modules/sub/config": "", "sub/.git": "gitdir: ../.git/modules/sub\n"},
    )
    argv = Sandbox("bwrap").wrap(["true"], shadow=outside, workspace_root=superproject / "sub", environ={})
    masked = [argv[i + 2] for i, arg in enumerate(argv) if arg == "--ro-bind" and argv[i + 1] == "/dev/null"]
    assert masked == [
        *(name for name in PASSWORD_HASH_FILES if os.path.exists(name)),
        str(superproject / ".git/modules/sub/config"),
        str(superproject / ".git/config"),
    ]


@pytest.mark.parametrize("home", ["/", "/nonexistent/home", "relative/home", ""])
def test_a_home_that_is_root_missing_or_relative_is_not_hidden(tmp_path: Path, home: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    sandbox = Sandbox("bwrap", default_tool_dirs())
    without_home = sandbox.wrap(["true"], shadow=tmp_path, workspace_root=ws, environ={"PATH": "/usr/bin"})
    argv = sandbox.wrap(
        ["true"], shadow=tmp_path, workspace_root=ws, environ={"PATH": "/usr/bin", "HOME": home}
    )
    assert argv == without_home


def test_a_directory_holding_the_workspace_or_the_home_is_never_reexposed(tmp_path: Path) -> None:
    tmp = Path(os.path.realpath(tmp_path))
    ws = tmp / "venv" / "ws"
    ws.mkdir(parents=True)
    home = tmp / "tools" / "home"
    home.mkdir(parents=True)
    argv = Sandbox("bwrap", (tmp / "venv",)).wrap(
        ["true"], shadow=tmp, workspace_root=ws, environ={"PATH": str(tmp / "tools"), "HOME": str(home)}
    )
    assert str(tmp / "venv") not in argv
    assert str(tmp / "tools") not in argv


def test_find_sandbox_finds_a_working_bwrap() -> None:
    sandbox = require_sandbox()
    assert sandbox == Sandbox(str(shutil.which("bwrap")), default_tool_dirs())
    assert find_sandbox() is sandbox  # probed once


def test_probe_rejects_a_bwrap_that_cannot_make_namespaces(tmp_path: Path) -> None:
    # What bwrap does in a container without user namespaces.
    failing = tmp_path / "bwrap"
    failing.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    failing.chmod(0o755)
    assert probe(str(failing)) is None
    assert probe(str(tmp_path / "missing")) is None


def test_without_a_working_bwrap_the_status_says_why_once_in_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    failing = tmp_path / "bwrap"
    failing.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    failing.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    sandbox_status.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="agent_ls.workspace.sandbox"):
            status = sandbox_status()
            assert find_sandbox() is None and sandbox_status() is status  # probed and logged once
            logged = [r.getMessage() for r in caplog.records]
        monkeypatch.setenv("PATH", "/nonexistent")
        sandbox_status.cache_clear()
        missing = sandbox_status()
    finally:
        sandbox_status.cache_clear()
    unisolated = "shell commands run unisolated (in the shadow copy, with a scrubbed environment)"
    problem = "bwrap: No permissions to creating new namespace"
    assert status == SandboxStatus(None, f"{failing} cannot make a sandbox here ({problem}): {unisolated}")
    assert logged == [f"no sandbox: {status.detail}"]
    assert missing == SandboxStatus(None, f"bubblewrap (bwrap) is not installed: {unisolated}")


def test_wrap_mounts_linked_entries_read_only_over_the_hidden_workspace(tmp_path: Path) -> None:
    tmp = Path(os.path.realpath(tmp_path))
    ws = tmp / "ws"
    write(ws, {"node_modules/x.js": "", ".venv/bin/python": ""})
    shadow = tmp / "shadow"
    shadow.mkdir()
    argv = Sandbox("bwrap").wrap(
        ["true"],
        shadow=shadow,
        workspace_root=ws,
        environ={},
        readonly=[ws / "node_modules", ws / ".venv"],
    )
    assert argv == [
        "bwrap",
        *NAMESPACE_ARGS,
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"),
        *other_homes(),
        *("--tmpfs", str(ws)),
        *("--ro-bind-try", str(ws / "node_modules"), str(ws / "node_modules")),
        *("--ro-bind-try", str(ws / ".venv"), str(ws / ".venv")),
        *password_hash_masks(),
        *("--bind", str(shadow), str(shadow)),
        *("--chdir", str(shadow), "--unsetenv", "TMPDIR", "--", "true"),
    ]


def test_in_workspace_mode_the_workspace_is_writable_with_its_secrets_masked(tmp_path: Path) -> None:
    tmp = Path(os.path.realpath(tmp_path))
    ws = tmp / "ws"
    token_url = '[remote "origin"]\n\turl = https://x-access-token:ghp_sub@example.com/r.git\n'
    write(
        ws,
        {
            ".env": "K=1\n",
            ".ssh/id_rsa": "k",
            ".git/config": "[core]\n\tbare = false\n",
            ".git/hooks/pre-commit.sample": "",
            ".git/modules/sub/config": token_url,
            "app.py": "",
        },
    )
    masked = [ws / ".env", ws / ".git/config", ws / ".git/modules/sub/config", ws / ".ssh"]
    argv = Sandbox("bwrap").wrap(["true"], shadow=ws, workspace_root=ws, environ={}, masked=masked)
    assert argv == [
        "bwrap",
        *NAMESPACE_ARGS,
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"),
        *other_homes(),
        *("--tmpfs", str(ws)),
        *password_hash_masks(),
        *("--bind", str(ws), str(ws)),
        # After the workspace's own mount, which would otherwise cover them. The git config without
        # credentials stays readable, read-only; the submodule's, with a token, is masked.
        *("--ro-bind", str(ws / ".git/config"), str(ws / ".git/config")),
        *("--ro-bind", "/dev/null", str(ws / ".env")),
        *("--ro-bind", "/dev/null", str(ws / ".git/modules/sub/config")),
        *("--tmpfs", str(ws / ".ssh")),
        # No hook can be planted for the user's own git.
        *("--ro-bind", str(ws / ".git/hooks"), str(ws / ".git/hooks")),
        *("--chdir", str(ws), "--unsetenv", "TMPDIR", "--", "true"),
    ]


def test_masks_inside_linked_folders_come_after_their_mounts(tmp_path: Path) -> None:
    tmp = Path(os.path.realpath(tmp_path))
    ws = tmp / "ws"
    write(ws, {"certs/server.pem": "k", "certs/ca.txt": "", "node_modules/p/.ssh/id_rsa": "k", ".env": ""})
    shadow = tmp / "shadow"
    shadow.mkdir()
    argv = Sandbox("bwrap").wrap(
        ["true"],
        shadow=shadow,
        workspace_root=ws,
        environ={},
        readonly=[ws / "certs", ws / "node_modules"],
        masked=[ws / "certs/server.pem", ws / "node_modules/p/.ssh", ws / "gone.pem"],
    )
    assert argv == [
        "bwrap",
        *NAMESPACE_ARGS,
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"),
        *other_homes(),
        *("--tmpfs", str(ws)),
        *("--ro-bind-try", str(ws / "certs"), str(ws / "certs")),
        *("--ro-bind-try", str(ws / "node_modules"), str(ws / "node_modules")),
        *password_hash_masks(),
        # The .env stays hidden with the workspace; a missing secret is skipped.
        *("--ro-bind", "/dev/null", str(ws / "certs/server.pem")),
        *("--tmpfs", str(ws / "node_modules/p/.ssh")),
        *("--bind", str(shadow), str(shadow)),
        *("--chdir", str(shadow), "--unsetenv", "TMPDIR", "--", "true"),
    ]


@pytest.mark.parametrize(
    ("config", "credentials"),
    [
        ("[core]\n\tbare = false\n", False),
        ('[remote "origin"]\n\turl = git@github.com:o/r.git\n', False),
        ('[remote "origin"]\n\turl = ssh://git@example.com/r.git\n', False),
        ('[remote "origin"]\n\turl = https://example.com/r.git\n', False),
        ('[remote "origin"]\n\turl = https://user:tok@example.com/r.git\n', True),
        ('[remote "origin"]\n\turl = https://ghp_abc@github.com/o/r\n', True),
        ('[remote "origin"]\n\turl = ssh://git:pw@example.com/r.git\n', True),
        ('[url "https://ghp_abc@github.com/"]\n\tinsteadOf = https://github.com/\n', True),
        ('[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic eA==\n', True),
        ("[credential]\n\thelper = store\n", True),
        ("[include]\n\tpath = ../secrets.inc\n", True),
    ],
)
def test_which_git_configs_hold_credentials(tmp_path: Path, config: str, credentials: bool) -> None:
    path = tmp_path / "config"
    path.write_text(config)
    assert git_config_holds_credentials(path) is credentials
    assert git_config_holds_credentials(tmp_path / "missing") is True  # unreadable: masked


def test_the_workspaces_neighbours_and_other_homes_are_hidden(outside: Path) -> None:
    if outside.is_relative_to("/tmp"):
        pytest.skip("/var/tmp is not writable: the workspace's parent would be under the private /tmp")
    parent = outside / "checkouts"
    write(
        parent,
        {
            "other/.env": "",
            "venv/pyvenv.cfg": "home = /usr/bin\n",
            "venv/bin/tool": "",
            "tools/bin/x": "",
            "app/main.py": "",
        },
    )
    ws = parent / "app"
    search_path = os.pathsep.join([str(parent / "venv/bin"), str(parent / "tools/bin"), "/usr/bin"])
    argv = Sandbox("bwrap").wrap(["true"], shadow=outside, workspace_root=ws, environ={"PATH": search_path})
    assert argv[: argv.index("--bind")] == [
        "bwrap",
        *NAMESPACE_ARGS,
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"),
        *other_homes(),
        *("--tmpfs", str(parent)),
        *("--tmpfs", str(ws)),
        # PATH directories beside the workspace come back; a virtual environment's whole.
        *("--ro-bind", str(parent / "tools/bin"), str(parent / "tools/bin")),
        *("--ro-bind", str(parent / "venv"), str(parent / "venv")),
        *password_hash_masks(),
    ]


@pytest.mark.parametrize("parent", ["/", "/opt", "/srv", "/usr/src", "/usr/local/src", "/nix/store"])
def test_a_system_directory_holding_the_workspace_is_not_hidden(parent: str) -> None:
    argv = Sandbox("bwrap").wrap(
        ["true"], shadow=Path("/tmp"), workspace_root=Path(parent) / "app", environ={}
    )
    assert argv[argv.index("/run") + 1 : argv.index(str(Path(parent) / "app"))] == [*other_homes(), "--tmpfs"]


def other_homes() -> list[str]:
    """The options hiding /home and /root, those that exist (every test's home lies elsewhere)."""
    return [arg for name in ("/home", "/root") if os.path.isdir(name) for arg in ("--tmpfs", name)]


def password_hash_masks() -> list[str]:
    return [
        arg
        for name in PASSWORD_HASH_FILES
        if os.path.exists(name)
        for arg in ("--ro-bind", "/dev/null", name)
    ]


# -- Escapes ------------------------------------------------------------------------------------------


async def test_writes_into_the_real_workspace_fail(runner: ShellRunner, scene: Scene) -> None:
    result = await runner.run(f"cat notes.txt > {q(scene.ws / 'app.py')}; echo x > out/x.txt", 30)
    assert result.exit_code != 0
    assert (scene.ws / "app.py").read_text() == "def answer():\n    return 0\n"
    assert list((scene.ws / "build").iterdir()) == []


async def test_the_real_workspace_reads_as_empty(runner: ShellRunner, scene: Scene) -> None:
    result = await runner.run(f"cat {q(scene.ws / '.env')}; ls -A {q(scene.ws)}; ls -A out/", 30)
    assert "hunter2" not in result.output
    assert result.output == (
        f"cat: {q(scene.ws / '.env')}: No such file or directory\n"
        "ls: cannot access 'out/': No such file or directory\n"
    )


async def test_the_home_reads_as_empty_except_its_toolchains(runner: ShellRunner, scene: Scene) -> None:
    result = await runner.run(
        "cat ~/projects/other/.env ~/.config/rclone/rclone.conf ~/.ssh/id_rsa;"
        " grep -r . ~/projects ~/.config; mytool; cat ~/.cargo/credentials.toml; ls -A ~",
        30,
    )
    for secret in HOME_SECRETS:
        assert secret not in result.output
    home = scene.home
    assert result.output == (
        f"cat: {q(home / 'projects/other/.env')}: No such file or directory\n"
        f"cat: {q(home / '.config/rclone/rclone.conf')}: No such file or directory\n"
        f"cat: {q(home / '.ssh/id_rsa')}: No such file or directory\n"
        f"grep: {home / 'projects'}: No such file or directory\n"
        f"grep: {home / '.config'}: No such file or directory\n"
        "ok\n"  # ~/.cargo/bin/mytool, on PATH
        f"cat: {q(home / '.cargo/credentials.toml')}: Permission denied\n"
        ".cargo\n"
    )


async def test_the_home_is_writable_inside_and_untouched_outside(runner: ShellRunner, scene: Scene) -> None:
    result = await runner.run(
        "mkdir -p ~/.cache && echo cached > ~/.cache/x && cat ~/.cache/x; echo x > ~/.cargo/x", 30
    )
    assert result.output == f"cached\n/bin/bash: line 1: {scene.home / '.cargo/x'}: Read-only file system\n"
    assert not (scene.home / ".cache").exists()
    assert not (scene.home / ".cargo/x").exists()


async def test_sockets_in_the_home_are_unreachable(runner: ShellRunner, home_socket: Path) -> None:
    result = await runner.run(connect_command(home_socket), 30)
    assert result.exit_code == 1
    assert result.output.endswith("FileNotFoundError: [Errno 2] No such file or directory\n")


@pytest.mark.skipif(not os.path.exists("/etc/shadow"), reason="this system has no /etc/shadow")
async def test_password_hashes_are_unreadable(runner: ShellRunner) -> None:
    result = await runner.run("cat /etc/shadow", 30)
    assert result == CommandResult(1, "cat: /etc/shadow: Permission denied\n", False)


async def test_a_worktrees_main_repository_config_is_hidden(outside: Path, tmp_path: Path) -> None:
    require_tool("git")
    # The worktree one level down: its parent directory, hidden, does not hold the main repository.
    main, ws = outside / "main repo", outside / "trees" / "work tree"
    write(main, {"README": "main\n"})
    git("init", "-q", main)
    git("-C", main, "config", "remote.origin.url", "https://x-access-token:ghp_worktree@example.com/r.git")
    git("-C", main, "add", "README")
    git("-C", main, "commit", "-q", "-m", "init")
    git("-C", main, "worktree", "add", "-q", "--detach", ws)
    assert (ws / ".git").is_file()
    shadow = ShadowCopy(ws, temp_parent=tmp_path)
    command = f"cat {q(main / '.git/config')}"
    environ = {"PATH": os.environ.get("PATH", os.defpath)}
    try:
        sandboxed = ShellRunner(shadow, Overlay(ws, shadow=shadow), environ, sandbox=require_sandbox())
        result = await sandboxed.run(command, 30)
        control = await ShellRunner(shadow, Overlay(ws, shadow=shadow), environ, sandbox=None).run(
            command, 30
        )
    finally:
        shadow.close()
    assert result == CommandResult(1, f"cat: {q(main / '.git/config')}: Permission denied\n", False)
    assert "ghp_worktree" in control.output


async def test_symlinked_credentials_are_hidden(scene: Scene, outside: Path) -> None:
    # A dotfile manager's relative link, and an absolute link out of the home.
    write(scene.home, {"dotfiles/bashrc": "export OPENAI_API_KEY=sk-dotfile\n"})
    (scene.home / ".bashrc").symlink_to("dotfiles/bashrc")
    write(outside, {"aws keys/credentials": "aws_secret_access_key = aws-secret\n"})
    (scene.home / ".aws").symlink_to(outside / "aws keys")
    runner = scene.runner(require_sandbox())
    home, keys = q(scene.home), q(outside / "aws keys")
    result = await runner.run(
        f"cat ~/.bashrc {home}/dotfiles/bashrc ~/.aws/credentials {keys}/credentials; echo ran", 30
    )
    assert "sk-dotfile" not in result.output and "aws-secret" not in result.output
    assert result.output.endswith("ran\n")  # bwrap could mount over the links' targets


async def test_checkouts_beside_the_workspace_are_hidden(scene: Scene) -> None:
    """Finding 10 of issue 5's review: the workspace's neighbours were readable."""
    neighbours = scene.ws.parent
    write(neighbours, {"other checkout/.env": "STRIPE_KEY=sk_live_neighbour\n"})
    write(neighbours, {"venv/pyvenv.cfg": "home = /usr/bin\n", "venv/lib/data.txt": "venv data\n"})
    write(neighbours, {"venv/bin/venvtool": '#!/bin/sh\ncat "$(dirname "$0")/../lib/data.txt"\n'})
    (neighbours / "venv/bin/venvtool").chmod(0o755)
    scene.environ["PATH"] = os.pathsep.join([str(neighbours / "venv/bin"), scene.environ["PATH"]])
    command = f"cat {q(neighbours / 'other checkout/.env')}; ls -A {q(neighbours)}; venvtool"
    sandboxed = await scene.runner(require_sandbox()).run(command, 30)
    control = await scene.runner(None).run(command, 30)
    assert "sk_live_neighbour" in control.output
    if neighbours.is_relative_to("/tmp"):
        pytest.skip("/var/tmp is not writable: the neighbours are under the private /tmp")
    assert sandboxed.output == (
        f"cat: {q(neighbours / 'other checkout/.env')}: No such file or directory\n"
        "home\nreal ws\nvenv\n"  # what is mounted there: the hidden home and workspace, the PATH's venv
        "venv data\n"
    )


async def test_no_process_environment_holds_the_api_key(runner: ShellRunner, server_pid: int) -> None:
    result = await runner.run(
        f"test -d /proc/{server_pid} && echo server visible;"
        f" cat /proc/{server_pid}/environ; cat /proc/$PPID/environ; cat /proc/1/environ; env;"
        " for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done",
        30,
    )
    assert "PATH=" in result.output  # environments were read
    assert API_KEY not in result.output
    # As root, dropped capabilities alone already refuse the read: the pid namespace is what hides
    # the server from a command of the same unprivileged user.
    assert "server visible" not in result.output


async def test_tmp_is_private_and_outside_dirs_survive_deletion(
    runner: ShellRunner, scene: Scene, tmp_path: Path
) -> None:
    made = tmp_path / "made by the command"
    in_tmp = tmp_path / "victim in tmp"
    write(in_tmp, {"keep.txt": "keep\n"})
    result = await runner.run(
        f"cat {q(in_tmp / 'keep.txt')}; mkdir -p {q(made)} && touch {q(made / 'x')} && ls {q(made)};"
        f" rm -rf {q(in_tmp)} {q(scene.victim)};"
        f" pytest -q -p no:cacheprovider --basetemp={q(scene.victim)} test_app.py",
        60,
    )
    assert result.exit_code != 0
    assert result.output.startswith(
        f"cat: {q(in_tmp / 'keep.txt')}: No such file or directory\nx\n"  # /tmp is private, and writable
    )
    assert not (tmp_path / "made by the command").exists()
    assert (in_tmp / "keep.txt").read_text() == "keep\n"
    assert (scene.victim / "keep.txt").read_text() == "keep\n"


async def test_git_diff_output_cannot_write_outside(runner: ShellRunner, scene: Scene) -> None:
    require_tool("git")
    target = scene.victim / "pwned"
    await runner.run(f"git diff --no-index --output={q(target)} notes.txt app.py", 30)
    assert not target.exists()


async def test_the_network_is_unreachable(runner: ShellRunner) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)"
        result = await runner.run(f"python3 -c {q(code)}", 30)
    assert result.exit_code == 1
    assert "ConnectionRefusedError" in result.output or "Network is unreachable" in result.output


async def test_without_a_sandbox_the_escapes_work(scene: Scene, server_pid: int, home_socket: Path) -> None:
    """The control: the escapes above are real, so their passing is not vacuous.

    ``HOME`` is a scratch directory without a sandbox, so the home is named by its absolute path.
    """
    runner = scene.runner(None)
    home = q(scene.home)
    with socket.create_server(("127.0.0.1", 0)) as server:
        code = f"import socket; socket.create_connection(('127.0.0.1', {server.getsockname()[1]}))"
        result = await runner.run(
            f"cat {q(scene.ws / '.env')} {home}/.ssh/id_rsa /proc/{server_pid}/environ; python3 -c {q(code)};"
            f" grep -r . {home}/projects {home}/.config; cat {home}/.cargo/credentials.toml;"
            f" {connect_command(home_socket)}; echo x > {q(scene.ws / 'app.py')}",
            30,
        )
    assert result.exit_code == 0, result.output
    for secret in ("hunter2", API_KEY, *HOME_SECRETS):
        assert secret in result.output
    assert "connected\n" in result.output
    assert (scene.ws / "app.py").read_text() == "x\n"


# -- Normal work --------------------------------------------------------------------------------------


async def test_pytest_runs_on_the_proposal_and_the_shadow_is_writable(scene: Scene) -> None:
    # This process's own home, hidden: pyenv, uv or pipx may keep the interpreter running the tests there.
    scene.environ["HOME"] = str(Path.home())
    runner = scene.runner(require_sandbox())
    scene.overlay.propose("app.py", "def answer():\n    return 42\n")
    scene.overlay.propose("test_tmp.py", "def test_tmp(tmp_path):\n    (tmp_path / 'x').write_text('x')\n")
    module = await runner.run(f"{q(sys.executable)} -m pytest -q -p no:cacheprovider", 60)
    assert module.exit_code == 0, module.output
    assert "2 passed" in module.output
    bare = await runner.run("pytest -q", 60)
    assert bare.exit_code == 0, bare.output
    assert "2 passed" in bare.output
    made = await runner.run("echo made > 'made here.txt' && cat 'made here.txt'", 30)
    assert made == CommandResult(
        0, "made\n[agent-ls: brought into the proposal: made here.txt]\n", False, ("made here.txt",)
    )
    assert scene.shadow.path is not None
    assert (scene.shadow.path / "made here.txt").read_text() == "made\n"
    assert not (scene.ws / "made here.txt").exists()
    # pytest's cache was written in the copy, and stayed out of the proposal.
    assert (scene.shadow.path / ".pytest_cache" / "README.md").is_file()
    assert [c.path for c in scene.overlay.proposal()] == ["app.py", "made here.txt", "test_tmp.py"]


async def test_timeout_kills_everything_in_the_sandbox(runner: ShellRunner) -> None:
    marker = f"sleep 30.{uuid.uuid4().int % 10**9}"
    result = await asyncio.wait_for(runner.run(f"echo started; {marker} & {marker}", 0.5), 20)
    assert result == CommandResult(None, "started\n", True)
    for _ in range(100):  # the kernel tears the pid namespace down after bwrap died
        if not processes_with(marker):
            break
        await asyncio.sleep(0.05)
    assert processes_with(marker) == []


async def test_without_a_sandbox_the_first_output_says_so(scene: Scene) -> None:
    runner = scene.runner(None)
    assert await runner.run("echo hi", 30) == CommandResult(0, f"{NO_SANDBOX_NOTE}\nhi\n", False)
    assert await runner.run("echo hi", 30) == CommandResult(0, "hi\n", False)


def test_a_fifo_as_git_file_or_git_config_does_not_block_the_sandbox(tmp_path: Path) -> None:
    """A FIFO planted as a worktree's ``.git`` file or as ``.git/config`` was opened for reading with a
    blocking open while the sandbox was built: the command hung. Now it is refused at once (and a config
    that cannot be read counts as holding credentials)."""
    workspace = tmp_path / "ws"
    (workspace / "sub" / ".git").mkdir(parents=True)
    os.mkfifo(workspace / ".git")
    os.mkfifo(workspace / "sub" / ".git" / "config")
    done: list[object] = []

    def build() -> None:
        done.append(git_config_holds_credentials(workspace / "sub" / ".git" / "config"))
        sandbox = Sandbox("/usr/bin/bwrap")
        done.append(sandbox.wrap(["true"], shadow=workspace, workspace_root=workspace, environ={}))

    worker = threading.Thread(target=build, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # unblock the reader so the test process can end
        for fifo in (workspace / ".git", workspace / "sub" / ".git" / "config"):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("building the sandbox blocked on a FIFO")
    assert done[0] is True
