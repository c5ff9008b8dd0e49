"""The permission engine on a real workspace: every construct of the corpus README, paths, approvals."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.core.events import Verdict
from agent_ls.policy.approvals import append_allow_rules
from agent_ls.policy.engine import (
    EMPTY_RULE,
    NOT_STATIC_RULE,
    RISKY_RULE,
    SESSION_RULE,
    Decision,
    PermissionPolicy,
    WriteRules,
)
from agent_ls.policy.operand_checks import (
    DYNAMIC_ARGUMENT_RULE,
    DYNAMIC_TARGET_RULE,
    GLOB_RULE,
    OUTSIDE_RULE,
    REDIRECT_RULE,
    SECRET_RULE,
    UNKNOWN_CWD_RULE,
    WRITE_OPTION_RULE,
)
from agent_ls.policy.rules import BUILTIN_RULES, FALLBACK_RULE, Judgement, Rule, parse_rule
from agent_ls.policy.user_rules import ShellMode
from agent_ls.workspace.paths import PathPolicy

RM = "bash: rm * (built-in)"
LS = "bash: ls* (built-in)"
CAT = "bash: cat * (built-in)"
GREP = "bash: grep * (built-in)"
GIT_DIFF = "bash: git diff* (built-in)"
PYTEST = "bash: pytest* (built-in)"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A workspace with code, notes, a secret, a key, a .git directory and a symlink out of it."""
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('hi')\n")
    (ws / "notes.txt").write_text("notes\n")
    (ws / ".env").write_text("API_KEY=sk-live\n")
    (ws / "keys").mkdir()
    (ws / "keys" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    (ws / "secrets").mkdir()
    (ws / "secrets" / "db.txt").write_text("password\n")
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "link-out").symlink_to(tmp_path)
    (tmp_path / "outside.txt").write_text("elsewhere\n")
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    return ws


def make_policy(
    root: Path, *rules: str, shell_mode: ShellMode = "shadow", write_rules: WriteRules | None = None
) -> PermissionPolicy:
    """The built-in rules plus user-config ``rules``, each "<verdict> <rule>" ("deny Bash(curl *)")."""
    verdicts: dict[str, Verdict] = {"allow": "allow", "ask": "ask", "deny": "deny"}
    extra = [
        parse_rule(text.split(" ", 1)[1], verdicts[text.split(" ", 1)[0]], "user config") for text in rules
    ]
    paths = PathPolicy(root, home=root.parent / "home")
    return PermissionPolicy(paths, (*BUILTIN_RULES, *extra), shell_mode=shell_mode, write_rules=write_rules)


