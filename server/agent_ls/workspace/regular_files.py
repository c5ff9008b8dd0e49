"""Opening a file of the workspace by name: regular files only, without blocking, hard-link rule applied.

A name such as ``.gitignore``, ``AGENTS.md``, ``SKILL.md`` or ``agent-ls.toml`` may be a FIFO: opening it
for reading waits for a writer that never comes, and the server (or the walk holding a lock) hangs. So
every opener here opens with ``O_NONBLOCK`` (which a FIFO honours at ``open``), then ``fstat``s the open
file and refuses what is not a regular file; the check is on the open file, so a name swapped between a
``stat`` and the ``open`` cannot slip through. ``O_NONBLOCK`` changes nothing for a regular file's reads.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from agent_ls.workspace import hard_links


def open_regular(path: Path, *, hard_links_base: Path | None = None) -> BinaryIO:
    """``path`` (following symlinks) open for reading in binary, when it is a regular file; never blocks.

    Args:
        path: the file.
        hard_links_base: the folder below which dependency folders exempt a file from the hard-link
            rule (``workspace.hard_links``): the workspace's real root, a skill's folder (a file outside
            it follows the rule without exemption); None: the rule does not apply (a global file).

    Raises:
        OSError: it cannot be opened, is a directory (``IsADirectoryError``), is not a regular file
            (EINVAL: a FIFO, a socket, a device), or is a hard link the rule refuses (EPERM,
            ``strerror`` says why).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        check_regular(fd, path, hard_links_base)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def check_regular(fd: int, path: Path, hard_links_base: Path | None = None) -> os.stat_result:
    """The ``fstat`` of ``fd`` (``path`` open), checked as ``open_regular`` says; raises as it does."""
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    if hard_links_base is None or not hard_links.has_other_names(info):
        return info
    real = Path(os.path.realpath(path))
    base = hard_links_base if real.is_relative_to(hard_links_base) else real.parent
    advice = hard_links.refusal(base, real.relative_to(base).as_posix(), info)
    if advice is not None:
        raise OSError(errno.EPERM, advice, str(path))
    return info
