"""``agent-ls policy check`` as a user runs it: a real process, its output and its exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ALLOW, ASK, DENY, USAGE = 0, 10, 20, 2


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('hi')\n")
    (ws / ".env").write_text("API_KEY=sk-live\n")
    (ws / ".git" / "hooks").mkdir(parents=True)
    return ws


def check(*args: str, cwd: Path, config_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
    env["AGENT_LS_CONFIG_DIR"] = str(config_dir)
    return subprocess.run(
        [sys.executable, "-m", "agent_ls", "policy", "check", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(done.stdout)


def test_a_compound_command_shows_each_command_and_the_deciding_rule(root: Path, config_dir: Path) -> None:
    done = check("--", "git -C . status && /bin/rm -rf build", cwd=root, config_dir=config_dir)
    assert (done.returncode, done.stderr) == (DENY, "")
    assert done.stdout == (
        "deny: bash git -C . status && /bin/rm -rf build\n"
        "  decided by: bash: rm * (built-in)\n"
        '  reason: "rm -rf build" matches bash: rm * (built-in)\n'
        "commands:\n"
        "  allow  git status  (bash: git status* (built-in))\n"
        "  deny   rm -rf build  (bash: rm * (built-in))\n"
    )


@pytest.mark.parametrize(
    ("command", "code", "rule"),
    [
        ("ls -la src", ALLOW, "bash: ls* (built-in)"),
        ("pytest -q 2>&1 | grep FAILED", ALLOW, "bash: pytest* (built-in)"),
        ("make build", ASK, "fallback: no rule matches"),
        ("ls > out.txt", ASK, "edit: shell redirect into the workspace (built-in)"),
        ("cat .env", DENY, "paths: secret file"),
        ("timeout 5 env FOO=1 curl https://example.com", DENY, "bash: curl * (built-in)"),
    ],
)
def test_exit_codes_follow_the_verdict(
    root: Path, config_dir: Path, command: str, code: int, rule: str
) -> None:
    done = check("--json", "--", command, cwd=root, config_dir=config_dir)
    assert done.returncode == code, done.stderr
    assert as_json(done)["rule"] == rule


def test_json_output(root: Path, config_dir: Path) -> None:
    done = check(
        "--json", "--workspace", str(root), "--", "make lint; cat ../x", cwd=config_dir, config_dir=config_dir
    )
    assert done.returncode == ASK
    report = as_json(done)
    assert report == {
        "verdict": "ask",
        "rule": "paths: outside the workspace",
        "reason": report["reason"],
        "kind": "bash",
        "subject": "make lint; cat ../x",
        "parts": [
            {
                "subject": "make lint",
                "verdict": "ask",
                "rule": "fallback: no rule matches",
                "reason": 'no rule matches "make lint"',
            },
            {
                "subject": "cat ../x",
                "verdict": "ask",
                "rule": "paths: outside the workspace",
                "reason": report["parts"][1]["reason"],
            },
        ],
        "always": [],
        "unsandboxed": report["unsandboxed"],  # None here; on a machine without bwrap, why (test_unsandboxed)
    }
    assert report["unsandboxed"] is None or report["unsandboxed"].startswith("no sandbox: ")
    assert "outside the workspace" in report["reason"]


@pytest.mark.parametrize(
    ("args", "code", "rule"),
    [
        (["--path", "src/app.py"], ALLOW, "read: ** (built-in)"),
        (["--path", "src/new.py", "--write"], ALLOW, "edit: ** (built-in)"),
        (["--path", ".env"], DENY, "paths: secret file"),
        (["--path", ".git/hooks/pre-commit", "--write"], DENY, "edit: .git (built-in)"),
        (["--path", "../elsewhere.txt"], DENY, "paths: outside the workspace"),
    ],
)
def test_file_access(root: Path, config_dir: Path, args: list[str], code: int, rule: str) -> None:
    done = check("--json", *args, cwd=root, config_dir=config_dir)
    assert (done.returncode, as_json(done)["rule"]) == (code, rule)


def test_user_and_workspace_rules_apply_and_an_untrusted_workspace_cannot_loosen(
    root: Path, config_dir: Path
) -> None:
    (config_dir / "agent-ls.toml").write_text('[permissions]\nallow = ["Bash(make:*)"]\n')
    (root / "agent-ls.toml").write_text(
        '[permissions]\nallow = ["Bash(curl *)"]\ndeny = ["bash: make deploy*"]\n'
    )
    make = check("--json", "--", "make build", cwd=root, config_dir=config_dir)
    assert (make.returncode, as_json(make)["rule"]) == (ALLOW, "bash: make * (user config)")
    deploy = check("--json", "--", "make deploy", cwd=root, config_dir=config_dir)
    assert (deploy.returncode, as_json(deploy)["rule"]) == (
        DENY,
        "bash: make deploy* (workspace agent-ls.toml)",
    )
    curl = check("--", "curl https://example.com", cwd=root, config_dir=config_dir)
    assert curl.returncode == DENY
    assert f"{root / 'agent-ls.toml'}:2:1: warning: permissions.allow is ignored" in curl.stderr


def test_an_untrusted_workspace_cannot_take_secrets_off_the_list(root: Path, config_dir: Path) -> None:
    """The security review's finding 1: ``!`` patterns in ``secret_files`` un-secreted the defaults."""
    (root / "id_rsa").write_text("PRIVATE KEY\n")
    (root / ".git" / "config").write_text("[remote]\n")
    (root / "agent-ls.toml").write_text(
        '[permissions]\nsecret_files = ["!.env", "!id_rsa", "!*.pem", "!.git/config"]\n'
    )
    done = check(
        "--json",
        "--workspace",
        str(root),
        "--",
        "cat .env id_rsa .git/config",
        cwd=root,
        config_dir=config_dir,
    )
    assert (done.returncode, as_json(done)["rule"]) == (DENY, "paths: secret file")
    refused = f"{root / 'agent-ls.toml'}:2:1: error: permissions.secret_files: '!.env': a '!' pattern"
    assert refused in done.stderr
    for name in (".env", "id_rsa", ".git/config"):
        read = check("--json", "--path", name, cwd=root, config_dir=config_dir)
        assert (read.returncode, as_json(read)["rule"], name) == (DENY, "paths: secret file", name)


