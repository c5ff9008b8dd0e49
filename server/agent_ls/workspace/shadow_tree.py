"""The file work behind the shadow copy: which entries to copy, link or skip, and safe writes into it.

Every directory entry of the workspace gets one treatment (``treatment``), in this order:

1. ``.git`` and secret paths are skipped (never copied, never linked), and so is a symlink whose
   target is a secret path of the workspace, and a regular file with more than one name outside the
   dependency folders (``hard_links``: it may be a second name of a secret);
2. tool caches (``CACHE_DIRS``: ``__pycache__``, ``.pytest_cache``, ...) are skipped: commands
   recreate them in the copy;
3. dependency trees that tools install and commands only read (the ``linked`` entries of
   ``dependency_folders.CATALOGUE``: ``node_modules``, ``.venv``, ``bower_components``, ``__pypackages__``,
   and any folder holding ``pyvenv.cfg`` or ``conda-meta``, a Python or conda environment) are linked,
   gitignored or not;
4. other gitignored directories are linked, except build outputs (``OUTPUT_DIRS``: ``target``,
   ``build``, ``dist``, ...), which are skipped;
5. files over ``LINKED_FILE_BYTES`` (8 MiB), gitignored or not, are linked, never copied; other files
   and symlinks are copied (a symlink as a symlink; a sparse file keeping its holes:
   ``copy_keeping_holes``), special files (FIFOs, sockets, devices) skipped, directories entered.

"Linked" means the copy holds an absolute symlink to the real entry, and the sandbox mounts the real
entry read-only at its own path (``workspace.sandbox``), so the link resolves inside the sandbox too.
Why: a ``node_modules`` or ``.venv`` holds tens of thousands of files that commands only read, and
copying them would cost seconds and gigabytes per session; so would a data set, a disk image or a
2 GiB sparse file (copied densely, it takes 2 GiB of real disk per session); read-only is what the sandbox can
offer (bubblewrap 0.8 has no overlay mounts). Build outputs are skipped rather than linked because
builds write there, and a read-only ``target/`` would make ``cargo build`` fail; a build in the copy
starts from scratch instead. Without the sandbox, a link is a plain symlink into the user's tree,
and nothing stops a command writing through it: unsandboxed commands are unisolated anyway.

A folder to be linked may hold secrets (a gitignored ``certs/server.pem`` or ``instance/.env``, a
test key shipped in a package), and a command like ``grep -R`` would read them through the link,
sandboxed or not. So before linking, ``secret_scan.SecretScan`` walks the folder for secret paths
and for symlinks resolving to one, and the folder is then:

- linked whole when it holds none;
- **split** when it holds some: it becomes a real directory of the copy whose entries are linked one
  by one, the secrets left out, and an entry holding a secret deeper down is split the same way.
  Without a sandbox no link then leads to a secret. In the sandbox the real folder is still mounted
  read-only whole (one mount, not one per entry) and each secret in it is masked
  (``ShadowCopy.masked``). We split rather than copy the folder minus its secrets, or leave it out,
  because most such folders are dependency trees (a ``.venv`` holds certifi's ``cacert.pem``, a
  ``node_modules`` test keys): copying one costs what linking saves, leaving it out breaks every test
  run, while a split costs one link per entry along the way to each secret;
- left out of the copy (``unchecked``; the shell says so), sandboxed or not, when it holds more than
  ``SCAN_MAX_ENTRIES`` entries or ``SCAN_MAX_SECRETS`` secrets (``secret_scan``): a secret that was
  not found cannot be masked, and the masks must fit on bwrap's command line.

Commands run in the copy and can plant links, FIFOs and devices in it. The server writes into the
copy outside the sandbox, so every write here removes what is in the way (a link, a FIFO, a
directory where a file goes) instead of following or opening it, and opens with ``O_NOFOLLOW``.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from agent_ls.workspace import hard_links
from agent_ls.workspace.dependency_folders import linked_dependency, linked_name
from agent_ls.workspace.listing import IgnoreFile, is_ignored, scan_dir
from agent_ls.workspace.secret_scan import SecretScan, points_to_secret

CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
"""Tool caches: never copied, never brought back into a proposal."""

OUTPUT_DIRS = frozenset(
    {"target", "build", "dist", "out", ".next", ".nuxt", ".gradle", ".cache", "coverage", "htmlcov"}
)
"""Build outputs: when gitignored, skipped (the copy starts without them, and builds write there)."""

LINKED_FILE_BYTES = 8 * 1024 * 1024
"""Files larger than this (data sets, binaries, disk images), gitignored or not, are linked instead of
copied. A command's change to one would not come back into the proposal anyway (``MAX_FILE_BYTES``)."""

