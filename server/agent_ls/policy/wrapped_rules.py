"""Deny and ask rules that no program put in front of a command can lift.

The parser unwraps the exec wrappers it knows (``shell_wrappers``) and the engine judges the command
they run. Two checks close what is left, for each simple command:

1. **The wrapper's own form.** Deny and ask rules also match each form the command had before it was
   unwrapped (``SimpleCommand.wrappers``): ``sudo *`` denies ``sudo -u bob ls``, a user's ``nice *``
   ask still asks for ``nice make``. Allow rules match the command itself only, so wrapping never
   widens an allow.
2. **The safety net.** When the command word is not known to run none of its arguments (it is not in
   ``DATA_PROGRAMS``, or the command is not static or is risky) and a later word starts a command that
   a deny rule names, the verdict is deny: ``mywrapper --flag rm -rf build``, ``uv run curl x``,
   ``$X rm -rf build``. The words from there on are parsed as a command line of their own (so
   wrappers, git's global options and ``sh -c`` scripts among them are read as well) and each command
   they give, with its wrapper forms, is matched against the deny rules only.

A later word is looked at when its name could start such a command: a deny rule's first word matches
it, or the parser reads it as running something (a shell, ``eval``, an exec wrapper, ``find``). At most
``MAX_PARSES`` command lines are parsed per command; past that the command asks.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from fnmatch import fnmatchcase

from agent_ls.policy.rules import FALLBACK_RULE, Judgement, Rule, judge, quoted_command
from agent_ls.policy.shell_argv import SHELLS
from agent_ls.policy.shell_commands import SimpleCommand
from agent_ls.policy.shell_wrappers import WRAPPERS

MAX_PARSES = 64
MAX_DEPTH = 3
HIDDEN_RULE = "guard: too many words to look for a hidden command"

DATA_PROGRAMS = frozenset(
    {
        # coreutils, grep and friends: every argument is a file, a pattern or text
        "basename", "cat", "cksum", "cmp", "comm", "cp", "cut", "date", "df", "diff", "dirname", "du",
        "echo", "expand", "false", "file", "fmt", "fold", "grep", "egrep", "fgrep", "rg", "head", "id",
        "join", "ln", "ls", "dir", "vdir", "md5sum", "b2sum", "sha1sum", "sha224sum", "sha256sum",
        "sha384sum", "sha512sum", "mkdir", "mv", "nl", "od", "paste", "printf", "pwd", "readlink",
        "realpath", "rev", "rmdir", "seq", "sleep", "stat", "tac", "tail", "tee", "test", "[", "touch",
        "tr", "tree", "true", "uname", "unexpand", "uniq", "wc", "which", "whereis", "whoami", "base64",
        "hexdump", "xxd", "jq",
        # read by the parser, which emits what they run: find -exec, git's programs are "risky"
        "find", "git",
        # test runners take test paths and names (pytest -k NAME)
        "pytest", "py.test",
        # bash builtins that take names, not commands
        "cd", "pushd", "popd", "dirs", "export", "declare", "typeset", "local", "readonly", "unset", "set",
        "shopt", "alias", "unalias", "type", "hash", "help", "read", "getopts", "wait", "kill", "jobs",
        "fg", "bg", "disown", "umask", "ulimit", "shift", "return", "exit", "break", "continue", ":",
        "history", "enable", "complete", "compgen",
    }
)  # fmt: skip
"""Programs none of whose arguments is a command they run (``echo rm -rf x`` runs no ``rm``)."""

# Names the parser reads as running another command: the safety net parses from them on.
_RUNNERS = WRAPPERS | SHELLS | {"eval", "exec", "command", "builtin", "xargs", "find", "watch", "trap"}
_COMMAND_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def wrapped_judgements(simple: SimpleCommand, rules: Sequence[Rule]) -> list[Judgement]:
    """The verdicts that wrapping cannot lift for ``simple`` (module docstring), in order: the deny and
    ask rules matching a wrapper form, then the safety net's deny (or its ask when there were too many
    words to look at). Empty when none applies."""
    strict = [rule for rule in rules if rule.key == "bash" and rule.verdict != "allow"]
    if not strict:
        return []
    found = [j for form in simple.wrappers if (j := _match(form, strict)) is not None]
    deny = [rule for rule in strict if rule.verdict == "deny"]
    if deny:
        net = _Net(deny)
        hidden = net.hidden(simple, 0)
        if hidden is not None:
            found.append(hidden)
        elif net.parses > MAX_PARSES:
            reason = (
                f"{simple.text!r} has more words than can be looked through for a command a deny rule names"
            )
            found.append(Judgement("ask", HIDDEN_RULE, reason))
    return found


def _match(argv: Sequence[str], rules: Sequence[Rule]) -> Judgement | None:
    """The strictest of ``rules`` matching ``argv`` as a command, or None when none does."""
    judgement = judge("bash", " ".join(argv), rules, quoted=quoted_command(argv))
    return None if judgement.rule == FALLBACK_RULE else judgement


class _Net:
    """The safety net over one command: deny rules only, and a budget of parses."""

    def __init__(self, deny: Sequence[Rule]) -> None:
        self.deny = deny
        self.heads = {rule.pattern.split(" ", 1)[0].casefold() for rule in deny}
        self.parses = 0

    def hidden(self, simple: SimpleCommand, depth: int) -> Judgement | None:
        """A deny for a command that a later word of ``simple`` starts, or None."""
        argv = simple.argv
        if not argv or (simple.static and simple.risky is None and argv[0] in DATA_PROGRAMS):
            return None
        if simple.static and simple.risky is None and argv[0] in WRAPPERS:
            return None  # the parser unwrapped it: it runs nothing here
        for i in range(1, len(argv)):
            if i in simple.undecoded or not self.could_start(argv[i]):
                continue
            self.parses += 1
            if self.parses > MAX_PARSES:
                return None
            from agent_ls.policy.shell_parse import parse_shell  # loaded with the first command

            for inner in parse_shell(shlex.join(argv[i:])).commands:
                for form in (inner.argv, *inner.wrappers):
                    matched = _match(form, self.deny) if form else None
                    if matched is not None and matched.verdict == "deny":
                        shown = quoted_command(argv[i:])
                        reason = f"{argv[0]} may run {shown!r}, which matches {matched.rule}"
                        return Judgement("deny", matched.rule, reason)
                if depth < MAX_DEPTH and inner.argv != argv[i:]:
                    deeper = self.hidden(inner, depth + 1)
                    if deeper is not None:
                        return deeper
        return None

    def could_start(self, word: str) -> bool:
        name = word.rpartition("/")[2]
        if not _COMMAND_NAME.fullmatch(name):
            return False
        folded = name.casefold()
        return name in _RUNNERS or any(fnmatchcase(folded, head) for head in self.heads)