CONSTRUCTS: list[tuple[str, Verdict, str]] = [
    # 1. every separator outside quotes
    ("ls; rm x", "deny", RM),
    ("ls && rm x", "deny", RM),
    ("ls || rm x", "deny", RM),
    ("ls | rm x", "deny", RM),
    ("ls |& rm x", "deny", RM),
    ("ls & rm x", "deny", RM),
    ("ls\nrm x", "deny", RM),
    # 2. nested commands
    ("echo $(rm x)", "deny", RM),
    ("ls `rm x`", "deny", RM),
    ('echo "a `rm x` b"', "deny", RM),
    ("cat <(rm x)", "deny", RM),
    ("ls >(rm x)", "deny", RM),
    ("(ls; rm x)", "deny", RM),
    ("{ ls; rm x; }", "deny", RM),
    ("if true; then rm x; fi", "deny", RM),
    ("while false; do rm x; done", "deny", RM),
    ("for f in a b; do rm x; done", "deny", RM),
    ("case a in a) rm x;; esac", "deny", RM),
    ("f() { rm x; }; f", "deny", RM),
    ("bash <<EOF\nrm x\nEOF", "deny", RM),
    ("bash -c 'rm x'", "deny", RM),
    ('sh -c "ls && rm x"', "deny", RM),
    ("eval 'rm x'", "deny", RM),
    ("watch -n 1 rm x", "deny", RM),
    # 3. the command word, normalized
    ("FOO=1 rm x", "deny", RM),
    ("\\rm x", "deny", RM),
    ("/bin/rm x", "deny", RM),
    ("env rm x", "deny", RM),
    ("env -i FOO=1 rm x", "deny", RM),
    ("command rm x", "deny", RM),
    ("builtin rm x", "deny", RM),
    ("exec rm x", "deny", RM),
    ("nohup rm x", "deny", RM),
    ("nice -n 5 rm x", "deny", RM),
    ("timeout 5 rm x", "deny", RM),
    ("time rm x", "deny", RM),
    ("stdbuf -oL rm x", "deny", RM),
    ("ls | xargs rm", "deny", RM),
    ("ls | xargs -0 rm -f", "deny", RM),
    ("find . -exec rm {} \\;", "deny", RM),
    ("find . -execdir rm {} +", "deny", RM),
    ("find . -ok rm {} \\;", "deny", RM),
    # 4. git global options, and what can execute or write
    ("git -C src push", "deny", "bash: git push* (built-in)"),
    ("git --git-dir=.git status", "ask", RISKY_RULE),  # another repository's config can run programs
    ("git --work-tree=. diff", "ask", RISKY_RULE),
    ("git -c core.pager=sh status", "ask", RISKY_RULE),
    ("git -p status", "ask", RISKY_RULE),
    ("git diff --ext-diff", "ask", RISKY_RULE),
    ("git diff --output=x.txt", "ask", RISKY_RULE),
    ("GIT_EXTERNAL_DIFF=x git diff", "ask", RISKY_RULE),
    # 5. quoted separators are data
    ("ls 'a;rm -rf b'", "allow", LS),
    ('grep -n "a && b" src/app.py', "allow", GREP),
    ("grep -E 'foo|bar' src/app.py", "allow", GREP),
    # 6. redirections
    ("pytest -q 2>&1", "allow", "bash: pytest* (built-in)"),
    ("ls >/dev/null 2>&1", "allow", LS),
    ("cat <<EOF\nhello\nEOF", "allow", CAT),
    ("cat <<< hello", "allow", CAT),
    ("cat < notes.txt", "allow", CAT),
    ("ls > out.txt", "ask", REDIRECT_RULE),
    ("ls >> src/app.py", "ask", REDIRECT_RULE),
    ("ls > $OUT", "ask", DYNAMIC_TARGET_RULE),
    ("ls > ../x", "deny", OUTSIDE_RULE),
    ("ls > /tmp/x", "deny", OUTSIDE_RULE),
    ("cat < ~/.bashrc", "deny", OUTSIDE_RULE),
    ("ls > .env", "deny", SECRET_RULE),
    ("ls > .git/hooks/pre-commit", "deny", "edit: .git (built-in)"),
    # 6. path arguments: the file policy is not bypassable through the shell
    ("cat .env", "deny", SECRET_RULE),
    ("cat ./config/../.env", "deny", SECRET_RULE),
    ("cat ~/.ssh/id_rsa", "deny", SECRET_RULE),
    ("grep KEY /proc/1/environ", "deny", SECRET_RULE),
    ("cat keys/server.pem", "deny", SECRET_RULE),
    ("cat -- .env", "deny", SECRET_RULE),
    ("grep --file=.env x", "deny", SECRET_RULE),
    ("cat .e*", "deny", SECRET_RULE),  # the glob expands to .env
    ("cat keys/*", "deny", SECRET_RULE),
    ("cat */*.pem", "deny", SECRET_RULE),
    ("cat link-out/outside.txt", "deny", OUTSIDE_RULE),  # a symlink out of the workspace
    ("cat /etc/hostname", "ask", OUTSIDE_RULE),
    ("cat ../outside.txt", "ask", OUTSIDE_RULE),
    ("cat notes.txt src/app.py", "allow", CAT),
    ("cat *.txt", "allow", CAT),
    ("cat $F", "ask", DYNAMIC_ARGUMENT_RULE),
    ('cat "$HOME/x"', "ask", DYNAMIC_ARGUMENT_RULE),
    ("cat $(ls -a)", "ask", DYNAMIC_ARGUMENT_RULE),
    ("cat .{e,x}nv", "ask", RISKY_RULE),  # brace expansion
    ("cd src && cat ../.env", "deny", SECRET_RULE),
    ("cd $D && cat app.py", "ask", DYNAMIC_ARGUMENT_RULE),
    ("cd ~/.ssh && cat id_rsa", "deny", SECRET_RULE),  # a secret's name, wherever cd went
    # option values attached to the option (getopt: the rest of the word is the value)
    ("grep -f.env notes.txt", "deny", SECRET_RULE),
    ("grep -rf.env .", "deny", SECRET_RULE),
    ("grep -f/proc/self/environ x", "deny", SECRET_RULE),
    ("grep -f/root/.ssh/id_rsa x", "deny", SECRET_RULE),
    ("git diff -O/root/.ssh/id_rsa", "deny", SECRET_RULE),
    ("grep -fkeys/server.pem x", "deny", SECRET_RULE),
    ("grep -f id_rsa x", "deny", SECRET_RULE),  # a secret's name, whether or not the file exists...
    ("grep -fid_rsa x", "deny", SECRET_RULE),  # ...a value cut out of a word, also by a secret's name
    ("grep --file .env x", "deny", SECRET_RULE),
    ("grep -f.e* x", "deny", SECRET_RULE),
    ("grep -e/etc/hostname notes.txt", "ask", OUTSIDE_RULE),  # over-checked: -e takes a pattern
    ("ls -la src", "allow", LS),
    ("grep -n -A3 -e x src/app.py", "allow", GREP),
    # git: <rev>:<path> and pathspec magic name files relative to the repository's top
    ("git diff HEAD:.env x", "deny", SECRET_RULE),
    ("git diff @:.env @:x", "deny", SECRET_RULE),
    ("git diff HEAD -- ':(top).env'", "deny", SECRET_RULE),
    ("git show HEAD:.env", "deny", SECRET_RULE),
    ("git diff :0:.env", "deny", SECRET_RULE),
    ("git diff 'HEAD@{10:00}:.env'", "deny", SECRET_RULE),
    ("git diff ':/keys/server.pem'", "deny", SECRET_RULE),
    ("git diff HEAD -- ':(exclude,top)keys/server.pem'", "deny", SECRET_RULE),
    ("cd src && git diff HEAD:.env x", "deny", SECRET_RULE),  # from the top, not from src
    ("git diff HEAD:src/app.py HEAD~1:src/app.py", "allow", GIT_DIFF),
    ("git diff HEAD -- . ':!notes.txt'", "allow", GIT_DIFF),
    # pytest: the files its options write are edits; outside the workspace they are denied
    ("pytest --junitxml=src/app.py src", "ask", WRITE_OPTION_RULE),
    ("pytest --junitxml=/tmp/x.xml src", "deny", OUTSIDE_RULE),
    ("pytest --junitxml /tmp/x.xml", "deny", OUTSIDE_RULE),
    ("pytest --junit-xml=../x.xml", "deny", OUTSIDE_RULE),
    ("pytest --resultlog=x.log", "ask", WRITE_OPTION_RULE),
    ("pytest --report-log=r.json", "ask", WRITE_OPTION_RULE),
    ("pytest --log-file=.env", "deny", SECRET_RULE),
    ("pytest --debug=/tmp/d.log", "deny", OUTSIDE_RULE),
    ("pytest --debug /tmp/d.log", "deny", OUTSIDE_RULE),
    ("pytest --debug", "ask", WRITE_OPTION_RULE),  # pytestdebug.log
    ("pytest --debug -q", "ask", WRITE_OPTION_RULE),
    ("pytest -o cache_dir=/tmp/c", "deny", OUTSIDE_RULE),
    ("pytest -ocache_dir=/tmp/c", "deny", OUTSIDE_RULE),
    ("pytest -q --override-ini=cache_dir=/tmp/c", "deny", OUTSIDE_RULE),
    ("pytest --override-ini log_file=../x", "deny", OUTSIDE_RULE),
    ("pytest --basetemp=/tmp/b", "deny", OUTSIDE_RULE),
    ("pytest --basetemp=src", "ask", WRITE_OPTION_RULE),  # pytest empties it
    ("pytest --cov-report=xml:/tmp/c.xml", "deny", OUTSIDE_RULE),
    ("pytest --cov-report html:../cov", "deny", OUTSIDE_RULE),
    ("pytest --junitxml=.git/hooks/pre-commit", "deny", "edit: .git (built-in)"),
    ("pytest @.env", "deny", SECRET_RULE),  # argparse reads arguments from @FILE
    ("pytest -q -- @.env", "deny", SECRET_RULE),
    ("python3 -m pytest --junitxml=/tmp/x.xml", "deny", OUTSIDE_RULE),
    ("python -X dev -mpytest --basetemp=..", "deny", OUTSIDE_RULE),
    ("pytest -q src --cov-report=term-missing -k 'not slow'", "allow", PYTEST),
    # 7. a command word that is not static
    ("$CMD x", "ask", NOT_STATIC_RULE),
    ('"${VAR:-rm}" -rf /', "ask", NOT_STATIC_RULE),
    ("$'r\\x6d' x", "deny", "bash: rm * (built-in)"),  # decoded as bash does: rm
    ("ls${IFS}x", "ask", NOT_STATIC_RULE),
    # the rest of the seed table
    ("sudo ls", "deny", "bash: sudo * (built-in)"),
    ("curl https://example.com", "deny", "bash: curl * (built-in)"),
    ("make build", "ask", FALLBACK_RULE),
    ("", "ask", EMPTY_RULE),
    ("   \n", "ask", EMPTY_RULE),
]


