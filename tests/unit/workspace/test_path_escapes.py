"""The path policy against real trees built to escape it: ``..`` chains, absolute paths, symlink chains,
a symlink to ``/``, case and Unicode variants of secrets, a file swapped for a symlink between the check
and the read, several roots and extra directories; and ``check``, the never-raising verdict for paths
that shell commands name.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_ls.core.errors import PathRefused, ToolError
from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.paths import (
    DEFAULT_SECRET_PATTERNS,
    PathCheck,
    PathPolicy,
    fold,
    secret_pattern_problem,
)
from tests.unit.workspace.conftest import write

ENV_ADVICE = "may hold secrets; ask the user for the values you need, or read .env.example"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A user's home outside the workspace, with SSH keys."""
    folder = tmp_path / "home"
    write(folder, {".ssh/id_rsa": "PRIVATE KEY\n", ".ssh/config": "Host x\n", "notes.txt": "home notes\n"})
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    write(folder, {"secret.txt": "outside secret\n", "sub/file.txt": "outside file\n"})
    return folder


@pytest.fixture
def policy(root: Path, home: Path) -> PathPolicy:
    write(root, {"src/app.py": "x = 1\n", "docs/readme.md": "readme\n", ".env": "KEY=1\n"})
    return PathPolicy(root, home=home)


def refused(policy: PathPolicy, path: str) -> str:
    with pytest.raises(PathRefused) as caught:
        policy.resolve(path)
    return str(caught.value)


# -- .. chains and absolute paths -------------------------------------------------------------------


@pytest.mark.parametrize(
    "given",
    [
        "../outside/secret.txt",
        "src/../../outside/secret.txt",
        "src/../docs/../../../..",
        "a/b/c/../../../../x",
    ],
)
def test_dotdot_chains_that_leave_are_refused(policy: PathPolicy, given: str) -> None:
    assert "outside the workspace" in refused(policy, given)


def test_dotdot_chains_that_come_back_resolve(policy: PathPolicy, root: Path) -> None:
    assert policy.resolve(f"src/../../{root.name}/src/app.py") == "src/app.py"
    assert policy.resolve("src/./../docs//readme.md") == "docs/readme.md"


@pytest.mark.parametrize("given", ["/etc/passwd", "/", "/proc/self/status"])
def test_absolute_paths_elsewhere_are_refused(policy: PathPolicy, given: str) -> None:
    assert refused(policy, given).startswith(f"path {given!r} is outside the workspace")


def test_home_paths_are_expanded_and_refused(policy: PathPolicy, home: Path) -> None:
    assert refused(policy, "~/.ssh/id_rsa") == (
        "refused: '~/.ssh/id_rsa' is SSH material; never read it, ask the user instead"
    )
    assert refused(policy, "~/notes.txt").startswith("path '~/notes.txt' is outside the workspace")


@pytest.mark.parametrize("given", ["/proc/self/environ", "/proc/1/environ", "/proc/self/task/1/environ"])
def test_process_environments_are_secrets(policy: PathPolicy, given: str) -> None:
    assert refused(policy, given) == (
        f"refused: {given!r} holds a process's environment (API keys); never read it, ask the user instead"
    )


# -- Symlink chains ----------------------------------------------------------------------------------


def test_a_chain_of_links_inside_resolves_to_its_end(policy: PathPolicy, root: Path) -> None:
    (root / "l1").symlink_to("l2")
    (root / "l2").symlink_to("src/l3")
    (root / "src" / "l3").symlink_to("app.py")
    (root / "dirlink").symlink_to(root / "src")  # absolute, inside
    assert policy.resolve("l1") == "src/app.py"
    assert policy.resolve("dirlink/l3") == "src/app.py"


def test_a_chain_leaving_at_its_end_is_refused(policy: PathPolicy, root: Path, outside: Path) -> None:
    (root / "l1").symlink_to("l2")
    (root / "l2").symlink_to(outside / "secret.txt")
    message = refused(policy, "l1")
    assert message.startswith("path 'l1' leads outside the workspace") and "through the symlink" in message


