"""``agent-ls policy check --path`` on names Windows reads differently (issue 11.8): every spelling of
``.git`` and of a secret that Windows (or macOS) resolves to it is refused on this platform too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_policy_cli import ALLOW, DENY, check


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("print('hi')\n")
    (ws / ".env").write_text("API_KEY=sk-live\n")
    return ws


@pytest.mark.parametrize(
    "path",
    [
        ".git/hooks/x",  # the name itself: the built-in rule denies editing .git
        ".git./hooks/x",
        ".git../hooks/x",
        ".git /hooks/x",
        ".git. . /hooks/x",
        ".git::$INDEX_ALLOCATION/hooks/x",
        "GIT~1/hooks/x",
        "git~2/hooks/x",
        ".git\\hooks\\x",
        "\\\\?\\C:\\ws\\.git\\hooks\\x",
        "src/../.git./hooks/x",
    ],
)
def test_writes_into_any_spelling_of_dot_git_are_denied(root: Path, config_dir: Path, path: str) -> None:
    done = check("--path", path, "--write", cwd=root, config_dir=config_dir)
    assert done.returncode == DENY, done.stdout


@pytest.mark.parametrize("path", [".env.", ".env ", ".env::$DATA", "ENV~1", "config\\.env", ".git./config"])
def test_reads_of_any_spelling_of_a_secret_are_denied(root: Path, config_dir: Path, path: str) -> None:
    done = check("--path", path, cwd=root, config_dir=config_dir)
    assert done.returncode == DENY, done.stdout
    assert "decided by: paths: secret file" in done.stdout


def test_the_refusal_says_why(root: Path, config_dir: Path) -> None:
    done = check("--path", ".git./hooks/x", "--write", cwd=root, config_dir=config_dir)
    assert done.stdout.splitlines()[:3] == [
        "deny: edit .git./hooks/x",
        "  decided by: paths: refused",
        "  reason: .git./hooks/x is .git on Windows or macOS (they read '.git.' as .git); "
        "refused on every platform",
    ]


@pytest.mark.parametrize("path", ["src/app.py", ".github/ci.yml", ".gitignore", "notes~1.txt", "v1.0./x"])
def test_ordinary_names_stay_allowed(root: Path, config_dir: Path, path: str) -> None:
    done = check("--path", path, "--write", cwd=root, config_dir=config_dir)
    assert done.returncode == ALLOW, done.stdout


@pytest.mark.parametrize("path", ["secrets/x", "secrets./x", "secrets::$INDEX_ALLOCATION/x", "secrets\\x"])
def test_a_deny_rule_catches_every_spelling(root: Path, config_dir: Path, path: str) -> None:
    (root / "agent-ls.toml").write_text('[permissions]\ndeny = ["Read(./secrets/**)"]\n')
    done = check("--path", path, cwd=root, config_dir=config_dir)
    assert done.returncode == DENY, done.stdout
    assert "decided by: read: /secrets/** (workspace agent-ls.toml)" in done.stdout
