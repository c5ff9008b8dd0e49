"""Words are decoded as bash decodes them before every check (issue 11 item 4).

Tables for each form (ANSI-C escapes, locale quoting, adjacent pieces, heredoc delimiters), real bash
as the oracle for ``ansi_c`` (property test), and the policy property: any mix of quoting forms that
bash decodes to a denied or secret word gets the plain word's verdict, wherever the word stands
(argument, option value, redirect target, command word, ``cd`` target, git pathspec). A word that
cannot be decoded statically asks.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.policy.engine import PermissionPolicy
from agent_ls.policy.operand_checks import DYNAMIC_ARGUMENT_RULE
from agent_ls.policy.rules import BUILTIN_RULES, parse_rule
from agent_ls.policy.shell_parse import parse_shell
from agent_ls.policy.shell_words import ansi_c, heredoc_delimiter
from agent_ls.workspace.paths import PathPolicy
from tests.conftest import require_tool


@pytest.mark.parametrize(
    ("body", "value"),
    [
        (".e\\x6ev", ".env"),
        ("\\x2e\\x65\\x6E\\x76", ".env"),  # upper- and lower-case hex digits
        ("\\056env", ".env"),  # octal
        ("\\0101", "\x081"),  # at most three octal digits: \010 then "1"
        ("\\777", None),  # 0o777 & 0xff = 0xff: not UTF-8
        ("\\u002eenv", ".env"),
        ("\\U0000002eenv", ".env"),
        ("\\x41\\x4", "A\x04"),
        ("\\a\\b\\e\\E\\f\\n\\r\\t\\v\\\\\\'\\\"\\?", "\a\b\x1b\x1b\f\n\r\t\v\\'\"?"),
        ("\\ca\\cA\\c?\\c[\\c\\\\", "\x01\x01\x7f\x1b\x1c"),
        ("\\z\\x\\xg\\u\\U", "\\z\\x\\xg\\u\\U"),  # unknown escapes and escapes without digits stay
        ("a\\c", "a\\c"),  # \c at the end stays
        ("ab\\x00cd", "ab"),  # the value ends at NUL
        ("\\0", ""),
        ("\\xc3\\xa9", "é"),  # bytes that make UTF-8
        ("é", "é"),
        ("\\u00e9", None),  # the locale's encoding, or "\u00E9" text in the C locale
        ("\\x{41}", None),  # bash 5.3 reads \x{...}; 5.2 does not
        ("\\cé", None),
        ("\\xff", None),  # not UTF-8
    ],
)
def test_ansi_c_escapes(body: str, value: str | None) -> None:
    assert ansi_c(body) == value


_ESCAPES = [
    "a", ".", "e", "\\n", "\\t", "\\\\", "\\'", '\\"', "\\?", "\\x2e", "\\x4", "\\x6E", "\\x", "\\xg",
    "\\056", "\\0", "\\1", "\\12", "\\u41", "\\u004", "\\U00000041", "\\U7f", "\\u", "\\ca", "\\c?", "\\c[",
    "\\c\\\\", "\\cz", "\\z", "\\E", "\\e", "\\v", "\\r", "1", "7", "f", "x", "c", "\\u0", "\\x00",
]  # fmt: skip


def _bash_value(word: str) -> bytes:
    bash = require_tool("bash")
    done = subprocess.run(
        [bash, "-c", f"printf '%s\\0' {word}"],
        capture_output=True,
        check=True,
        timeout=10,
        env={"LANG": "C.UTF-8"},
    )
    return done.stdout.removesuffix(b"\0")


@settings(max_examples=150, deadline=None)
@given(body=st.lists(st.sampled_from(_ESCAPES), max_size=6).map("".join))
def test_ansi_c_matches_real_bash(body: str) -> None:
    """Whenever ``ansi_c`` gives a value, bash 5 gives the same bytes."""
    value = ansi_c(body)
    if value is not None:
        assert _bash_value(f"$'{body}'") == value.encode("utf-8"), body


@pytest.mark.parametrize(
    ("text", "argv"),
    [
        ("cat $'.env'", ("cat", ".env")),
        ('cat $".env"', ("cat", ".env")),  # locale quoting: no catalog translates it
        ("cat '.e'\"nv\"", ("cat", ".env")),
        ("cat .e\\nv", ("cat", ".env")),
        ("c''at .env", ("cat", ".env")),
        ("cat $'.e'$\"n\"v", ("cat", ".env")),
        ('cat $"a"$"b"', ("cat", "ab")),
        ("cat x$ $", ("cat", "x$", "$")),  # a lone `$` is itself
        ("cat --file=$'.env'", ("cat", "--file=.env")),
        ("$'\\x72m' -rf build", ("rm", "-rf", "build")),
        ('$"rm" x', ("rm", "x")),
        ("git diff $'HEAD:.env'", ("git", "diff", "HEAD:.env")),
        ("eval $'rm -rf build'", ("rm", "-rf", "build")),
    ],
)
def test_decoded_words(text: str, argv: tuple[str, ...]) -> None:
    parsed = parse_shell(text)
    assert parsed.error is None
    assert [c.argv for c in parsed.commands] == [argv]
    assert parsed.commands[0].undecoded == ()


def test_redirect_targets_are_decoded() -> None:
    (command,) = parse_shell("cat < $'.e\\x6ev' > \"o\"$'u'\\t").commands
    assert [r.target for r in command.redirects] == [".env", "out"]


@pytest.mark.parametrize(
    ("text", "undecoded"),
    [
        ("cat $F", (1,)),
        ('cat a "$(ls)" b', (2,)),
        ("cat <(ls) x", (1,)),
        ("cat $'\\u00e9' $'\\x{41}'", (1, 2)),
        ('cat $"$x"', (1,)),
        ("export $X", (1,)),
    ],
)
def test_words_that_cannot_be_decoded_are_marked(text: str, undecoded: tuple[int, ...]) -> None:
    assert parse_shell(text).commands[0].undecoded == undecoded


@pytest.mark.parametrize(
    ("written", "delimiter"),
    [
        ("EOF", "EOF"),
        ("'EOF'", "EOF"),
        ('E"O"F', "EOF"),
        ("\\EOF", "EOF"),
        ("E\\OF", "EOF"),
        ("$'E\\x4fF'", "EOF"),
        ('$"EOF"', "EOF"),
        ("EO$x", "EO$x"),  # no expansion in a delimiter
        ("'EOF", None),
    ],
)
def test_heredoc_delimiters(written: str, delimiter: str | None) -> None:
    assert heredoc_delimiter(written) == delimiter


def test_a_heredoc_the_grammar_ends_elsewhere_than_bash_cannot_be_read() -> None:
    """tree-sitter-bash ends ``<<E"O"F`` at a line ``E"O"F``; bash ends it at ``EOF`` and then runs the
    ``rm`` line, which the grammar took for text."""
    parsed = parse_shell('cat <<E"O"F\nx\nEOF\nrm -rf build\nE"O"F\n')
    assert parsed.error is not None and "heredoc delimiter" in parsed.error
    assert parse_shell("cat <<'EOF'\nx\nEOF\nls").error is None
    assert parse_shell("cat <<-\\EOF\n\tx\n\tEOF\nls").error is None


# -- the policy: a decoded word gets the plain word's verdict ---------------------------------------


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> PermissionPolicy:
    root = tmp_path_factory.mktemp("ws")
    (root / "src").mkdir()
    (root / "notes.txt").write_text("notes\n")
    (root / ".env").write_text("API_KEY=sk-live\n")
    (root / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (root / "keys").mkdir()
    (root / "keys" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    user = [
        parse_rule("Bash(git push:*)", "deny", "user config"),
        parse_rule("Read(./src/**)", "deny", "user config"),
    ]
    return PermissionPolicy(PathPolicy(root, home=Path("/home/property-user")), (*BUILTIN_RULES, *user))


_PLAIN = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/+:@%,")


@st.composite
def spelled(draw: st.DrawFn, word: str) -> str:
    """``word`` written as a random mix of the quoting forms bash decodes to it, pieces side by side."""
    out: list[str] = []
    for char in word:
        forms = [
            '"' + ("\\" + char if char in '$`"\\' else char) + '"',
            "\\" + char,
            f"$'\\x{ord(char):02x}'",
            f"$'\\x{ord(char):02X}'",
            f"$'\\{ord(char):03o}'",
            f"$'\\u{ord(char):04x}'",
            f"$'\\U{ord(char):08X}'",
            f"$'{char}'" if char not in "'\\" else f"$'\\{char}'",
            f'$"{char}"' if char not in '$`"\\' else f'$"\\{char}"',
        ]
        if char != "'":
            forms.append(f"'{char}'")
        if char in _PLAIN:
            forms.append(char)
        out.append(draw(st.sampled_from(forms)))
    return "".join(out)


_SECRETS = [".env", "./.env", "id_ed25519", "keys/server.pem", "/proc/self/environ", "src/app.py"]
_WHERE = [
    "cat {}",
    "grep -n x notes.txt {}",
    "grep --file={} notes.txt",
    "cat < {}",
    "ls > {}",
    "git diff HEAD:{}",
    "cd src && cat ../{}",
]
_DENIED = [
    ("rm", "{} -rf build"),
    ("-rf", "rm {} build"),
    ("curl", "{} https://example.com"),
    ("wget", "timeout 5 {} -q https://example.com"),
    ("push", "git {} origin main"),
    ("sudo", "{} ls"),
]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), where=st.sampled_from(_WHERE), secret=st.sampled_from(_SECRETS))
def test_a_secret_spelled_any_way_gets_the_plain_verdict(
    policy: PermissionPolicy, data: st.DataObject, where: str, secret: str
) -> None:
    if where.startswith("cd") and secret.startswith("/"):
        secret = secret[1:]
    plain = policy.check_command(where.format(secret))
    variant = where.format(data.draw(spelled(secret)))
    decided = policy.check_command(variant)
    assert plain.verdict != "allow", plain
    assert (decided.verdict, decided.rule) == (plain.verdict, plain.rule), variant


@settings(max_examples=200, deadline=None)
@given(data=st.data(), case=st.sampled_from(_DENIED))
def test_a_denied_word_spelled_any_way_stays_denied(
    policy: PermissionPolicy, data: st.DataObject, case: tuple[str, str]
) -> None:
    word, where = case
    plain = policy.check_command(where.format(word))
    variant = where.format(data.draw(spelled(word)))
    decided = policy.check_command(variant)
    assert plain.verdict == "deny", plain
    assert (decided.verdict, decided.rule) == (plain.verdict, plain.rule), variant


@settings(max_examples=40, deadline=None)
@given(data=st.data(), word=st.sampled_from([".env", "rm", "-rf", "keys/server.pem", "a b", "x'y\"z"]))
def test_bash_decodes_every_spelling_to_the_word(data: st.DataObject, word: str) -> None:
    """The strategy above is sound: bash itself reads each spelling as the word."""
    assert _bash_value(data.draw(spelled(word))) == word.encode()


@pytest.mark.parametrize(
    "command",
    [
        "cat $'\\u00e9'",
        "cat $'\\x{2e}env'",
        "cat notes.txt <(ls)",
        'ls $"$HOME"',
        "ls $'\\U0001F600'",
    ],
)
def test_an_argument_that_cannot_be_decoded_asks(policy: PermissionPolicy, command: str) -> None:
    decision = policy.check_command(command)
    assert decision.verdict == "ask"
    assert DYNAMIC_ARGUMENT_RULE in [j.rule for j in decision.judgements], decision
    assert decision.key.startswith("bash-text:")  # an approval remembers the text as written


def test_a_cd_to_a_word_that_cannot_be_decoded_makes_relative_paths_unknown(policy: PermissionPolicy) -> None:
    decision = policy.check_command("cd <(ls) && cat ./notes.txt")
    assert decision.verdict == "ask"
    assert "guard: relative path after cd" in [j.rule for j in decision.judgements]


def test_a_message_catalog_assigned_in_the_script_makes_locale_quoting_risky() -> None:
    """With ``TEXTDOMAIN`` set, bash may translate ``$"..."`` into any text its catalog holds."""
    for text in ('TEXTDOMAIN=x; cat $"a"', 'export TEXTDOMAINDIR=/tmp && cat $"a"'):
        assert all(command.risky for command in parse_shell(text).commands), text
