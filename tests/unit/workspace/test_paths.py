"""PathPolicy: paths inside the root resolve, escapes and secrets are refused with advice."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_ls.core.errors import PathRefused, ToolError
from agent_ls.workspace.paths import PathPolicy, is_secret


@pytest.fixture
def policy(root: Path) -> PathPolicy:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\n")
    return PathPolicy(root)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("src/app.py", "src/app.py"),
        ("./src/../src/app.py", "src/app.py"),
        ("", "."),
        (".", "."),
        ("src/", "src"),
        ("new/dir/file.py", "new/dir/file.py"),
        (".github/workflows/ci.yml", ".github/workflows/ci.yml"),
        (".gitignore", ".gitignore"),
        (".agents/AGENTS.md", ".agents/AGENTS.md"),
        (".env.example", ".env.example"),
        ("config/.env.example", "config/.env.example"),
        (".envrc", ".envrc"),
    ],
)
def test_paths_inside_resolve_to_posix_relative(policy: PathPolicy, given: str, expected: str) -> None:
    assert policy.resolve(given) == expected


def test_absolute_path_inside_resolves(policy: PathPolicy, root: Path) -> None:
    assert policy.resolve(str(root / "src" / "app.py")) == "src/app.py"
    assert policy.resolve(str(root)) == "."


@pytest.mark.parametrize("given", ["../x", "src/../../x", "/etc/passwd"])
def test_paths_outside_are_refused(policy: PathPolicy, root: Path, given: str) -> None:
    with pytest.raises(PathRefused) as caught:
        policy.resolve(given)
    assert str(caught.value) == f"path {given!r} is outside the workspace {root}; use a path inside it"


def test_sibling_with_common_prefix_is_outside(policy: PathPolicy, root: Path) -> None:
    sibling = root.parent / (root.name + "-other")
    sibling.mkdir()
    with pytest.raises(PathRefused, match="outside the workspace"):
        policy.resolve(str(sibling / "x"))


def test_symlink_escaping_the_root_is_refused(policy: PathPolicy, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (root / "escape").symlink_to(outside)
    (root / "escape_file").symlink_to(outside / "secret.txt")
    for given in ("escape/secret.txt", "escape", "escape_file"):
        with pytest.raises(PathRefused, match="outside the workspace"):
            policy.resolve(given)


def test_symlink_inside_the_root_resolves_to_its_target(policy: PathPolicy, root: Path) -> None:
    (root / "link").symlink_to("src")
    (root / "alias.py").symlink_to(root / "src" / "app.py")
    assert policy.resolve("link/app.py") == "src/app.py"
    assert policy.resolve("alias.py") == "src/app.py"


def test_symlink_to_a_secret_is_refused(policy: PathPolicy, root: Path) -> None:
    (root / ".env").write_text("KEY=1")
    (root / "notes.txt").symlink_to(".env")
    with pytest.raises(PathRefused, match="may hold secrets"):
        policy.resolve("notes.txt")


def test_root_given_through_a_symlink(tmp_path: Path, root: Path) -> None:
    (root / "a.py").write_text("")
    linked = tmp_path / "linked-root"
    linked.symlink_to(root)
    policy = PathPolicy(linked)
    assert policy.root == linked
    assert policy.real_root == Path(os.path.realpath(root))
    assert policy.resolve(str(linked / "a.py")) == "a.py"
    assert policy.resolve(str(root / "a.py")) == "a.py"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            ".env",
            "refused: '.env' may hold secrets; ask the user for the values you need, or read .env.example",
        ),
        (
            "config/.env.prod",
            "refused: 'config/.env.prod' may hold secrets; ask the user for the values you need, "
            "or read .env.example",
        ),
        (
            ".env.local",
            "refused: '.env.local' may hold secrets; ask the user for the values you need, "
            "or read .env.example",
        ),
        (
            "keys/server.pem",
            "refused: 'keys/server.pem' may be a private key; never read keys, ask the user about it instead",
        ),
        ("id_rsa", "refused: 'id_rsa' may be a private key; never read keys, ask the user about it instead"),
        (
            "deploy/id_ed25519.pub",
            "refused: 'deploy/id_ed25519.pub' may be a private key; never read keys, "
            "ask the user about it instead",
        ),
        (
            "id_ecdsa",
            "refused: 'id_ecdsa' may be a private key; never read keys, ask the user about it instead",
        ),
        (
            ".git/config",
            "refused: '.git/config' may hold credentials (remote URLs with tokens); ask the user "
            "for the setting you need",
        ),
        (
            ".ssh/id_rsa",
            "refused: '.ssh/id_rsa' may be a private key; never read keys, ask the user about it instead",
        ),
        (
            ".ssh/known_hosts",
            "refused: '.ssh/known_hosts' is SSH material; never read it, ask the user instead",
        ),
    ],
)
def test_secrets_are_refused_with_advice(policy: PathPolicy, given: str, message: str) -> None:
    with pytest.raises(PathRefused) as caught:
        policy.resolve(given)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("rel", "secret"),
    [
        (".env", True),
        ("a/b/.env", True),
        (".env.production", True),
        (".env.example", False),
        ("app/.env.example", False),
        ("certs/ca.pem", True),
        ("id_rsa.pub", True),
        ("sub/.git/config", True),
        (".git/modules/lib/config", True),
        ("home/.ssh/authorized_keys", True),
        (".git/HEAD", False),
        ("config", False),
        ("src/config.py", False),
        ("environment.py", False),
        (".github/workflows/ci.yml", False),
        (".gitignore", False),
        ("pem.txt", False),
        (".", False),
    ],
)
def test_is_secret(rel: str, secret: bool) -> None:
    assert is_secret(rel) is secret


def test_nul_in_path_is_a_tool_error(policy: PathPolicy) -> None:
    with pytest.raises(ToolError, match="NUL"):
        policy.resolve("a\0b")


@pytest.mark.parametrize("name", [".ENV", ".Env.Local", "KEYS/SERVER.PEM", "ID_RSA", ".GIT/CONFIG"])
def test_secret_names_match_whatever_their_case(name: str) -> None:
    assert is_secret(name)
