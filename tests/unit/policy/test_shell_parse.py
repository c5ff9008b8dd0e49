"""``parse_shell``: every command a bash input would run, normalized, with its redirections.

Tables by construct (the corpus README's semantics 1-7 each have a section), then errors, the
whole shell-command corpus, and a property test that the parser never raises.
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.policy.shell_commands import ParsedShell, Redirect, SimpleCommand
from agent_ls.policy.shell_parse import MAX_INPUT_BYTES, MAX_SCRIPT_DEPTH, parse_shell
from tests.conftest import require_tool
from tests.support.corpus import AVAILABLE, CORPUS, corpus_params, require_corpus

Argv = tuple[str, ...]


def argvs(text: str) -> list[Argv]:
    parsed = parse_shell(text)
    assert parsed.error is None, parsed.error
    return [command.argv for command in parsed.commands]


def only(text: str) -> SimpleCommand:
    parsed = parse_shell(text)
    assert parsed.error is None, parsed.error
    assert len(parsed.commands) == 1, parsed.commands
    return parsed.commands[0]


# -- 1. separators, and 5. quoted separators are data ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("git status && rm -rf build", [("git", "status"), ("rm", "-rf", "build")]),
        ("a; b && c || d & e\nf", [("a",), ("b",), ("c",), ("d",), ("e",), ("f",)]),
        ("a | b |& c", [("a",), ("b",), ("c",)]),
        ("nohup wget -q x &", [("wget", "-q", "x")]),
        ("git status\n", [("git", "status")]),
        ("echo ok # ; rm x", [("echo", "ok")]),
        ("", []),
        # Quoted and escaped separators are data.
        ("ls 'a;rm -rf b'", [("ls", "a;rm -rf b")]),
        ('grep -n "a && b" src/app.py', [("grep", "-n", "a && b", "src/app.py")]),
        ("grep -E 'foo|bar' src/app.py", [("grep", "-E", "foo|bar", "src/app.py")]),
        ("echo a\\;rm x", [("echo", "a;rm", "x")]),
        ("echo $'a;b'", [("echo", "a;b")]),
    ],
)
def test_separators(text: str, expected: list[Argv]) -> None:
    assert argvs(text) == expected


# -- 2. nested commands ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ls `rm -rf build`", [("ls", "`rm -rf build`"), ("rm", "-rf", "build")]),
        ("cat $(curl -s x)", [("cat", "$(curl -s x)"), ("curl", "-s", "x")]),
        # Backticks and $(...) inside double quotes still run.
        ('git commit -m "drop `rm b` use"', [("git", "commit", "-m", '"drop `rm b` use"'), ("rm", "b")]),
        ('echo "a $(b) c"', [("echo", '"a $(b) c"'), ("b",)]),
        ("echo \"'`cat /etc/shadow`'\"", [("echo", "\"'`cat /etc/shadow`'\""), ("cat", "/etc/shadow")]),
        ("echo $(a $(b))", [("echo", "$(a $(b))"), ("a", "$(b)"), ("b",)]),
        # Nested backquotes are unescaped as bash does (the grammar leaves \` in the inner word).
        ("echo `echo \\`rm x\\``", [("echo", "`echo \\`rm x\\``"), ("echo", "`rm x`"), ("rm", "x")]),
        ('echo "`a \\"x\\"`"', [("echo", '"`a \\"x\\"`"'), ("a", "x")]),
        # Single quotes are data.
        ("echo '$(rm x)' '`rm y`'", [("echo", "$(rm x)", "`rm y`")]),
        ("diff <(cat /etc/pw) >(b)", [("diff", "<(cat /etc/pw)", ">(b)"), ("cat", "/etc/pw"), ("b",)]),
        ("echo $((1 + 2)) $(( $? + $# ))", [("echo", "$((1 + 2))", "$(( $? + $# ))")]),
        ("echo ${x:-$(a)}", [("echo", "${x:-$(a)}"), ("a",)]),
        ("(cd /tmp && rm -rf build)", [("cd", "/tmp"), ("rm", "-rf", "build")]),
        ("{ a; b; }", [("a",), ("b",)]),
        ("if a; then b; elif c; then d; else e; fi", [("a",), ("b",), ("c",), ("d",), ("e",)]),
        ("while a; do b; done; until c; do d; done", [("a",), ("b",), ("c",), ("d",)]),
        ('for f in *.log; do rm "$f"; done', [("rm", '"$f"')]),
        ("for f in $(ls); do :; done", [("ls",), (":",)]),
        ("case $(a) in x) rm y;; *) ls;; esac", [("a",), ("rm", "y"), ("ls",)]),
        ("f() { rm x; }", [("rm", "x")]),
        ("function g { curl x; }; g", [("curl", "x"), ("g",)]),
        ("! a | b", [("a",), ("b",)]),
        ("[[ -f $(a) && $(b) == c ]]", [("a",), ("b",)]),
        # tree-sitter-bash reads `[ ]` like `[[ ]]`, as an expression: only its substitutions run.
        ("test -f x && [ -d $(y) ]", [("test", "-f", "x"), ("y",)]),
        # Assignments alone run their substitutions.
        ("X=$(rm -rf /)", [("rm", "-rf", "/")]),
        ("X=1 Y=`a`", [("a",)]),
        ("a=(1 $(b))", [("b",)]),
        ("x[0]=$(a)", [("a",)]),
        ("X=$(a) ls", [("ls",), ("a",)]),
        # Declaration commands are commands, and run their substitutions.
        ("export X=$(a) Y", [("export", "X=$(a)", "Y"), ("a",)]),
        ("local x=$(b)", [("local", "x=$(b)"), ("b",)]),
        ("readonly R=1; unset R", [("readonly", "R=1"), ("unset", "R")]),
        # Substitutions in redirections and here-strings run too.
        ('cat < $(a) > "$(b)"', [("cat",), ("a",), ("b",)]),
        ('cat <<< "$(rm x)"', [("cat",), ("rm", "x")]),
    ],
)
def test_nested_commands(text: str, expected: list[Argv]) -> None:
    assert argvs(text) == expected


ARITHMETIC = "evaluates a value as arithmetic, which runs the $(...) it may hold"


@pytest.mark.parametrize(
    ("text", "expected", "error"),
    [
        # x='a[$(rm -rf ~)]'; cat $((x)) runs rm: bash evaluates subscripts in arithmetic.
        ("x='a[$(rm)]'; cat $((x))", [("cat", "$((x))")], f"$((x)) {ARITHMETIC}"),
        ("echo $((1 + $(a)))", [("echo", "$((1 + $(a)))"), ("a",)], f"$((1 + $(a))) {ARITHMETIC}"),
        ("echo $[x]", [("echo", "$[x]")], f"$[x] {ARITHMETIC}"),
        ("(( x ))", [], f"(( x )) {ARITHMETIC}"),
        ("for ((i=0; i<$(n); i++)); do x; done", [("n",), ("x",)],
         f"for ((i=0; i<$(n); i++)); do x; done {ARITHMETIC}"),
        ("[[ $x -eq 0 ]] && ls", [("ls",)], f"[[ $x -eq 0 ]] {ARITHMETIC}"),
        ("echo ${s:o}", [("echo", "${s:o}")], f"${{s:o}} {ARITHMETIC}"),
        ("echo ${a[$i]}", [("echo", "${a[$i]}")], f"${{a[$i]}} {ARITHMETIC}"),
        ("echo ${y@P}", [("echo", "${y@P}")],
         "${y@P} expands a variable as a prompt, which runs the $(...) its value holds"),
        # No variable in the arithmetic, or no arithmetic: fine.
        ("[ $x -eq 0 ] && test $y -gt 1", [("test", "$y", "-gt", "1")], None),
        ("[[ $x == 0 ]]; echo ${s:0:1} ${a[1]} ${a[@]} ${x:-$y} ${#a[@]}",
         [("echo", "${s:0:1}", "${a[1]}", "${a[@]}", "${x:-$y}", "${#a[@]}")], None),
    ],
)  # fmt: skip
def test_arithmetic_on_variables_is_an_error(text: str, expected: list[Argv], error: str | None) -> None:
    parsed = parse_shell(text)
    assert ([c.argv for c in parsed.commands], parsed.error) == (expected, error)


def test_unquoted_heredoc_body_runs_its_substitutions_and_a_quoted_one_does_not() -> None:
    # The grammar leaves backquotes in a heredoc as text; they are read after the $(...).
    assert sorted(argvs("cat <<EOF\nhello $(rm x) `rm y`\nEOF")) == [("cat",), ("rm", "x"), ("rm", "y")]
    assert argvs("cat <<EOF\n`curl x`\nEOF") == [("cat",), ("curl", "x")]
    assert argvs("cat <<EOF\n\\`curl x\\`\nEOF") == [("cat",)]
    assert argvs("cat <<'EOF'\nhello $(rm x)\nEOF") == [("cat",)]
    assert argvs('cat <<"EOF"\nhello $(rm x)\nEOF') == [("cat",)]


def test_heredoc_line_continues_after_the_heredoc_operator() -> None:
    assert argvs("cat <<'EOF' | curl -d @- x\nhello\nEOF") == [("cat",), ("curl", "-d", "@-", "x")]
    parsed = parse_shell("cat <<EOF > out && rm y\nbody\nEOF")
    assert [c.argv for c in parsed.commands] == [("cat",), ("rm", "y")]
    heredoc = Redirect("<<", None, write=False, harmless=True)
    assert parsed.commands[0].redirects == (Redirect(">", "out", write=True), heredoc)


# -- 2. scripts: bash -c, heredocs fed to a shell, eval, watch, trap ------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bash -c 'rm -rf x'", [("rm", "-rf", "x")]),
        ('sh -c "curl -s x | grep y"', [("curl", "-s", "x"), ("grep", "y")]),
        ("zsh -c 'a; b'", [("a",), ("b",)]),
        ("dash -c ls", [("ls",)]),
        ("bash -c \"sh -c 'rm -rf x'\"", [("rm", "-rf", "x")]),
        ("sh -ec 'ls; pwd'", [("ls",), ("pwd",)]),
        ("bash -o pipefail -c 'ls | wc'", [("ls",), ("wc",)]),
        ("bash --norc --noprofile -lc 'ls'", [("ls",)]),
        ("bash -c 'echo \"$1\"' sh arg", [("echo", '"$1"')]),
        ("/bin/bash -c 'rm x'", [("rm", "x")]),
        ("env bash -c 'rm x'", [("rm", "x")]),
        # A script file is judged by the shell's own name.
        ("bash script.sh", [("bash", "script.sh")]),
        ("sh -x ./deploy.sh arg", [("sh", "-x", "./deploy.sh", "arg")]),
        ("bash --version", [("bash", "--version")]),
        # A heredoc or here-string fed to a shell is its script.
        ("bash <<'EOF'\nrm -rf x\nEOF\necho hi", [("rm", "-rf", "x"), ("echo", "hi")]),
        ("sh <<'X'\ncurl x | sh -c 'ls'\nX", [("curl", "x"), ("ls",)]),
        ("bash <<EOF\nls \\$HOME\nEOF", [("ls", "$HOME")]),
        ("bash <<-EOF\n\trm x\n\tEOF", [("rm", "x")]),
        ("bash -s <<'EOF'\nrm x\nEOF", [("rm", "x")]),
        ("bash <<< 'rm x'", [("rm", "x")]),
        ("ls | bash <<'EOF'\npwd\nEOF", [("ls",), ("pwd",)]),
        # eval joins its arguments with spaces.
        ('eval "rm -rf build"', [("rm", "-rf", "build")]),
        ("eval 'a;' b", [("a",), ("b",)]),
        ("eval", []),
        # watch runs its arguments with sh -c, or as argv with -x.
        ("watch -n 60 'rm -rf build'", [("rm", "-rf", "build")]),
        ("watch -n1 -d git status", [("git", "status")]),
        ("watch -x rm x", [("rm", "x")]),
        ("watch", [("watch",)]),
        # trap sets a script for later: both are judged.
        ("trap 'rm -rf /' EXIT", [("trap", "rm -rf /", "EXIT"), ("rm", "-rf", "/")]),
        ("trap - INT", [("trap", "-", "INT")]),
    ],
)
def test_scripts(text: str, expected: list[Argv]) -> None:
    assert argvs(text) == expected


@pytest.mark.parametrize(
    ("text", "expected", "error"),
    [
        ('bash -c "$X"', [("bash", "-c", '"$X"')], 'cannot tell what bash runs: "$X"'),
        ('sh -c "rm $X"', [("sh", "-c", '"rm $X"')], 'cannot tell what sh runs: "rm $X"'),
        ("bash -c", [("bash", "-c")], "bash -c without a script"),
        ("bash $OPTS x", [("bash", "$OPTS", "x")], "cannot tell what bash runs: $OPTS"),
        ("bash $f", [("bash", "$f")], "cannot tell what bash runs: $f"),
        ("curl -s x | bash", [("curl", "-s", "x"), ("bash",)], "bash reads its script from standard input"),
        ("sh -c 'curl x | sh'", [("curl", "x"), ("sh",)], "sh reads its script from standard input"),
        ("bash", [("bash",)], "bash reads its script from standard input"),
        ("bash -s arg", [("bash", "-s", "arg")], "bash reads its script from standard input"),
        ("bash < script.sh", [("bash",)], "bash reads its script from standard input"),
        ("cat <<EOF | sh\nx\nEOF", [("cat",), ("sh",)], "sh reads its script from standard input"),
        # An unquoted heredoc is expanded first: its script is not static.
        ("bash <<EOF\nrm $X\nEOF", [("bash",)], "bash reads its script from standard input"),
        ("eval $x", [("eval", "$x")], "the script of eval is not static: $x"),
        ("watch -n $N ls", [("ls",)], None),
        ("watch --bogus ls", [("watch", "--bogus", "ls")], "unknown option of watch: --bogus"),
        ('trap "$X" EXIT', [("trap", '"$X"', "EXIT")], 'the script of trap is not static: "$X"'),
        (
            "mapfile -t -C 'rm x' -c 1 arr",
            [("mapfile", "-t", "-C", "rm x", "-c", "1", "arr")],
            "mapfile -C runs its callback as code, which is not read",
        ),
        ("readarray -u 3 lines", [("readarray", "-u", "3", "lines")], None),
    ],
)
def test_scripts_that_cannot_be_read(text: str, expected: list[Argv], error: str | None) -> None:
    parsed = parse_shell(text)
    assert [c.argv for c in parsed.commands] == expected
    assert parsed.error == error
    if error is not None and not text.startswith(("trap", "watch")):
        assert not parsed.commands[-1].static  # the shell that runs an unknown script


def test_heredoc_to_bash_keeps_the_inner_command_text_and_redirections() -> None:
    assert parse_shell("bash <<'EOF' > log\nrm -rf x\nEOF") == ParsedShell(
        (
            SimpleCommand(
                ("rm", "-rf", "x"),
                "rm -rf x",
                redirects=(Redirect(">", "log", write=True), Redirect("<<", None, False, True)),
                wrappers=(("bash",),),
            ),
        )
    )


def test_script_commands_inherit_the_redirections_and_risks_of_the_shell() -> None:
    assert parse_shell("BASH_ENV=x bash -c 'ls' 2> err") == ParsedShell(
        (
            SimpleCommand(
                ("ls",),
                "ls",
                risky="BASH_ENV= can make the program run other code",
                redirects=(Redirect("2>", "err", write=True),),
                wrappers=(("bash", "-c", "ls"),),
            ),
        )
    )


def test_script_depth_limit() -> None:
    deepest_allowed = "eval " * MAX_SCRIPT_DEPTH + "rm x"
    assert argvs(deepest_allowed) == [("rm", "x")]
    parsed = parse_shell("eval " * (MAX_SCRIPT_DEPTH + 1) + "rm x")
    assert parsed.error == f"scripts nested deeper than {MAX_SCRIPT_DEPTH} levels"
    assert [(c.argv, c.static) for c in parsed.commands] == [(("eval", "rm", "x"), False)]


def test_nested_bash_c_depth_limit() -> None:
    script = "rm x"
    for _ in range(MAX_SCRIPT_DEPTH + 1):
        script = "bash -c " + "'" + script.replace("'", "'\\''") + "'"
    parsed = parse_shell(script)
    assert parsed.error == f"scripts nested deeper than {MAX_SCRIPT_DEPTH} levels"
    assert all(c.argv != ("rm", "x") for c in parsed.commands)
    assert [c.static for c in parsed.commands] == [False]


# -- 3. normalization of the command word and wrappers ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("AWS_PROFILE=prod aws ec2 stop", ("aws", "ec2", "stop")),
        ("A=1 B='x y' ls -la", ("ls", "-la")),
        ("\\rm -rf x", ("rm", "-rf", "x")),
        ('"r"m x', ("rm", "x")),
        ("'rm' x", ("rm", "x")),
        ("r\\m x", ("rm", "x")),
        ("/bin/rm x", ("rm", "x")),
        ("/usr/bin/git status", ("git", "status")),
        ("/usr/local/sbin/x", ("x",)),
        # Quote removal of arguments.
        ("echo 'a'\"b\"c\\ d", ("echo", "abc d")),
        ('echo "a\\"b\\$c\\d"', ("echo", 'a"b$c\\d')),
        ("echo '' \"\"", ("echo", "", "")),
        ("ls ~/x", ("ls", "~/x")),
        # Arguments with expansions are kept as written.
        ("rm \"$f\" ${g} $h $'x'", ("rm", '"$f"', "${g}", "$h", "x")),
        # Transparent wrappers.
        ("command rm -rf build", ("rm", "-rf", "build")),
        ("command -p rm x", ("rm", "x")),
        ("command -v rm", ("command", "-v", "rm")),
        ("command -V rm", ("command", "-V", "rm")),
        ("builtin cd x", ("cd", "x")),
        ("exec rm x", ("rm", "x")),
        ("exec -a name -cl rm x", ("rm", "x")),
        ("nohup rm x", ("rm", "x")),
        ("nice rm x", ("rm", "x")),
        ("nice -n 5 rm x", ("rm", "x")),
        ("nice -n5 rm x", ("rm", "x")),
        ("nice -10 rm x", ("rm", "x")),
        ("nice --adjustment=3 rm x", ("rm", "x")),
        ("timeout 5 rm x", ("rm", "x")),
        ("timeout -s KILL -k 2 --preserve-status 5s rm x", ("rm", "x")),
        ("timeout --signal=TERM --kill-after 1 5 rm x", ("rm", "x")),
        ("time rm x", ("rm", "x")),
        ("time -p rm x", ("rm", "x")),
        ("stdbuf -oL rm x", ("rm", "x")),
        ("stdbuf -i 0 -e L --output=L rm x", ("rm", "x")),
        ("env rm -rf build", ("rm", "-rf", "build")),
        ("env -i A=1 B=2 rm x", ("rm", "x")),
        ("env -u HOME --unset=X - rm x", ("rm", "x")),
        ("env -- rm x", ("rm", "x")),
        ("coproc rm x", ("rm", "x")),
        ("timeout 5 nice -n 3 stdbuf -oL nohup time -p env -i A=1 command -p builtin exec ls", ("ls",)),
        ("xargs rm -f", ("rm", "-f")),
        ("xargs -0 -n 1 -P4 -r rm", ("rm",)),
        ("xargs -I{} cp {} /tmp", ("cp", "{}", "/tmp")),
        ("xargs --null --max-args=2 --replace=@ mv @ x", ("mv", "@", "x")),
        ("xargs", ("echo",)),
        ("xargs -0", ("echo",)),
        # Wrappers with nothing to run are judged as written.
        ("env", ("env",)),
        ("env A=1", ("env", "A=1")),
        ("nice", ("nice",)),
        ("time", ("time",)),
        ("exec 3>&-", ("exec",)),
    ],
)
def test_normalized_argv(text: str, expected: Argv) -> None:
    command = only(text)
    assert command.argv == expected
    assert command.static
    assert command.risky is None
    assert command.text == text


def test_normalized_string() -> None:
    assert only("env  FOO=1   /bin/ls   -la").normalized == "ls -la"


@pytest.mark.parametrize(
    "variable",
    [
        "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "GIT_SSH_COMMAND", "GIT_EDITOR", "EDITOR", "LD_PRELOAD",
        "BASH_ENV", "ENV", "PROMPT_COMMAND", "PATH", "GIT_CONFIG_PARAMETERS", "LD_LIBRARY_PATH",
    ],
)  # fmt: skip
def test_risky_prefix_variables(variable: str) -> None:
    command = only(f"{variable}=x git diff")
    assert command.argv == ("git", "diff")
    assert command.risky == f"{variable}= can make the program run other code"


def test_risky_variable_through_env() -> None:
    command = only("env GIT_PAGER='sh -c x' git log")
    assert (command.argv, command.risky) == (("git", "log"), "GIT_PAGER= can make the program run other code")


def test_harmless_prefix_variables_are_not_risky() -> None:
    assert only("LANG=C GIT_AUTHOR_NAME=x git status").risky is None


def test_risky_variable_assigned_alone_makes_every_command_risky() -> None:
    reason = "PATH= assigned in the script can make later programs run other code"
    assert parse_shell("PATH=/tmp/evil:$PATH; ls") == ParsedShell(
        (SimpleCommand(("ls",), "ls", risky=reason),)
    )
    parsed = parse_shell("export PATH=/x && ls")
    assert [(c.argv, c.risky) for c in parsed.commands] == [
        (("export", "PATH=/x"), reason),
        (("ls",), reason),
    ]
    assert only("X=1; ls").risky is None


def test_a_program_run_by_path_outside_the_system_directories_is_risky() -> None:
    assert only("./ls -la") == SimpleCommand(
        ("ls", "-la"), "./ls -la", risky="runs ./ls by path", wrappers=(("./ls", "-la"),)
    )
    assert only("/tmp/x/rm y").argv == ("rm", "y")
    assert only("/tmp/x/rm y").risky == "runs /tmp/x/rm by path"
    assert only(".venv/bin/pytest -q").risky == "runs .venv/bin/pytest by path"


def test_time_output_file_is_risky() -> None:
    command = only("time -o out.txt ls")
    assert (command.argv, command.risky) == (("ls",), "time -o writes a file")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("env -S 'rm $X' y", "env -S 'rm $X' cannot be read (a variable or an open quote)"),
        ("env -S \"'rm x\" y", "env -S \"'rm x\" cannot be read (a variable or an open quote)"),
        ("env --weird rm", "unknown option of env: --weird"),
        ("timeout -Z 5 rm", "unknown option of timeout: -Z"),
        ("nice -n", "nice -n needs a value"),
    ],
)
def test_unreadable_wrapper_options(text: str, error: str) -> None:
    parsed = parse_shell(text)
    assert parsed.error == error
    assert [c.static for c in parsed.commands] == [False]


# -- 3. find -exec and xargs run commands ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("find /foo -exec rm {} \\;", [("find", "/foo", "-exec", "rm", "{}", ";"), ("rm", "{}")]),
        ("find . -execdir rm {} +", [("find", ".", "-execdir", "rm", "{}", "+"), ("rm", "{}")]),
        ("find . -ok rm {} ';' -okdir mv {} x \\;", [
            ("find", ".", "-ok", "rm", "{}", ";", "-okdir", "mv", "{}", "x", ";"),
            ("rm", "{}"),
            ("mv", "{}", "x"),
        ]),
        ("find . -exec env timeout 5 rm {} \\;", [
            ("find", ".", "-exec", "env", "timeout", "5", "rm", "{}", ";"),
            ("rm", "{}"),
        ]),
        ("find . -exec sh -c 'rm \"$1\"' _ {} \\;", [
            ("find", ".", "-exec", "sh", "-c", 'rm "$1"', "_", "{}", ";"),
            ("rm", '"$1"'),
        ]),
        ("find . -name '*.tmp' -delete", [("find", ".", "-name", "*.tmp", "-delete")]),
        ("find . -name '*.pyc' | xargs rm -f", [("find", ".", "-name", "*.pyc"), ("rm", "-f")]),
    ],
)  # fmt: skip
def test_find_exec(text: str, expected: list[Argv]) -> None:
    assert argvs(text) == expected


def test_find_exec_command_word_keeps_the_find_text() -> None:
    parsed = parse_shell("find . -exec rm {} \\; > log")
    assert parsed.commands[1] == SimpleCommand(
        ("rm", "{}"),
        "find . -exec rm {} \\; > log",
        redirects=(Redirect(">", "log", write=True),),
        wrappers=(("find", ".", "-exec", "rm", "{}", ";"),),
    )


def test_find_fprint_is_risky() -> None:
    assert parse_shell("find . -fprint out").commands[0].risky == "find -fprint writes a file"


@pytest.mark.parametrize(
    "text",
    [
        "find . -exec sh -c 'rm {}' \\;",  # find replaces {} inside the script: file names become code
        "xargs -I{} sh -c 'echo {}'",
        "xargs sh -c",
    ],
)
def test_run_time_placeholders_in_scripts_are_not_static(text: str) -> None:
    parsed = parse_shell(text)
    assert parsed.error is not None
    assert not parsed.commands[-1].static


def test_placeholder_as_command_word_is_not_static() -> None:
    parsed = parse_shell("xargs -I CMD CMD -rf /")
    assert [(c.argv, c.static) for c in parsed.commands] == [(("CMD", "-rf", "/"), False)]


def test_xargs_feeding_a_shell_is_an_error() -> None:
    assert parse_shell("ls | xargs bash").error == "bash reads its script from standard input"


# -- 4. git global options --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("git -C . status -s", ("git", "status", "-s")),
        ("git --namespace=x --no-pager --literal-pathspecs -P log", ("git", "log")),
        ("git --no-optional-locks --glob-pathspecs --icase-pathspecs diff", ("git", "diff")),
        ("git --version", ("git", "--version")),
        ("git diff --stat", ("git", "diff", "--stat")),
        ("git diff --no-ext-diff", ("git", "diff", "--no-ext-diff")),
        ("git diff --", ("git", "diff", "--")),
        ("git $SUB push", ("git", "$SUB", "push")),
    ],
)
def test_git_global_options(text: str, expected: Argv) -> None:
    command = only(text)
    assert (command.argv, command.risky) == (expected, None)


RUN_OR_WRITE = "can run a program or write a file"


@pytest.mark.parametrize(
    ("text", "argv", "risky"),
    [
        ("git -p status", ("git", "status"), "git -p runs a pager"),
        ("git --paginate log", ("git", "log"), "git --paginate runs a pager"),
        ("git -c core.pager=less status", ("git", "status"), "git -c core.pager=less changes configuration"),
        ("git -c x.y=1 -C . push", ("git", "push"), "git -c x.y=1 changes configuration"),
        ("git --config-env=core.pager=P log", ("git", "log"),
         "git --config-env core.pager=P changes configuration"),
        ("git --exec-path=/x status", ("git", "status"),
         "git --exec-path changes where git finds its programs"),
        ("git diff --ext-diff", ("git", "diff", "--ext-diff"), f"git diff --ext-diff {RUN_OR_WRITE}"),
        ("git diff --output=x", ("git", "diff", "--output=x"), f"git diff --output=x {RUN_OR_WRITE}"),
        ("git diff --output x", ("git", "diff", "--output", "x"), f"git diff --output {RUN_OR_WRITE}"),
        ("git diff --outp=x", ("git", "diff", "--outp=x"), f"git diff --outp=x {RUN_OR_WRITE}"),
        ("git status --ext-diff", ("git", "status", "--ext-diff"), f"git status --ext-diff {RUN_OR_WRITE}"),
        ("git fetch --upload-pack=x", ("git", "fetch", "--upload-pack=x"),
         f"git fetch --upload-pack=x {RUN_OR_WRITE}"),
        ("git grep -Ovim x", ("git", "grep", "-Ovim", "x"), "git grep -O runs a program"),
        ("git config core.sshCommand x", ("git", "config", "core.sshCommand", "x"),
         "git config core.sshCommand sets a program to run"),
        ("git config diff.external x", ("git", "config", "diff.external", "x"),
         "git config diff.external sets a program to run"),
        ("git status *", ("git", "status", "*"), "git arguments with patterns may expand to options: *"),
        ("git status {,--output=x}", ("git", "status", "{,--output=x}"),
         "brace expansion can turn one argument into several"),
    ],
)  # fmt: skip
def test_git_risky(text: str, argv: Argv, risky: str) -> None:
    command = only(text)
    assert (command.argv, command.risky) == (argv, risky)


def test_git_several_risks_are_joined() -> None:
    assert only("GIT_PAGER=x git -p diff").risky == (
        "GIT_PAGER= can make the program run other code; git -p runs a pager"
    )


OTHER_REPOSITORY = "can point git at another repository, whose configuration can run programs"


@pytest.mark.parametrize(
    ("text", "argv", "risky"),
    [
        # git's own repository discovery starts at ".": only another place is risky.
        ("git --git-dir=r --work-tree=. status", ("git", "status"),
         f"git --git-dir r {OTHER_REPOSITORY}; git --work-tree . {OTHER_REPOSITORY}"),
        ("git --git-dir .git status -s", ("git", "status", "-s"), f"git --git-dir .git {OTHER_REPOSITORY}"),
        ("git --work-tree=/etc diff", ("git", "diff"), f"git --work-tree /etc {OTHER_REPOSITORY}"),
        ("git -C ../other-repo push origin main", ("git", "push", "origin", "main"),
         f"git -C ../other-repo {OTHER_REPOSITORY}"),
        ("git -C . -C sub status", ("git", "status"), f"git -C sub {OTHER_REPOSITORY}"),
        ('git -C "$D" status', ("git", "status"), f'git -C "$D" {OTHER_REPOSITORY}'),
        ("git --bare log", ("git", "log"),
         f"git --bare reads the current directory as a repository, which {OTHER_REPOSITORY}"),
        ("GIT_DIR=r git status", ("git", "status"), f"GIT_DIR= {OTHER_REPOSITORY}"),
        ("GIT_WORK_TREE=. git status", ("git", "status"), f"GIT_WORK_TREE= {OTHER_REPOSITORY}"),
        ("GIT_COMMON_DIR=r git status", ("git", "status"), f"GIT_COMMON_DIR= {OTHER_REPOSITORY}"),
        ("GIT_INDEX_FILE=x git status", ("git", "status"), f"GIT_INDEX_FILE= {OTHER_REPOSITORY}"),
        ("GIT_OBJECT_DIRECTORY=o git diff", ("git", "diff"), f"GIT_OBJECT_DIRECTORY= {OTHER_REPOSITORY}"),
        ("env GIT_DIR=r git status", ("git", "status"), f"GIT_DIR= {OTHER_REPOSITORY}"),
        ("GIT_CONFIG_GLOBAL=c git status", ("git", "status"),
         "GIT_CONFIG_GLOBAL= can make the program run other code"),
        ("GIT_EXEC_PATH=. git status", ("git", "status"),
         "GIT_EXEC_PATH= can make the program run other code"),
        ("HOME=. git status", ("git", "status"), "HOME= can make the program run other code"),
        ("XDG_CONFIG_HOME=. git status", ("git", "status"),
         "XDG_CONFIG_HOME= can make the program run other code"),
        ("GIT_ALLOW_PROTOCOL=ext git status", ("git", "status"),
         "GIT_ALLOW_PROTOCOL= can make the program run other code"),
    ],
)  # fmt: skip
def test_git_pointed_at_another_repository_is_risky(text: str, argv: Argv, risky: str) -> None:
    command = only(text)
    assert (command.argv, command.risky) == (argv, risky)


def test_git_repository_variables_assigned_alone_make_every_command_risky() -> None:
    reason = f"GIT_DIR= assigned in the script {OTHER_REPOSITORY}"
    parsed = parse_shell("export GIT_DIR=r; git status")
    assert [(c.argv, c.risky) for c in parsed.commands] == [
        (("export", "GIT_DIR=r"), reason),
        (("git", "status"), reason),
    ]
    assert (
        only("GIT_WORK_TREE=/; git status").risky
        == f"GIT_WORK_TREE= assigned in the script {OTHER_REPOSITORY}"
    )


@pytest.mark.parametrize(
    ("text", "risky"),
    [
        # Subcommands that run tools, filters, scripts or servers by design (review finding 3).
        ('git difftool --no-index -y -x "sh -c id" a b', "git difftool runs other programs"),
        ("git difftool --extcmd=id", "git difftool runs other programs"),
        ("git mergetool -t x", "git mergetool runs other programs"),
        ("git filter-branch --tree-filter x HEAD", "git filter-branch runs other programs"),
        ("git send-email --to-cmd=x p.patch", "git send-email runs other programs"),
        ("git daemon --export-all", "git daemon runs other programs"),
        ("git instaweb", "git instaweb runs other programs"),
        ("git credential fill", "git credential runs other programs"),
        ("git maintenance start", "git maintenance runs other programs"),
        ("git submodule foreach id", "git submodule foreach runs a command"),
        ("git submodule --quiet foreach 'rm x'", "git submodule foreach runs a command"),
        ("git bisect run make", "git bisect run runs a command"),
        ("git rebase -x id HEAD~2", "git rebase -x runs a command"),
        ("git rebase -ixid HEAD~2", "git rebase -x runs a command"),
        ("git rebase --exec=id HEAD~2", f"git rebase --exec=id {RUN_OR_WRITE}"),
        ("git rebase --ex id HEAD~2", f"git rebase --ex {RUN_OR_WRITE}"),
        ("git grep --open-files-in-pager=vim x", f"git grep --open-files-in-pager=vim {RUN_OR_WRITE}"),
        ("git grep -iOvim x", "git grep -O runs a program"),
        ("git log -p --textconv", f"git log --textconv {RUN_OR_WRITE}"),
        ("git show --textc HEAD", f"git show --textc {RUN_OR_WRITE}"),
        ("git cat-file --filters HEAD:x", f"git cat-file --filters {RUN_OR_WRITE}"),
        ("git clone --upload-pack=x u d", f"git clone --upload-pack=x {RUN_OR_WRITE}"),
        ("git clone -u x u d", "git clone -u runs a program"),
        ("git clone -c core.fsmonitor=x u", "git clone -c sets configuration of the new repository"),
        ("git clone --config=core.fsmonitor=x u", f"git clone --config=core.fsmonitor=x {RUN_OR_WRITE}"),
        ("git clone --template=t u", f"git clone --template=t {RUN_OR_WRITE}"),
        ("git init --separate-git-dir=/tmp/g", f"git init --separate-git-dir=/tmp/g {RUN_OR_WRITE}"),
        ("git pull --upload-pack x", f"git pull --upload-pack {RUN_OR_WRITE}"),
        ("git ls-remote --upload-pack=x origin", f"git ls-remote --upload-pack=x {RUN_OR_WRITE}"),
        ("git push --receive-pack=x", f"git push --receive-pack=x {RUN_OR_WRITE}"),
        ("git archive --remote=r HEAD", f"git archive --remote=r {RUN_OR_WRITE}"),
        ("git archive --exec=x --remote r HEAD",
         f"git archive --exec=x {RUN_OR_WRITE}; git archive --remote {RUN_OR_WRITE}"),
        ("git archive -o out.zip HEAD", "git archive -o writes a file"),
        ("git format-patch -o out HEAD~1", "git format-patch -o writes files"),
        ("git help -w log", "git help -w runs a web browser"),
        ("git ls-remote 'ext::sh -c id'", "git ls-remote ext::sh -c id: the ext:: transport runs a command"),
        ("git fetch fd::3", "git fetch fd::3: the fd:: transport runs a command"),
        # git config: writes (any file), other files, and keys that name programs.
        ("git config --global user.name me", "git config writes configuration, which can make later git "
         "commands run programs"),
        ("git config --unset user.name", "git config writes configuration, which can make later git "
         "commands run programs"),
        ("git config set core.fsmonitor x", "git config core.fsmonitor sets a program to run"),
        ("git config --add alias.x '!id'", "git config alias.x sets a program to run"),
        ("git config -e", "git config writes configuration, which can make later git commands run programs"),
        ("git config -f ~/.ssh/config -l",
         "git config --file reads or writes a file the path rules do not check"),
    ],
)  # fmt: skip
def test_git_commands_that_run_programs_are_risky(text: str, risky: str) -> None:
    assert only(text).risky == risky


@pytest.mark.parametrize(
    "text",
    [
        "git diff --text", "git diff --no-textconv", "git log --no-ext-diff -p", "git diff --exit-code",
        "git config user.name", "git config --get core.pager", "git config --global --get-regexp alias",
        "git config -l", "git config get user.email", "git clone --filter=blob:none u",
        "git submodule status",
        "git bisect start", "git rebase -i HEAD~2", "git cherry-pick -x abc", "git grep -e x -A 2",
        "git help log", "git fetch origin", "git status --ignored",
    ],
)  # fmt: skip
def test_git_commands_that_only_read_are_not_risky(text: str) -> None:
    assert only(text).risky is None


# -- shell state: what a command changes for the commands after it ---------------------------------

STATE = "changes how later commands are expanded or found"
OPTIONS = "changes how the shell reads and expands later commands"


@pytest.mark.parametrize(
    ("text", "risky"),
    [
        # GLOBIGNORE makes `*` match dotfiles (review finding 7); IFS, CDPATH, PWD (~+)... alike.
        ("GLOBIGNORE=x; cat *", f"GLOBIGNORE= assigned in the script {STATE}"),
        ("cat *; GLOBIGNORE=x", f"GLOBIGNORE= assigned in the script {STATE}"),
        ("export GLOBIGNORE=x; cat *", f"GLOBIGNORE= assigned in the script {STATE}"),
        ("IFS=/; cat *", f"IFS= assigned in the script {STATE}"),
        ("IFS+=/; cat *", f"IFS= assigned in the script {STATE}"),
        ("CDPATH=/etc; cat *", f"CDPATH= assigned in the script {STATE}"),
        ("PWD=/etc; cat ~+/passwd", f"PWD= assigned in the script {STATE}"),
        ("OLDPWD=/etc; cat ~-/passwd", f"OLDPWD= assigned in the script {STATE}"),
        ("f() { GLOBIGNORE=x; }; cat *", f"GLOBIGNORE= assigned in the script {STATE}"),
        ("eval GLOBIGNORE=x; cat *", f"GLOBIGNORE= assigned in the script {STATE}"),
        ("eval PATH=/tmp; cat *", "PATH= assigned in the script can make later programs run other code"),
        ("trap 'IFS=/' EXIT; cat *", f"IFS= assigned in the script {STATE}"),
        # Builtins that assign the variable named by an argument.
        ("read IFS <<< /; cat *", f"read IFS: IFS= assigned in the script {STATE}"),
        ("read -r -a BASH_CMDS <<< x; cat *", f"read BASH_CMDS: BASH_CMDS= assigned in the script {STATE}"),
        ("printf -v GLOBIGNORE x; cat *", f"printf GLOBIGNORE: GLOBIGNORE= assigned in the script {STATE}"),
        ("getopts a IFS; cat *", f"getopts IFS: IFS= assigned in the script {STATE}"),
        ("mapfile -t BASH_CMDS < f; cat *", f"mapfile BASH_CMDS: BASH_CMDS= assigned in the script {STATE}"),
        ("export 'GLOBIGNORE=x'; cat *", f"export GLOBIGNORE=x: GLOBIGNORE= assigned in the script {STATE}"),
        ('read "$v"; cat *', 'read "$v" may assign any variable'),
        ('export "$v=1"; cat *', 'export "$v=1" may assign any variable'),
        # Without PATH, bash searches a default path that ends in `.`.
        ("unset PATH; cat *",
         "unset PATH: PATH= assigned in the script can make later programs run other code"),
        ("declare -n r=x; cat *", "declare -n: a nameref lets later assignments change any variable"),
        # Shell options that change expansion, command lookup or how words are read.
        ("shopt -s dotglob; cat *", f"shopt -s dotglob {OPTIONS}"),
        ("shopt -s extglob; cat *", f"shopt -s extglob {OPTIONS}"),
        ("shopt -s nullglob; cat *", f"shopt -s nullglob {OPTIONS}"),
        ("shopt -s failglob; cat *", f"shopt -s failglob {OPTIONS}"),
        ("shopt -s globstar; cat *", f"shopt -s globstar {OPTIONS}"),
        ("shopt -u globskipdots; cat *", f"shopt -u globskipdots {OPTIONS}"),
        ("shopt -s inherit_errexit nocaseglob; cat *", f"shopt -s inherit_errexit nocaseglob {OPTIONS}"),
        ("shopt -so posix; cat *", f"shopt -so posix {OPTIONS}"),
        ("set -k; cat *", f"set -k {OPTIONS}"),
        ("set -ea; cat *", f"set -ea {OPTIONS}"),
        ("set -o posix; cat *", f"set -o posix {OPTIONS}"),
        ("set -e -o pipefail -o keyword; cat *", f"set -e -o pipefail -o keyword {OPTIONS}"),
        ("set +Hk; set -H; cat *", f"set -H {OPTIONS}"),
        ("hash -p ./x cat; cat *", f"hash -p ./x cat {OPTIONS}"),
        ("enable -f ./x.so cat; cat *", f"enable -f ./x.so cat {OPTIONS}"),
        ('set -o "$o"; cat *',
         'set -o "$o": set with an argument not known statically may change how later commands run'),
    ],
)  # fmt: skip
def test_shell_state_changes_make_every_command_risky(text: str, risky: str) -> None:
    parsed = parse_shell(text)
    assert parsed.error is None
    cat = next(c for c in parsed.commands if c.argv[0] == "cat")
    assert cat.risky == risky
    assert all(c.risky is not None and risky in c.risky for c in parsed.commands)


def test_shell_state_inside_bash_c_stays_in_the_child_but_is_still_noted() -> None:
    parsed = parse_shell("bash -c 'GLOBIGNORE=x; cat *'")
    assert [(c.argv, c.risky) for c in parsed.commands] == [
        (("cat", "*"), f"GLOBIGNORE= assigned in the script {STATE}"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "set -euo pipefail; cat *", "set -x; cat *", "set +e; cat *", "set +o posix +k; cat *",
        "set -- a b; cat *", "set -o; cat *",
        "shopt -s inherit_errexit; cat *", "shopt dotglob; cat *", "shopt -p; cat *", "hash -r; cat *",
        "enable; cat *", "read x; cat *", "X=1; cat *", "export X; cat *", "unset X; cat *",
        "export PATH; cat *", "test -v IFS; cat *", "local -a x; cat *",
    ],
)  # fmt: skip
def test_harmless_shell_state_changes(text: str) -> None:
    parsed = parse_shell(text)
    assert parsed.error is None
    assert [c.risky for c in parsed.commands] == [None] * len(parsed.commands)


SUBSCRIPT = "evaluates an array subscript, which runs the $(...) it may hold"
NAMED_SUBSCRIPT = "the array subscript is evaluated as arithmetic, which runs the $(...) a value may hold"
LET = "let evaluates its arguments as arithmetic, which runs the $(...) a value may hold"


# Each runs `touch m` in bash 5.2 (checked against bash below), though `$(...)` is quoted or in a value.
SUBSCRIPT_CASES = [
    ("a['$(touch m)']=1", f"a['$(touch m)']=1 {SUBSCRIPT}"),
    ("x='b[$(touch m)]'; a[x]=1", f"a[x]=1 {SUBSCRIPT}"),
    ('declare "a[\\$(touch m)]=1"', f"declare a[$(touch m)]=1: {NAMED_SUBSCRIPT}"),
    ('read "a[\\$(touch m)]" <<< x', f"read a[$(touch m)]: {NAMED_SUBSCRIPT}"),
    ("printf -v 'a[$(touch m)]' x", f"printf a[$(touch m)]: {NAMED_SUBSCRIPT}"),
    ("test -v 'a[$(touch m)]'", f"test a[$(touch m)]: {NAMED_SUBSCRIPT}"),
    ("[ -v 'a[$(touch m)]' ]", f"-v 'a[$(touch m)]' {SUBSCRIPT}"),
    ("x='b[$(touch m)]'; [[ -v a[x] ]]", f"-v a[x] {SUBSCRIPT}"),
    ("x='b[$(touch m)]'; let y=x", LET),
    ("declare -i n; n='b[$(touch m)]'",
     "declare -i makes assignments arithmetic, which runs the $(...) a value may hold"),
    ("x='b[$(touch m)]'; : ${!x}",
     "${!x} expands the variable a value names, which runs the $(...) its subscript holds"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "error"), SUBSCRIPT_CASES)
def test_subscripts_evaluated_as_arithmetic_are_an_error(text: str, error: str) -> None:
    assert parse_shell(text).error == error


@pytest.mark.parametrize(("text", "error"), SUBSCRIPT_CASES)
def test_subscript_cases_run_their_command_in_bash(tmp_path: Path, text: str, error: str) -> None:
    bash = require_tool("bash")
    subprocess.run([bash, "-c", text], cwd=tmp_path, capture_output=True, timeout=10, check=False)
    assert (tmp_path / "m").exists()


@pytest.mark.parametrize(
    "text", ["a[0]=1; ls", "a[-1]=1; ls", "echo ${!a[@]} ${!a[*]} ${!p*} ${!p@}", "[ -v x ]", "test -v a[1]"]
)
def test_numeric_subscripts_and_name_listings_are_fine(text: str) -> None:
    assert parse_shell(text).error is None


# -- 7. command words that cannot be resolved statically -------------------------------------------


@pytest.mark.parametrize(
    ("text", "argv"),
    [
        ("$CMD -rf /", ("$CMD", "-rf", "/")),
        ("${X} x", ("${X}", "x")),
        ('"${VAR:-rm}" -rf /', ('"${VAR:-rm}"', "-rf", "/")),
        ("$(echo rm) x", ("$(echo rm)", "x")),
        ("`echo rm` x", ("`echo rm`", "x")),
        ("$'\\u0072\\u00e9' x", ("$'\\u0072\\u00e9'", "x")),  # bash's value depends on the locale
        ("$'\\x{72}m' x", ("$'\\x{72}m'", "x")),  # bash 5.3 reads \x{...}, 5.2 does not
        ('$"r$x" x', ('$"r$x"', "x")),
        ("ls${IFS}-la", ("ls${IFS}-la",)),
        ("/bin/r? x", ("/bin/r?", "x")),
        ("r* x", ("r*", "x")),
        ("eval $x", ("eval", "$x")),
    ],
)
def test_unresolvable_command_word(text: str, argv: Argv) -> None:
    parsed = parse_shell(text)
    assert parsed.commands[0].argv == argv
    assert not parsed.commands[0].static


def test_quoted_glob_characters_in_the_command_word_are_static() -> None:
    assert only("'r?' x").static
    assert only("\\[ -f x ]").argv == ("[", "-f", "x", "]")  # an escaped [ is a command word


def test_ifs_tricks_hide_nothing() -> None:
    parsed = parse_shell("ls${IFS}-la;${IFS}rm${IFS}-rf${IFS}build")
    assert [(c.argv, c.static) for c in parsed.commands] == [
        (("ls${IFS}-la",), False),
        (("${IFS}rm${IFS}-rf${IFS}build",), False),
    ]


def test_brace_expansion_in_the_command_word() -> None:
    parsed = parse_shell("{rm,-rf} x")
    assert parsed.error is not None and parsed.error.startswith("cannot parse:")
    assert all(not c.static for c in parsed.commands)
    assert not parse_shell("x {rm,-rf}; a{b,c}").commands[1].static


def test_brace_expansion_in_arguments_is_risky() -> None:
    assert only("ls {a,b}").risky == "brace expansion can turn one argument into several"
    assert only("echo {1..3}").argv == ("echo", "{1..3}")
    assert only("echo {1..3}").risky is not None
    assert only("echo '{a,b}' {} x{}").risky is None


# -- 6. redirections --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "redirects"),
    [
        ("ls > out", (Redirect(">", "out", write=True),)),
        ("ls >> out", (Redirect(">>", "out", write=True),)),
        ("ls >| out", (Redirect(">|", "out", write=True),)),
        ("ls &> out", (Redirect("&>", "out", write=True),)),
        ("ls &>> out", (Redirect("&>>", "out", write=True),)),
        ("ls >& out", (Redirect(">&", "out", write=True),)),
        ("ls 2> err", (Redirect("2>", "err", write=True),)),
        ("ls 2>>err", (Redirect("2>>", "err", write=True),)),
        ("cat < in", (Redirect("<", "in", write=False),)),
        ("cat 0< in", (Redirect("0<", "in", write=False),)),
        ("ls > 'a b'", (Redirect(">", "a b", write=True),)),
        ('ls > "$OUT"', (Redirect(">", None, write=True),)),
        ("ls > ~/.bashrc", (Redirect(">", "~/.bashrc", write=True),)),
        ("cat < .env", (Redirect("<", ".env", write=False),)),
        # Harmless: fd duplications and closings, /dev/null and friends, heredocs, here-strings.
        ("ls 2>&1", (Redirect("2>&", "1", write=False, harmless=True),)),
        ("ls >&2", (Redirect(">&", "2", write=False, harmless=True),)),
        ("ls 1>&-", (Redirect("1>&-", "-", write=False, harmless=True),)),
        ("cat <&-", (Redirect("<&-", "-", write=False, harmless=True),)),
        ("cat 3<&0", (Redirect("3<&", "0", write=False, harmless=True),)),
        ("ls > /dev/null", (Redirect(">", "/dev/null", write=True, harmless=True),)),
        ("ls 2>/dev/null", (Redirect("2>", "/dev/null", write=True, harmless=True),)),
        ("ls &>/dev/null", (Redirect("&>", "/dev/null", write=True, harmless=True),)),
        ("ls > /dev/stdout 2> /dev/stderr", (
            Redirect(">", "/dev/stdout", write=True, harmless=True),
            Redirect("2>", "/dev/stderr", write=True, harmless=True),
        )),
        ("cat < /dev/tty", (Redirect("<", "/dev/tty", write=False, harmless=True),)),
        ("cat <<< hi", (Redirect("<<<", None, write=False, harmless=True),)),
        ("cat <<EOF\nx\nEOF", (Redirect("<<", None, write=False, harmless=True),)),
        ("cat <<-EOF\n\tx\n\tEOF", (Redirect("<<-", None, write=False, harmless=True),)),
        # Redirections before the command word, and several in order.
        ("2>/dev/null >out rm x", (
            Redirect("2>", "/dev/null", write=True, harmless=True),
            Redirect(">", "out", write=True),
        )),
    ],
)  # fmt: skip
def test_redirections(text: str, redirects: tuple[Redirect, ...]) -> None:
    assert parse_shell(text).commands[0].redirects == redirects


@pytest.mark.parametrize(
    ("text", "argv", "redirects"),
    [
        ("cat 0<in", ("cat",), (Redirect("0<", "in", write=False),)),
        ("cat x 0<in y", ("cat", "x", "y"), (Redirect("0<", "in", write=False),)),
        ("0<in cat x", ("cat", "x"), (Redirect("0<", "in", write=False),)),
        ("cat a 0<&3", ("cat", "a"), (Redirect("0<&", "3", write=False, harmless=True),)),
    ],
)
def test_input_fd_zero_is_not_an_argument(text: str, argv: Argv, redirects: tuple[Redirect, ...]) -> None:
    # tree-sitter-bash reads the 0 of `0<` as a word; bash reads it as the redirection's fd.
    command = only(text)
    assert (command.argv, command.redirects) == (argv, redirects)


def test_line_continuation_inside_a_word_joins_it() -> None:
    assert only("r\\\nm -rf /").argv == ("rm", "-rf", "/")
    assert only("echo a\\\nb \\\n c").argv == ("echo", "ab", "c")


def test_blanks_inside_double_quotes_are_kept() -> None:
    assert only('echo bb"   " "a"" "b "\t"').argv == ("echo", "bb   ", "a b", "\t")


@pytest.mark.parametrize("text", ["echo \\ b", "\\ rm x", "ls;\\\trm"])
def test_an_escaped_blank_starting_a_word_is_an_error(text: str) -> None:
    # Bash reads `\ b` as the word " b"; tree-sitter-bash drops the escaped blank.
    parsed = parse_shell(text)
    assert parsed.error is not None and "an escaped blank the grammar drops" in parsed.error


@pytest.mark.parametrize(
    ("text", "as_bash_reads_it"),
    [
        # found by test_policy_properties: read as `ls rm -rf build`, so rm was judged an argument of ls
        ("ls | ls | ls\nrm -rf build && ls", "ls | ls | ls;\nrm -rf build && ls"),
        ("ls | ls | ls\n\nrm x && ls", "ls | ls | ls;\n\nrm x && ls"),
        ("ls | ls | ls # note\nrm x && ls", "ls | ls | ls ;# note\nrm x && ls"),
        ('echo "a\nb" | ls | ls\nrm x && ls', 'echo "a\nb" | ls | ls;\nrm x && ls'),
        ("export A=1 | ls | ls\nrm x && ls", "export A=1 | ls | ls;\nrm x && ls"),
        ("[ a ] | ls | ls\nrm x && ls", "[ a ] | ls | ls;\nrm x && ls"),
        ("ls | ls | ls\n[ -f x ] && rm x", "ls | ls | ls;\n[ -f x ] && rm x"),
        ("ls | ls | ls\n! rm x && ls", "ls | ls | ls;\n! rm x && ls"),
        ("ls | ls | ls\nx=1 rm y && ls", "ls | ls | ls;\nx=1 rm y && ls"),
        ("ls | ls | ls\n> b && ls", "ls | ls | ls;\n> b && ls"),
        ("{ ls | ls | ls\nrm x && ls; }", "{ ls | ls | ls;\nrm x && ls; }"),
        ("if true; then\n ls\nfi | ls | ls\nrm x && ls", "if true; then\n ls\nfi | ls | ls;\nrm x && ls"),
        (
            "ls | ls | ls\nls | ls | ls\nls | ls | ls\nrm x",
            "ls | ls | ls;\nls | ls | ls;\nls | ls | ls;\nrm x",
        ),
        ("case x in\n a) ls | ls | ls\n;; esac", "case x in\n a) ls | ls | ls;\n;; esac"),
    ],
)
def test_a_line_break_ends_the_command_the_grammar_would_run_on(text: str, as_bash_reads_it: str) -> None:
    # Bash ends a simple command at a line break; after a pipeline of three, tree-sitter-bash can read
    # the next line as more arguments of the last command. The parser puts back the ";" bash reads there.
    assert bash_syntax_ok(text) and bash_syntax_ok(as_bash_reads_it)
    assert argvs(text) == argvs(as_bash_reads_it)
    assert not any(len(argv) > 1 and argv[0] == "ls" for argv in argvs(text))


def bash_syntax_ok(text: str) -> bool:
    return subprocess.run(["bash", "-n", "-c", text], capture_output=True, check=False).returncode == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ls \\\n -l | ls | ls", [("ls", "-l"), ("ls",), ("ls",)]),
        ("ls |\n ls |\n ls\nrm x", [("ls",), ("ls",), ("ls",), ("rm", "x")]),
        ("ls | ls\nrm x && ls", [("ls",), ("ls",), ("rm", "x"), ("ls",)]),
        ("ls | ls | ls\nrm x | ls", [("ls",), ("ls",), ("ls",), ("rm", "x"), ("ls",)]),
        ("cat <<EOF > out\nrm x\nEOF\nls", [("cat",), ("ls",)]),
        ("[[ a == b &&\n c == d ]] && ls", [("ls",)]),
        ("ls | ls | ls && ls", [("ls",), ("ls",), ("ls",), ("ls",)]),
        ('echo "a\nb" x', [("echo", "a\nb", "x")]),
        ("echo a # c\nls", [("echo", "a"), ("ls",)]),
    ],
)
def test_line_breaks_bash_reads_inside_one_command_are_not_an_error(text: str, expected: list[Argv]) -> None:
    assert argvs(text) == expected


def test_backquotes_in_a_heredoc_fed_to_a_shell() -> None:
    parsed = parse_shell("bash <<EOF\n`rm x`\nEOF")
    assert parsed.error == "bash reads its script from standard input"
    assert [c.argv for c in parsed.commands] == [("bash",), ("rm", "x")]


def test_redirection_text_and_argument_after_the_target() -> None:
    # `echo a > f b`: b is an argument of echo; a secret cannot hide after a redirection.
    assert parse_shell("cat > /dev/null .env") == ParsedShell(
        (
            SimpleCommand(
                ("cat", ".env"),
                "cat > /dev/null .env",
                redirects=(Redirect(">", "/dev/null", write=True, harmless=True),),
            ),
        )
    )


def test_harmless_pipeline_redirect() -> None:
    assert parse_shell("pytest -q 2>&1 | grep FAILED") == ParsedShell(
        (
            SimpleCommand(("pytest", "-q"), "pytest -q 2>&1", redirects=(Redirect("2>&", "1", False, True),)),
            SimpleCommand(("grep", "FAILED"), "grep FAILED"),
        )
    )


def test_redirections_of_a_compound_statement_apply_to_every_command_inside() -> None:
    out = Redirect(">", "out", write=True)
    parsed = parse_shell("{ a; b 2>/dev/null; } > out")
    assert [(c.argv, c.redirects) for c in parsed.commands] == [
        (("a",), (out,)),
        (("b",), (Redirect("2>", "/dev/null", True, True), out)),
    ]
    parsed = parse_shell("while read x; do c $(d); done < in")
    inp = Redirect("<", "in", write=False)
    assert [(c.argv, c.redirects) for c in parsed.commands] == [
        (("read", "x"), (inp,)),
        (("c", "$(d)"), (inp,)),
        (("d",), (inp,)),
    ]
    assert [c.redirects for c in parse_shell("(a) > x; if b; then c; fi >> y").commands] == [
        (Redirect(">", "x", write=True),),
        (Redirect(">>", "y", write=True),),
        (Redirect(">>", "y", write=True),),
    ]


def test_redirection_after_a_pipeline_or_list_belongs_to_its_last_command() -> None:
    parsed = parse_shell("a | b > out; c && d 2> err")
    assert [(c.argv, c.redirects) for c in parsed.commands] == [
        (("a",), ()),
        (("b",), (Redirect(">", "out", write=True),)),
        (("c",), ()),
        (("d",), (Redirect("2>", "err", write=True),)),
    ]


def test_redirection_without_a_command() -> None:
    out = Redirect(">", "out", write=True)
    assert parse_shell("> out") == ParsedShell((SimpleCommand((), "> out", redirects=(out,)),))
    assert only("exec > log").redirects == (Redirect(">", "log", write=True),)


def test_write_to_a_file_outside_through_heredoc() -> None:
    assert parse_shell("cat > ~/.bashrc << 'EOF'\nexport PATH=/tmp/evil:$PATH\nEOF") == ParsedShell(
        (
            SimpleCommand(
                ("cat",),
                "cat > ~/.bashrc << 'EOF'",
                redirects=(Redirect(">", "~/.bashrc", write=True), Redirect("<<", None, False, True)),
            ),
        )
    )


# -- parse errors and limits ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected", "error"),
    [
        ("if a; then rm x", [("a",), ("rm", "x")], "cannot parse: unexpected 'if a; then rm x' at line 1"),
        ("r[m] x", [], "cannot parse: unexpected 'r[m] x'"),
        ("echo 'unterminated; rm x", [], "cannot parse: unexpected"),
        ("rm x; (ls", [("rm", "x"), ("ls",)], "cannot parse: missing ')' at line 1, column 10"),
    ],
)
def test_parse_errors_keep_the_commands_found(text: str, expected: list[Argv], error: str) -> None:
    parsed = parse_shell(text)
    assert parsed.error is not None and parsed.error.startswith(error)
    assert [c.argv for c in parsed.commands][: len(expected)] == expected


def test_input_over_the_limit() -> None:
    assert parse_shell("x" * (MAX_INPUT_BYTES + 1)) == ParsedShell(
        (), f"input is {MAX_INPUT_BYTES + 1} bytes, over the {MAX_INPUT_BYTES}-byte limit"
    )
    assert parse_shell("é" * (MAX_INPUT_BYTES // 2 + 1)).error is not None  # counted in UTF-8 bytes
    assert parse_shell("ls;" * (MAX_INPUT_BYTES // 3)).error is None


def test_deep_syntax_nesting_is_an_error_not_a_crash() -> None:
    parsed = parse_shell("echo $(" * 3000 + "ls" + ")" * 3000)
    assert parsed.error is not None and "nesting" in parsed.error


def test_lone_surrogate_is_an_error() -> None:
    assert parse_shell("ls \ud800") == ParsedShell(
        (), "cannot parse: the input is not valid Unicode text (lone surrogate)"
    )


def test_unicode_words() -> None:
    assert argvs("echo été $(rm 'é')") == [("echo", "été", "$(rm 'é')"), ("rm", "é")]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from(list("ab $()`'\"\\;|&<>{}[]*?!#=~\n\t-cxe")), max_size=60))
def test_never_raises(text: str) -> None:
    parsed = parse_shell(text)
    assert isinstance(parsed, ParsedShell)
    assert parsed.error is None or "\n" not in parsed.error


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from(list("ab -='\"\\\t")), max_size=24))
def test_quote_removal_matches_bash(words: str) -> None:
    # Only quotes, backslashes and plain characters: bash runs nothing but printf here. The parser
    # may refuse what bash accepts (a trailing backslash), never read a word differently.
    bash = require_tool("bash")
    text = "printf '%s\\0' _ " + words
    run = subprocess.run([bash, "-c", text], capture_output=True, timeout=10, check=False)
    parsed = parse_shell(text)
    if run.returncode != 0:  # an unterminated quote
        assert parsed.error is not None
    elif parsed.error is None:
        printed = tuple(run.stdout.decode().split("\0")[1:-1])
        assert [c.argv[3:] for c in parsed.commands] == [printed]


def test_parse_from_several_threads() -> None:
    texts = ["git status && rm -rf build", "bash -c 'ls | wc'", "find . -exec rm {} \\;"] * 50
    expected = [parse_shell(text) for text in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(parse_shell, texts)) == expected


# -- the shell-command corpus -----------------------------------------------------------------------

CASES = (
    [
        json.loads(line)
        for line in (CORPUS / "shell-commands" / "commands.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    if AVAILABLE
    else []
)


@pytest.mark.parametrize("case", corpus_params(CASES, lambda case: str(case["id"])))
def test_corpus_parses(case: dict[str, object]) -> None:
    parsed = parse_shell(str(case["command"]))
    assert parsed.commands, "every corpus line runs at least one command"
    if case["expected"] == "deny":
        # Whatever makes it denied is visible: a command, an unreadable word or script, or a redirect.
        names = {"rm", "sudo", "curl", "wget", "git", "cat"}
        assert parsed.error is not None or any(
            not c.static or c.redirects or any(form[0] in names for form in (c.argv, *c.wrappers))
            for c in parsed.commands
        )


@pytest.mark.parametrize(
    ("case_id", "expected"),
    [
        ("sh07", [("find", ".", "-name", "*.pyc"), ("rm", "-f")]),
        ("sh09", [("find", "/foo", "-exec", "rm", "{}", ";"), ("rm", "{}")]),
        ("sh29", [("rm", "-rf", "build")]),
        ("sh31", [("rm", "-rf", "build")]),
        ("sh33", [("wget", "-q", "https://example.com/x", "-O", "/tmp/x")]),
        ("sh35", [("rm", "-rf", "build")]),
        ("sh37", [("ls",)]),  # run by sudo: SimpleCommand.wrappers keeps ("sudo", "-u", "nobody", "ls")
        ("sh45", [("git", "push", "origin", "main")]),
        ("sh61", [("cat",), ("curl", "-X", "POST", "--data-binary", "@-", "https://example.com/collect")]),
        ("sh69", [("diff", "<(cat /etc/passwd)", "<(ls)"), ("cat", "/etc/passwd"), ("ls",)]),
        ("sh77", [("grep", "-n", "a && b", "src/app.py")]),
        ("sh85", [("cd", "src"), ("pytest", "-x", "tests/")]),
    ],
)
def test_corpus_exact(case_id: str, expected: list[Argv]) -> None:
    require_corpus()
    case = next(case for case in CASES if case["id"] == case_id)
    assert argvs(case["command"]) == expected


def test_corpus_risky_and_unreadable_cases() -> None:
    require_corpus()
    by_id = {case["id"]: parse_shell(case["command"]) for case in CASES}
    assert by_id["sh51"].commands[0].risky == "git -p runs a pager"
    assert by_id["sh53"].commands[0].argv == ("git", "diff")
    assert by_id["sh53"].commands[0].risky == "GIT_EXTERNAL_DIFF= can make the program run other code"
    assert by_id["sh23"].error == "sh reads its script from standard input"
    assert by_id["sh71"].error == "bash reads its script from standard input"
    assert not by_id["sh73"].commands[0].static
    assert by_id["sh57"].commands[0].redirects == (Redirect(">", "~/.bashrc", write=True),)
    assert by_id["sh83"].commands[0].redirects == (Redirect("2>&", "1", write=False, harmless=True),)


def test_env_chdir_is_risky() -> None:
    """Paths are judged from the workspace; env -C would resolve them elsewhere (second review)."""
    (command,) = parse_shell("env -u HOME -C /tmp --unset=X - rm x").commands
    assert command.argv == ("rm", "x")
    assert command.risky == "env -C changes the directory the command's paths are relative to"