def test_a_chain_leaving_and_coming_back_is_refused(policy: PathPolicy, root: Path, outside: Path) -> None:
    (outside / "back").symlink_to(root / "src" / "app.py")
    (root / "out-and-back").symlink_to(outside / "back")
    (root / "dir-out-and-back").symlink_to(outside / "ws-again")
    (outside / "ws-again").symlink_to(root / "src")
    assert os.path.realpath(root / "out-and-back") == os.path.realpath(root / "src" / "app.py")
    assert "through the symlink" in refused(policy, "out-and-back")
    assert "through the symlink" in refused(policy, "dir-out-and-back/app.py")


def test_a_link_from_outside_into_the_workspace_is_followed(
    policy: PathPolicy, root: Path, outside: Path
) -> None:
    (outside / "shortcut").symlink_to(root / "src")
    assert policy.resolve(str(outside / "shortcut" / "app.py")) == "src/app.py"


def test_a_symlink_to_the_filesystem_root_is_refused(policy: PathPolicy, root: Path) -> None:
    (root / "slash").symlink_to("/")
    for given in ("slash", "slash/etc/passwd", f"slash{root}/src/app.py"):
        assert "through the symlink" in refused(policy, given), given


def test_a_link_loop_is_refused(policy: PathPolicy, root: Path) -> None:
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    assert (
        refused(policy, "a/x") == "path 'a/x' has too many levels of symbolic links; use the file's real path"
    )


def test_a_dangling_link_out_is_refused_and_inside_resolves(policy: PathPolicy, root: Path) -> None:
    (root / "gone-out").symlink_to("/nonexistent/x")
    (root / "gone-in").symlink_to("src/new.py")
    assert "through the symlink" in refused(policy, "gone-out")
    assert policy.resolve("gone-in") == "src/new.py"


# -- Secrets: case and Unicode variants --------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        ".ENV",
        ".Env",
        "CONFIG/.ENV.PROD",
        "\uff0e\uff45\uff4e\uff56",  # fullwidth ．ｅｎｖ
        ".e\u0301nv",  # a combining acute accent
        ".env\u200b",  # a zero-width space
        "\u0130D_RSA",  # a capital I with a dot above, folded to "i" plus a combining dot
        "ID_RSA",
        "keys/Server.PEM",
        ".GIT/CONFIG",
    ],
)
def test_case_and_unicode_variants_of_secrets_are_refused(policy: PathPolicy, root: Path, name: str) -> None:
    write(root, {name: "KEY=1\n"})  # the file exists under that exact name
    assert refused(policy, name).startswith(f"refused: {name!r} ")
    assert policy.check(name, write=False).secret


def test_env_example_stays_readable_in_any_case(policy: PathPolicy, root: Path) -> None:
    write(root, {".ENV.EXAMPLE": "KEY=\n"})
    assert policy.resolve(".ENV.EXAMPLE") == ".ENV.EXAMPLE"


def test_fold() -> None:
    assert fold("\uff0e\uff25\uff2e\uff36") == ".env"
    assert fold("Stra\u00dfe") == "strasse"
    assert fold("e\u0301") == "e"


def test_configured_secrets_and_exemptions(root: Path, home: Path, tmp_path: Path) -> None:
    write(root, {"secrets/prod.yaml": "k: v\n", "tests/fixtures/test.pem": "k\n", "server.pem": "k\n"})
    config_dir = tmp_path / "config"
    write(config_dir, {"agent-ls.toml": "model = 'x'\n"})
    policy = PathPolicy(
        root,
        secret_patterns=[*DEFAULT_SECRET_PATTERNS, "secrets/"],
        not_secret=["tests/fixtures/*.pem"],
        config_dir=config_dir,
        home=home,
        extra_dirs=[tmp_path],
    )
    assert refused(policy, "secrets/prod.yaml") == (
        "refused: 'secrets/prod.yaml' is a secret file (configured); ask the user for what you need instead"
    )
    assert policy.resolve("tests/fixtures/test.pem") == "tests/fixtures/test.pem"
    assert "private key" in refused(policy, "server.pem")
    assert refused(policy, str(config_dir / "agent-ls.toml")) == (
        f"refused: {(config_dir / 'agent-ls.toml').as_posix()!r} is agent-ls's own configuration; "
        "ask the user for the setting you need"
    )