@pytest.mark.parametrize(
    ("command", "verdict", "rule"), CONSTRUCTS, ids=[c[0] or "empty" for c in CONSTRUCTS]
)
def test_every_construct(root: Path, command: str, verdict: Verdict, rule: str) -> None:
    decision = make_policy(root).check_command(command)
    assert (decision.verdict, decision.rule) == (verdict, rule), decision


def test_a_decision_lists_each_command_and_its_verdict(root: Path) -> None:
    decision = make_policy(root).check_command("git status && /bin/rm -rf build")
    assert decision == Decision(
        "deny",
        RM,
        ("git status", "rm -rf build"),
        "git status && /bin/rm -rf build",
        f'"rm -rf build" matches {RM}',
        (
            Judgement(
                "allow", "bash: git status* (built-in)", '"git status" matches bash: git status* (built-in)'
            ),
            Judgement("deny", RM, f'"rm -rf build" matches {RM}'),
        ),
        "bash:git status\nrm -rf build",
    )


def test_a_parse_error_is_never_allowed_and_always_cannot_lift_it(root: Path) -> None:
    decision = make_policy(root, write_rules=lambda rules: None).check_command('ls "a')
    assert decision.verdict == "ask" and decision.rule.startswith("fallback: cannot read: ")
    assert decision.always == () and "cannot lift" in decision.no_always
    assert make_policy(root).check_command('rm -rf x "oops').verdict == "deny"


