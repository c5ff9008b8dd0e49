"""What the command line writes to a terminal: the one place its output goes through.

``guard_std_streams`` (called first thing by ``cli.main``) replaces ``sys.stderr`` always, and
``sys.stdout`` when it is a terminal, with a ``VisibleStream`` that writes every text through
``core.visible_text.visible``: control and format characters other than tab and line feed are shown as
``^[``, ``^M``, ``<U+202E>``… (conventions of ``less`` and ``cat -v``, described in that module). So no
print of any subcommand (the ``run`` transcript, the final answer, approval questions, ``doctor``,
``policy check``, ``instructions``, ``skills``, the demo, argparse's errors, a traceback) can send an
escape sequence from a file, a tool or the model to the terminal.

Stdout that is not a terminal is left as it is: a piped diff keeps its exact bytes for ``git apply`` or
``patch``, and ``--json`` stays machine-readable (JSON escapes C0 controls itself). ``agent-ls serve``
keeps its stdout untouched: it is the JSON-RPC channel.

``diff_notes`` says, for one file's diff, what the user must be told: on a terminal, a comment line
before the diff listing the escaped forms in it; when stdout is piped, a line for stderr naming the
control characters the diff holds raw (a CRLF line ending alone is not worth a note).

``Transcript`` prints ``agent-ls run``'s transcript and stops the run when its reader goes away.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO, cast

from agent_ls.core.visible_text import hidden_forms, visible


class VisibleStream:
    """A text stream that writes through ``visible``; everything else is the wrapped stream's.

    Attributes other than ``write`` and ``writelines`` (``flush``, ``fileno``, ``isatty``,
    ``encoding``, ``reconfigure``, ``buffer``) are the wrapped stream's, so ``input()`` and
    ``reconfigure`` keep working; bytes written to ``.buffer`` are not escaped (nothing of ours does that).
    """

    def __init__(self, wrapped: TextIO) -> None:
        self.wrapped = wrapped

    def write(self, text: str) -> int:
        self.wrapped.write(visible(text))
        return len(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> object:
        return getattr(self.wrapped, name)


def guard_std_streams(*, stdout: bool = True) -> None:
    """Wrap ``sys.stderr``, and ``sys.stdout`` when ``stdout`` is True and it is a terminal. Idempotent."""
    if not isinstance(sys.stderr, VisibleStream):
        sys.stderr = cast(TextIO, VisibleStream(sys.stderr))
    if stdout and not isinstance(sys.stdout, VisibleStream) and _isatty(sys.stdout):
        sys.stdout = cast(TextIO, VisibleStream(sys.stdout))


def escapes(stream: TextIO) -> bool:
    """True when ``stream`` shows control characters escaped (a ``VisibleStream``)."""
    return isinstance(stream, VisibleStream)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False


_NAMES = {"^@": "NUL", "^G": "BEL", "^H": "BS", "^I": "TAB", "^M": "CR", "^[": "ESC", "^?": "DEL"}


def _named(forms: list[str]) -> str:
    """``^[ (ESC), ^M (CR), <U+202E>``: each escaped form, with its control's short name where it has one."""
    return ", ".join(f"{form} ({_NAMES[form]})" if form in _NAMES else form for form in forms)


def diff_notes(diff: str, name: str, *, terminal: bool) -> tuple[str, str]:
    """``(before_diff, for_stderr)``: the notes to show with one file's diff; ``""`` where none is due.

    Args:
        diff: the file's unified diff (``workspace.diffs.unified_diff``).
        name: the file's name as the diff header writes it (``workspace.diffs.quote_path``).
        terminal: the diff goes to a terminal (it will be shown escaped), else to a pipe or a file.

    Returns:
        On a terminal, a ``# agent-ls: …`` line (ending with a line feed) that lists the escaped forms,
        for before the diff (``patch`` and ``git apply`` skip such lines), and no stderr line. Piped, no
        line before the diff, and one stderr line when the diff holds control characters other than
        CRLF line endings.
    """
    if terminal:
        forms = hidden_forms(diff)
        if not forms:
            return "", ""
        return (
            f"# agent-ls: control characters in {name} are shown escaped: {_named(forms)}; "
            "--apply writes them as they are\n",
            "",
        )
    forms = hidden_forms(diff.replace("\r\n", "\n"))
    if not forms:
        return "", ""
    return (
        "",
        f"agent-ls: note: the diff of {name} on stdout holds control characters as they are: {_named(forms)}",
    )


OUTPUT_CLOSED = "stopped: its output was closed (the reader of the transcript, such as head, went away)"


class Transcript:
    """``agent-ls run``'s transcript on stderr, which a reader may close (``agent-ls run … 2>&1 | head``).

    Where a shell tool is ended by SIGPIPE (Python ignores it), the run is stopped instead: the first
    failed write cancels the calling task with ``OUTPUT_CLOSED`` (the loop stores that as the run's
    reason, status ``cancelled``), stderr is pointed at ``/dev/null`` so nothing fails again, and
    ``closed`` is set (the front end exits 141, 128 + SIGPIPE, as ``cli.main`` does for a closed stdout).
    A closed transcript never reaches the run as an error of its own."""

    def __init__(self) -> None:
        self.closed = False

    def line(self, text: str, *, stop_run: bool = True) -> None:
        """Print ``text`` and a line feed on stderr, flushed; ``stop_run`` False when the run has ended."""
        if self.closed:
            return
        try:
            print(text, file=sys.stderr, flush=True)
        except BrokenPipeError:
            self.closed = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stderr.fileno())  # the buffered rest and every later print go nowhere
            os.close(devnull)
            if stop_run:
                _cancel_the_running_task()


def _cancel_the_running_task() -> None:
    """Cancel the task this runs in, if any, with ``OUTPUT_CLOSED``."""
    import asyncio  # here, not at the top: `import agent_ls.cli` must not load asyncio (start-up budget)

    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running event loop
        return
    if task is not None:
        task.cancel(OUTPUT_CLOSED)