@pytest.mark.parametrize(
    "pattern",
    [
        "!.env",
        "!id_rsa",
        "!*.pem",
        "!.git/config",
        "!/proc/*/environ",
        "!~/.ssh/**",
        "\uff01.env",  # a fullwidth exclamation mark, folded to "!"
        "\u200b!.env",  # a zero-width space, dropped by folding
    ],
)
def test_an_added_pattern_cannot_re_include(root: Path, home: Path, pattern: str) -> None:
    """The review's bypass: one spec for built-in and added lines let ``!.env`` un-secret ``.env``."""
    with pytest.raises(ValueError, match="take files off the secret list"):
        PathPolicy(root, secret_patterns=[*DEFAULT_SECRET_PATTERNS, pattern], home=home)
    assert secret_pattern_problem(pattern) is not None


def test_built_in_secrets_apply_whatever_list_is_given(root: Path, home: Path) -> None:
    write(root, {".env": "KEY=1\n", "secrets/a.txt": "s\n"})
    policy = PathPolicy(root, secret_patterns=["secrets/"], home=home)  # the built-ins not repeated
    assert "may hold secrets" in refused(policy, ".env")
    assert "secret file (configured)" in refused(policy, "secrets/a.txt")
    assert "holds a process's environment" in refused(policy, "/proc/self/environ")


@pytest.mark.parametrize("pattern", ["\\!.env", "*.key", "\\#notes#", "/srv/keys/**"])
def test_patterns_that_only_add_are_accepted(pattern: str) -> None:
    assert secret_pattern_problem(pattern) is None


def test_a_built_in_re_include_stays_in_its_own_group(root: Path, home: Path) -> None:
    """``!.env.example`` takes ``.env.example`` out of ``.env.*`` only, not out of ``.ssh``."""
    write(root, {".ssh/.env.example": "k\n", "config/.env.example": "KEY=\n"})
    policy = PathPolicy(root, home=home)
    assert "SSH material" in refused(policy, ".ssh/.env.example")
    assert policy.resolve("config/.env.example") == "config/.env.example"


@pytest.mark.parametrize(
    "name",
    [".env~", "#.env#", ".env.swp", "prod.env", "config/db.env", "prod.env~", "#prod.env#", ".prod.env.swo"],
)
def test_env_files_under_other_names_and_their_editor_copies_are_secrets(
    policy: PathPolicy, root: Path, name: str
) -> None:
    write(root, {name: "KEY=1\n"})
    assert refused(policy, name) == f"refused: {name!r} {ENV_ADVICE}"


@pytest.mark.parametrize(
    "name", ["environment.py", "src/dotenv.py", "env.py", "config.env.ts", "envs/app.py"]
)
def test_source_files_named_like_env_are_not_secrets(policy: PathPolicy, root: Path, name: str) -> None:
    write(root, {name: "x = 1\n"})
    assert policy.resolve(name) == name


def test_exemptions_never_lift_process_environments_ssh_or_the_config_dir(
    root: Path, home: Path, tmp_path: Path
) -> None:
    config_dir = tmp_path / "conf[1]"  # glob characters in the name are matched literally
    write(config_dir, {"agent-ls.toml": "model = 'x'\n"})
    write(root, {".env": "KEY=1\n"})
    policy = PathPolicy(
        root,
        not_secret=["**", "/**", "~/**", "!nothing"],
        config_dir=config_dir,
        home=home,
        extra_dirs=[tmp_path],
    )
    assert policy.resolve(".env") == ".env"  # the user's exemption does lift a built-in
    assert "holds a process's environment" in refused(policy, "/proc/self/environ")
    assert "SSH material" in refused(policy, "~/.ssh/id_rsa")
    assert "agent-ls's own configuration" in refused(policy, str(config_dir / "agent-ls.toml"))


# -- Resolve at use ----------------------------------------------------------------------------------


