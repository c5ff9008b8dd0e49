"""Reading a workspace file's text from disk, in its own encoding, with memory bounded by a size cap.

A file of at most ``MAX_TEXT_BYTES`` is read whole and decoded exactly (``file_encoding.decode``): that
text can be edited and written back byte for byte. A larger one cannot be edited; it is only read in
pages, streamed in ``CHUNK_BYTES`` pieces (``text_chunks``), so a read never holds more than a chunk
and the page (read_file with ``limit: 1`` on a 2 GiB file reads one chunk, not the file).

Every open goes through ``PathPolicy.open_binary`` (resolved again at use, no symlink followed out).
Errors become one-line ``ToolError``s naming the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

from agent_ls.core.errors import ToolError
from agent_ls.core.proposal import TextEncoding
from agent_ls.workspace import file_encoding
from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.unicode_names import not_found_hint

MAX_TEXT_BYTES = 4 * 1024 * 1024
"""The largest file read whole, so the largest that can be edited or written (bytes)."""
CHUNK_BYTES = 1024 * 1024
"""The bytes read at a time when a larger file is streamed."""
HEAD_BYTES = 64 * 1024
"""The bytes a streamed file's encoding is found from."""


@dataclass(frozen=True)
class DiskText:
    """A file's whole text and the encoding it was read in."""

    text: str
    encoding: TextEncoding


class TooLarge(ToolError):
    """Model: the file is over ``MAX_TEXT_BYTES``; it can be read in pages but not edited."""


def read_whole(paths: PathPolicy, rel: str) -> DiskText:
    """The text of ``rel`` on disk, decoded exactly in its encoding.

    Raises:
        TooLarge: the file has more than ``MAX_TEXT_BYTES`` bytes.
        ToolError: it does not exist, is a directory, cannot be read, or is binary or in no encoding
            that reads back exactly.
    """
    with _opened(paths, rel) as handle:
        data = handle.read(MAX_TEXT_BYTES + 1)
        if len(data) > MAX_TEXT_BYTES:
            size = os.fstat(handle.fileno()).st_size
            raise TooLarge(
                f"{rel!r} has {_size(size)}; files over {_size(MAX_TEXT_BYTES)} can be read in pages "
                "with read_file (offset, limit, column) but not edited or rewritten"
            )
    try:
        text, encoding = file_encoding.decode(data)
    except file_encoding.NotText as exc:
        raise ToolError(f"{rel!r} cannot be read as text: {exc}") from None
    return DiskText(text, encoding)


def file_size(paths: PathPolicy, rel: str) -> int:
    """The size of the regular file ``rel`` in bytes. Raises ``ToolError`` as ``read_whole`` does."""
    with _opened(paths, rel) as handle:
        return os.fstat(handle.fileno()).st_size


@contextmanager
def text_chunks(paths: PathPolicy, rel: str) -> Iterator[tuple[TextEncoding, Iterator[str]]]:
    """The file's encoding (found from its first ``HEAD_BYTES``) and its text as decoded chunks of at
    most ``CHUNK_BYTES`` bytes each; bytes that do not decode become U+FFFD. The file stays open while
    the context is.

    Raises:
        ToolError: as ``read_whole`` (but never ``TooLarge``).
    """
    with _opened(paths, rel) as handle:
        head = handle.read(HEAD_BYTES)
        try:
            encoding = file_encoding.stream_encoding(head)
        except file_encoding.NotText as exc:
            raise ToolError(f"{rel!r} cannot be read as text: {exc}") from None
        yield encoding, _decoded(handle, head[len(encoding.bom) :], encoding)


def _decoded(handle: BinaryIO, first: bytes, encoding: TextEncoding) -> Iterator[str]:
    decoder = file_encoding.stream_decoder(encoding)
    data = first
    while data:
        yield decoder.decode(data)
        data = handle.read(CHUNK_BYTES)
    yield decoder.decode(b"", final=True)


@contextmanager
def _opened(paths: PathPolicy, rel: str) -> Iterator[BinaryIO]:
    try:
        handle = paths.open_binary(rel)
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(f"file not found: {rel!r}{not_found_hint(paths.real_root, rel)}") from None
    except IsADirectoryError:
        raise ToolError(f"{rel!r} is a directory, not a file; list it instead") from None
    except OSError as exc:
        raise ToolError(f"cannot read {rel!r}: {exc.strerror or exc}") from None
    with handle:
        try:
            yield handle
        except OSError as exc:
            raise ToolError(f"cannot read {rel!r}: {exc.strerror or exc}") from None


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:,} bytes"
