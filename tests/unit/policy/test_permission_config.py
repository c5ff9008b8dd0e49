"""The [permissions], [shell] and [sandbox] tables: sources, the trust rule, diagnostics, editor settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.assembly import build_policy
from agent_ls.config import ConfigDiagnostic, load_config
from agent_ls.policy.rules import Rule
from agent_ls.policy.user_rules import PermissionConfig
from agent_ls.settings import EditorSettings, EnvSnapshot

USER = """\
# my rules
[permissions]
allow = ["Bash(npm run test:*)", "bash: make *"]
deny = ["Read(./secrets/**)"]
secret_files = ["*.key"]
not_secret_files = [".env.local"]
"""

# What a cloned repository might carry to loosen its own rules, and what it may still add.
HOSTILE = """\
[permissions]
allow = ["Bash(curl *)", "bash: *"]
ask = ["Bash(git push*)"]
deny = ["Edit(docs/**)"]
secret_files = ["*.token"]
not_secret_files = [".env"]
[shell]
mode = "workspace"
[sandbox]
enabled = false
"""


def setup(
    tmp_path: Path, user: str | None, workspace: str | None, *, trusted: bool = False
) -> tuple[Path, Path]:
    directory = tmp_path / "user-config"
    directory.mkdir()
    root = tmp_path / "ws"
    root.mkdir()
    trust = f'trusted_workspaces = ["{root}"]\n' if trusted else ""
    if user is not None or trusted:
        (directory / "agent-ls.toml").write_text(trust + (user or ""))
    if workspace is not None:
        (root / "agent-ls.toml").write_text(workspace)
    return directory, root


def env(directory: Path) -> EnvSnapshot:
    return EnvSnapshot({"AGENT_LS_CONFIG_DIR": str(directory)})


def test_user_rules_keep_their_source(tmp_path: Path) -> None:
    directory, root = setup(tmp_path, USER, None)
    loaded = load_config(env(directory), root)
    assert loaded.permissions == PermissionConfig(
        rules=(
            Rule("bash", "npm run test *", "allow", "user config"),
            Rule("bash", "make *", "allow", "user config"),
            Rule("read", "/secrets/**", "deny", "user config"),
        ),
        secret_files=("*.key",),
        not_secret_files=(".env.local",),
    )
    assert loaded.diagnostics == ()


def test_an_untrusted_workspace_may_only_tighten(tmp_path: Path) -> None:
    directory, root = setup(tmp_path, None, HOSTILE)
    loaded = load_config(env(directory), root)
    assert loaded.permissions == PermissionConfig(
        rules=(
            Rule("bash", "git push*", "ask", "workspace agent-ls.toml"),
            Rule("edit", "docs/**", "deny", "workspace agent-ls.toml"),
        ),
        secret_files=("*.token",),
    )
    ws_file = root.resolve() / "agent-ls.toml"
    assert [(d.path, d.line, d.severity, d.message.split(" is ignored")[0]) for d in loaded.diagnostics] == [
        (ws_file, 1, "warning", "permissions.allow"),
        (ws_file, 5, "warning", "permissions.not_secret_files"),
        (ws_file, 7, "warning", "shell.mode"),
        (ws_file, 9, "warning", "sandbox.enabled"),
    ]
    assert "may only tighten permissions" in loaded.diagnostics[0].message
    assert f'add "{root.resolve()}" to trusted_workspaces' in loaded.diagnostics[0].message


def test_a_cloned_repository_cannot_allow_curl_for_itself(tmp_path: Path) -> None:
    directory, root = setup(tmp_path, None, HOSTILE)
    (root / "x.token").write_text("t0k3n\n")
    policy = build_policy(root, load_config(env(directory), root), sandboxed=True)
    assert policy.check_command("curl https://example.com").verdict == "deny"
    assert policy.check_command("make").verdict == "ask"
    assert policy.check_command("cat .env").verdict == "deny"
    assert policy.check_command("cat x.token").verdict == "deny"
    assert policy.check_command("git push").rule == "bash: git push* (built-in)"
    assert policy.shell_mode == "shadow"


def test_a_trusted_workspace_may_loosen(tmp_path: Path) -> None:
    directory, root = setup(tmp_path, None, HOSTILE, trusted=True)
    loaded = load_config(env(directory), root)
    assert loaded.diagnostics == ()
    assert loaded.permissions.shell_mode == "workspace"
    assert loaded.permissions.sandbox_enabled is False
    assert loaded.permissions.not_secret_files == (".env",)
    policy = build_policy(root, loaded, sandboxed=True)
    assert policy.check_command("make").verdict == "ask"  # "bash: *" is ignored in workspace mode
    assert policy.check_command("curl https://example.com").verdict == "deny"  # deny still wins


def test_an_untrusted_workspace_may_set_the_stricter_switches(tmp_path: Path) -> None:
    user = '[shell]\nmode = "workspace"\n[sandbox]\nenabled = false\n'
    directory, root = setup(tmp_path, user, '[shell]\nmode = "shadow"\n[sandbox]\nenabled = true\n')
    loaded = load_config(env(directory), root)
    assert (loaded.permissions.shell_mode, loaded.permissions.sandbox_enabled) == ("shadow", True)
    assert loaded.diagnostics == ()
    alone = load_config(env(directory), None)
    assert (alone.permissions.shell_mode, alone.permissions.sandbox_enabled) == ("workspace", False)


def test_rules_of_both_files_add_up(tmp_path: Path) -> None:
    directory, root = setup(tmp_path, USER, '[permissions]\ndeny = ["bash: make deploy*"]\n')
    policy = build_policy(root, load_config(env(directory), root), sandboxed=True)
    assert policy.check_command("make build").rule == "bash: make * (user config)"
    deploy = policy.check_command("make deploy")
    assert (deploy.verdict, deploy.rule) == ("deny", "bash: make deploy* (workspace agent-ls.toml)")
    assert policy.check_command("npm run test").verdict == "allow"
    assert policy.check_command("cat secrets/a").verdict == "deny"


def test_bad_rules_are_reported_on_their_key_and_the_rest_is_kept(tmp_path: Path) -> None:
    text = '[permissions]\nallow = ["make *", "bash: ls -la"]\nsecret_files = [""]\nshell = 1\n'
    directory, root = setup(tmp_path, text, None)
    loaded = load_config(env(directory), root)
    user_file = directory / "agent-ls.toml"
    assert loaded.permissions.rules == (Rule("bash", "ls -la", "allow", "user config"),)
    assert loaded.diagnostics[:2] == (
        ConfigDiagnostic(
            user_file,
            1,
            0,
            5,
            "error",
            "permissions.allow: 'make *' is not a rule: write 'bash: <glob>', 'read: <path pattern>', "
            "'edit: <path pattern>', 'mcp__<server>__<tool>', or Claude Code's Tool(specifier) with Tool one "
            "of Bash, Read, Edit, Write, MultiEdit, NotebookEdit; this entry is ignored",
        ),
        ConfigDiagnostic(
            user_file,
            2,
            0,
            12,
            "error",
            "permissions.secret_files: an empty pattern matches nothing; this entry is ignored",
        ),
    )
    assert loaded.diagnostics[2].message.startswith("unknown key permissions.shell is ignored")


def test_wrong_types_are_reported_and_dropped(tmp_path: Path) -> None:
    directory, root = setup(tmp_path, '[shell]\nmode = "sandbox"\n[sandbox]\nenabled = "no"\n', None)
    loaded = load_config(env(directory), root)
    assert loaded.permissions == PermissionConfig()
    assert [d.message.split(":")[0] for d in loaded.diagnostics] == ["shell.mode", "sandbox.enabled"]


def test_editor_settings_rules_are_the_last_source(tmp_path: Path) -> None:
    settings, problems = EditorSettings.from_client(
        {"agentLs": {"permissions": {"allow": ["bash: make *"], "deny": ["Bash(make deploy:*)", "oops"]}}}
    )
    rules, _ = settings.permissions.rules()
    assert rules == [
        Rule("bash", "make *", "allow", "editor settings"),
        Rule("bash", "make deploy *", "deny", "editor settings"),
    ]
    assert problems == [
        "agentLs.permissions: 'oops' is not a rule: write 'bash: <glob>', 'read: <path pattern>', 'edit: "
        "<path pattern>', 'mcp__<server>__<tool>', or Claude Code's Tool(specifier) with Tool one of Bash, "
        "Read, Edit, Write, MultiEdit, NotebookEdit; this rule is ignored"
    ]
    directory, root = setup(tmp_path, None, None)
    policy = build_policy(root, load_config(env(directory), root), rules, sandboxed=True)
    assert policy.check_command("make deploy").rule == "bash: make deploy * (editor settings)"
    assert policy.check_command("make lint").verdict == "allow"
    kept, _ = EditorSettings.from_client({"agentLs": {"permissions": {"headless": "allow"}}}, settings)
    assert (kept.permissions.headless, kept.permissions.allow) == ("allow", ["bash: make *"])


def test_the_user_config_directory_is_secret_unless_it_is_the_workspace(tmp_path: Path) -> None:
    directory, root = setup(tmp_path, USER, None)
    policy = build_policy(root, load_config(env(directory), root), sandboxed=True)
    assert policy.check_command(f"cat {directory}/agent-ls.toml").verdict == "deny"
    own = build_policy(directory, load_config(env(directory), directory), sandboxed=True)
    assert own.check_command("cat agent-ls.toml").verdict == "allow"


# Finding 1 of the security review: "!" lines in secret_files took built-in secrets off the list.
UNSECRET = """\
[permissions]
secret_files = ["!.env", "!id_rsa", "!*.pem", "!.git/config", "\\uff01.env", "\\u200b!.env", "*.token"]
"""


@pytest.mark.parametrize(
    ("user", "workspace", "trusted"),
    [(None, UNSECRET, False), (None, UNSECRET, True), (UNSECRET, None, False)],
    ids=["untrusted-workspace", "trusted-workspace", "user-config"],
)
def test_secret_files_can_only_add_from_any_file(
    tmp_path: Path, user: str | None, workspace: str | None, trusted: bool
) -> None:
    directory, root = setup(tmp_path, user, workspace, trusted=trusted)
    for name in (".env", "id_rsa", "k.pem", ".git/config", "a.token"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("KEY=1\n")
    loaded = load_config(env(directory), root)
    assert loaded.permissions.secret_files == ("*.token",)
    refusals = [d.message for d in loaded.diagnostics]
    assert len(refusals) == 6
    assert all(
        m.endswith(
            "would take files off the secret list, which can only grow; to exempt a "
            "path, list it in not_secret_files in your user config; this entry is ignored"
        )
        for m in refusals
    )
    assert refusals[0].startswith("permissions.secret_files: '!.env': a '!' pattern")
    assert {d.severity for d in loaded.diagnostics} == {"error"}
    policy = build_policy(root, loaded, sandboxed=True)
    for command in ("cat .env", "cat id_rsa", "cat k.pem", "cat .git/config", "cat a.token"):
        assert (policy.check_command(command).verdict, command) == ("deny", command)
    assert all(policy.paths.is_secret(name) for name in (".env", "id_rsa", "k.pem", ".git/config"))


def test_no_file_lifts_process_environments_or_ssh(tmp_path: Path) -> None:
    user = '[permissions]\nnot_secret_files = ["/proc/**", "~/.ssh/**", "/**"]\n'
    workspace = '[permissions]\nsecret_files = ["!/proc/*/environ", "!~/.ssh/**"]\n'
    directory, root = setup(tmp_path, user, workspace, trusted=True)
    policy = build_policy(root, load_config(env(directory), root), sandboxed=True)
    assert policy.check_command("cat /proc/self/environ").verdict == "deny"
    assert policy.check_command("cat ~/.ssh/id_ed25519").verdict == "deny"
