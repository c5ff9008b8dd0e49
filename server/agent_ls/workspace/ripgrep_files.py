"""The files of a workspace directory as ``rg --files`` finds them, under ``listing.py``'s rules.

``Overlay.list_files`` asks here first; ``listing.walk_files`` (the same rules in Python, several times
slower on a large tree) answers when ripgrep is missing or fails. One listing, in order:

1. ripgrep runs in the scope of the directory (``ripgrep_scope``: the workspace's ``.gitignore`` files
   and no ignore file from outside it), with ``--no-ignore-dot`` (``.ignore`` and ``.rgignore`` are not
   listing rules), and ``--hidden`` with ``.git`` excluded when the glob names hidden entries; it
   prints the regular files, NUL-separated. The glob is not given to ripgrep: a ripgrep glob overrides
   the ignore and hidden rules (``--glob '*.py'`` lists a gitignored ``gen/x.py``), a listing's does not;
2. ripgrep skips symbolic links when it does not follow them, but ``walk_files`` lists a link to a file
   that stays inside the workspace. ripgrep's ``--debug`` log names every link it skipped (after the
   ignore and hidden rules, never a link to a directory), so those are read from it. The log is text
   that file names are written into unescaped (a name may hold a newline and a forged log line), so it
   only proposes links: each is kept when it is a symbolic link ``walk_files`` would list (to a file,
   staying inside, not hidden unless wanted, not ignored), and when a line of the log is not one of
   ripgrep's (a name with a newline) or a proposed link is none, the log cannot be read and the Python
   walk answers. The log's wording is ripgrep 14's (the version pyproject pins); another version's only
   loses the links;
3. each path is made workspace-relative and kept when the selection wants it (``Selection.wanted``).

A ``.gitignore`` that is a FIFO makes ripgrep wait forever to open it: a run seen waiting on one
(``fifo_waits``) is stopped and the Python walk answers (it skips such a file).

ripgrep runs outside the sandbox, as the Python walk ran in the server: it reads names and ignore files,
never a file's content, and prints nothing but paths.

Why ripgrep: it walks the tree in native threads, about three times faster than the Python walk on
50k files (benchmarks/bench_scale.py).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from agent_ls.workspace import fifo_waits
from agent_ls.workspace.listing import IgnoreFile, Selection, is_ignored
from agent_ls.workspace.ripgrep_scope import scope_of

LIST_TIMEOUT_S = 50.0
_SKIPPED_LINK = re.compile(
    rb"\|rg::haystack\|[^\n]*?: ignoring (.+): failed to pass haystack filter: "
    rb"file type: Some\(FileType \{[^}\n]*is_symlink: true"
)
_SKIPPED_ENTRY = re.compile(rb"\|rg::haystack\|[^\n]*?: ignoring .+: failed to pass haystack filter: ")
"""Every line of ripgrep's about an entry it skipped (a link, a FIFO); one that is not this is a name's."""


def list_with_ripgrep(
    rg: str,
    real_root: Path,
    selection: Selection,
    *,
    env: Mapping[str, str],
    stays_inside: Callable[[str], bool],
) -> list[str] | None:
    """The workspace-relative paths of the files ``selection`` wants, in no particular order; None when
    ripgrep could not run (the caller walks the tree itself). Blocks while ripgrep runs.

    Args:
        rg: the ripgrep binary.
        real_root: the workspace root with symlinks resolved.
        selection: what to list (``listing.Selection``).
        env: ripgrep's environment.
        stays_inside: whether an absolute symlink path resolves inside the workspace.
    """
    scope = scope_of(real_root, selection.rel_dir)
    args = [rg, "--files", "--null", "--debug", "--no-config", "--no-ignore-dot"]
    if selection.hidden:
        args += ["--hidden", "--glob=!.git"]
    done = _run([*args, *scope.args], scope.cwd, env)
    if done is None:
        return None
    returncode, stdout, stderr = done
    if returncode not in (0, 1) and not stdout:
        return None
    if any(_foreign(line) for line in stderr.splitlines()):
        return None  # a name holding a newline: the log cannot be told apart from what names write
    links = _Links(real_root, scope.prefix.removesuffix("/") or ".", selection, stays_inside)
    found = [scope.prefix + _text(raw).removeprefix("./") for raw in stdout.split(b"\0") if raw]
    for raw in _SKIPPED_LINK.findall(stderr):
        link = scope.prefix + _text(raw).removeprefix("./")
        listed = links.listed(link)
        if listed is None:
            return None
        if listed:
            found.append(link)
    return selection.wanted(path for path in found if scope.wants(path))


def _run(argv: list[str], cwd: Path, env: Mapping[str, str]) -> tuple[int, bytes, bytes] | None:
    """ripgrep's exit code, stdout and stderr; None when it cannot start, runs over ``LIST_TIMEOUT_S``,
    or waits on a FIFO (a ``.gitignore`` that is one: ``fifo_waits``), stopped then."""
    try:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError:
        return None
    deadline = time.monotonic() + LIST_TIMEOUT_S
    step = fifo_waits.FIRST_LOOK_S
    with process:
        while True:
            try:
                stdout, stderr = process.communicate(timeout=step)  # a retry loses no output
                return process.returncode, stdout, stderr
            except subprocess.TimeoutExpired:
                if time.monotonic() > deadline or fifo_waits.waits_on_fifo(process.pid):
                    process.kill()
                    process.communicate()
                    return None
            step = fifo_waits.LOOK_EVERY_S


class _Links:
    """Whether a link the log names is one ``walk_files`` lists; the ``.gitignore`` files read once.

    Args:
        start: where the listing's ignore rules start (``"."``, or an ignored directory listed as its
            own root: ``ripgrep_scope``).
    """

    def __init__(
        self, real_root: Path, start: str, selection: Selection, stays_inside: Callable[[str], bool]
    ) -> None:
        self._root = real_root
        self._start = start
        self._selection = selection
        self._stays_inside = stays_inside
        self._rules: dict[str, IgnoreFile | None] = {}

    def listed(self, rel: str) -> bool | None:
        """True when the workspace-relative ``rel`` is a link to list, False when it is a link not to
        list, None when it is no symbolic link at all (the log was not ripgrep's)."""
        path = self._root / rel
        try:
            if not stat.S_ISLNK(os.lstat(path).st_mode):
                return None
        except (OSError, ValueError):
            return None
        if not self._selection.covers(rel) or self._ignored(rel):
            return False
        return self._stays_inside(str(path)) and not path.is_dir()

    def _ignored(self, rel: str) -> bool:
        """Whether the rules from ``start`` down ignore ``rel`` or a directory above it (``walk_files``)."""
        head = "" if self._start == "." else self._start + "/"
        parts = rel.removeprefix(head).split("/")
        ignores: list[IgnoreFile] = []
        for depth in range(len(parts)):
            base = head + "/".join(parts[:depth]) if depth else self._start
            if base not in self._rules:
                self._rules[base] = IgnoreFile.load(self._root, base)
            found = self._rules[base]
            if found is not None:
                ignores.append(found)
            if is_ignored(ignores, head + "/".join(parts[: depth + 1]), depth < len(parts) - 1):
                return True
        return False


def _foreign(line: bytes) -> bool:
    """Whether a line of ripgrep's log is not one ripgrep wrote whole (the rest of a name's line)."""
    return not line.startswith(b"rg: ") or (b"|rg::haystack|" in line and not _SKIPPED_ENTRY.search(line))


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")