Kind = Literal["dir", "file", "symlink", "linked", "split", "secret", "unchecked"]
Key = tuple[int, int, int, int]
"""What tells a changed file: (inode, mtime in ns, ctime in ns, size in bytes), from ``lstat``."""


@dataclass(frozen=True)
class Entry:
    """One workspace entry and its treatment.

    Attributes:
        rel: workspace-relative POSIX path.
        kind: ``dir`` (entered), ``file`` or ``symlink`` (copied), ``linked`` (a link to the real
            entry), ``split`` (a folder to link that holds secrets: a real directory of the copy
            whose entries follow, linked one by one), ``secret`` (skipped; listed so the sandbox can
            mask it), ``unchecked`` (a folder too large to scan for secrets: left out, or hidden).
        key: ``lstat`` key for files and symlinks; ``(0, 0, 0, 0)`` otherwise.
        mode: the permission bits of a file.
    """

    rel: str
    kind: Kind
    key: Key = (0, 0, 0, 0)
    mode: int = 0o644


def key_of(st: os.stat_result) -> Key:
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)


def treatment(
    name: str, is_dir: bool, ignored: bool, secret: bool, size: int, dependency: bool = False
) -> Kind | None:
    """The kind of an entry by the rules of the module docstring; None when it is skipped.

    ``dependency``: the directory is a dependency tree to link (``dependency_folders.linked_dependency``:
    ``node_modules``, a folder holding ``pyvenv.cfg``). A folder to link comes as ``linked`` here;
    ``walk_workspace`` scans it and may split it or leave it out. A ``venv`` or ``.tox`` without its
    ``pyvenv.cfg`` is linked only when gitignored; a plain source folder of that name is copied.
    """
    if name == ".git":
        return None
    if secret:
        return "secret"
    if is_dir:
        if name in CACHE_DIRS:
            return None
        if dependency:
            return "linked"
        if ignored:
            return None if name in OUTPUT_DIRS else "linked"
        return "dir"
    return "linked" if size > LINKED_FILE_BYTES else "file"


def walk_workspace(
    real_root: Path,
    is_secret: Callable[[str], bool],
    scan: SecretScan | None = None,
    *,
    everything: bool = False,
) -> Iterator[Entry]:
    """Every entry of the workspace with its treatment, parents before children, in no other order.

    Directories that are linked or skipped are not entered, but a folder to link is scanned for
    secrets first (with ``scan``; a fresh one when None, which remembers nothing): it comes as
    ``linked``, as ``split`` followed by its entries (``linked``, ``split`` or ``secret``), or as
    ``unchecked`` when the scan gave up.

    ``everything`` is for ``shell.mode = "workspace"``, where commands see the real tree: each folder
    that would be linked or skipped (``.git``, caches and build outputs included) is scanned
    instead, and only its secrets come (``secret``), or the folder as ``unchecked``.

    Unreadable directories and entries that vanish during the walk are left out.
    """
    root_ignore = IgnoreFile.load(real_root, ".")
    scan = scan if scan is not None else SecretScan(real_root, is_secret)
    links = hard_links.HardLinks(real_root)
    ignores = [root_ignore] if root_ignore else []
    yield from _walk(real_root, ".", ignores, is_secret, scan, everything, links)