def test_user_rules_apply_to_shell_paths_and_redirects(root: Path) -> None:
    policy = make_policy(root, "deny Read(./secrets/**)", "ask Edit(src/**)", "allow bash: cd *")
    assert policy.check_command("cat secrets/db.txt").rule == "read: /secrets/** (user config)"
    assert policy.check_command("cat secrets/db.txt").verdict == "deny"
    assert policy.check_command("cd secrets && cat db.txt").verdict == "deny"  # cd is followed
    redirect = policy.check_command("ls > src/out.txt")
    assert (redirect.verdict, redirect.rule) == ("ask", "edit: src/** (user config)")
    assert policy.check_command("cd src && cat app.py").verdict == "allow"
    assert policy.check_command("cd /tmp && cat app.py").rule == OUTSIDE_RULE


def test_an_allow_rule_cannot_carve_an_exception_out_of_a_deny(root: Path) -> None:
    policy = make_policy(root, "allow Bash(rm -f build/*)")
    assert policy.check_command("rm -f build/x").verdict == "deny"
    assert make_policy(root, "allow bash: make *").check_command("make build").verdict == "allow"


def test_workspace_mode_ignores_allow_rules_other_than_the_built_in_ones(root: Path) -> None:
    policy = make_policy(root, "allow bash: make *", shell_mode="workspace", write_rules=lambda rules: None)
    decision = policy.check_command("make build")
    assert (decision.verdict, decision.rule) == ("ask", FALLBACK_RULE)
    assert decision.always == () and "workspace" in decision.no_always
    assert policy.check_command("git status").verdict == "allow"
    assert policy.check_command("rm x").verdict == "deny"


