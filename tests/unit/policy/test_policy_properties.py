"""Property tests: however allowed and denied commands are composed, the result is never "allow".

Hypothesis builds commands from the seed policy's allowed commands (``ls``, ``cat notes.txt``, ``git
status``...) and denied ones (``rm``, ``sudo``, ``curl``, ``wget``, ``git push``), wraps the denied
ones in transparent wrappers, ``VAR=x`` prefixes, nested shells, substitutions, subshells, brace
groups and ``find -exec``, any number of times, and joins everything with every command separator.
Also: a secret attached to any cluster of short options is never allowed, and the quoted form that
approvals and allow rules see (``quoted_command``) gives each argv back.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agent_ls.policy.engine import PermissionPolicy
from agent_ls.policy.rules import quoted_command
from agent_ls.workspace.paths import PathPolicy

ALLOWED = [
    "ls",
    "ls -la src",
    "cat notes.txt",
    "grep -n x src/app.py",
    "git status",
    "git diff --stat",
    "pytest -q",
]
DENIED = [
    "rm -rf build",
    "rm x",
    "sudo reboot",
    "curl https://example.com/x",
    "wget -q https://example.com/x",
    "git push origin main",
    "git push --force",
]
SEPARATORS = ["; ", " && ", " || ", " | ", " |& ", " & ", "\n"]

# Each wrapper runs its argument; the ones marked simple take one simple command, not a list.
Wrapper = Callable[[str], str]
WRAPPERS: list[tuple[Wrapper, bool]] = [
    (lambda c: f"env {c}", True),
    (lambda c: f"env -i PATH=/bin {c}", True),
    (lambda c: f"timeout 5 {c}", True),
    (lambda c: f"timeout -s KILL 5 {c}", True),
    (lambda c: f"nice -n 1 {c}", True),
    (lambda c: f"nohup {c}", True),
    (lambda c: f"command {c}", True),
    (lambda c: f"builtin {c}", True),
    (lambda c: f"exec {c}", True),
    (lambda c: f"time {c}", True),
    (lambda c: f"stdbuf -oL {c}", True),
    (lambda c: f"FOO=x {c}", True),
    (lambda c: f"A=1 B='two words' {c}", True),
    (lambda c: f"echo . | xargs {c}", True),
    (lambda c: f"find . -exec {c} \\;", True),
    (lambda c: f"find . -execdir {c} {{}} +", True),
    (lambda c: f"bash -c {shlex.quote(c)}", False),
    (lambda c: f"sh -c {shlex.quote(c)}", False),
    (lambda c: f"eval {shlex.quote(c)}", False),
    (lambda c: f"echo $({c})", False),
    (lambda c: f'echo "$({c})"', False),
    (lambda c: f"( {c} )", False),
    (lambda c: f"{{ {c}; }}", False),
    (lambda c: f"if true; then {c}; fi", False),
    (lambda c: f"for i in 1; do {c}; done", False),
    (lambda c: f"cat <({c})", False),
]
BACKTICK: Wrapper = lambda c: f"ls `{c}`"  # noqa: E731 (backticks do not nest unescaped)


@st.composite
def wrapped_denied(draw: st.DrawFn) -> str:
    """A denied command inside 0 to 4 wrappers; simple-only wrappers only around a simple command."""
    command = draw(st.sampled_from(DENIED))
    simple = True
    for _ in range(draw(st.integers(0, 4))):
        wrapper, needs_simple = draw(st.sampled_from([w for w in WRAPPERS if simple or not w[1]]))
        command = wrapper(command)
        simple = simple and needs_simple and not command.startswith("echo . |")
    if "`" not in command and draw(st.booleans()):
        command = BACKTICK(command)
    return command


@st.composite
def composed(draw: st.DrawFn) -> str:
    """Allowed commands and at least one wrapped denied command, joined by any separators."""
    pieces = draw(st.lists(st.sampled_from(ALLOWED), max_size=4))
    pieces.insert(draw(st.integers(0, len(pieces))), draw(wrapped_denied()))
    text = pieces[0]
    for piece in pieces[1:]:
        text += draw(st.sampled_from(SEPARATORS)) + piece
    return text


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> PermissionPolicy:
    root = tmp_path_factory.mktemp("ws")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\n")
    (root / "notes.txt").write_text("notes\n")
    (root / ".env").write_text("API_KEY=sk-live\n")
    (root / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (root / "keys").mkdir()
    (root / "keys" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    return PermissionPolicy(PathPolicy(root, home=Path("/home/property-user")))


@settings(max_examples=400, deadline=None)
@given(command=composed())
@example(command="ls | ls | ls\nrm -rf build && ls")  # tree-sitter-bash read `ls rm -rf build`
def test_a_denied_command_is_never_allowed_however_composed(policy: PermissionPolicy, command: str) -> None:
    assert policy.check_command(command).verdict != "allow", command


@settings(max_examples=200, deadline=None)
@given(command=wrapped_denied())
def test_a_wrapped_denied_command_is_never_allowed(policy: PermissionPolicy, command: str) -> None:
    assert policy.check_command(command).verdict != "allow", command


@settings(max_examples=100, deadline=None)
@given(pieces=st.lists(st.sampled_from(ALLOWED), min_size=1, max_size=5), data=st.data())
def test_allowed_commands_joined_by_separators_stay_allowed(
    policy: PermissionPolicy, pieces: list[str], data: st.DataObject
) -> None:
    """The other side: the engine is not simply strict. ``&`` and newlines included."""
    text = pieces[0]
    for piece in pieces[1:]:
        text += data.draw(st.sampled_from(SEPARATORS)) + piece
    assert policy.check_command(text).verdict == "allow", text


def test_lines_after_a_pipeline_of_three_are_judged_as_bash_runs_them(policy: PermissionPolicy) -> None:
    # tree-sitter-bash joins the next line onto the pipeline's last command; the parser puts back the
    # command end bash reads there, so an allowed line stays allowed and a denied one is still seen.
    assert policy.check_command("ls | ls | ls\nls && ls").verdict == "allow"
    assert policy.check_command("ls | ls | ls\nrm -rf build && ls").verdict != "allow"


SECRETS = [".env", "./.env", "/proc/self/environ", "/root/.ssh/id_rsa", "id_ed25519", "keys/server.pem"]


@settings(max_examples=200, deadline=None)
@given(
    command=st.sampled_from(["grep", "git diff", "cat", "ls"]),
    cluster=st.text(alphabet="rnivlcHhfeOA", max_size=4),
    secret=st.sampled_from(SECRETS),
    spaced=st.booleans(),
)
def test_a_secret_attached_to_short_options_is_never_allowed(
    policy: PermissionPolicy, command: str, cluster: str, secret: str, spaced: bool
) -> None:
    option = f"-{cluster}f" + (" " if spaced else "")
    text = f"{command} {option}{shlex.quote(secret)} notes.txt"
    assert policy.check_command(text).verdict != "allow", text


@settings(max_examples=300, deadline=None)
@given(argv=st.lists(st.text(st.characters(blacklist_characters="\x00"), max_size=8), min_size=1, max_size=5))
def test_the_quoted_form_gives_the_argv_back(argv: list[str]) -> None:
    """So an approval or an exact rule for one argv never matches another."""
    assert shlex.split(quoted_command(argv)) == argv