def _walk(
    real_root: Path,
    rel_dir: str,
    ignores: list[IgnoreFile],
    is_secret: Callable[[str], bool],
    scan: SecretScan,
    everything: bool,
    links: hard_links.HardLinks,
) -> Iterator[Entry]:
    for rel, entry in scan_dir(real_root, rel_dir):
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        is_dir = stat.S_ISDIR(st.st_mode)
        if is_dir or stat.S_ISREG(st.st_mode):
            ignored = is_ignored(ignores, rel, is_dir)
            dependency = is_dir and not ignored and linked_dependency(Path(entry.path))
            secret = is_secret(rel) or links.refused(rel, st)
            kind = treatment(entry.name, is_dir, ignored, secret, st.st_size, dependency)
        elif stat.S_ISLNK(st.st_mode):
            secret = is_secret(rel) or points_to_secret(real_root, Path(entry.path), is_secret)
            kind = "secret" if secret else "symlink"
        else:
            kind = None  # FIFOs, sockets, devices: a copy would block or fail
        if kind is None and not (everything and is_dir):
            continue
        found = Entry(rel, kind or "linked", key_of(st), stat.S_IMODE(st.st_mode))
        if is_dir and found.kind == "linked":  # scanned first; with everything, a skipped one too
            yield from _scanned(real_root, found, scan, everything)
            continue
        yield found
        if kind == "dir":
            nested = IgnoreFile.load(real_root, rel)
            inner = [*ignores, nested] if nested else ignores
            yield from _walk(real_root, rel, inner, is_secret, scan, everything, links)


def _scanned(real_root: Path, folder: Entry, scan: SecretScan, everything: bool) -> Iterator[Entry]:
    """A folder to link (or, with ``everything``, one the walk does not enter), after its secret scan."""
    secrets = scan.secrets_under(folder.rel)
    if secrets is None:
        yield replace(folder, kind="unchecked")
    elif everything:
        yield from (Entry(rel, "secret") for rel in secrets)
    elif not secrets:
        yield folder
    else:
        holders = {parent for rel in secrets for parent in parents(rel)}
        yield replace(folder, kind="split")
        yield from _split(real_root, folder.rel, set(secrets), holders)


def _split(real_root: Path, rel_dir: str, secrets: set[str], holders: set[str]) -> Iterator[Entry]:
    """The entries of a split folder: its secrets, the directories holding one (split), the rest linked."""
    for rel, entry in scan_dir(real_root, rel_dir):
        if rel in secrets:
            yield Entry(rel, "secret")
        elif rel in holders:
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):  # else replaced since the scan: left out
                    yield Entry(rel, "split")
                    yield from _split(real_root, rel, secrets, holders)
        else:
            yield Entry(rel, "linked")


def split_around(real_root: Path, entries: Iterable[Entry], pending: Iterable[str]) -> Iterator[Entry]:
    """``entries`` (a workspace walk) with each ``linked`` folder that holds a pending file (an edit the
    agent proposed inside ``node_modules``, say) split instead: a real directory of the copy whose
    entries are linked one by one, split again down to the pending file, so that the file can be
    written there while the rest of the folder stays visible through its links. A linked folder was
    scanned and holds no secret, so its entries may all be linked."""
    holders = {parent for rel in pending for parent in parents(rel)}
    for entry in entries:
        if entry.kind == "linked" and entry.rel in holders:
            yield replace(entry, kind="split")
            yield from _split(real_root, entry.rel, set(), holders)
        else:
            yield entry


def parents(rel: str) -> Iterator[str]:
    """The proper ancestors of ``rel``, nearest first (``a/b/c`` gives ``a/b``, ``a``)."""
    while "/" in rel:
        rel = rel.rpartition("/")[0]
        yield rel


def reviewable_files(workdir: Path) -> dict[str, Key]:
    """The regular files of the copy that a command's change could bring into the proposal.

    Those not gitignored (by the copy's own ``.gitignore`` files), outside ``.git``, ``CACHE_DIRS``
    and the dependency trees linked by name (``dependency_folders.linked_name``: a ``node_modules`` a
    command installed); symlinks are neither followed nor listed.

    Returns:
        Copy-relative POSIX path to ``lstat`` key.
    """
    return reviewable_tree(workdir)[0]