def test_session_approval_lifts_the_same_normalized_command_only(root: Path) -> None:
    policy = make_policy(root)
    policy.allow_for_session(policy.check_command("make  lint > out.txt"))
    again = policy.check_command("/usr/bin/make lint >out.txt")
    assert (again.verdict, again.rule) == ("allow", SESSION_RULE)
    assert policy.check_command("make lint > src/app.py").verdict == "ask"
    assert policy.check_command("make lint").verdict == "ask"
    assert make_policy(root).check_command("make lint > out.txt").verdict == "ask"


def test_session_approval_never_lifts_a_deny(root: Path) -> None:
    policy = make_policy(root)
    policy.allow_for_session(policy.check_command("rm -rf build"))
    assert policy.check_command("rm -rf build").verdict == "deny"


def test_always_is_offered_for_the_fallback_ask_only(root: Path) -> None:
    policy = make_policy(
        root, "ask Bash(git push --force*)", "ask bash: make deploy*", write_rules=lambda r: None
    )
    fallback = policy.check_command("make build && ls && make test")
    assert [rule.text for rule in fallback.always] == ["bash: make build", "bash: make test"]
    assert fallback.no_always == ""
    explicit = policy.check_command("make build && make deploy")
    assert explicit.always == ()
    assert explicit.no_always == (
        "an explicit rule asks (bash: make deploy* (user config)), "
        "and 'always' never lifts an ask or deny rule"
    )
    guarded = policy.check_command("ls > out.txt")
    assert guarded.always == () and guarded.no_always.startswith("an allow rule cannot lift this ask")
    assert policy.check_command("rm x").always == ()


def test_always_writes_exact_rules_that_lift_the_ask_from_now_on(root: Path, tmp_path: Path) -> None:
    user_file = tmp_path / "config" / "agent-ls.toml"
    policy = make_policy(root, write_rules=lambda rules: append_allow_rules(user_file, rules))
    decision = policy.check_command("make [x]")
    assert policy.allow_always(decision) is None
    assert user_file.read_text() == '[permissions]\nallow = ["bash: make [[]x]"]\n'
    assert policy.check_command("make [x]").verdict == "allow"
    assert policy.check_command("make x").verdict == "ask"
    explicit = make_policy(root, "ask bash: make *", write_rules=lambda rules: None)
    assert explicit.allow_always(explicit.check_command("make x")) is not None


def test_a_failed_write_is_reported_and_the_rule_still_holds_for_the_session(root: Path) -> None:
    def broken(rules: object) -> None:
        raise OSError("read-only file system")

    policy = make_policy(root, write_rules=broken)
    problem = policy.allow_always(policy.check_command("make x"))
    assert problem == "the user config could not be written: read-only file system"
    assert policy.check_command("make x").verdict == "allow"


def test_without_a_user_config_always_is_not_offered(root: Path) -> None:
    decision = make_policy(root).check_command("make x")
    assert (decision.always, decision.no_always) == ((), "the user config cannot be written")


