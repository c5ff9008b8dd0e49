"""What one simple command executes: its decoded words normalized into the commands it runs.

``shell_parse`` reads a simple command's words and redirections from the tree into an ``Exec`` context;
``command_steps`` then decides from the words alone what runs. Steps, repeated while a wrapper gives
way to the command it runs:

1. A command word not known statically is emitted as is (such a command is never allowed).
2. A directory prefix is dropped from the command word (risky outside the system bin directories).
3. A shell (``bash -c``, or a static heredoc or here-string fed to ``sh``), ``eval`` and ``trap`` hand
   their script back to be parsed; ``mapfile -C`` is an error; ``watch`` runs its command or script
   (``shell_argv``).
4. An exec wrapper gives way to the command it runs, and its scripts are parsed (``shell_wrappers``).
5. What a builtin changes for the rest of the script is noted (``shell_state``); ``find -exec`` and
   ``-ok`` emit ``find`` then each command it runs; git loses its global options (``shell_git``).

The result is a lazy sequence of ``Step`` values that the walk performs as they come, so their order
is the order of ``ParsedShell.commands`` and of its errors: emit a ``SimpleCommand``, note
``ScriptNotes``, or parse and walk a ``NestedScript``. The decisions read only the words and the
context; the recursion into nested scripts stays in the walk, which this module does not import.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from agent_ls.policy.shell_argv import (
    SHELLS,
    find_exec_segments,
    mapfile_callback,
    shell_invocation,
    system_bin_dir,
    trap_script,
    watch_command,
)
from agent_ls.policy.shell_commands import Redirect, SimpleCommand, with_risky
from agent_ls.policy.shell_git import git_normalize
from agent_ls.policy.shell_state import ScriptNotes, builtin_notes
from agent_ls.policy.shell_words import Word
from agent_ls.policy.shell_wrappers import unwrap


@dataclass(frozen=True)
class Exec:
    """What a simple command runs with: its source text, redirections, risks, stdin and ``{}`` marker."""

    text: str
    redirects: tuple[Redirect, ...]
    risky: tuple[str, ...] = ()
    stdin: str | None = None  # the text of a static heredoc or here-string on fd 0
    placeholder: str | None = None  # "{}" under find -exec, the -I string under xargs: replaced at run
    wrappers: tuple[tuple[str, ...], ...] = ()  # SimpleCommand.wrappers of what it runs

    def inside(self, words: Sequence[Word]) -> Exec:
        """This context for a command that ``words`` runs (``SimpleCommand.wrappers`` grows by one)."""
        return replace(self, wrappers=(*self.wrappers, tuple(word.text for word in words)))


@dataclass(frozen=True)
class NestedScript:
    """A script a command runs, to be parsed and walked one level deeper.

    Attributes:
        script: the script text (``bash -c SCRIPT``, the words of ``eval`` joined by spaces, the body
            of a heredoc fed to ``sh``).
        ctx: the context of the command that runs it: its risks and redirections are added to every
            command of the script, and ``words`` to their wrappers.
        words: the command that runs the script; emitted as not static when the script is nested too
            deep to be read.
    """

    script: str
    ctx: Exec
    words: tuple[Word, ...]


Step = SimpleCommand | ScriptNotes | NestedScript


def command_steps(words: Sequence[Word], ctx: Exec) -> Iterator[Step]:
    """The steps of the command ``words`` (non-empty) in context ``ctx``, in order (see the module)."""
    words = list(words)
    while True:
        head = words[0]
        if not head.is_static_command(ctx.placeholder):
            yield emitted(words, ctx, static=False)
            return
        directory, _, name = head.text.rpartition("/")
        if directory or head.text.startswith("/"):
            if not system_bin_dir(directory):
                ctx = replace(ctx, risky=(*ctx.risky, f"runs {head.text} by path"))
            ctx = ctx.inside(words)
            words = [replace(head, text=name), *words[1:]]
        if name in SHELLS:
            yield from _shell_steps(words, ctx)
            return
        if name == "eval":
            if len(words) > 1:
                yield from _script_steps(words, words[1:], ctx)
            return
        if name == "trap":
            script = trap_script(words)
            yield emitted(words, ctx)
            if script is not None:
                yield from _script_steps(words, [script], ctx, emit_on_error=False)
            return
        if name in ("mapfile", "readarray") and mapfile_callback(words):
            yield from failed(words, ctx, f"{name} -C runs its callback as code, which is not read")
            return
        if name == "watch":
            run = watch_command(words)
            if run is None:
                yield emitted(words, ctx)
            elif run.error is not None:
                yield from failed(words, ctx, run.error)
            elif run.exec_words:
                ctx = ctx.inside(words)
                words = list(run.exec_words)
                continue
            elif run.script_words:
                yield from _script_steps(words, list(run.script_words), ctx)
            return
        unwrapped = unwrap(words)
        if unwrapped is not None:
            if unwrapped.error is not None:
                yield from failed(words, ctx, unwrapped.error)
                return
            ctx = replace(ctx, risky=(*ctx.risky, *unwrapped.risky))
            if unwrapped.inner_stdin_unknown:
                ctx = replace(ctx, stdin=None)
            if unwrapped.placeholder is not None:
                ctx = replace(ctx, placeholder=unwrapped.placeholder)
            for script in unwrapped.scripts:
                yield from _script_steps(words, [script], ctx, emit_on_error=False)
            if not unwrapped.words:
                yield emitted(words, ctx)
                return
            ctx = ctx.inside(words)
            words = list(unwrapped.words)
            continue
        yield builtin_notes(name, words)
        if name == "find":
            find = find_exec_segments(words)
            yield emitted(words, replace(ctx, risky=(*ctx.risky, *find.risky)))
            for segment in find.segments:
                yield from command_steps(segment, replace(ctx.inside(words), stdin=None, placeholder="{}"))
            return
        if name == "git":
            normal = git_normalize(words)
            if len(normal.words) != len(words):
                ctx = ctx.inside(words)
            yield emitted(list(normal.words), replace(ctx, risky=(*ctx.risky, *normal.risky)))
            return
        yield emitted(words, ctx)
        return


def emitted(words: Sequence[Word], ctx: Exec, *, static: bool = True) -> SimpleCommand:
    """The ``SimpleCommand`` of ``words`` in ``ctx`` (``static`` False: its command word is unknown)."""
    risky = list(ctx.risky)
    if any(word.brace for word in words[1:]):
        risky.append("brace expansion can turn one argument into several")
    argv = tuple(word.text for word in words)
    undecoded = tuple(i for i, word in enumerate(words) if i and not word.static)
    command = SimpleCommand(argv, ctx.text, static, None, ctx.redirects, undecoded, ctx.wrappers)
    return with_risky(command, risky)


def failed(words: Sequence[Word], ctx: Exec, error: str) -> tuple[ScriptNotes, SimpleCommand]:
    """The steps of a command that cannot be read: ``error``, then the command emitted as not static."""
    return ScriptNotes(errors=(error,)), emitted(words, ctx, static=False)


def _shell_steps(words: list[Word], ctx: Exec) -> Iterator[Step]:
    """``bash``/``sh``/...: the ``-c SCRIPT`` or a heredoc script is parsed; a script file is kept as is."""
    run = shell_invocation(words)
    if run.error is not None:
        yield from failed(words, ctx, run.error)
    elif run.script is not None:
        yield from _script_steps(words, [run.script], ctx)
    elif not run.from_stdin:
        yield emitted(words, ctx)  # runs a script file (judged by its own name), or --version
    elif ctx.stdin is None:
        yield from failed(words, ctx, f"{words[0].text} reads its script from standard input")
    else:
        yield NestedScript(ctx.stdin, ctx, tuple(words))


def _script_steps(
    words: list[Word], parts: list[Word], ctx: Exec, *, emit_on_error: bool = True
) -> Iterator[Step]:
    """``parts`` joined by spaces as a script (``eval`` joins its arguments the same way)."""
    name = words[0].text
    for part in parts:
        if not part.static or (ctx.placeholder is not None and ctx.placeholder in part.text):
            error = f"the script of {name} is not static: {part.text}"
            if emit_on_error:
                yield from failed(words, ctx, error)
            else:
                yield ScriptNotes(errors=(error,))
            return
    yield NestedScript(" ".join(part.text for part in parts), ctx, tuple(words))
