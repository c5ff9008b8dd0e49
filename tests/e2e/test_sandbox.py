"""The sandbox end to end: ``agent-ls run`` with a model server on 127.0.0.1 whose scripted model asks
for shell commands (approved with ``--yes``), and what those commands could reach, checked from outside.

- the network is unreachable: a listener the test starts on 127.0.0.1 never sees a connection;
- writes outside the shadow copy fail or vanish: the real workspace, the home and ``/etc`` are unchanged;
- a killed run leaves no process behind, whether the run is cancelled (Ctrl-C) or the server is killed;
- API key variables set in the server's environment are absent from the command's environment, and
  from every environment the command can read through ``/proc``;
- secret files inside gitignored folders (linked into the shadow copy, not copied) stay out of a
  recursive ``grep`` (issue 5's review, finding 2).

Skipped without a working bubblewrap locally, failing under ``CI=true`` (``require_sandbox``).
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_ls.workspace.layers import layers_status
from agent_ls.workspace.shell_runner import NO_SANDBOX_NOTE
from tests.support.model_server import FakeModelServer
from tests.support.processes import command_lines, processes_with, require_sandbox

KEYS = {
    "AGENT_LS_API_KEY": "sk-agent-ls-e2e-sandbox-1",
    "OPENAI_API_KEY": "sk-openai-e2e-sandbox-2",
    "ANTHROPIC_API_KEY": "sk-ant-e2e-sandbox-3",
    "GITHUB_TOKEN": "ghp_e2e_sandbox_4",
    "AWS_ACCESS_KEY_ID": "AKIAE2ESANDBOX5",
    "AWS_SECRET_ACCESS_KEY": "aws-e2e-sandbox-6",
    "DB_PASSWORD": "db-e2e-sandbox-7",
    "LOCAL_MODEL_CREDS": "local-e2e-sandbox-8",  # a provider's api_key_env, named in the user config
}


@pytest.fixture(autouse=True)
def _sandbox() -> None:
    require_sandbox()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "app.py").write_text("print('app')\n")
    (root / ".env").write_text("SECRET=hunter2\n")
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep\n")
    return folder


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "config"
    directory.mkdir()
    (directory / "agent-ls.toml").write_text(
        '[providers.local]\nwire_api = "openai-chat"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = "LOCAL_MODEL_CREDS"\n',
        encoding="utf-8",
    )
    return directory


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def start_run(server: FakeModelServer, project: Path, home: Path, config_dir: Path) -> subprocess.Popen[str]:
    """``agent-ls run --yes`` against ``server``, with every key of ``KEYS`` in its environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_", "ANTHROPIC_"))}
    env.update(KEYS)
    env.update(
        {
            "AGENT_LS_CONFIG_DIR": str(config_dir),
            "AGENT_LS_BASE_URL": server.base_url,
            "HOME": str(home),
            "PYTHONIOENCODING": "utf-8",
        }
    )
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_ls",
            "run",
            "x",
            "--model",
            "openai/m",
            "--workspace",
            str(project),
            "--yes",
        ],
        cwd=project.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_to_end(
    steps: list[dict[str, Any]], project: Path, home: Path, config_dir: Path, *, proposed: str = ""
) -> list[str]:
    """Run the script to its end; the text of every tool result the model received, in order.
    ``proposed``: the diff ``agent-ls run`` must print (none by default)."""
    with FakeModelServer(steps) as server:
        process = start_run(server, project, home, config_dir)
        stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    assert stdout == proposed  # no file of the workspace was changed but those proposed
    results = [
        message["content"]
        for request in server.requests
        if isinstance(request, dict)
        for message in request["messages"]
        if message["role"] == "tool"
    ]
    found = list(dict.fromkeys(results))  # each request repeats the history
    assert len(found) == sum(1 for step in steps if step.get("tool_calls")), stderr
    for result in found:
        assert NO_SANDBOX_NOTE not in result
    return found