def test_paths_the_workspace_resolved(root: Path) -> None:
    policy = make_policy(root, "deny Read(./secrets/**)", "ask Edit(docs/**)")
    assert policy.check_path("src/app.py", write=False).rule == "read: ** (built-in)"
    assert policy.check_path("src/app.py", write=True).rule == "edit: ** (built-in)"
    assert policy.check_path("secrets/db.txt", write=False).verdict == "deny"
    assert policy.check_path("docs/a.md", write=True).verdict == "ask"
    assert policy.check_path(".git/hooks/pre-commit", write=True).verdict == "deny"
    assert policy.check_path(".git/HEAD", write=False).verdict == "allow"
    assert policy.check_path(".", write=False).verdict == "allow"
    assert policy.check_path("docs/a.md", write=True).key == "edit:docs/a.md"


def test_access_by_a_path_as_given(root: Path) -> None:
    policy = make_policy(root)
    verdicts = {
        path: (policy.check_access(path, write).verdict, policy.check_access(path, write).rule)
        for path, write in [
            (".env", False),
            ("../outside.txt", False),
            ("src/app.py", True),
            ("link-out/x", False),
        ]
    }
    assert verdicts == {
        ".env": ("deny", SECRET_RULE),
        "../outside.txt": ("deny", OUTSIDE_RULE),
        "src/app.py": ("allow", "edit: ** (built-in)"),
        "link-out/x": ("deny", OUTSIDE_RULE),
    }


def test_mcp_tools(root: Path) -> None:
    policy = make_policy(root, "deny mcp__github", "allow mcp__docs__search")
    assert policy.check_tool("mcp__github__delete_repo").verdict == "deny"
    assert policy.check_tool("mcp__docs__search").rule == "mcp__docs__search (user config)"
    assert policy.check_tool("mcp__docs__write").rule == FALLBACK_RULE
    assert [r.text for r in make_policy(root, write_rules=print).check_tool("mcp__x__y").always] == [
        "mcp__x__y"
    ]


def test_rule_order_does_not_change_a_verdict(root: Path) -> None:
    rules = [
        Rule("bash", "git *", "allow", "user config"),
        Rule("bash", "git push --force*", "deny", "editor settings"),
        *BUILTIN_RULES,
    ]
    paths = PathPolicy(root)
    for ordered in (rules, rules[::-1]):
        policy = PermissionPolicy(paths, ordered)
        assert policy.check_command("git push --force").verdict == "deny"
        assert policy.check_command("git log").verdict == "allow"
        assert policy.check_command("git log && git push origin").verdict == "deny"


def test_unknown_cwd_after_cd(root: Path) -> None:
    policy = make_policy(root, "allow bash: cd *")
    decision = policy.check_command("cd $D && cat ./x")
    assert decision.judgements[1] == Judgement(
        "ask", UNKNOWN_CWD_RULE, "./x: the directory after cd is not known"
    )
    assert policy.check_command("cd - && cat a/b").rule == UNKNOWN_CWD_RULE
    assert policy.check_command("cd src && ls > out.txt").rule == REDIRECT_RULE


def test_globs_match_dotfiles_like_dotglob(tmp_path: Path) -> None:
    """bash's ``*`` skips ``.env`` unless ``shopt -s dotglob`` or ``GLOBIGNORE`` is set; the engine
    expands as if it were, so ``cat *`` never reads a secret unchecked."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("notes\n")
    policy = PermissionPolicy(PathPolicy(ws, home=tmp_path / "home"))
    assert policy.check_command("cat *").verdict == "allow"
    (ws / ".env").write_text("API_KEY=sk-live\n")
    verdicts = {
        c: (d.verdict, d.rule)
        for c in ("cat *", "cat ?env", "grep -r x *")
        for d in [policy.check_command(c)]
    }
    assert verdicts == {
        "cat *": ("deny", SECRET_RULE),
        "cat ?env": ("deny", SECRET_RULE),
        "grep -r x *": ("deny", SECRET_RULE),
    }


def test_a_dot_glob_may_match_the_parent_directory(tmp_path: Path) -> None:
    """bash before 5.2 (no ``globskipdots``) expands ``.*`` to ``.`` and ``..`` too."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".editorconfig").write_text("root = true\n")
    policy = PermissionPolicy(PathPolicy(ws, home=tmp_path / "home"))
    assert (policy.check_command("ls -d .*").verdict, policy.check_command("ls -d .*").rule) == (
        "ask",
        OUTSIDE_RULE,
    )
    assert policy.check_command("ls -d .e*").verdict == "allow"


