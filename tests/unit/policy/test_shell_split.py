"""The simple splitter: separators outside quotes, substitutions as extra parts, problems reported."""

from __future__ import annotations

import pytest

from agent_ls.policy.shell_split import SplitCommand, split_command


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("grep foo | rm -rf /", ("grep foo", "rm -rf /")),
        ("a; b && c || d & e\nf", ("a", "b", "c", "d", "e", "f")),
        ("a |& b", ("a", "b")),
        ("  ls  ;; ;  ", ("ls",)),
        ("", ()),
        # Quoted and escaped separators are data.
        ("ls 'a;rm -rf b'", ("ls 'a;rm -rf b'",)),
        ('grep -n "a && b" src/app.py', ('grep -n "a && b" src/app.py',)),
        ("grep -E 'foo|bar' x", ("grep -E 'foo|bar' x",)),
        ("find . -exec rm {} \\;", ("find . -exec rm {} \\;",)),
        ('echo "a\\" ; b"', ('echo "a\\" ; b"',)),
        ("ls $'a\\' ; rm x' ; pwd", ("ls $'a\\' ; rm x'", "pwd")),
        # Redirections are not separators.
        ("pytest -q 2>&1 | grep FAILED", ("pytest -q 2>&1", "grep FAILED")),
        ("ls &> out; cat <&3; ls >| f", ("ls &> out", "cat <&3", "ls >| f")),
    ],
)
def test_separators(command: str, parts: tuple[str, ...]) -> None:
    assert split_command(command) == SplitCommand(parts)


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("echo $(rm -rf x)", ("echo $(rm -rf x)", "rm -rf x")),
        ("ls `rm -rf build`", ("ls `rm -rf build`", "rm -rf build")),
        ('git commit -m "drop `rm -rf b` use"', ('git commit -m "drop `rm -rf b` use"', "rm -rf b")),
        ('echo "$(curl x | sh)"', ('echo "$(curl x | sh)"', "curl x", "sh")),
        ("a $(b $(c)) d", ("a $(b $(c)) d", "b $(c)", "c")),
        ("x $(a) $(b)", ("x $(a) $(b)", "a", "b")),
        ("diff <(cat /etc/passwd) >(ls)", ("diff <(cat /etc/passwd) >(ls)", "cat /etc/passwd", "ls")),
        ("echo $(f (x) y)", ("echo $(f (x) y)", "f (x) y")),
        # Single quotes and backslashes keep substitutions as data.
        ("echo '$(rm x)' \\`rm y\\`", ("echo '$(rm x)' \\`rm y\\`",)),
    ],
)
def test_substitutions_become_extra_parts(command: str, parts: tuple[str, ...]) -> None:
    assert split_command(command) == SplitCommand(parts)


@pytest.mark.parametrize(
    ("command", "result"),
    [
        ("ls 'a", SplitCommand(("ls 'a",), "unbalanced single quote")),
        ('ls "a', SplitCommand(('ls "a',), "unbalanced double quote")),
        ("ls $'a\\'", SplitCommand(("ls $'a\\'",), "unbalanced single quote")),
        ("ls; rm -rf x `", SplitCommand(("ls", "rm -rf x `"), "unbalanced backtick")),
        ("echo $(ls", SplitCommand(("echo $(ls",), "unbalanced parenthesis")),
    ],
)
def test_what_cannot_be_read_is_reported_with_the_parts_read_so_far(
    command: str, result: SplitCommand
) -> None:
    assert split_command(command) == result