def test_a_file_swapped_for_a_symlink_after_the_check_is_not_read(root: Path, outside: Path) -> None:
    write(root, {"notes.txt": "notes\n"})
    overlay = Overlay(root, sandbox=None)
    rel = overlay.resolve("notes.txt")  # the registry's permission check
    (root / "notes.txt").unlink()
    (root / "notes.txt").symlink_to(outside / "secret.txt")  # swapped before the tool reads
    with pytest.raises(PathRefused, match="leads outside the workspace"):
        overlay.read_text(rel)
    with pytest.raises(PathRefused, match="leads outside the workspace"):
        overlay.propose(rel, "new\n")  # an edit reads its base the same way
    assert overlay.proposal() == []


def test_a_directory_swapped_for_a_symlink_after_the_check_is_not_read(root: Path, outside: Path) -> None:
    write(root, {"sub/file.txt": "inside\n"})
    overlay = Overlay(root, sandbox=None)
    rel = overlay.resolve("sub/file.txt")
    (root / "sub" / "file.txt").unlink()
    (root / "sub").rmdir()
    (root / "sub").symlink_to(outside / "sub")
    with pytest.raises(PathRefused, match="leads outside the workspace"):
        overlay.read_text(rel)


def test_a_file_swapped_for_a_link_to_a_secret_is_not_read(root: Path) -> None:
    write(root, {"notes.txt": "notes\n", ".env": "KEY=hunter2\n"})
    overlay = Overlay(root, sandbox=None)
    rel = overlay.resolve("notes.txt")
    (root / "notes.txt").unlink()
    (root / "notes.txt").symlink_to(".env")
    with pytest.raises(PathRefused, match="may hold secrets"):
        overlay.read_text(rel)


def test_a_swap_for_a_link_inside_is_read_at_its_new_place(root: Path) -> None:
    write(root, {"notes.txt": "notes\n", "src/other.txt": "other\n"})
    overlay = Overlay(root, sandbox=None)
    rel = overlay.resolve("notes.txt")
    (root / "notes.txt").unlink()
    (root / "notes.txt").symlink_to("src/other.txt")
    assert overlay.read_text(rel) == "other\n"


def test_a_fifo_is_not_read(root: Path) -> None:
    os.mkfifo(root / "pipe")
    overlay = Overlay(root, sandbox=None)
    with pytest.raises(ToolError, match="cannot read 'pipe'"):
        overlay.read_text(overlay.resolve("pipe"))  # returns at once instead of waiting for a writer


# -- Several roots and extra directories ------------------------------------------------------------


