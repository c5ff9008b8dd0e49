"""Where each key of a TOML text is (line, columns), so that a diagnostic can point at its key.

tomllib returns plain values and keeps no positions, so ``KeyLocator`` scans the text itself. It is apart
from the loading because it is a small TOML scanner with its own rules (headers, dotted and quoted keys,
multi-line strings) and knows nothing of the config's schema or checks.
"""

from __future__ import annotations

import re
import tomllib

KeyPath = tuple[str, ...]
"""A key as the names from the top table down: ``("providers", "local", "base_url")``."""


class KeyLocator:
    """Where each key of a TOML text is: tomllib keeps no positions, so the text is scanned.

    Understands table headers (``[a.b]``, ``[[a]]``), dotted keys (``a.b = 1``), bare, basic and
    literal keys, and skips the inside of multi-line strings. Keys inside inline tables are not
    indexed: they are located at their table's key, which is on the same line.
    """

    _BARE = re.compile(r"[A-Za-z0-9_-]+")

    def __init__(self, text: str) -> None:
        self._where: dict[KeyPath, tuple[int, int, int]] = {}
        table: KeyPath = ()
        closing: str | None = None
        for number, line in enumerate(text.splitlines()):
            if closing is not None:
                if closing in line:
                    closing = None
                continue
            start = len(line) - len(line.lstrip())
            if line.startswith("[", start):
                inner = start + (2 if line.startswith("[[", start) else 1)
                parsed = self._key(line, inner)
                if parsed is not None:
                    table = tuple(name for name, _, _ in parsed[0])
                    self._record(number, (), parsed[0])
                continue
            parsed = self._key(line, start)
            if parsed is None:
                continue
            parts, after = parsed
            rest = line[after:].lstrip()
            if not rest.startswith("="):
                continue
            self._record(number, table, parts)
            value = rest[1:].lstrip()
            for quote in ('"""', "'''"):
                if value.startswith(quote) and value.count(quote) == 1:
                    closing = quote

    def _record(self, number: int, table: KeyPath, parts: list[tuple[str, int, int]]) -> None:
        first = parts[0][1]
        for index, (_, _, end) in enumerate(parts):
            path = (*table, *(name for name, _, _ in parts[: index + 1]))
            self._where.setdefault(path, (number, first, end))

    def _key(self, line: str, pos: int) -> tuple[list[tuple[str, int, int]], int] | None:
        """The dotted key starting at ``pos``: its parts (name, start, end) and the index after it."""
        parts: list[tuple[str, int, int]] = []
        while True:
            while pos < len(line) and line[pos] in " \t":
                pos += 1
            if pos >= len(line):
                return None
            if line[pos] in "\"'":
                quote = line[pos]
                end = pos + 1
                while end < len(line) and line[end] != quote:
                    end += 2 if quote == '"' and line[end] == "\\" else 1
                if end >= len(line):
                    return None
                try:
                    name = tomllib.loads(f"k = {line[pos : end + 1]}")["k"]
                except tomllib.TOMLDecodeError:
                    return None
                parts.append((name, pos, end + 1))
                pos = end + 1
            else:
                bare = self._BARE.match(line, pos)
                if bare is None:
                    return None
                parts.append((bare[0], pos, bare.end()))
                pos = bare.end()
            while pos < len(line) and line[pos] in " \t":
                pos += 1
            if pos < len(line) and line[pos] == ".":
                pos += 1
                continue
            return parts, pos

    def locate(self, key: KeyPath) -> tuple[int, int, int]:
        """(line, start, end) of ``key``, else of its longest located prefix, else (0, 0, 0)."""
        for length in range(len(key), 0, -1):
            found = self._where.get(key[:length])
            if found is not None:
                return found
        return 0, 0, 0
