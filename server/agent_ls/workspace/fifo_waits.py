"""Telling that a ripgrep we started is stuck on a FIFO, and stopping it early.

ripgrep opens every ``.gitignore`` (and for grep ``.ignore`` and ``.rgignore``) of the folders it
walks, with a plain blocking ``open``: a FIFO under one of those names makes it wait for a writer that
never comes (BurntSushi/ripgrep#2761 is the same wait on a searched FIFO), and nothing in its options
can say "regular files only". Finding such FIFOs before each run would cost a walk of the tree, what
ripgrep is there to spare. So the run is watched instead: while it lasts longer than ``FIRST_LOOK_S``,
every ``LOOK_EVERY_S`` its threads' wait channels are read (Linux ``/proc/<pid>/task/<tid>/wchan``: the
kernel function a sleeping thread waits in), and a thread waiting in ``wait_for_partner`` (opening a
FIFO nobody writes to, fs/pipe.c) or in ``pipe_read`` (reading one whose writer is silent) means the run
will not end by itself. Elsewhere (no ``/proc``) nothing is found and the run's own timeout applies.

ripgrep itself uses no pipe but its output, which it writes: a thread of it never waits reading one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Coroutine, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

FIRST_LOOK_S = 0.25
"""A run shorter than this (nearly all) is never looked at."""
LOOK_EVERY_S = 0.25
_FIFO_WAITS = frozenset({"wait_for_partner", "pipe_read", "pipe_wait", "pipe_wait_readable"})
_IGNORE_NAMES = (".gitignore", ".ignore", ".rgignore")

T = TypeVar("T")


class WaitsOnFifo(Exception):
    """A watched program waits on a FIFO; it was stopped. ``fifos``: the ignore files found to be FIFOs."""

    def __init__(self, fifos: Sequence[str]) -> None:
        super().__init__(", ".join(fifos) or "a FIFO")
        self.fifos = tuple(fifos)


def waits_on_fifo(pid: int) -> bool:
    """Whether a thread of process ``pid`` or of a descendant sleeps on a FIFO (module docstring)."""
    return any(_waits(task) for task in _tasks_below(pid))


def program_waits_on_fifo(argv: Sequence[str]) -> bool:
    """Whether a descendant of this process started as ``argv`` (its exact command line, as the sandbox
    keeps it) sleeps on a FIFO."""
    wanted = b"".join(arg.encode("utf-8", "surrogateescape") + b"\0" for arg in argv)
    for pid in _descendants(os.getpid()):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cmdline == wanted and any(_waits(task) for task in _tasks(pid)):
            return True
    return False


async def unless_waiting_on_fifo(run: Coroutine[Any, Any, T], argv: Sequence[str], cwd: Path) -> T:
    """The result of ``run`` (which starts ``argv`` in ``cwd`` and waits for it), unless that program is
    seen waiting on a FIFO first: then ``run`` is cancelled (its program killed with it) and
    ``WaitsOnFifo`` names the ignore files under ``cwd`` that are FIFOs (a walk, in this case only).

    Raises:
        WaitsOnFifo: as said; whatever ``run`` raises.
    """
    task = asyncio.ensure_future(run)
    try:
        await asyncio.wait({task}, timeout=FIRST_LOOK_S)
        while not task.done():
            if program_waits_on_fifo(argv):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                raise WaitsOnFifo(await asyncio.to_thread(ignore_fifos, cwd))
            await asyncio.wait({task}, timeout=LOOK_EVERY_S)
        return task.result()
    finally:
        if not task.done():  # cancelled from outside
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def ignore_fifos(top: Path, limit: int = 100_000) -> list[str]:
    """The paths (relative to ``top``, POSIX, sorted) of the ``.gitignore``, ``.ignore`` and ``.rgignore``
    entries under ``top`` that are not regular files nor links; at most ``limit`` entries looked at."""
    found: list[str] = []
    seen = 0
    for directory, dirs, files in os.walk(top):
        seen += len(dirs) + len(files)
        for name in files:
            if name in _IGNORE_NAMES:
                path = Path(directory, name)
                with contextlib.suppress(OSError):
                    if not (path.is_file() or path.is_symlink()):
                        found.append(path.relative_to(top).as_posix())
        if seen > limit:
            break
    return sorted(found)


def _waits(task: Path) -> bool:
    try:
        return (task / "wchan").read_text() in _FIFO_WAITS
    except OSError:
        return False


def _tasks(pid: int) -> list[Path]:
    try:
        return list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return []


def _tasks_below(pid: int) -> Iterator[Path]:
    for one in (pid, *_descendants(pid)):
        yield from _tasks(one)


def _descendants(pid: int) -> Iterator[int]:
    pending = [pid]
    while pending:
        for task in _tasks(pending.pop()):
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
            yield from children
            pending.extend(children)
