"""Option scanning for the programs the shell parser reads: which words are options, which are values.

``scan_options`` reads argv the way glibc ``getopt_long`` does with a ``+`` option string, which is what
wrappers use so that the options of the command they run stay its own (``setsid rm -rf x``): options
stop at the first operand or after ``--``; a short option cluster (``-fw``) holds flags and at most one
valued option, whose value is the rest of the word or the next word; a long option takes its value
after ``=`` or in the next word, and may be abbreviated to any unambiguous prefix (``--sig=KILL`` is
``--signal=KILL``). An option the spec does not list is an error, never a guess: guessing wrong whether
it takes a value would shift which word is the command.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_ls.policy.shell_words import Word


@dataclass(frozen=True)
class Options:
    """The options of one program (as its ``getopt_long`` option string and long-option table).

    Attributes:
        flags: short options without a value.
        valued: short options with a value (attached or next word).
        optional: short options with an optional value, attached only (``xargs -i``, ``unshare -m``).
        long_flags: long options without a value, or with an optional one after ``=``.
        long_valued: long options with a value (``--name value`` or ``--name=value``).
        numeric: ``-10`` is an option (``nice``).
        dash_alone: ``-`` is an option (``env``, ``su``).
    """

    flags: str = ""
    valued: str = ""
    optional: str = ""
    long_flags: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()
    numeric: bool = False
    dash_alone: bool = False

    def long_name(self, written: str) -> str | None:
        """The long option ``written`` (without ``--``) names: itself, or the one it abbreviates."""
        known = self.long_flags | self.long_valued
        if written in known:
            return written
        matches = [name for name in known if name.startswith(written)]
        return matches[0] if written and len(matches) == 1 else None


@dataclass(frozen=True)
class Scanned:
    """What ``scan_options`` read.

    Attributes:
        index: the index in ``args`` of the first operand (``len(args)`` when there is none).
        seen: the options in order, as ``("-n", "5")`` or ``("--signal", "KILL")`` (long options by
            their full name), the value None for a flag.
        error: why the options cannot be read (an option the spec does not list, a missing value).
        dynamic: the options whose value is a word not known statically.
    """

    index: int
    seen: tuple[tuple[str, str | None], ...]
    error: str | None = None
    dynamic: frozenset[str] = frozenset()

    def has(self, *names: str) -> bool:
        """Whether any of the options ``names`` (``"-p"``, ``"--pid"``) was given."""
        return any(option in names for option, _ in self.seen)

    def value(self, *names: str) -> str | None:
        """The value of the last of the options ``names`` given, or None."""
        found = [value for option, value in self.seen if option in names]
        return found[-1] if found else None


def scan_options(name: str, args: Sequence[Word], spec: Options) -> Scanned:
    """Read the options at the start of ``args`` (the words after the program ``name``) by ``spec``."""
    seen: list[tuple[str, str | None]] = []
    dynamic: set[str] = set()
    i = 0
    while i < len(args):
        word = args[i]
        arg = word.text
        if not word.static or not arg.startswith("-") or (arg == "-" and not spec.dash_alone):
            break
        if arg == "--":
            return Scanned(i + 1, tuple(seen), dynamic=frozenset(dynamic))
        if arg == "-" or (spec.numeric and arg.lstrip("-").isdigit()):
            seen.append((arg, None))
            i += 1
            continue
        if arg.startswith("--"):
            written, equals, value = arg[2:].partition("=")
            long_name = spec.long_name(written)
            if long_name is None:
                return Scanned(i, tuple(seen), f"unknown option of {name}: --{written}")
            option = "--" + long_name
            if long_name in spec.long_valued:
                if not equals:
                    if i + 1 >= len(args):
                        return Scanned(len(args), tuple(seen), f"{name} {option} needs a value")
                    value = args[i + 1].text
                    if not args[i + 1].static:
                        dynamic.add(option)
                    i += 1
                seen.append((option, value))
            else:
                seen.append((option, value if equals else None))
            i += 1
            continue
        j = 1
        while j < len(arg):
            letter = arg[j]
            if letter in spec.flags:
                seen.append((f"-{letter}", None))
                j += 1
            elif letter in spec.valued or letter in spec.optional:
                attached = arg[j + 1 :]
                if not attached and letter in spec.valued:
                    if i + 1 >= len(args):
                        return Scanned(len(args), tuple(seen), f"{name} -{letter} needs a value")
                    attached = args[i + 1].text
                    if not args[i + 1].static:
                        dynamic.add(f"-{letter}")
                    i += 1
                seen.append((f"-{letter}", attached or None))
                break
            else:
                return Scanned(i, tuple(seen), f"unknown option of {name}: -{letter}")
        i += 1
    return Scanned(i, tuple(seen), dynamic=frozenset(dynamic))