def test_the_network_is_unreachable(project: Path, home: Path, config_dir: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        code = (
            f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('connected')"
        )
        (result,) = run_to_end(
            [bash(f"python3 -c {shlex.quote(code)}"), {"content": "done"}], project, home, config_dir
        )
        listener.settimeout(0)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    # Inside, 127.0.0.1 is the sandbox's own loopback, where nothing listens.
    assert "exit code 1" in result
    assert "ConnectionRefusedError" in result or "Network is unreachable" in result
    assert "connected" not in result


def test_writes_outside_the_shadow_fail(project: Path, home: Path, config_dir: Path) -> None:
    etc = f"/etc/agent-ls-e2e-{uuid.uuid4().hex}"
    targets = [
        str(project / "app.py"),
        str(project / "new.py"),
        str(home / "keep.txt"),
        str(home / "new.txt"),
        etc,
    ]
    code = (
        "import sys\n"
        "for target in sys.argv[1:]:\n"
        "    try:\n"
        "        open(target, 'w').write('pwned')\n"
        "        print('wrote', target)\n"
        "    except OSError as exc:\n"
        "        print('failed', target, exc.strerror)\n"
    )
    command = f"python3 -c {shlex.quote(code)} {shlex.join(targets)}"
    # The workspace's own paths reach the overlay view: a write there is a proposal, like a relative one
    # (with the copy, the real workspace is an empty private folder inside, and the write lands nowhere).
    view = layers_status(require_sandbox().bwrap).unshare is not None
    proposed = (
        "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-print('app')\n+pwned\n\\ No newline at end of file\n"
        "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+pwned\n\\ No newline at end of file\n"
    )
    steps = [bash(command), {"content": "done"}]
    (result,) = run_to_end(steps, project, home, config_dir, proposed=proposed if view else "")
    assert f"failed {etc} Read-only file system" in result
    # The real workspace and the home are untouched: the home is an empty private folder inside.
    assert (project / "app.py").read_text() == "print('app')\n"
    assert (home / "keep.txt").read_text() == "keep\n"
    assert not (project / "new.py").exists() and not (home / "new.txt").exists() and not Path(etc).exists()


def test_api_key_variables_are_absent_from_the_command(project: Path, home: Path, config_dir: Path) -> None:
    # Python, not `cat`: the permission engine would refuse to let a shell command name these paths.
    code = (
        "import glob, os\n"
        "print(*(f'{k}={v}' for k, v in os.environ.items()), sep='\\n')\n"
        "for path in glob.glob('/proc/[0-9]*/environ'):\n"
        "    try:\n"
        "        print(open(path, 'rb').read().replace(b'\\0', b'\\n').decode())\n"
        "    except OSError as exc:\n"
        "        print(path, exc.strerror)\n"
    )
    command = f"python3 -c {shlex.quote(code)}"
    (result,) = run_to_end([bash(command), {"content": "done"}], project, home, config_dir)
    assert "PATH=" in result  # the environments were read
    for name, value in KEYS.items():
        assert name not in result and value not in result


def test_secrets_in_gitignored_folders_stay_out_of_a_recursive_grep(
    project: Path, home: Path, config_dir: Path
) -> None:
    """The review's probe: ``certs/`` and ``instance/`` are gitignored, so linked, and were read whole."""
    files = {
        ".gitignore": "certs/\ninstance/\n",
        "certs/server.pem": "-----BEGIN PRIVATE KEY----- e2e-pem-secret\n",
        "certs/ca.txt": "public e2e-ca-secret\n",
        "instance/.env": "DB_PASSWORD=e2e-env-secret\n",
    }
    for rel, text in files.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    command = "grep -R secret .; grep -r secret certs instance; echo searched"
    (result,) = run_to_end([bash(command), {"content": "done"}], project, home, config_dir)
    assert "e2e-ca-secret" in result and "searched" in result  # the folders were searched
    assert "e2e-pem-secret" not in result and "e2e-env-secret" not in result and "hunter2" not in result


@pytest.fixture
def marker() -> Iterator[str]:
    value = f"sleep 300.{uuid.uuid4().int % 10**9}"
    yield value
    for pid in processes_with(value):  # never leave a sleeper behind, even when the test fails
        os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("how", ["cancelled", "server killed"])
def test_a_killed_run_leaves_no_process_behind(
    project: Path, home: Path, config_dir: Path, marker: str, how: str
) -> None:
    with FakeModelServer([bash(f"{marker} & {marker}"), {"content": "done"}]) as server:
        process = start_run(server, project, home, config_dir)
        deadline = time.monotonic() + 30
        while list(command_lines().values()).count(f"{marker} ") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(command_lines().values()).count(f"{marker} ") == 2, "the command did not start"
        process.send_signal(signal.SIGINT if how == "cancelled" else signal.SIGKILL)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == (130 if how == "cancelled" else -signal.SIGKILL), stderr
    deadline = time.monotonic() + 10
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == []


def test_a_user_skill_script_runs_and_its_secrets_stay_masked(
    project: Path, home: Path, config_dir: Path
) -> None:
    """An activated user skill's folder (outside the workspace, in the hidden home) is mounted read-only:
    its scripts run; the secrets in it are masked; nothing else of the home reappears."""
    skill = home / ".agents" / "skills" / "check"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: check\ndescription: Check. Use when asked.\n---\nRun it.\n")
    (skill / "scripts" / "check.sh").write_text("echo e2e-skill-script-ran\n")
    (skill / ".env").write_text("TOKEN=e2e-skill-secret\n")
    script = shlex.quote(str(skill / "scripts" / "check.sh"))
    steps = [
        bash(f"bash {script}; echo before-activation"),  # not activated yet: not in the sandbox
        {"tool_calls": [{"name": "skill", "arguments": {"name": "check"}}]},
        bash(f"bash {script}"),
        bash(f"grep -r e2e {shlex.quote(str(skill))}; echo searched"),  # the mask, not the policy
        bash(f"cat {shlex.quote(str(home / 'keep.txt'))}; echo tried"),
        {"content": "done"},
    ]
    before, activated, ran, searched, home_read = run_to_end(steps, project, home, config_dir)
    assert "before-activation" in before and "e2e-skill-script-ran" not in before
    assert "Run it." in activated
    assert "e2e-skill-script-ran" in ran
    assert "searched" in searched and "e2e-skill-script-ran" in searched  # the folder was searched...
    assert "e2e-skill-secret" not in searched  # ... without its secret
    assert "tried" in home_read and "keep\n" not in home_read  # the rest of the home stays hidden
    assert (skill / "scripts" / "check.sh").read_text() == "echo e2e-skill-script-ran\n"
