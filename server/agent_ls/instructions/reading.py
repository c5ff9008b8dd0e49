"""Reading one instruction file (an AGENTS.md, a CLAUDE.md, an imported file) from disk, once.

What ``read_head`` does, in order:

1. open without blocking and refuse anything but a regular file (a FIFO named AGENTS.md must not hang
   the server), and, for a file of the workspace, a hard link outside dependency folders
   (``workspace.hard_links``: it may be a second name of a secret file);
2. read at most ``limit`` bytes past an optional BOM: the budget never lets a file keep more than
   ``max_file_bytes``, so the rest of a huge file is never read (its size comes from ``fstat``);
3. strip one leading UTF-8 BOM (it is neither content nor counted);
4. decode as UTF-8; invalid bytes become U+FFFD and are reported (Codex ``project_doc`` does the same),
   while a sequence split by the read limit is dropped rather than replaced.

Line endings are kept as on disk: budgets count real bytes (CRLF = 2) and the text is normalized to LF
only once cut (``normalize_newlines``). Files are never written.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path

from agent_ls.workspace.regular_files import check_regular

BOM = b"\xef\xbb\xbf"
# LSP line breaks (3.17 "Text Documents"): CRLF, LF or CR; nothing else splits lines for diagnostics.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


@dataclass(frozen=True)
class Readout:
    """What was read of a file.

    Attributes:
        text: the decoded text, BOM stripped, line endings as on disk; only the head of the file when
            ``complete`` is False.
        size_bytes: the file's size on disk in bytes, BOM excluded.
        complete: ``text`` holds the whole file.
        invalid_utf8: some bytes were not UTF-8 and were replaced with U+FFFD.
    """

    text: str
    size_bytes: int
    complete: bool
    invalid_utf8: bool


def read_head(path: Path, limit: int, *, hard_links_base: Path | None = None) -> Readout | str:
    """Read ``path`` (following symlinks) up to ``limit`` bytes past the BOM.

    Args:
        path: the file; the caller has already applied the symlink and workspace policy.
        limit: bytes of content wanted (at least the caller's largest allowance); a few more are read
            to tell a complete file from a cut one.
        hard_links_base: as ``regular_files.open_regular``: the workspace's real root for its files.

    Returns:
        A ``Readout``, or a one-line reason when the file cannot be read ("not a regular file",
        "is a hard link (2 names); ...", "cannot be read: <OS error>"). Never raises for I/O problems.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    try:
        try:
            info = check_regular(fd, path, hard_links_base)
        except IsADirectoryError:
            return "not a regular file"
        except OSError as exc:
            return exc.strerror if exc.errno in (errno.EINVAL, errno.EPERM) and exc.strerror else str(exc)
        wanted = max(limit, 0) + len(BOM) + 4
        chunks: list[bytes] = []
        got = 0
        while got <= wanted:
            chunk = os.read(fd, wanted + 1 - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    finally:
        os.close(fd)
    data = b"".join(chunks)
    complete = len(data) <= wanted
    size = len(data) if complete else max(info.st_size, len(data))
    if data.startswith(BOM):
        data = data[len(BOM) :]
        size -= len(BOM)
    if not complete:
        data = data[: _last_boundary(data)]
    try:
        text = data.decode("utf-8")
        invalid = False
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        invalid = True
    return Readout(text=text, size_bytes=size, complete=complete, invalid_utf8=invalid)


def _last_boundary(data: bytes) -> int:
    """The start of the last (possibly incomplete) UTF-8 sequence of ``data``: cutting there drops it."""
    n = len(data) - 1
    while n > 0 and data[n] & 0xC0 == 0x80:
        n -= 1
    return max(n, 0)


def split_lines(text: str) -> list[str]:
    """``text`` split after each LSP line break (CRLF, LF, CR), endings kept; ``"".join`` gives it back."""
    return _LINE.findall(text)


def strip_ending(line: str) -> str:
    """``line`` without its trailing CRLF, LF or CR."""
    return line.rstrip("\r\n") if line.endswith(("\n", "\r")) else line


def normalize_newlines(text: str) -> str:
    """``text`` with every CRLF and lone CR turned into LF (what the prompt gets)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")