def test_a_glob_too_large_to_check_asks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "many").mkdir(parents=True)
    for i in range(1001):
        (ws / "many" / f"f{i}.txt").touch()
    policy = PermissionPolicy(PathPolicy(ws, home=tmp_path / "home"))
    decision = policy.check_command("cat many/*")
    assert (decision.verdict, decision.rule) == ("ask", GLOB_RULE)
    assert policy.check_command("cat many/f1*").verdict == "allow"  # 112 matches


def test_a_glob_after_cd_to_an_unknown_place_asks(root: Path) -> None:
    policy = make_policy(root, "allow bash: cd *")
    decision = policy.check_command("cd ~/x && cat *")
    assert decision.judgements[1] == Judgement(
        "ask", UNKNOWN_CWD_RULE, "*: the directory after cd is not known"
    )


def test_workspace_mode_keeps_only_the_read_only_built_in_allows(root: Path) -> None:
    """In the real tree pytest runs the project's code and writes where it is told
    (``--junitxml=src/app.py`` overwrote a file): it asks, and "always" is not offered."""
    policy = make_policy(root, shell_mode="workspace", write_rules=lambda rules: None)
    verdicts = {
        command: policy.check_command(command).verdict
        for command in (
            "ls -la",
            "cat notes.txt",
            "grep -n x src/app.py",
            "git status",
            "git diff HEAD~1",
            "pytest -q",
            "pytest --junitxml=src/app.py src",
        )
    }
    assert verdicts == {
        "ls -la": "allow",
        "cat notes.txt": "allow",
        "grep -n x src/app.py": "allow",
        "git status": "allow",
        "git diff HEAD~1": "allow",
        "pytest -q": "ask",
        "pytest --junitxml=src/app.py src": "ask",
    }
    asked = policy.check_command("pytest -q")
    assert (asked.rule, asked.always) == (FALLBACK_RULE, ())
    assert make_policy(root).check_command("pytest -q").verdict == "allow"  # shadow mode


def test_session_approval_keeps_word_boundaries(root: Path) -> None:
    """Finding 8: the key was the argv joined by spaces, so a quoted word matched its unquoted split."""
    policy = make_policy(root)
    quoted = policy.check_command('find . -name "*.tmp -delete"')
    assert quoted.key == "bash:find . -name '*.tmp -delete'"
    policy.allow_for_session(quoted)
    assert policy.check_command('find . -name "*.tmp -delete"').rule == SESSION_RULE
    split = policy.check_command("find . -name *.tmp -delete")
    assert (split.verdict, split.rule) == ("ask", FALLBACK_RULE)
    policy.allow_for_session(policy.check_command('echo "hi >notes.txt"'))
    redirect = policy.check_command("echo hi >notes.txt")
    assert (redirect.verdict, redirect.rule) == ("ask", REDIRECT_RULE)
    assert redirect.key == "bash:echo hi >notes.txt"


