"""The server's stdout writer: a message larger than the pipe's buffer does not wait for the editor to read
it, the editor reads the same bytes in order, and a closed pipe is still reported (issue 14).

Ordering and liveness, not timing: the writes are made to a pipe nobody reads yet; with a direct write
(pygls's ``StdoutWriter``) the first of them would wait until the reader starts, which here is never
before the writes are done.
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator

import pytest

from agent_ls.lsp.pipe_writer import PipeWriter


@pytest.fixture
def pipe() -> Iterator[tuple[io.BufferedReader, io.BufferedWriter]]:
    read_fd, write_fd = os.pipe()
    reader, writer = os.fdopen(read_fd, "rb"), os.fdopen(write_fd, "wb")
    yield reader, writer
    for stream in (reader, writer):
        try:
            stream.close()
        except OSError:
            pass


def test_messages_larger_than_the_pipe_are_queued_and_read_back_whole_and_in_order(
    pipe: tuple[io.BufferedReader, io.BufferedWriter],
) -> None:
    reader, stream = pipe
    messages = [bytes([65 + n]) * (1024 * 1024 + n) for n in range(4)]  # 1 MiB each: 16 times a pipe
    writer = PipeWriter(stream)
    done = threading.Event()

    def write_all() -> None:
        for message in messages:
            writer.write(message)
        done.set()

    threading.Thread(target=write_all, daemon=True).start()
    # Nobody reads the pipe until the writes returned: a write that waited for the reader never would.
    assert done.wait(timeout=60), "a write waited for the reader"

    received = reader.read(sum(map(len, messages)))

    assert received == b"".join(messages)
    writer.close()


def test_a_write_after_the_reader_is_gone_raises_broken_pipe(
    pipe: tuple[io.BufferedReader, io.BufferedWriter],
) -> None:
    reader, stream = pipe
    writer = PipeWriter(stream)
    reader.close()
    writer.write(b"lost")  # queued; the writer thread finds the pipe closed
    writer.close()  # waits for the thread to have tried

    with pytest.raises(BrokenPipeError):
        writer.write(b"next")


def test_a_stream_without_a_descriptor_gets_every_byte_by_close() -> None:
    stream = io.BytesIO()
    writer = PipeWriter(stream)
    for n in range(100):
        writer.write(b"message %d\n" % n)

    writer.close()

    assert stream.getvalue() == b"".join(b"message %d\n" % n for n in range(100))


def test_a_reader_that_stops_reading_makes_the_writer_wait_instead_of_queueing_for_ever(
    pipe: tuple[io.BufferedReader, io.BufferedWriter],
) -> None:
    reader, stream = pipe
    writer = PipeWriter(stream, max_queued=256 * 1024)
    finished = threading.Event()

    def write_many() -> None:
        for _ in range(64):
            writer.write(b"x" * 64 * 1024)  # 4 MiB in all: far past the pipe and the bound
        finished.set()

    thread = threading.Thread(target=write_many, daemon=True)
    thread.start()
    assert not finished.wait(timeout=1)  # time enough to queue 4 MiB, had nothing bounded it

    assert len(reader.read(64 * 64 * 1024)) == 64 * 64 * 1024
    assert finished.wait(timeout=60)
    writer.close()
