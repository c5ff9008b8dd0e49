"""The pieces of a command's argv that may name files, and whether the command reads or writes them.

``operands(argv)`` lists, for the permission engine (``engine.PermissionPolicy``), every piece of a
normalized argv (``SimpleCommand.argv``) that the program could open as a file; the engine then
checks each one that looks like a path. Listing too much costs a lookup; missing one is a bypass, so
when in doubt a piece is listed. In argv order:

- every word that is not an option, every word after ``--``, and the text after each ``=`` of such a
  word (``dd if=/x``, ``pytest -o cache_dir=/x``);
- the value of ``--opt=value`` (and the text after each further ``=``);
- in a cluster of short options, the text after each letter: getopt(3) lets an option that takes a
  value take the rest of the word, and which options do depends on the program (``grep -f.env``,
  ``grep -rf.env``: ``.env``; ``git diff -O/x``: ``/x``); these are ``derived``;
- an option word holding a glob character (``-*``): bash expands it to file names first;
- except, for grep (``grep``, ``egrep``, ``fgrep``), the value of ``--exclude=`` and ``--exclude-dir=``:
  a name or glob of what grep skips, never a file it opens (``--exclude-dir=.git`` reads no ``.git``);
  ``--include=`` stays listed (``--include=.env`` makes ``grep -r`` read secrets);
- for git: the path in ``<rev>:<path>`` (``HEAD:.env``, ``@:x``, ``:0:x``; gitrevisions(7)) and in a
  pathspec with magic (``:(top).env``, ``:/x``, ``:!x``; gitglossary(7) "pathspec"); both are
  relative to the repository's top (``top``), ``./``-relative ones to the cwd;
- for pytest (``pytest``, ``py.test``, ``python -m pytest``): the files its options write, as
  ``write`` operands (value in the same word or the next, as argparse reads them): ``--junitxml``,
  ``--junit-xml``, ``--resultlog``, ``--report-log``, ``--log-file``, ``--basetemp`` (a directory
  pytest empties), ``--debug[=FILE]`` (``pytestdebug.log`` when no file follows), ``-o``/
  ``--override-ini`` ``cache_dir=``/``log_file=``, ``--cov-report=TYPE:PATH``, and the report files
  of common plugins (``--html``, ``--json-report-file``, ``--alluredir``, ``--benchmark-json``);
  and ``@FILE``, which pytest reads its arguments from (argparse ``fromfile_prefix_chars``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

_GLOB_CHARS = re.compile(r"[*?[]")
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)?)?")
_PYTEST_WRITES = (
    "--junitxml", "--junit-xml", "--resultlog", "--report-log", "--log-file", "--basetemp",
    "--html", "--json-report-file", "--alluredir", "--benchmark-json",
)  # fmt: skip
_PYTEST_INI_WRITES = frozenset({"cache_dir", "log_file"})
_PYTEST_DEBUG_DEFAULT = "pytestdebug.log"
_GREP = frozenset({"grep", "egrep", "fgrep"})
_GREP_NAME_OPTIONS = frozenset({"--exclude", "--exclude-dir"})
"""grep options whose ``=`` value is a name or glob to skip, never opened (GNU grep manual, "File and
Directory Selection")."""


@dataclass(frozen=True)
class Operand:
    """A piece of argv that may name a file.

    Attributes:
        text: the piece, as the program receives it (a path, or text that may be one).
        write: the program writes (creates, truncates or empties) it; otherwise it may read it.
        derived: cut out of a larger word (an option's attached value, a git revision's path); the
            engine also checks it when it only has a secret's name.
        top: a git path relative to the repository's top; the engine resolves it from the workspace
            root as well as from the cwd.
    """

    text: str
    write: bool = False
    derived: bool = False
    top: bool = False


def operands(argv: Sequence[str]) -> Iterator[Operand]:
    """The operands of ``argv`` (module docstring), in order; nothing for an empty argv."""
    if not argv:
        return
    pytest_from = _pytest_start(argv)
    skipped = _GREP_NAME_OPTIONS if argv[0] in _GREP else frozenset()
    pieces: Iterable[Operand] = _generic(argv[1:], skipped)
    if pytest_from is not None:
        pieces = itertools.chain(pieces, _pytest(argv[pytest_from:]))
    for piece in pieces:
        yield piece
        if argv[0] == "git":
            yield from _git_paths(piece.text)


def _generic(args: Sequence[str], skipped: frozenset[str] = frozenset()) -> Iterator[Operand]:
    options = True
    for word in args:
        if options and word == "--":
            options = False
            continue
        if not (options and word.startswith("-") and word != "-"):
            yield Operand(word)
            yield from _after_equals(word)
            continue
        if _GLOB_CHARS.search(word):
            yield Operand(word)
        if word.startswith("--"):
            if word.partition("=")[0] not in skipped:
                yield from _after_equals(word)
        else:
            yield from (Operand(word[i:], derived=True) for i in range(2, len(word)))


def _after_equals(word: str) -> Iterator[Operand]:
    start = word.find("=")
    while start >= 0:
        if start + 1 < len(word):
            yield Operand(word[start + 1 :], derived=True)
        start = word.find("=", start + 1)


def _git_paths(text: str) -> Iterator[Operand]:
    """The paths of ``<rev>:<path>`` and of pathspec magic in ``text`` (module docstring)."""
    if text.startswith(":("):
        close = text.find(")")
        if close > 0:
            yield Operand(text[close + 1 :], derived=True, top=True)
    elif text.startswith(":"):
        rest = text[1:].lstrip("/!^")
        yield Operand(rest[1:] if rest.startswith(":") else rest, derived=True, top=True)
    colon = text.find(":")
    while colon >= 0:  # a date in "@{10:00}" has a colon too: every tail is checked
        if colon + 1 < len(text):
            yield Operand(text[colon + 1 :], derived=True, top=True)
        colon = text.find(":", colon + 1)


def _pytest_start(argv: Sequence[str]) -> int | None:
    """Where pytest's own arguments start in ``argv``, or None when it does not run pytest. For
    ``python``, a ``-m pytest`` anywhere counts (over-listing: ``python x.py -m pytest`` too)."""
    if argv[0] in ("pytest", "py.test"):
        return 1
    if _PYTHON.fullmatch(argv[0]):
        for i, word in enumerate(argv[1:], start=1):
            if word == "-mpytest":
                return i + 1
            if word == "-m" and argv[i + 1 : i + 2] == ("pytest",):
                return i + 2
    return None


def _pytest(args: Sequence[str]) -> Iterator[Operand]:
    options = True
    for i, word in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else None
        if word.startswith("@") and len(word) > 1:  # read before parsing, even after "--"
            yield Operand(word[1:], derived=True)
        if word == "--":
            options = False
        if options and word.startswith("-"):
            yield from _pytest_option(word, following)


def _pytest_option(word: str, following: str | None) -> Iterator[Operand]:
    name, equals, value = word.partition("=")
    given = value if equals else following
    if name in _PYTEST_WRITES:
        if given is not None:
            yield Operand(given, write=True, derived=True)
    elif name == "--debug":
        if not equals and (following is None or following.startswith("-")):
            given = _PYTEST_DEBUG_DEFAULT  # the optional value is taken only when one follows
        yield Operand(given or _PYTEST_DEBUG_DEFAULT, write=True, derived=True)
    elif name == "--cov-report":
        if given is not None and ":" in given:
            yield Operand(given.split(":", 1)[1], write=True, derived=True)
    else:
        if name == "--override-ini":
            ini = given
        elif not word.startswith("--") and "o" in word:
            ini = word[word.index("o") + 1 :] or following  # "-o k=v", "-ok=v", "-vok=v"
        else:
            return
        key, assigned, path = (ini or "").partition("=")
        if assigned and key.strip() in _PYTEST_INI_WRITES:
            yield Operand(path, write=True, derived=True)