def test_a_trusted_workspace_may_loosen(root: Path, config_dir: Path) -> None:
    (config_dir / "agent-ls.toml").write_text(f'trusted_workspaces = ["{root}"]\n')
    (root / "agent-ls.toml").write_text('[permissions]\nallow = ["bash: make *"]\n')
    done = check("--", "make build", cwd=root, config_dir=config_dir)
    assert (done.returncode, done.stderr) == (ALLOW, "")


def test_a_fallback_ask_shows_the_rule_always_would_write(root: Path, config_dir: Path) -> None:
    done = check("--json", "--", "make build && make test", cwd=root, config_dir=config_dir)
    assert as_json(done)["always"] == ["bash: make build", "bash: make test"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give either a command (after --) or --path PATH"),
        (["--path", "a", "--", "ls"], "give either a command (after --) or --path PATH"),
        (["--write", "--", "ls"], "--write goes with --path"),
        (["--workspace", "/nonexistent/ws", "--", "ls"], "workspace /nonexistent/ws is not a directory"),
    ],
)
def test_usage_errors(root: Path, config_dir: Path, args: list[str], message: str) -> None:
    done = check(*args, cwd=root, config_dir=config_dir)
    assert (done.returncode, done.stdout, done.stderr) == (USAGE, "", f"agent-ls: {message}\n")


def test_doctor_is_dispatched_with_its_own_options(root: Path, config_dir: Path) -> None:
    """``agent-ls doctor --json`` reaches ``agent_ls.doctor.main`` with ``--json`` (argparse's REMAINDER
    would drop a leading option)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
    env["AGENT_LS_CONFIG_DIR"] = str(config_dir)
    done = subprocess.run(
        [sys.executable, "-m", "agent_ls", "doctor", "--json", "--workspace", str(root)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout)["workspace"] == str(root.resolve())
