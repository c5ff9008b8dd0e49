"""Step 1 of an apply (``apply_files``): every target looked at before anything is written.

``check`` refuses, one line per problem naming the path: a path leaving the root (``..``, a symlinked
folder pointing out), a folder on the way that is a file, a name or path longer than the file system
allows (``PC_NAME_MAX``, ``PC_PATH_MAX``), a name that cannot be encoded, a folder or a special file
where a file goes, a folder we cannot write in, two writes to one file (or to a file and a folder of
the same name), not enough free space for the new files on their file system. What it finds about each
target (its old bytes, mode, owner and ``lstat`` key; the folders to create) is what the later steps
write and restore with.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

_BLOCK_BYTES = 4096  # what one more file may cost on disk beyond its bytes, for the free-space check


@dataclass(frozen=True)
class FileWrite:
    """One file of an apply: ``rel``, a root-relative POSIX path, gets ``data`` (None deletes it)."""

    rel: str
    data: bytes | None


@dataclass
class Target:
    """One file of an apply as the check found it."""

    write: FileWrite
    path: Path  # where the bytes go: a symlink's target when the file is reached through one
    original: bytes | None  # None: no file there
    key: tuple[int, int, int] | None  # (inode, mtime in ns, size) of the original, to spot a save
    mode: int | None
    owner: tuple[int, int] | None
    new_dirs: list[Path] = field(default_factory=list)  # outermost first
    temp: Path | None = None


def check(root: Path, writes: Sequence[FileWrite]) -> tuple[list[Target], list[str]]:
    """Step 1 of the module docstring for ``writes`` under the real path ``root``.

    Returns:
        The targets in the order of ``writes`` (deletions of missing files dropped), and the problems,
        one line each naming the path; the apply goes ahead only when there are none.
    """
    targets: list[Target] = []
    problems: list[str] = []
    for write in writes:
        found = _check_one(root, write)
        if isinstance(found, str):
            problems.append(found)
        elif found is not None:
            targets.append(found)
    problems += _conflicts(root, targets) + _space(targets)
    return targets, problems


def _check_one(root: Path, write: FileWrite) -> Target | str | None:
    rel = write.rel
    pure = PurePosixPath(rel)
    if not pure.parts or pure.is_absolute() or ".." in pure.parts or "\0" in rel:
        return f"{rel!r} is not a path inside the workspace"
    try:
        names = [os.fsencode(part) for part in pure.parts]
    except UnicodeEncodeError:
        return f"{rel!r}: the name cannot be encoded for the file system"
    base = root  # the deepest existing folder on the way (real path)
    missing: list[bytes] = []
    for index, name in enumerate(names[:-1]):
        if missing:
            missing.append(name)
            continue
        step = base / os.fsdecode(name)
        shown = PurePosixPath(*pure.parts[: index + 1]).as_posix()
        try:
            st = os.lstat(step)
        except FileNotFoundError:
            missing.append(name)
            continue
        except OSError as exc:
            return f"{rel}: cannot look at {shown}: {exc.strerror}"
        if stat.S_ISLNK(st.st_mode):
            step = Path(os.path.realpath(step))
            if not step.is_relative_to(root):
                return f"{rel}: {shown} is a symlink leading outside the workspace"
            st = os.stat(step)
        if not stat.S_ISDIR(st.st_mode):
            return f"{rel}: {shown} is a file, not a folder"
        base = step
    try:
        name_max = os.pathconf(base, "PC_NAME_MAX")
        path_max = os.pathconf(base, "PC_PATH_MAX")
    except OSError:
        name_max, path_max = 255, 4096
    for name in [*missing, names[-1]]:
        if len(name) > name_max:
            shown = os.fsdecode(name)[:40]
            return f"{rel}: the name {shown}… is {len(name)} bytes; the file system allows {name_max}"
    path = base.joinpath(*(os.fsdecode(n) for n in missing), os.fsdecode(names[-1]))
    if len(os.fsencode(path)) >= path_max:
        return f"{rel}: the full path is longer than the file system allows ({path_max} bytes)"
    new_dirs = [base.joinpath(*(os.fsdecode(n) for n in missing[: i + 1])) for i in range(len(missing))]
    if not os.access(base, os.W_OK | os.X_OK):
        folder = base.relative_to(root).as_posix()
        return f"{rel}: cannot write in the folder {folder} (permission denied)"
    if missing:
        return None if write.data is None else Target(write, path, None, None, None, None, new_dirs)
    return _existing(root, write, path)


def _existing(root: Path, write: FileWrite, path: Path) -> Target | str | None:
    rel = write.rel
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None if write.data is None else Target(write, path, None, None, None, None)
    except OSError as exc:
        return f"{rel}: cannot look at it: {exc.strerror}"
    if stat.S_ISLNK(st.st_mode):
        if write.data is None:
            return f"{rel} is a symlink; it is not deleted"
        path = Path(os.path.realpath(path))
        if not path.is_relative_to(root):
            return f"{rel} is a symlink leading outside the workspace"
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return f"{rel} is a symlink to a file that does not exist"
    if stat.S_ISDIR(st.st_mode):
        return f"{rel} is a folder on disk"
    if not stat.S_ISREG(st.st_mode):
        return f"{rel} is not a regular file on disk"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with open(fd, "rb") as handle:
            original = handle.read()
    except OSError as exc:
        return f"{rel}: cannot read it: {exc.strerror}"
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return f"{rel}: cannot write in its folder (permission denied)"
    return Target(write, path, original, key_of(path), stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid))


def _conflicts(root: Path, targets: list[Target]) -> list[str]:
    """Two writes to one file, or a write to a file that another write needs as a folder."""
    problems: list[str] = []
    seen: dict[Path, str] = {}
    for target in targets:
        if target.path in seen:
            problems.append(f"{target.write.rel} and {seen[target.path]} are the same file")
        seen[target.path] = target.write.rel
    for target in targets:
        for directory in target.new_dirs:
            if directory in seen:
                problems.append(
                    f"{seen[directory]} is written as a file and needed as a folder by {target.write.rel}"
                )
    return problems


def _space(targets: list[Target]) -> list[str]:
    """Not enough free space for the temporary files (each file system is checked once)."""
    need: dict[int, tuple[Path, int]] = {}
    for target in targets:
        if target.write.data is None:
            continue
        folder = next((d.parent for d in target.new_dirs), target.path.parent)
        device = os.stat(folder).st_dev
        where, total = need.get(device, (folder, 0))
        need[device] = (where, total + len(target.write.data) + _BLOCK_BYTES)
    problems = []
    for where, total in need.values():
        fs = os.statvfs(where)
        free = fs.f_bavail * fs.f_frsize
        if total > free:
            problems.append(f"not enough free space: the new files need {total:,} bytes, {free:,} are free")
    return problems


def key_of(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)