def test_multi_root(tmp_path: Path, home: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write(first, {"a.py": "a\n", "nested/b.py": "b\n"})
    write(second, {"c.py": "c\n", ".env": "K=1\n"})
    nested = first / "nested"
    policy = PathPolicy([first, second, nested], home=home)
    assert policy.resolve("a.py") == "a.py"  # relative paths start at the first root
    assert policy.resolve(str(second / "c.py")) == str(second / "c.py")
    assert policy.resolve(str(nested / "b.py")) == "nested/b.py"  # the first root holding it wins
    assert "may hold secrets" in refused(policy, str(second / ".env"))
    assert policy.check(str(second / "c.py"), write=True) == PathCheck(
        "allow", "c.py is inside the workspace", "c.py", path=str(second / "c.py")
    )
    assert "outside the workspace" in refused(policy, str(tmp_path / "third" / "x"))


def test_edits_go_only_into_the_first_root(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write(first, {"a.py": "a\n"})
    write(second, {"c.py": "c\n"})
    overlay = Overlay(first, sandbox=None, paths=PathPolicy([first, second]))
    rel = overlay.resolve(str(second / "c.py"))
    assert overlay.read_text(rel) == "c\n"
    with pytest.raises(ToolError, match="outside the workspace root"):
        overlay.propose(rel, "changed\n")


def test_extra_directories_are_readable_not_writable(root: Path, home: Path, tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "review"
    write(skill, {"SKILL.md": "---\nname: review\n---\n", ".env": "K=1\n"})
    policy = PathPolicy(root, extra_dirs=[skill], home=home)
    assert policy.resolve(str(skill / "SKILL.md")) == str(skill / "SKILL.md")
    assert "may hold secrets" in refused(policy, str(skill / ".env"))
    assert policy.check(str(skill / "SKILL.md"), write=False).verdict == "allow"
    assert policy.check(str(skill / "SKILL.md"), write=True) == PathCheck(
        "deny",
        f"{skill / 'SKILL.md'} is in a read-only extra directory; write inside the workspace",
        path=str(skill / "SKILL.md"),
    )


# -- check: paths named by shell commands ------------------------------------------------------------


def test_check_inside(policy: PathPolicy, root: Path) -> None:
    real = os.path.realpath(root)
    assert policy.check("out.txt", write=True) == PathCheck(
        "allow", "out.txt is inside the workspace", "out.txt", path=f"{real}/out.txt"
    )
    assert policy.check("app.py", write=False, cwd=root / "src") == PathCheck(
        "allow", "src/app.py is inside the workspace", "src/app.py", path=f"{real}/src/app.py"
    )


def test_check_outside(policy: PathPolicy, root: Path, outside: Path) -> None:
    target = str(outside / "secret.txt")
    assert policy.check(target, write=False) == PathCheck(
        "allow", f"{target} is outside the workspace", outside=True, path=target
    )
    assert policy.check("../outside/new.txt", write=True) == PathCheck(
        "deny",
        f"{outside / 'new.txt'} is outside the workspace {root}; write inside it",
        outside=True,
        path=str(outside / "new.txt"),
    )


@pytest.mark.parametrize("device", ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"])
def test_check_allows_harmless_devices(policy: PathPolicy, device: str) -> None:
    assert policy.check(device, write=True) == PathCheck(
        "allow", f"{device} is a harmless device", path=device
    )


@pytest.mark.parametrize(
    ("given", "write"),
    [
        (".env", False),
        (".env", True),
        ("config/.ENV.local", True),
        ("~/.ssh/id_rsa", False),
        ("/proc/self/environ", False),
    ],
)
def test_check_denies_secrets(policy: PathPolicy, given: str, write: bool) -> None:
    found = policy.check(given, write=write)
    assert (found.verdict, found.secret) == ("deny", True)


def test_check_expands_the_home(policy: PathPolicy, home: Path) -> None:
    found = policy.check("~/notes.txt", write=False)
    assert (found.verdict, found.outside, found.path) == ("allow", True, str(home / "notes.txt"))
    assert policy.check("~/new.txt", write=True).verdict == "deny"


def test_check_denies_escaping_links_and_odd_paths(policy: PathPolicy, root: Path, outside: Path) -> None:
    (root / "escape").symlink_to(outside)
    (root / "dotenv").symlink_to(".env")
    escaping = policy.check("escape/secret.txt", write=False)
    assert (escaping.verdict, escaping.outside) == ("deny", True)
    assert "through the symlink" in escaping.reason
    linked_secret = policy.check("dotenv", write=False)
    assert (linked_secret.verdict, linked_secret.secret, linked_secret.rel) == ("deny", True, ".env")
    assert policy.check("a\0b", write=True).verdict == "deny"
    assert policy.check("  ", write=True).verdict == "deny"


def test_check_never_raises_on_a_link_loop(policy: PathPolicy, root: Path) -> None:
    (root / "loop").symlink_to("loop")
    found = policy.check("loop", write=True)
    assert found.verdict == "deny" and "too many levels" in found.reason


def test_the_skills_of_the_config_dir_are_readable_but_nothing_else_in_it(root: Path, tmp_path: Path) -> None:
    config_dir = tmp_path / "conf[1]"
    write(
        config_dir,
        {
            "agent-ls.toml": "model = 'x'\n",
            "skills/deploy/SKILL.md": "---\n",
            "skills/deploy/ref.md": "r\n",
            "skills/deploy/.env": "KEY=1\n",
            "skills-old/x.md": "x\n",
        },
    )
    policy = PathPolicy(root, extra_dirs=[config_dir / "skills" / "deploy"], config_dir=config_dir)
    ref = config_dir / "skills" / "deploy" / "ref.md"
    assert policy.resolve(str(ref)) == ref.resolve().as_posix()
    for refused in ("agent-ls.toml", "skills/deploy/.env", "skills-old/x.md"):
        with pytest.raises(PathRefused):
            policy.resolve(str(config_dir / refused))
