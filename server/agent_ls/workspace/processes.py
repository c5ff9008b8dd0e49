"""One process for a tool (the shell tool, ripgrep): sandboxed, killed with its group, output capped.

``execute`` does, in order: wrap the argv in the sandbox when there is one (``workspace.sandbox``), start
it in a new process group with stdin from ``/dev/null`` and stdout and stderr merged, read the output
into a head-plus-tail cap while it runs, and kill the whole group when it exits, times out or is
cancelled (background children die too; in the sandbox, killing bwrap tears down its pid namespace).
Unsandboxed commands start behind ``orphan_guard``'s gate: their group is killed if this process is.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import functools
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from agent_ls.core.errors import ToolError
from agent_ls.core.ports import CommandResult
from agent_ls.workspace.layers import MountLayers
from agent_ls.workspace.orphan_guard import ORPHAN_GUARD
from agent_ls.workspace.sandbox import Sandbox

# After the process exited, how long background children may keep the output pipe open.
_DRAIN_GRACE_S = 1.0

FULL_OUTPUT_MAX_BYTES = 8 * 1024 * 1024
"""The most bytes of a command's output kept whole (``execute(keep_full=True)``); past it, a last line
says how many were dropped."""


class OutputSink(Protocol):
    """Takes a process's output as it comes, in chunks of bytes (for a structured stream: ripgrep's JSON).

    Contract: keeps its memory bounded whatever it is fed; never raises.
    """

    def feed(self, chunk: bytes) -> None: ...


async def execute(
    argv: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    sandbox: Sandbox | None,
    workspace_root: Path,
    timeout_s: float,
    head_chars: int,
    tail_chars: int,
    note: str | None = None,
    readonly: Sequence[Path] = (),
    masked: Sequence[Path] = (),
    masked_inside: Sequence[tuple[str, bool]] = (),
    layers: tuple[MountLayers, str] | None = None,
    sink: OutputSink | None = None,
    guard_orphans: bool = True,
    keep_full: bool = False,
) -> CommandResult:
    """Run ``argv`` in ``cwd`` (the shadow copy, or the workspace in workspace mode), in ``sandbox``.

    Shared by the shell tool and ripgrep, so both get the same isolation, the same process-group kill
    (on success, timeout and cancellation: background children die too) and the same output cap.
    ``readonly`` and ``masked`` go to ``Sandbox.wrap`` (the real entries the copy links to, and the
    secret files to make unreadable: those inside the linked entries, or every one of the workspace in
    workspace mode); they are unused without a sandbox, where the copy links around secrets instead.
    With ``layers`` (the view's folders and the ``unshare`` program), ``cwd`` is an overlay view mounted
    just before the sandbox (``workspace.layers``), shown at the workspace's own path, and
    ``masked_inside`` are its entries to mask (relative paths).

    Returns:
        ``exit_code`` (negative for a signal; None when it timed out) and stdout plus stderr
        interleaved, decoded as UTF-8 (invalid bytes replaced), capped to ``head_chars`` +
        ``tail_chars`` characters with an ``omission_note`` line between (characters and 1-indexed
        lines omitted); ``note`` comes first, outside the cap. Memory stays bounded whatever the
        process prints. With ``sink``, the output goes to it instead and ``output`` holds only
        ``note``. With ``keep_full``, ``full_output`` is the whole decoded output (without ``note``,
        its lines numbered as the omission note numbers them) when ``output`` was cut, else None; at most
        ``FULL_OUTPUT_MAX_BYTES`` of it, then a last line ``[agent-ls: N more bytes of output were not
        kept]``. ``guard_orphans=False`` starts an unsandboxed ``argv`` without ``orphan_guard``'s
        gate (a ``/bin/sh`` start, about 1 ms): only for a program that starts no children and ends
        by itself if this process dies (ripgrep: at the end of its walk, or at its next write to the
        closed pipe).

    Raises:
        asyncio.CancelledError: after the process group was killed.
        ToolError: the process cannot be started.
    """
    if sandbox is not None:
        # In a worker thread: building the mounts resolves and stats a hundred paths (tens of ms on a
        # busy machine), which the editor's requests must not wait for.
        wrap = functools.partial(
            sandbox.wrap,
            argv,
            shadow=cwd,
            workspace_root=workspace_root,
            environ=env,
            readonly=readonly,
            masked=masked,
            masked_inside=masked_inside,
            view_at=workspace_root if layers is not None else None,
        )
        argv = await asyncio.to_thread(wrap)
        if layers is not None:
            argv = layers[0].wrap(argv, layers[1])
    # In the sandbox: --die-with-parent.
    gate = ORPHAN_GUARD.gate(argv) if sandbox is None and guard_orphans else None
    try:
        proc = await asyncio.create_subprocess_exec(
            *(gate.argv if gate else argv),
            cwd=cwd,
            env=dict(env),
            stdin=gate.stdin if gate else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except BaseException as exc:
        if gate:
            gate.close()  # a command spawned but not let through never runs
        if isinstance(exc, OSError):
            raise ToolError(f"cannot start {argv[0]}: {exc}") from None
        raise
    if gate:
        gate.open(proc.pid)
    output = _CappedOutput(head_chars, tail_chars, keep_full=keep_full)
    if note is not None:
        output.note(note)
    assert proc.stdout is not None
    pump = asyncio.create_task(_pump(proc.stdout, sink or output))
    timed_out = False
    try:
        async with asyncio.timeout(timeout_s):
            await proc.wait()
            await asyncio.wait({pump}, timeout=_DRAIN_GRACE_S)
    except TimeoutError:
        timed_out = True
    finally:
        # In the sandbox, the group is bwrap's (the command has its own session): killing bwrap
        # kills the sandbox's pid 1 (--die-with-parent), and with it the whole pid namespace.
        _kill_group(proc.pid)
        if proc.returncode is None:
            await proc.wait()
        if gate:
            ORPHAN_GUARD.release(proc.pid)
        await asyncio.wait({pump}, timeout=_DRAIN_GRACE_S)
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump
    text = output.text()
    return CommandResult(None if timed_out else proc.returncode, text, timed_out, full_output=output.full())


async def _pump(stream: asyncio.StreamReader, output: OutputSink) -> None:
    while chunk := await stream.read(65536):
        output.feed(chunk)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def omission_note(omitted_chars: int, first_line: int, last_line: int, total_lines: int) -> str:
    """The note that stands for the middle of a cut text.

    For example ``[... 25,000 characters omitted: lines 201–5,200 of 5,400 ...]``.

    Lines are 1-indexed and inclusive: those holding an omitted character (the first and last may be
    partly shown); ``total_lines`` counts a last line without its newline too.
    """
    unit = "character" if omitted_chars == 1 else "characters"
    span = f"line {first_line:,}" if first_line == last_line else f"lines {first_line:,}–{last_line:,}"
    return f"[... {omitted_chars:,} {unit} omitted: {span} of {total_lines:,} ...]"


_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.=+/")
_LONGEST_KEY = 256


def _run_at(text: str, *, end: bool) -> int:
    """The length of the run of key characters at the start (or ``end``) of ``text``; 0 past
    ``_LONGEST_KEY`` (no key is that long: a long base64 or hex line keeps its ends)."""
    edge = text[-_LONGEST_KEY - 1 :][::-1] if end else text[: _LONGEST_KEY + 1]
    length = next((i for i, char in enumerate(edge) if char not in _KEY_CHARS), len(edge))
    return 0 if length > _LONGEST_KEY else length


def _token_edges(head: str, tail: str, after_head: str, before_tail: str) -> tuple[str, str]:
    """``head`` without the run of key characters (letters, digits, ``_-.=+/``: every key format's
    alphabet, base64's too) it ends with, and ``tail`` without the one it starts with, where the cut
    went through such a run (``after_head``, ``before_tail``: the omitted characters next to them): a
    word or key the cut went through is left out whole, so no piece of a key without its recognisable
    start (``sk-``) is shown, where redaction (which runs on the text shown) could not know it for one.
    A run longer than ``_LONGEST_KEY`` on the shown side is kept."""
    drop_head = _run_at(head, end=True) if after_head in _KEY_CHARS and after_head else 0
    drop_tail = _run_at(tail, end=False) if before_tail in _KEY_CHARS and before_tail else 0
    return head[: len(head) - drop_head], tail[drop_tail:]


class _CappedOutput:
    """Decodes a byte stream incrementally and keeps its first and last characters only.

    Newlines are counted as the text passes, so the middle note gives line numbers (``omission_note``).
    With ``keep_full``, the bytes are kept too, up to ``FULL_OUTPUT_MAX_BYTES`` (``full``).
    """

    def __init__(self, head_chars: int, tail_chars: int, *, keep_full: bool = False) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head_chars = head_chars
        self._tail_chars = tail_chars
        self._head = ""
        self._tail = ""
        self._omitted = 0
        self._omitted_newlines = 0
        self._omitted_ends_newline = False
        self._after_head = ""  # the first character after the head, once there is one
        self._before_tail = ""  # the last character dropped before the tail
        self._note = ""
        self._full: bytearray | None = bytearray() if keep_full else None
        self._full_dropped = 0

    def note(self, line: str) -> None:
        """Put ``line`` before the output, outside the cap."""
        self._note = f"{line}\n"

    def feed(self, chunk: bytes) -> None:
        if self._full is not None:
            room = FULL_OUTPUT_MAX_BYTES - len(self._full)
            self._full += chunk[:room] if room > 0 else b""
            self._full_dropped += max(0, len(chunk) - max(0, room))
        self._add(self._decoder.decode(chunk))

    def full(self) -> str | None:
        """The whole output, decoded (invalid bytes replaced), when ``text`` cut it and ``keep_full`` was
        asked; None otherwise. Call after ``text``. Past ``FULL_OUTPUT_MAX_BYTES`` a last line says how
        many bytes were not kept (a character split at the bound is dropped whole)."""
        if self._full is None or not self._omitted:
            return None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        text = decoder.decode(bytes(self._full), final=not self._full_dropped)
        if not self._full_dropped:
            return text
        newline = "" if text.endswith("\n") else "\n"
        return f"{text}{newline}[agent-ls: {self._full_dropped:,} more bytes of output were not kept]\n"

    def text(self) -> str:
        self._add(self._decoder.decode(b"", final=True))
        self._trim(0)
        if not self._omitted:
            return self._note + self._head + self._tail
        head_newlines = self._head.count("\n")
        first = head_newlines + 1
        last = head_newlines + self._omitted_newlines + (0 if self._omitted_ends_newline else 1)
        newlines = head_newlines + self._omitted_newlines + self._tail.count("\n")
        ends_newline = self._tail.endswith("\n") if self._tail else self._omitted_ends_newline
        total = newlines + (0 if ends_newline else 1)
        head, tail = _token_edges(self._head, self._tail, self._after_head, self._before_tail)
        omitted = self._omitted + len(self._head) - len(head) + len(self._tail) - len(tail)
        note = omission_note(omitted, first, last, total)
        return f"{self._note}{head}\n{note}\n{tail}"

    def _add(self, text: str) -> None:
        room = self._head_chars - len(self._head)
        if room > 0:
            self._head += text[:room]
            text = text[room:]
        if text and not self._after_head:
            self._after_head = text[0]
        self._tail += text
        self._trim(self._tail_chars)  # in batches: slicing on every chunk would be quadratic

    def _trim(self, slack: int) -> None:
        excess = len(self._tail) - self._tail_chars
        if excess > slack:
            dropped = self._tail[:excess]
            self._tail = self._tail[excess:]
            self._omitted += excess
            self._omitted_newlines += dropped.count("\n")
            self._omitted_ends_newline = dropped.endswith("\n")
            self._before_tail = dropped[-1]