def reviewable_tree(
    workdir: Path, rel_dir: str = ".", ignores: list[IgnoreFile] | None = None
) -> tuple[dict[str, Key], set[str]]:
    """``reviewable_files`` under the directory ``rel_dir`` (entered whatever its name), and the
    directories entered, ``rel_dir`` included. ``ignores``: the ``.gitignore`` files that apply to
    ``rel_dir``'s entries, root first (its own is loaded here); those of the root when None."""
    found: dict[str, Key] = {}
    entered: set[str] = set()
    if ignores is None:
        ignores = ignore_chain(workdir, rel_dir)
    else:
        nested = IgnoreFile.load(workdir, rel_dir)
        ignores = [*ignores, nested] if nested else ignores
    _reviewable(workdir, rel_dir, ignores, found, entered)
    return found, entered


def ignore_chain(workdir: Path, rel_dir: str) -> list[IgnoreFile]:
    """The ``.gitignore`` files under ``workdir`` (the copy or the workspace) that apply to the entries of
    ``rel_dir``, root first."""
    chain = ["."]
    if rel_dir != ".":
        parts = rel_dir.split("/")
        chain += ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return [found for base in chain if (found := IgnoreFile.load(workdir, base)) is not None]


def skipped_for_review(name: str) -> bool:
    """Whether a directory of this name is never looked into for reviewable files."""
    return name in (".git", *CACHE_DIRS) or linked_name(name)


def _reviewable(
    workdir: Path, rel_dir: str, ignores: list[IgnoreFile], found: dict[str, Key], entered: set[str]
) -> None:
    entered.add(rel_dir)
    for rel, entry in scan_dir(workdir, rel_dir):
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            if not skipped_for_review(entry.name) and not is_ignored(ignores, rel, True):
                nested = IgnoreFile.load(workdir, rel)
                _reviewable(workdir, rel, [*ignores, nested] if nested else ignores, found, entered)
        elif stat.S_ISREG(st.st_mode) and not is_ignored(ignores, rel, False):
            found[rel] = key_of(st)


