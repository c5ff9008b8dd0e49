"""A deny rule is never lifted by a program put in front of the command (issue 11 item 5).

Every exec wrapper the parser reads (``shell_wrappers.WRAPPERS``) has a form here, and a test fails
when one is added without it. The property: every deny rule, built-in or user-style, behind any
nesting of those wrappers, stays deny. Then the wrapper's own form (``sudo *`` still denies, a user's
``nice *`` ask still asks, an allow on the wrapper does not widen), and the safety net for programs
we do not know.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.core.events import Verdict
from agent_ls.policy.engine import PermissionPolicy
from agent_ls.policy.rules import BUILTIN_RULES, FALLBACK_RULE, parse_rule
from agent_ls.policy.shell_parse import parse_shell
from agent_ls.policy.shell_wrappers import WRAPPERS
from agent_ls.policy.wrapped_rules import HIDDEN_RULE, MAX_PARSES
from agent_ls.policy.wrapper_grammar import LATER
from agent_ls.workspace.paths import PathPolicy

Wrap = Callable[[str], str]


def _q(command: str) -> str:
    return shlex.quote(command)


def _heredoc(prefix: str) -> Wrap:
    return lambda c: f"{prefix} <<'H{len(c)}'\n{c}\nH{len(c)}\n"


# env -S splits a string into words (no shell syntax), and xargs gives its command another standard
# input: they wrap commands without a heredoc.
ENV_S: list[Wrap] = [lambda c: f"env -S {_q(c)}", lambda c: f"env -S {_q(c)} --"]
XARGS: Wrap = lambda c: f"xargs -0 -n1 {c}"  # noqa: E731
WRAPS: list[Wrap] = [
    lambda c: f"command {c}",
    lambda c: f"builtin {c}",
    lambda c: f"exec {c}",
    lambda c: f"coproc {c}",
    lambda c: f"time -p {c}",
    lambda c: f"nice -n 5 {c}",
    lambda c: f"nice -5 {c}",
    lambda c: f"nohup {c}",
    lambda c: f"timeout -s KILL 5 {c}",
    lambda c: f"timeout --sig=KILL --kill-after 9 5 {c}",  # an abbreviated long option
    lambda c: f"stdbuf -oL -e0 {c}",
    lambda c: f"env -i PATH=/bin {c}",
    *ENV_S,
    XARGS,
    lambda c: f"chroot --skip-chdir / {c}",
    lambda c: f"runcon -t unconfined_t {c}",
    lambda c: f"runcon system_u:system_r:unconfined_t {c}",
    lambda c: f"setsid -f {c}",
    lambda c: f"setsid --wait {c}",
    lambda c: f"taskset -c 0 {c}",
    lambda c: f"taskset 0x1 {c}",
    lambda c: f"ionice -c 3 {c}",
    lambda c: f"chrt -b 0 {c}",
    lambda c: f"flock /tmp/lock {c}",
    lambda c: f"flock -w 5 /tmp/lock -c {_q(c)}",
    lambda c: f"unshare -r --fork {c}",
    lambda c: f"nsenter -t 1 -m -u {c}",
    lambda c: f"setpriv --no-new-privs --reuid=1000 {c}",
    lambda c: f"script -qec {_q(c)} /dev/null",
    lambda c: f"runuser -u bob -- {c}",
    lambda c: f"runuser bob -c {_q(c)}",
    lambda c: f"su -c {_q(c)} root",
    lambda c: f"su - root -c {_q(c)}",
    lambda c: f"prlimit --nofile=64 {c}",
    lambda c: f"choom -n 100 {c}",
    lambda c: f"uclampset -m 10 {c}",
    lambda c: f"setarch x86_64 -R {c}",
    lambda c: f"linux32 {c}",
    lambda c: f"linux64 --addr-no-randomize {c}",
    lambda c: f"i386 {c}",
    lambda c: f"x86_64 {c}",
    lambda c: f"uname26 {c}",
    lambda c: f"sg wheel {_q(c)}",
    lambda c: f"sg wheel -c {_q(c)}",
    _heredoc("newgrp wheel"),
    lambda c: f"sudo -u bob {c}",
    lambda c: f"sudo -E FOO=1 {c}",
    lambda c: f"doas -u bob {c}",
    lambda c: f"pkexec --user bob {c}",
    lambda c: f"busybox {c}",
    lambda c: f"toybox {c}",
    lambda c: f"strace -f -o /dev/null {c}",
    lambda c: f"strace -o {_q('|' + c)} true",
    lambda c: f"ltrace -f {c}",
    lambda c: f"gdb -q -batch -ex run --args {c}",
    lambda c: f"gdb -batch -ex {_q('shell ' + c)}",
    lambda c: f"valgrind -q --tool=none {c}",
    lambda c: f"perf stat -e cycles {c}",
    lambda c: f"perf record -g -o /dev/null {c}",
    lambda c: f"catchsegv {c}",
    lambda c: f"heaptrack {c}",
    _heredoc("at now"),
    _heredoc("batch"),
    lambda c: f"parallel {_q(c)} ::: x",
    lambda c: f"parallel -j2 ::: {_q(c)} true",
    lambda c: f"systemd-run --user --wait -p Nice=5 {c}",
    lambda c: f"dbus-run-session -- {c}",
    lambda c: f"ssh-agent {c}",
    lambda c: f"fakeroot -- {c}",
    lambda c: f"firejail --quiet --noprofile {c}",
    lambda c: f"npx -c {_q(c)}",
    lambda c: f"npm exec --call={_q(c)}",
    lambda c: f"nix-shell --run {_q(c)}",
]


def test_every_wrapper_has_a_form_here() -> None:
    """A wrapper added to the parser without a form in ``WRAPS`` fails here."""
    used = {wrap("x").split()[0] for wrap in WRAPS}
    assert (WRAPPERS - used, used - WRAPPERS) == (set(), set())


USER_DENY = ["Bash(npm publish:*)", "bash: docker run*", "Bash(terraform apply:*)", "bash: kubectl delete *"]
DENIED = [
    "rm -rf build",
    "rm x",
    "sudo reboot",
    "curl https://example.com/x",
    "wget -q https://example.com/x",
    "git push origin main",
    "git -C . push --force",
    "npm publish",
    "docker run --rm alpine",
    "terraform apply -auto-approve",
    "kubectl delete pod x",
]


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> PermissionPolicy:
    root = tmp_path_factory.mktemp("ws")
    (root / "notes.txt").write_text("notes\n")
    user = [parse_rule(text, "deny", "user config") for text in USER_DENY]
    return PermissionPolicy(PathPolicy(root, home=Path("/home/property-user")), (*BUILTIN_RULES, *user))


@pytest.mark.parametrize("wrap", WRAPS, ids=[wrap("CMD").split()[0] + str(i) for i, wrap in enumerate(WRAPS)])
@pytest.mark.parametrize("command", DENIED)
def test_every_deny_rule_behind_every_wrapper_stays_deny(
    policy: PermissionPolicy, wrap: Wrap, command: str
) -> None:
    wrapped = wrap(command)
    assert policy.check_command(wrapped).verdict == "deny", wrapped


@settings(max_examples=400, deadline=None)
@given(command=st.sampled_from(DENIED), wraps=st.lists(st.sampled_from(WRAPS), min_size=2, max_size=4))
def test_nested_wrappers_never_lift_a_deny(policy: PermissionPolicy, command: str, wraps: list[Wrap]) -> None:
    for wrap in wraps:
        if "\n" not in command or (wrap is not XARGS and wrap not in ENV_S):
            command = wrap(command)
    assert policy.check_command(command).verdict == "deny", command


@pytest.mark.parametrize(
    ("command", "argv", "risky"),
    [
        ("setsid rm -rf build", ("rm", "-rf", "build"), None),
        ("busybox wget -q x", ("wget", "-q", "x"), None),
        ("timeout --sig=KILL 5 ls", ("ls",), None),
        ("nice -n 5 ionice -c3 taskset 0x1 chrt 5 ls", ("ls",), None),
        ("env -S 'ls -la' src", ("ls", "-la", "src"), None),
        ("env -S 'ls\\_-la #c'", ("ls -la",), None),
        ("flock /tmp/l -c 'ls -a'", ("ls", "-a"), "flock creates its lock file /tmp/l"),
        ("su root -c 'ls'", ("ls",), "runs the command as another user"),
        ("sudo -u bob ls", ("ls",), "runs the command as another user"),
        ("unshare -r ls", ("ls",), "runs the command in other namespaces or another root directory"),
        ("at now <<'EOF'\nls\nEOF", ("ls",), LATER),
        ("script -qc ls /dev/null", ("ls",), "script writes a typescript file"),
    ],
)  # fmt: skip
def test_wrappers_are_unwrapped(command: str, argv: tuple[str, ...], risky: str | None) -> None:
    parsed = parse_shell(command)
    assert parsed.error is None
    assert [(c.argv, c.risky) for c in parsed.commands] == [(argv, risky)]


@pytest.mark.parametrize(
    "command",
    [
        "command -v rm",
        "taskset -p 1",
        "sudo -l",
        "busybox --list",
        "chrt -m",
        "perf list",
        "doas -C /etc/doas.conf",
    ],
)
def test_a_wrapper_that_runs_nothing_is_judged_as_written(command: str) -> None:
    (simple,) = parse_shell(command).commands
    assert simple.argv == tuple(command.split())


def test_a_wrapper_option_not_documented_cannot_be_read() -> None:
    parsed = parse_shell("setsid --bogus rm -rf build")
    assert parsed.error == "unknown option of setsid: --bogus"


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ("timeout 5 ls", "allow"),
        ("setsid -f ls -la", "allow"),
        ("busybox ls", "allow"),
        ("doas ls", "ask"),  # another user: never auto-allowed
        ("unshare -r cat notes.txt", "ask"),
        ("sudo ls", "deny"),  # the wrapper's own form meets sudo *
    ],
)
def test_allowed_commands_behind_wrappers(policy: PermissionPolicy, command: str, verdict: Verdict) -> None:
    assert policy.check_command(command).verdict == verdict


def _with(root: Path, *rules: str) -> PermissionPolicy:
    parsed = [
        parse_rule(
            text.split(" ", 1)[1],
            "deny" if text.startswith("deny") else "ask" if text.startswith("ask") else "allow",
            "user config",
        )
        for text in rules
    ]
    return PermissionPolicy(PathPolicy(root, home=root / "home"), (*BUILTIN_RULES, *parsed))


def test_rules_on_the_wrapper_itself_still_apply(tmp_path: Path) -> None:
    policy = _with(tmp_path, "deny Bash(nice:*)", "ask Bash(timeout:*)", "allow Bash(setsid:*)")
    denied = policy.check_command("nice -n 1 ls")
    assert (denied.verdict, denied.rule) == ("deny", "bash: nice * (user config)")
    asked = policy.check_command("timeout 5 ls")
    assert (asked.verdict, asked.rule) == ("ask", "bash: timeout * (user config)")
    # An allow rule matches the command itself only: allowing the wrapper allows nothing it runs.
    widened = policy.check_command("setsid make")
    assert (widened.verdict, widened.rule) == ("ask", FALLBACK_RULE)


@pytest.mark.parametrize(
    "command",
    [
        "mywrapper --flag rm -rf build",
        "uv run curl https://example.com",
        "poetry run wget x",
        "ssh host git push origin main",
        "$RUNNER rm -rf build",
        "./run.sh /bin/rm -rf build",
        "mytool bash -c 'echo hi; rm -rf build'",
        "mytool timeout 5 env X=1 rm x",
        "mytool git -C . push",
        "git bisect run rm -rf build",
        "git submodule foreach rm -rf build",
        "RM -rf build",
    ],
)
def test_the_safety_net_denies_a_denied_command_behind_an_unknown_program(
    policy: PermissionPolicy, command: str
) -> None:
    assert policy.check_command(command).verdict == "deny", command


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ("echo rm -rf build", "ask"),  # echo runs none of its arguments
        ("grep -rn curl notes.txt", "allow"),
        ("git grep curl", "ask"),
        ("git log --grep rm", "ask"),
        ("pytest -k rm", "allow"),
        ("command -v rm", "ask"),
        ("mytool --message 'rm old files'", "ask"),  # one word with blanks is not a command word
    ],
)
def test_the_safety_net_leaves_data_alone(policy: PermissionPolicy, command: str, verdict: Verdict) -> None:
    assert policy.check_command(command).verdict == verdict


def test_too_many_words_to_look_through_asks(policy: PermissionPolicy) -> None:
    decision = policy.check_command("mytool " + " ".join(["sh"] * (MAX_PARSES + 1)))
    assert (decision.verdict, decision.rule) == ("ask", HIDDEN_RULE)