@pytest.mark.parametrize(
    ("approved", "other"),
    [
        ("python3 <<EOF\nprint(1)\nEOF", "python3 <<EOF\nimport os\nEOF"),  # a heredoc's text
        ("python3 <<< 'print(1)'", "python3 <<< 'import os'"),
        ("make lint", "./make lint"),  # a workspace script named make (risky)
        ("make lint", "FOO=1 make lint"),  # a prefix assignment is not in argv
        ("cat '$F'", "cat $F"),  # a literal dollar and an expansion have the same argv
        ("ls > $A", "ls > $B"),  # targets known only when run
        ("python3 '<<EOF'; 'print(1)'; EOF", "python3 <<EOF\nprint(1)\nEOF"),
    ],
)
def test_session_approval_never_lifts_what_its_key_cannot_show(root: Path, approved: str, other: str) -> None:
    policy = make_policy(root)
    policy.allow_for_session(policy.check_command(approved))
    assert policy.check_command(approved).verdict == "allow"
    assert policy.check_command(other).verdict == "ask"


def test_always_rules_are_exact_for_the_quoted_argv(root: Path, tmp_path: Path) -> None:
    user_file = tmp_path / "config" / "agent-ls.toml"
    policy = make_policy(root, write_rules=lambda rules: append_allow_rules(user_file, rules))
    decision = policy.check_command('find . -name "*.tmp -delete"')
    assert [rule.text for rule in decision.always] == ["bash: find . -name '[*].tmp -delete'"]
    assert policy.allow_always(decision) is None
    assert user_file.read_text() == """[permissions]\nallow = ["bash: find . -name '[*].tmp -delete'"]\n"""
    fresh = make_policy(root, "allow bash: find . -name '[*].tmp -delete'")
    for checked in (policy, fresh):
        assert checked.check_command("find . -name '*.tmp -delete'").verdict == "allow"
        assert checked.check_command("find . -name *.tmp -delete").verdict == "ask"
        assert checked.check_command('find . -name "\'*.tmp" "-delete\'"').verdict == "ask"


def test_bash_allow_rules_see_quoted_words_deny_rules_both_forms(root: Path) -> None:
    policy = make_policy(
        root, "allow bash: echo hello world", "allow bash: printf *", "deny bash: find * -delete*"
    )
    assert policy.check_command("echo hello world").verdict == "allow"
    assert policy.check_command('echo "hello world"').verdict == "ask"
    assert policy.check_command('printf "%s\\n" "a b"').verdict == "allow"
    assert policy.check_command('find . -name "x -delete"').verdict == "deny"
    assert policy.check_command("ls *.txt").verdict == "allow"  # a glob word is not quoted


def test_an_absolute_path_into_the_real_workspace_asks(root: Path) -> None:
    """Commands run in a copy; only the sandbox hides the real tree (found by an adversarial review)."""
    policy = make_policy(root)
    decided = policy.check_command(f"grep -R TODO {root}")
    assert (decided.verdict, decided.rule) == (
        "ask",
        "paths: absolute path into the real workspace (use a relative path)",
    )
    assert policy.check_command("grep -R TODO .").verdict == "allow"


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        # Found by the second adversarial review.
        ("env -C /proc/self cat environ", "ask"),
        ("env --chdir=.git cat config", "ask"),
        ("git statusx", "ask"),  # an alias or a git-statusx program, not git status
        ("git diffall", "ask"),
        ("lsof", "ask"),  # corpus sh86's hazard: ls* allows ls as a whole word only
        ("pytest-benchmark compare --csv=out", "ask"),
        ("cat prod.env", "deny"),  # a secret's name, whether or not the file exists yet
        ("cat ID_RSA", "deny"),
        ("cat server.pem", "deny"),
        ("grep -r url .git/", "ask"),
        ("grep -r url . --include=.env", "deny"),  # grep reads the files --include names
        # Still allowed.
        ("grep -r url . --exclude-dir=.git --exclude=.env", "allow"),  # names grep skips, never opens
        ("ls", "allow"),
        ("ls -la", "allow"),
        ("pytest -q", "allow"),
        ("git status", "allow"),
        ("git diff --stat", "allow"),
        ("git diff-tree HEAD", "ask"),  # plumbing: git diff* allows `git diff` as a whole word
    ],
)
def test_second_review_cases(root: Path, command: str, verdict: Verdict) -> None:
    assert make_policy(root).check_command(command).verdict == verdict