def read_regular(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of the regular file ``path`` when it has at most ``max_bytes``; None otherwise.

    Never follows a final symlink and never blocks on a FIFO; None too when it cannot be read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return None
        data = handle.read(max_bytes + 1)
    return data if len(data) <= max_bytes else None


def make_parents(workdir: Path, target: Path) -> None:
    """Make every directory between ``workdir`` (the copy's root) and ``target`` a real directory."""
    current = workdir
    for part in target.relative_to(workdir).parts[:-1]:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            current.mkdir()
            continue
        if not stat.S_ISDIR(mode):
            current.unlink()
            current.mkdir()


def make_dir(workdir: Path, target: Path) -> None:
    """Make ``target`` (and its parents) real directories, replacing whatever else is there."""
    make_parents(workdir, target)
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        target.mkdir()
        return
    if not stat.S_ISDIR(mode):
        target.unlink()
        target.mkdir()


def write_file(workdir: Path, target: Path, data: bytes, mode: int) -> None:
    """Write ``data`` as a new regular file at ``target`` (mode bits ``mode``), replacing what is there."""
    make_parents(workdir, target)
    remove(target)
    # O_EXCL with O_NOFOLLOW: a command may have raced a link into place; never write through it.
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        os.fchmod(handle.fileno(), mode)


def copy_file(workdir: Path, target: Path, source: Path, mode: int) -> None:
    """Copy the regular file ``source`` (in the user's workspace) to ``target``; never follows links.

    A ``source`` that is no longer a regular file (replaced meanwhile), or that now has another name
    outside the dependency folders (``hard_links``, checked on the open file), is not copied.
    """
    try:
        src = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        remove(target)
        return
    with os.fdopen(src, "rb") as reader:
        st = os.fstat(reader.fileno())
        if not stat.S_ISREG(st.st_mode) or _second_name(workdir, target, source, st):
            remove(target)
            return
        make_parents(workdir, target)
        remove(target)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as writer:
            copy_keeping_holes(reader.fileno(), writer.fileno())
            os.fchmod(writer.fileno(), mode)


def _second_name(workdir: Path, target: Path, source: Path, st: os.stat_result) -> bool:
    """Whether ``source`` (``st`` its ``fstat``), to be copied to ``target`` in the copy ``workdir``, is
    a hard link the rule refuses (``hard_links``); the workspace is ``source`` less ``target``'s path."""
    if not hard_links.has_other_names(st):
        return False
    rel = target.relative_to(workdir)
    base = source.parents[len(rel.parts) - 1]
    return hard_links.refusal(base, rel.as_posix(), st) is not None


def copy_keeping_holes(source: int, target: int) -> None:
    """Copy the file open at ``source`` into the empty file open at ``target``, both from offset 0.

    A sparse file (fewer blocks than its size needs) stays sparse: only its data extents are written
    (``lseek`` ``SEEK_DATA``/``SEEK_HOLE``, Linux and macOS), and the size is set at the end. Neither
    ``shutil`` nor another library we use copies holes. Any other file is copied whole.
    """
    st = os.fstat(source)
    extents = [(0, st.st_size)]
    if st.st_blocks * 512 < st.st_size:
        with contextlib.suppress(OSError):  # a file system without SEEK_DATA: copied whole
            extents = _data_extents(source, st.st_size)
    for start, end in extents:
        os.lseek(source, start, os.SEEK_SET)
        os.lseek(target, start, os.SEEK_SET)
        while start < end and (chunk := os.read(source, min(end - start, 1024 * 1024))):
            written = 0
            while written < len(chunk):
                written += os.write(target, chunk[written:])
            start += len(chunk)
    os.ftruncate(target, st.st_size)


def _data_extents(fd: int, size: int) -> list[tuple[int, int]]:
    """The (start, end) byte ranges of the file at ``fd`` that hold data, in order."""
    extents: list[tuple[int, int]] = []
    offset = 0
    while offset < size:
        try:
            start = os.lseek(fd, offset, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # only a hole is left
                break
            raise
        offset = os.lseek(fd, start, os.SEEK_HOLE)
        extents.append((start, min(offset, size)))
    return extents


def make_symlink(workdir: Path, target: Path, points_to: str) -> None:
    """Put a symlink to ``points_to`` at ``target``, replacing what is there."""
    make_parents(workdir, target)
    remove(target)
    os.symlink(points_to, target)


def remove(target: Path) -> None:
    """Remove ``target`` whatever it is (a directory with its contents); nothing when it is missing."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(target)
    else:
        target.unlink()


def remove_inside(workdir: Path, rel: str) -> None:
    """Remove ``workdir/rel`` unless a parent on the way is not a real directory (a planted link)."""
    current = workdir
    for part in Path(rel).parts[:-1]:
        current = current / part
        with contextlib.suppress(OSError):
            if stat.S_ISDIR(os.lstat(current).st_mode):
                continue
        return
    with contextlib.suppress(OSError):
        remove(workdir / rel)


Written = dict[str, tuple[bytes, Key | None]]
"""What a tree's owner wrote from the overlay: path to (sha256 of the bytes, ``lstat`` key after)."""


def write_unsaved(real_root: Path, workdir: Path, rel: str, data: bytes, written: Written) -> None:
    """Put a pending edit's or open buffer's bytes at ``workdir/rel`` (the copy, or the overlay view's
    upper folder), unless it holds exactly them already: ``written`` remembers each write's hash and
    ``lstat``, and a file found with the same bytes is taken as written. The file keeps the mode of the
    workspace's one (a script's executable bit); a new file gets 0o644."""
    digest = hashlib.sha256(data).digest()
    target = workdir / rel
    current = lstat_key(target)
    if written.get(rel) == (digest, current) and current is not None:
        return
    if current is not None and read_regular(target, len(data)) == data:
        written[rel] = (digest, current)
        return
    try:
        st = os.lstat(real_root / rel)
        mode = st.st_mode & 0o777 if stat.S_ISREG(st.st_mode) else 0o644
    except OSError:
        mode = 0o644
    write_file(workdir, target, data, mode)
    written[rel] = (digest, lstat_key(target))


def lstat_key(path: Path) -> Key | None:
    """The ``lstat`` key of ``path`` (``key_of``), or None when it is missing or cannot be looked at."""
    try:
        return key_of(os.lstat(path))
    except OSError:
        return None
