"""Names Windows reads differently (issue 11.8): on every platform the path policy refuses the Windows
(and macOS) spellings of ``.git`` and of secret files, resolves short names against the directory
listing, and leaves names that only look odd alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_ls.core.errors import PathRefused
from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.secret_match import fold
from agent_ls.workspace.windows_names import (
    dot_git_alias,
    reserved_device,
    short_name_targets,
    windows_name,
    windows_reading,
)
from tests.unit.workspace.conftest import write

GIT_REFUSAL = "is .git on Windows or macOS (they read {!r} as .git); refused on every platform"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write(
        ws,
        {
            ".git/hooks/pre-commit.sample": "#!/bin/sh\n",
            ".git/HEAD": "ref: refs/heads/main\n",
            ".env": "API_KEY=sk-live\n",
            ".npmrc": "//registry.npmjs.org/:_authToken=npm_secret\n",
            "credentials.json": "{}\n",
            "src/app.py": "x = 1\n",
        },
    )
    return ws


@pytest.fixture
def policy(root: Path, tmp_path: Path) -> PathPolicy:
    return PathPolicy(root, home=tmp_path / "home")


@pytest.mark.parametrize(
    ("name", "read"),
    [
        (".git.", ".git"),
        (".git . .", ".git"),
        (".git::$INDEX_ALLOCATION", ".git"),
        (".env:secret:$DATA", ".env"),
        ("GIT~1", ".git"),
        ("git~12", ".git"),
        ("...", ""),
        ("src", "src"),
        (".gitignore", ".gitignore"),
    ],
)
def test_windows_name(name: str, read: str) -> None:
    assert windows_name(name) == read


def test_windows_reading_splits_backslashes_and_keeps_the_root() -> None:
    assert windows_reading(".git\\hooks\\x") == ".git/hooks/x"
    assert windows_reading("\\\\?\\C:\\ws\\.env") == "/?/C/ws/.env"
    assert windows_reading("/abs/.env./x") == "/abs/.env/x"
    assert windows_reading("...") == "."


@pytest.mark.parametrize(
    ("parts", "alias"),
    [
        ([".git.", "hooks"], ".git."),
        (["sub", ".git ", "config"], ".git "),
        ([".git::$INDEX_ALLOCATION"], ".git::$INDEX_ALLOCATION"),
        (["GIT~1", "hooks"], "GIT~1"),
        ([".git\\hooks\\x"], ".git\\hooks\\x"),
        ([".g\u200cit", "hooks"], ".g\u200cit"),
        ([".git", "hooks"], None),
        ([".GIT", "hooks"], None),  # the case is the permission rules' (they match folded)
        ([".github", "workflows"], None),
        ([".gitmodules"], None),
    ],
)
def test_dot_git_alias(parts: list[str], alias: str | None) -> None:
    assert dot_git_alias(parts, fold) == alias


def test_short_names_resolve_against_the_listing(root: Path) -> None:
    assert short_name_targets(root, "ENV~1") == [".env"]
    assert short_name_targets(root, "npmrc~1") == [".npmrc"]
    assert short_name_targets(root, "CREDEN~1.JSO") == ["credentials.json"]
    assert short_name_targets(root, "CREDEN~1") == []  # the extension must match too
    assert short_name_targets(root, "NO7EBA~1") == []  # hashed form: the first two characters
    assert sorted(short_name_targets(root, "CR1234~1.JSO")) == ["credentials.json"]
    (root / "ENV~1").write_text("a real file of that name\n")
    assert short_name_targets(root, "ENV~1") == []  # it names itself
    assert short_name_targets(root, "README.md") == []
    assert short_name_targets(root / "missing", "ENV~1") == []


@pytest.mark.parametrize("name", ["CON", "nul", "Aux.c", "COM1", "lpt9.txt", "COM\u00b9", "CONIN$", "NUL "])
def test_reserved_devices(name: str) -> None:
    assert reserved_device(name)


@pytest.mark.parametrize("name", ["console", "auxiliary.c", "COM10", "nul_device", "LPT"])
def test_not_reserved_devices(name: str) -> None:
    assert not reserved_device(name)


@pytest.mark.parametrize(
    ("given", "alias"),
    [
        (".git./hooks/pre-commit", ".git."),
        (".git /hooks/pre-commit", ".git "),
        (".git. ./info/exclude", ".git. ."),
        (".git::$INDEX_ALLOCATION/hooks/pre-commit", ".git::$INDEX_ALLOCATION"),
        ("GIT~1/hooks/pre-commit", "GIT~1"),
        (".git\\hooks\\pre-commit", ".git\\hooks\\pre-commit"),
        ("vendor/lib/.git./hooks/post-checkout", ".git."),
        (".g\u200cit/hooks/pre-commit", ".g\u200cit"),
    ],
)
def test_spellings_of_dot_git_are_refused(policy: PathPolicy, given: str, alias: str) -> None:
    with pytest.raises(PathRefused) as caught:
        policy.resolve(given)
    assert str(caught.value) == f"refused: {given!r} {GIT_REFUSAL.format(alias)}"
    for writes in (False, True):
        check = policy.check(given, write=writes)
        assert (check.verdict, check.secret) == ("deny", False)
        assert check.reason == f"{given} {GIT_REFUSAL.format(alias)}"


@pytest.mark.parametrize(
    "given",
    [
        ".env.",
        ".env ",
        ".env::$DATA",
        ".npmrc:token",
        "config\\.env",
        ".git./config",
        "GIT~1/config",
        "\\\\?\\C:\\ws\\.npmrc",
        "ENV~1",
        "NPMRC~1",
        "CREDEN~1.JSO",
    ],
)
def test_spellings_of_secrets_are_refused_as_secrets(policy: PathPolicy, given: str) -> None:
    with pytest.raises(PathRefused, match="refused: "):
        policy.resolve(given)
    check = policy.check(given, write=False)
    assert (check.verdict, check.secret) == ("deny", True), check.reason


def test_a_short_name_says_what_it_may_stand_for(policy: PathPolicy) -> None:
    check = policy.check("ENV~1", write=False)
    assert check.reason == (
        "ENV~1 may hold secrets; ask the user for the values you need, or read .env.example"
        " ('ENV~1' may be the Windows short name of '.env')"
    )


def test_a_link_to_a_spelling_of_dot_git_is_refused_by_its_real_path(policy: PathPolicy, root: Path) -> None:
    (root / ".git.").mkdir()
    (root / "hooks-link").symlink_to(".git.")
    with pytest.raises(PathRefused, match=r"refused: '\.git\./pre-commit' is \.git on Windows"):
        policy.resolve("hooks-link/pre-commit")


@pytest.mark.parametrize(
    "given",
    [
        "src/app.py",
        ".github/workflows/ci.yml",
        ".gitignore",
        ".gitattributes",
        ".git-blame-ignore-revs",
        "notes~1.txt",  # shaped like a short name, but nothing beside it abbreviates to it
        "docs/v1.0./x",
        "a:b/c.txt",
        "aux.c" if os.name != "nt" else "src/app.py",  # a device only on Windows
    ],
)
def test_odd_names_that_name_nothing_protected_are_allowed(policy: PathPolicy, given: str) -> None:
    check = policy.check(given, write=True)
    assert check.verdict == "allow", check.reason


def test_is_secret_reads_names_as_windows_does(policy: PathPolicy) -> None:
    assert policy.is_secret(".env.")
    assert policy.is_secret("ENV~1")
    assert policy.is_secret(".git./config")
    assert not policy.is_secret(".git./hooks/pre-commit")  # refused, but as .git, not as a secret
    assert not policy.is_secret("src/app.py")
