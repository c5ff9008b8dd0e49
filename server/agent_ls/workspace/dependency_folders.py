"""Dependency folders: where package managers and build tools put other people's code.

One catalogue (``CATALOGUE``) serves every consumer: an instruction file or skill at or below such a
folder is never trusted text (``first_party``: instructions, skills, the lint), and the shadow copy links
the folders marked ``linked`` instead of copying them (``workspace.shadow_tree``). docs/instructions.md
("Dependency folders") lists the entries with their sources.

A folder is a dependency folder when, in this order:

1. its name is in the catalogue (compared case-folded and as Windows reads it: ``Node_Modules``,
   ``deps.``), with the entry's condition when it has one: the folder it lies in (``renv/library``),
   a path it holds (``pyvenv.cfg``, ``cache/download``) or a file beside it (``lib`` beside a Crystal
   ``shard.yml``). Generic names (``lib``, ``local``, ``env``, ``external``) only count with such a
   condition, so a project's own ``lib/`` stays first-party;
2. or it declares itself one: a virtual environment (``pyvenv.cfg``, PEP 405), a conda environment
   (``conda-meta``), or a git submodule (another project pinned in this one: a ``.git`` file pointing into
   a superproject's ``modules/``, or a path listed in the workspace's ``.gitmodules``).

A nested repository with its own ``.git`` directory is not a dependency folder: it is a project the
user opened with the workspace, whose ``.git`` makes it a project root for instructions.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from agent_ls.workspace.windows_names import windows_name


@dataclass(frozen=True)
class DependencyFolder:
    """One catalogue entry.

    Attributes:
        name: the folder's name, an ``fnmatch`` glob compared case-folded (``bazel-*``).
        ecosystem: the tools that make it, for docs and messages.
        inside: the name of the folder it must lie in (``renv`` for ``library``), or None.
        holds: a path it must hold (``pyvenv.cfg``), or None.
        beside: a file that must lie beside it (``shard.yml`` for ``lib``), or None.
        linked: the shadow copy links it (tools install it and commands only read it) rather than
            copying it; the others are copied, or linked only when gitignored.
    """

    name: str
    ecosystem: str
    inside: str | None = None
    holds: str | None = None
    beside: str | None = None
    linked: bool = False


# fmt: off
CATALOGUE: tuple[DependencyFolder, ...] = (
    # JavaScript and TypeScript
    DependencyFolder("node_modules", "npm, Yarn, pnpm, Bun, Deno", linked=True),
    DependencyFolder("bower_components", "Bower", linked=True),
    DependencyFolder("jspm_packages", "jspm", linked=True),
    DependencyFolder(".pnpm-store", "pnpm (a store inside the project)", linked=True),
    DependencyFolder(".yarn", "Yarn 2+ (cache, unplugged packages, releases, plugins)"),
    # Python
    DependencyFolder(".venv", "venv, virtualenv, uv, Poetry, PDM, Hatch", linked=True),
    DependencyFolder("venv", "venv (a common name; linked only with its pyvenv.cfg)"),
    DependencyFolder("*", "Python virtual environments (PEP 405)", holds="pyvenv.cfg", linked=True),
    DependencyFolder("*", "conda and pixi environments", holds="conda-meta", linked=True),
    DependencyFolder("site-packages", "Python installations"),
    DependencyFolder("dist-packages", "Debian's Python installations"),
    DependencyFolder("__pypackages__", "PEP 582 (PDM)", linked=True),
    DependencyFolder(".tox", "tox"),
    DependencyFolder(".nox", "nox"),
    DependencyFolder(".eggs", "setuptools (setup_requires)"),
    DependencyFolder(".pixi", "pixi"),
    # Ruby, PHP, Go, Rust and others that vendor
    DependencyFolder("vendor", "Bundler, Composer, Go, cargo vendor, Deno vendor"),
    DependencyFolder(".bundle", "Bundler"),
    DependencyFolder("mod", "the Go module cache (GOMODCACHE)", inside="pkg", holds="cache/download"),
    # Elixir and Erlang
    DependencyFolder("deps", "Mix, erlang.mk"),
    DependencyFolder("_build", "Mix, rebar3, dune"),
    DependencyFolder("_checkouts", "rebar3"),
    # Dart and Flutter, Swift and Objective-C
    DependencyFolder(".dart_tool", "Dart and Flutter"),
    DependencyFolder(".pub-cache", "Dart pub (a cache inside the project)"),
    DependencyFolder(".build", "Swift Package Manager"),
    DependencyFolder("Pods", "CocoaPods"),
    DependencyFolder("Carthage", "Carthage"),
    # Haskell, OCaml, Nim, Zig, Crystal, Elm, PureScript
    DependencyFolder(".stack-work", "Stack"),
    DependencyFolder("dist-newstyle", "Cabal"),
    DependencyFolder("_opam", "opam (a local switch)"),
    DependencyFolder("_esy", "esy"),
    DependencyFolder("nimbledeps", "Nimble"),
    DependencyFolder(".zig-cache", "Zig"),
    DependencyFolder("zig-cache", "Zig before 0.13"),
    DependencyFolder("lib", "Crystal shards", beside="shard.yml"),
    DependencyFolder("elm-stuff", "Elm"),
    DependencyFolder(".spago", "Spago (PureScript)"),
    # C and C++
    DependencyFolder("third_party", "Chromium, Google, Bazel and CMake projects"),
    DependencyFolder("third-party", "vendored C and C++ libraries"),
    DependencyFolder("thirdparty", "vendored C and C++ libraries"),
    DependencyFolder("3rdparty", "vendored C and C++ libraries (Qt)"),
    DependencyFolder("3rd_party", "vendored C and C++ libraries"),
    DependencyFolder("vcpkg_installed", "vcpkg manifest mode"),
    DependencyFolder("_deps", "CMake FetchContent"),
    # Build systems and infrastructure
    DependencyFolder("bazel-*", "Bazel's convenience links"),
    DependencyFolder("buck-out", "Buck"),
    DependencyFolder(".gradle", "Gradle"),
    DependencyFolder(".m2", "Maven (a repository inside the project)"),
    DependencyFolder(".terraform", "Terraform (modules and providers)"),
    DependencyFolder(".terragrunt-cache", "Terragrunt"),
    # R, Lua, Perl
    DependencyFolder("library", "renv", inside="renv"),
    DependencyFolder("lib", "packrat", inside="packrat"),
    DependencyFolder("lib-R", "packrat", inside="packrat"),
    DependencyFolder("lib-ext", "packrat", inside="packrat"),
    DependencyFolder("lua_modules", "LuaRocks (--tree lua_modules)"),
    DependencyFolder(".luarocks", "LuaRocks"),
    DependencyFolder("local", "Carton (Perl)", beside="cpanfile"),
    # Version control databases
    DependencyFolder(".git", "git"),
    DependencyFolder(".hg", "Mercurial"),
    DependencyFolder(".svn", "Subversion"),
)
# fmt: on
"""Every entry (module docstring); names are matched case-folded."""

_PLAIN = frozenset(
    e.name.casefold()
    for e in CATALOGUE
    if not (e.inside or e.holds or e.beside) and not any(c in e.name for c in "*?[")
)
_OTHERS = tuple(e for e in CATALOGUE if e.name.casefold() not in _PLAIN)
_LINKED_PLAIN = frozenset(e.name.casefold() for e in CATALOGUE if e.linked and e.name.casefold() in _PLAIN)
_SUBMODULE_GITDIR = re.compile(r"gitdir:\s*(.+?)\s*$", re.MULTILINE)
# Only the "path =" lines of .gitmodules matter, and any such line counts: git's config syntax (inline
# comments, valueless keys, quoted values) is not INI, and configparser fails on a whole file where this
# reading can only find more submodules, never fewer.
_GITMODULES_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.MULTILINE)


def dependency_name(name: str) -> bool:
    """Whether a folder named ``name`` is a dependency folder by its name alone (no condition): what a
    walker that cannot look inside each folder skips (file watching, listing a skill's files)."""
    return _folded(name) in _PLAIN


def dependency_folder(path: Path, root: Path | None = None) -> DependencyFolder | None:
    """The catalogue entry the directory ``path`` is, or a marker entry; None for a first-party folder.

    Args:
        path: an absolute directory (it need not exist: conditions then fail).
        root: the workspace root, whose ``.gitmodules`` lists submodules; None to skip that list.

    Returns:
        The entry; for a git submodule, one with ecosystem ``git submodule``. Blocks: a few ``stat``
        calls and, for submodules, one small read.
    """
    name = _folded(path.name)
    if name in _PLAIN:
        return _entry(name)
    for entry in _OTHERS:
        if fnmatch.fnmatchcase(name, entry.name.casefold()) and _conditions_hold(entry, path):
            return entry
    if _is_submodule(path, root):
        return _SUBMODULE
    return None


def linked_dependency(path: Path) -> bool:
    """Whether the shadow copy links the directory ``path`` as a dependency tree (``linked`` entries:
    by name, or a folder holding ``pyvenv.cfg`` or ``conda-meta``). Blocks: a few ``stat`` calls."""
    name = _folded(path.name)
    if name in _LINKED_PLAIN:
        return True
    return any(
        entry.linked and fnmatch.fnmatchcase(name, entry.name.casefold()) and _conditions_hold(entry, path)
        for entry in _OTHERS
    )


def linked_name(name: str) -> bool:
    """Whether a folder named ``name`` is linked by its name alone (``node_modules``, ``.venv``)."""
    return _folded(name) in _LINKED_PLAIN


def first_party(root: Path, path: Path) -> Path:
    """``path`` (inside ``root``), cut just above its first dependency folder (``dependency_folder``);
    ``path`` itself when it lies in none. ``root`` is never cut: opening a dependency as the workspace
    makes it the project."""
    kept = root
    for part in path.relative_to(root).parts:
        if dependency_folder(kept / part, root) is not None:
            break
        kept = kept / part
    return kept


_SUBMODULE = DependencyFolder("*", "git submodule")


def _entry(folded: str) -> DependencyFolder:
    return next(e for e in CATALOGUE if e.name.casefold() == folded)


def _folded(name: str) -> str:
    return windows_name(name).casefold()


def _conditions_hold(entry: DependencyFolder, path: Path) -> bool:
    if entry.inside is not None and _folded(path.parent.name) != entry.inside.casefold():
        return False
    if entry.holds is not None and not os.path.exists(path / entry.holds):
        return False
    return entry.beside is None or os.path.isfile(path.parent / entry.beside)


def _is_submodule(path: Path, root: Path | None) -> bool:
    """A git submodule: its ``.git`` file names a git directory under a ``modules`` folder (how git
    absorbs a submodule's repository into the superproject's), or ``root``'s ``.gitmodules`` lists it."""
    dot_git = path / ".git"
    if os.path.isfile(dot_git):
        head = _read_regular(str(dot_git), 4096)
        found = _SUBMODULE_GITDIR.search(head)
        if found is not None and "modules" in Path(found[1]).parts:
            return True
    if root is None or not path.is_relative_to(root) or path == root:
        return False
    rel = path.relative_to(root).as_posix().casefold()
    return rel in _submodule_paths(root / ".gitmodules")


def _submodule_paths(gitmodules: Path) -> frozenset[str]:
    """The ``path`` values of a ``.gitmodules`` file (gitmodules(5)), case-folded; empty when absent."""
    try:
        st = os.stat(gitmodules)
    except OSError:
        return frozenset()
    if not stat.S_ISREG(st.st_mode):
        return frozenset()
    return _read_submodule_paths(str(gitmodules), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=32)
def _read_submodule_paths(gitmodules: str, mtime_ns: int, size: int) -> frozenset[str]:
    """``_submodule_paths`` of one version of the file (the stat key makes a changed file read again)."""
    del mtime_ns, size
    text = _read_regular(gitmodules, 1024 * 1024)
    return frozenset(value.strip('"').strip("/").casefold() for value in _GITMODULES_PATH.findall(text))


def _read_regular(path: str, max_bytes: int) -> str:
    """The first ``max_bytes`` of the regular file ``path`` as text; "" for anything else. Opened without
    blocking: a FIFO named ``.gitmodules`` or ``.git`` must not stop every walk that asks."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return ""
            return handle.read(max_bytes).decode("utf-8", errors="replace")
        except OSError:
            return ""
