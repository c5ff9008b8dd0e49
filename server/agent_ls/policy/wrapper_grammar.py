"""How an exec wrapper's words are read: ``wrapper [options] [leading operands] command...``.

The pieces ``shell_wrappers`` (the table of wrappers) and ``special_wrappers`` (the wrappers with a
grammar of their own) share: what unwrapping gives (``Unwrapped``), a wrapper's description
(``WrapperSpec``) and the reader of that description (``read_wrapper``). Options are read by
``shell_options``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from agent_ls.policy.shell_options import Options, scan_options
from agent_ls.policy.shell_state import variable_risk
from agent_ls.policy.shell_words import Word


@dataclass(frozen=True)
class Unwrapped:
    """The command a wrapper runs.

    Attributes:
        words: that command's words; empty when the wrapper runs none (``env``, ``command -v x``,
            ``taskset -p 1``): the wrapper is then judged as written.
        risky: reasons the wrapper itself adds (``time -o FILE`` writes a file, ``sudo`` changes user).
        error: why the wrapper could not be read (an undocumented option, a script not static).
        placeholder: a string the wrapper replaces at run time (``xargs -I {}``).
        inner_stdin_unknown: the command's standard input is not the wrapper's (xargs).
        scripts: shell scripts the wrapper also runs (``strace -o '|CMD'``, ``npx -c CMD``,
            ``parallel ::: CMD``), each parsed as ``sh -c`` would.
    """

    words: tuple[Word, ...]
    risky: tuple[str, ...] = ()
    error: str | None = None
    placeholder: str | None = None
    inner_stdin_unknown: bool = False
    scripts: tuple[Word, ...] = ()


SHELL: tuple[Word, ...] = (Word("sh"),)  # an interactive shell: reads its script from standard input
_HELP = frozenset({"help", "version"})
AS_USER = "runs the command as another user"
NAMESPACES = "runs the command in other namespaces or another root directory"
LATER = "runs the command later or through a service manager, outside the sandbox"


WRITES = "writes a file"


@dataclass(frozen=True)
class WrapperSpec:
    """How a wrapper's words are read: ``wrapper [options] [leading operands] command...``.

    Attributes:
        options: its options.
        leading: operands before the command (``timeout DURATION``, ``chroot NEWROOT``).
        script: options whose value is a shell script it runs with ``sh -c`` (``flock -c``).
        runs_nothing: options with which it runs no command (``taskset -p``, ``sudo -l``).
        no_command: what runs without a command: ``nothing``, or an interactive ``shell``.
        assignments: ``NAME=value`` words may come before the command (``env``, ``sudo``).
        risky: why every command it runs is risky, or None.
        risky_options: option -> why it makes the command risky (``time -o`` writes a file).
    """

    options: Options = field(default_factory=Options)
    leading: int = 0
    script: frozenset[str] = frozenset()
    runs_nothing: frozenset[str] = frozenset()
    no_command: str = "nothing"
    assignments: bool = False
    risky: str | None = None
    risky_options: Mapping[str, str] = field(default_factory=dict)


def options(
    flags: str = "",
    valued: str = "",
    optional: str = "",
    long_flags: str = "",
    long_valued: str = "",
    **kwargs: bool,
) -> Options:
    """Options from space-separated long names; ``help`` and ``version`` are always flags."""
    return Options(
        flags,
        valued,
        optional,
        frozenset(long_flags.split()) | _HELP,
        frozenset(long_valued.split()),
        **kwargs,
    )


def read_wrapper(name: str, words: Sequence[Word], spec: WrapperSpec) -> Unwrapped:
    """The command ``words`` (a ``name`` wrapper described by ``spec``) runs."""
    scanned = scan_options(name, words[1:], spec.options)
    if scanned.error is not None:
        return Unwrapped((), error=scanned.error)
    if scanned.has("--help", "--version", *spec.runs_nothing):
        return Unwrapped(())
    risky = [spec.risky] if spec.risky else []
    risky += [reason for option, reason in spec.risky_options.items() if scanned.has(option)]
    for option in spec.script:
        value = scanned.value(option)
        if value is not None:
            return Unwrapped(
                (Word("sh"), Word("-c"), Word(value, static=option not in scanned.dynamic)), tuple(risky)
            )
    rest = tuple(words[1 + scanned.index :])
    if len(rest) < spec.leading:
        return Unwrapped((), tuple(risky))  # an error when it runs: nothing runs
    rest = rest[spec.leading :]
    if spec.assignments:
        rest = strip_assignments(rest, risky)
    if not rest:
        return Unwrapped(SHELL if spec.no_command == "shell" else (), tuple(risky))
    return Unwrapped(rest, tuple(risky))


def strip_assignments(rest: tuple[Word, ...], risky: list[str]) -> tuple[Word, ...]:
    """``rest`` without its leading ``NAME=value`` words; a risky variable's reason goes to ``risky``."""
    while rest and (name := _assignment_name(rest[0])) is not None:
        reason = variable_risk(name, session=False)
        if reason is not None:
            risky.append(reason)
        rest = rest[1:]
    return rest


def _assignment_name(word: Word) -> str | None:
    name, equals, _ = word.text.partition("=")
    if (
        word.static
        and equals
        and name
        and (name[0].isalpha() or name[0] == "_")
        and name.replace("_", "a").isalnum()
    ):
        return name
    return None
