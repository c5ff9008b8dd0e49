"""The server's stdout: messages are written in order by a thread, never on the event loop.

pygls's ``StdoutWriter`` writes and flushes on the event loop. A message larger than the pipe's buffer
(64 KiB on Linux) blocks the loop until the editor has read it: a WorkspaceEdit of a 10k-line change,
``agent.proposal``'s diffs and texts, a ``write_file`` call's content in ``agent/event``. An editor
that parses such a message before reading on (VS Code's extension host, a pygls client) kept every
hover and code action waiting for as long (found with a sampling profiler while
``benchmarks/bench_scale.py`` measured the editor's latency, issue 14).

``PipeWriter.write`` queues the bytes; one thread writes them, in the order given, as they are (the
client reads the same bytes as before). It is bounded: with ``MAX_QUEUED_BYTES`` queued, ``write``
waits for the thread (as the direct write did), so an editor that stops reading does not grow the
server's memory. Once the pipe is broken (the editor is gone), ``write`` raises ``BrokenPipeError`` as
the direct write did; ``close`` writes what is queued, waiting at most ``timeout`` seconds.
"""

from __future__ import annotations

import os
import queue
import threading
from typing import BinaryIO

MAX_QUEUED_BYTES = 64 * 1024 * 1024


class PipeWriter:
    """pygls's writer interface (``write``, ``close``) over ``stream``, written by a thread.

    Args:
        stream: the binary stream to write to (stdout); its file descriptor is written directly when
            it has one (a thread blocked inside a buffered writer would hold its lock at interpreter
            exit, and CPython aborts on that), else ``stream.write`` and ``flush``.
        max_queued: bytes queued at most before ``write`` waits.
    """

    def __init__(self, stream: BinaryIO, max_queued: int = MAX_QUEUED_BYTES) -> None:
        self._stream = stream
        self._max_queued = max_queued
        self._messages: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._room = threading.Condition()
        self._queued = 0
        self._broken: OSError | None = None
        try:
            self._fd: int | None = stream.fileno()
        except (OSError, ValueError, AttributeError):  # not a file (a test's BytesIO)
            self._fd = None
        self._thread = threading.Thread(target=self._write_all, name="agent-ls stdout", daemon=True)
        self._thread.start()

    def write(self, data: bytes) -> None:
        """Queue ``data``; waits only while ``max_queued`` bytes are queued.

        Raises:
            BrokenPipeError: an earlier write found the pipe closed.
        """
        with self._room:
            while self._queued >= self._max_queued and self._broken is None:
                self._room.wait()
            if self._broken is not None:
                raise BrokenPipeError(str(self._broken))
            self._queued += len(data)
        self._messages.put(data)

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued (waiting at most ``timeout`` seconds), then stop the thread."""
        self._messages.put(None)
        self._thread.join(timeout)

    def _write_all(self) -> None:
        while (data := self._messages.get()) is not None:
            try:
                self._write(data)
            except (OSError, ValueError) as exc:  # ValueError: the stream was closed under us
                with self._room:
                    self._broken = exc if isinstance(exc, OSError) else BrokenPipeError(str(exc))
                    self._room.notify_all()
                return
            with self._room:
                self._queued -= len(data)
                self._room.notify_all()

    def _write(self, data: bytes) -> None:
        if self._fd is None:
            self._stream.write(data)
            self._stream.flush()
            return
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
