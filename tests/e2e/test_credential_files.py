"""Credential files of the common ecosystems through the real entry points (issue 11.6): ``agent-ls policy
check`` denies them, and an ``agent-ls run`` whose model reads, greps, cats and imports them never gets a
token, in the model requests or on the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_cli import _agent_ls, _script
from tests.e2e.test_policy_cli import ALLOW, DENY, check
from tests.support.model_server import FakeModelServer

NPM_TOKEN = "npm_0123456789abcdefTOKENneverSHOWN"
NETRC_PASSWORD = "netrc-password-never-shown-7"
KEY_BODY = "PRIVATE-KEY-BODY-never-shown-9"
TFSTATE_PASSWORD = "tfstate-db-password-never-shown-3"
SECRETS = (NPM_TOKEN, NETRC_PASSWORD, KEY_BODY, TFSTATE_PASSWORD)


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "deploy").mkdir(parents=True)
    (root / "infra").mkdir()
    (root / ".npmrc").write_text(f"//registry.npmjs.org/:_authToken={NPM_TOKEN}\n")
    (root / ".netrc").write_text(f"machine github.com login me password {NETRC_PASSWORD}\n")
    (root / "deploy" / "server.key").write_text(f"-----BEGIN PRIVATE KEY-----\n{KEY_BODY}\n")
    (root / "infra" / "terraform.tfstate").write_text(json.dumps({"password": TFSTATE_PASSWORD}) + "\n")
    (root / "CLAUDE.md").write_text("Use npm.\n@./.npmrc\n")
    (root / "app.js").write_text("console.log('hi')\n")
    (root / "README.md").write_text("Rotate the password every month.\n")
    return root


@pytest.mark.parametrize(
    "path",
    [
        ".npmrc",
        ".netrc",
        "deploy/server.key",
        "infra/terraform.tfstate",
        ".yarnrc.yml",
        ".pypirc",
        ".docker/config.json",
        ".kube/config",
        ".aws/credentials",
        ".config/gcloud/application_default_credentials.json",
        "release.p12",
        "prod.tfvars",
        ".git-credentials",
    ],
)
def test_policy_check_denies_credential_files(tmp_path: Path, config_dir: Path, path: str) -> None:
    root = _workspace(tmp_path)
    for args in (("--path", path), ("--path", path, "--write"), ("--", f"cat {path}")):
        done = check(*args, cwd=root, config_dir=config_dir)
        assert done.returncode == DENY, (args, done.stdout)
        assert "decided by: paths: secret file" in done.stdout


def test_policy_check_still_allows_ordinary_files(tmp_path: Path, config_dir: Path) -> None:
    root = _workspace(tmp_path)
    for path in ("app.js", "package.json", "config.json", "locales/en/auth.json"):
        done = check("--path", path, cwd=root, config_dir=config_dir)
        assert done.returncode == ALLOW, done.stdout


def test_policy_check_says_what_to_do_instead(tmp_path: Path, config_dir: Path) -> None:
    done = check("--", "cat .netrc", cwd=_workspace(tmp_path), config_dir=config_dir)
    assert done.stdout.splitlines()[:3] == [
        "deny: bash cat .netrc",
        "  decided by: paths: secret file",
        "  reason: .netrc may hold credentials (tokens, passwords); "
        "ask the user for the setting you need instead",
    ]


def test_instructions_refuse_an_import_of_a_credential_file(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    ran = _agent_ls("instructions", "--workspace", str(root), "--json", cwd=root, env={"HOME": str(home)})
    assert ran.returncode == 0, ran.stderr
    chain = json.loads(ran.stdout)
    assert [f["label"] for f in chain["files"]] == ["CLAUDE.md"]
    assert "refused: .npmrc is a secret file" in ran.stdout
    assert NPM_TOKEN not in ran.stdout + ran.stderr


def test_a_run_never_gets_a_credential(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    calls = [
        {"id": "r1", "name": "read_file", "arguments": {"path": ".npmrc"}},
        {"id": "r2", "name": "read_file", "arguments": {"path": ".netrc"}},
        {"id": "r3", "name": "read_file", "arguments": {"path": "deploy/server.key"}},
        {"id": "g1", "name": "grep", "arguments": {"pattern": "authToken|password|PRIVATE", "path": "."}},
        {"id": "b1", "name": "bash", "arguments": {"command": "cat .npmrc infra/terraform.tfstate"}},
    ]
    with FakeModelServer([{"tool_calls": calls}, {"content": "done"}]) as server:
        result = _agent_ls(
            "run",
            "find the registry token",
            "--model",
            "openai/test-model",
            "--workspace",
            str(root),
            cwd=tmp_path,
            env={"AGENT_LS_API_KEY": "sk-test", "AGENT_LS_BASE_URL": server.base_url, "HOME": str(home)},
        )
        requests = json.dumps(server.requests)
    assert result.returncode == 0, result.stderr
    assert "[import refused: .npmrc is a secret file]" in json.dumps(server.requests[0])
    results = {m["tool_call_id"]: m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"}
    for call_id in ("r1", "r2", "r3"):
        assert "refused:" in results[call_id]
    assert "README.md:1:" in results["g1"] and "Rotate the password" in results["g1"]  # grep ran
    assert "secret file" in results["b1"]
    for secret in SECRETS:
        assert secret not in requests
        assert secret not in result.stdout + result.stderr


def test_a_replayed_run_reading_npmrc_is_refused_and_prints_no_token(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    model = _script(
        tmp_path,
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": ".npmrc"}}]},
            {"tool_calls": [{"name": "bash", "arguments": {"command": "cat .netrc"}}]},
            {"content": "I could not read them."},
        ],
    )
    result = _agent_ls(
        "run",
        "read the tokens",
        "--model",
        model,
        "--workspace",
        str(root),
        cwd=tmp_path,
        env={"HOME": str(home)},
    )
    assert result.returncode == 0, result.stderr
    assert "refused: '.npmrc' may hold credentials" in result.stderr
    assert "paths: secret file" in result.stderr
    for secret in SECRETS:
        assert secret not in result.stdout + result.stderr
