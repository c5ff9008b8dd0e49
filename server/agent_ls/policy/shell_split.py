"""Split a shell command into the parts the policy judges one by one (a scanner, not a parser).

Separators: ``|``, ``|&``, ``;``, ``&&``, ``||``, ``&`` and newline, outside ``'...'``, ``"..."`` and
``$'...'`` and not after a backslash (``>&``, ``<&``, ``&>``, ``>|`` are redirections). The commands
inside ``$(...)``, backticks (also within double quotes), ``<(...)`` and ``>(...)`` become extra parts,
recursively. Parts are stripped; empty ones dropped. Unbalanced quotes or parentheses are reported as
``problem``, and the policy then never allows the command. Wrappers (``env``, ``xargs``), ``bash -c``,
redirection targets and heredocs are not understood: tree-sitter-bash replaces this module later.
"""

from __future__ import annotations

from dataclasses import dataclass

# Longest first, so that "&&" is not read as two "&".
_SEPARATORS = ("&&", "||", "|&", "|", ";", "&", "\n")
_SUBSTITUTIONS = ("$(", "<(", ">(")


@dataclass(frozen=True)
class SplitCommand:
    """The parts of a command, in order: top-level parts, then nested ones (outer before inner).

    ``problem`` is None when the whole command was understood, else a short phrase
    (``unbalanced double quote``).
    """

    parts: tuple[str, ...]
    problem: str | None = None


class _Unbalanced(Exception):
    pass


def split_command(command: str) -> SplitCommand:
    """Split ``command`` into parts; never raises."""
    scanner = _Scanner(command)
    try:
        top = scanner.parts_until(None)
    except _Unbalanced as exc:
        # Keep what was read, and the unreadable rest as one part, so a deny rule can still match it.
        partial = [*scanner.done, command[scanner.top_start :]]
        return SplitCommand(_clean(partial + scanner.nested), str(exc))
    return SplitCommand(_clean(top + scanner.nested))


def _clean(parts: list[str]) -> tuple[str, ...]:
    return tuple(p for p in (part.strip() for part in parts) if p)


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.nested: list[str] = []
        self.done: list[str] = []  # top-level parts finished so far, kept when scanning fails
        self.top_start = 0  # where the top-level part being scanned starts

    def parts_until(self, closer: str | None) -> list[str]:
        """Scan parts up to ``closer`` (``)`` or a backtick, consumed) or the end of the text."""
        text, depth = self.text, 0
        parts: list[str] = []
        current: list[str] = []
        while self.pos < len(text):
            char = text[self.pos]
            if closer is not None and char == closer and (closer != ")" or depth == 0):
                self.pos += 1
                parts.append("".join(current))
                return parts
            if char == "\\":
                current.append(text[self.pos : self.pos + 2])
                self.pos += 2
            elif char == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise _Unbalanced("unbalanced single quote")
                current.append(text[self.pos : end + 1])
                self.pos = end + 1
            elif char == '"':
                current.append(self.double_quoted())
            elif text.startswith("$'", self.pos):
                current.append(self.ansi_c_quoted())
            elif char == "`" or text.startswith(_SUBSTITUTIONS, self.pos):
                current.append(self.substitution())
            elif separator := self.separator(current):
                parts.append("".join(current))
                current = []
                self.pos += len(separator)
                if closer is None:
                    self.done.append(parts[-1])
                    self.top_start = self.pos
            else:
                depth += {"(": 1, ")": -1}.get(char, 0)
                current.append(char)
                self.pos += 1
        if closer is not None:
            raise _Unbalanced("unbalanced backtick" if closer == "`" else "unbalanced parenthesis")
        parts.append("".join(current))
        return parts

    def separator(self, current: list[str]) -> str | None:
        for separator in _SEPARATORS:
            if self.text.startswith(separator, self.pos):
                previous = current[-1][-1:] if current else ""
                if separator.startswith(("&", "|")) and previous in (">", "<"):
                    return None  # 2>&1, <&3, >| file
                if separator == "&" and self.text.startswith("&>", self.pos):
                    return None  # &> file
                return separator
        return None

    def double_quoted(self) -> str:
        """Consume a double-quoted string (opening quote at ``pos``); substitutions inside still count."""
        text = self.text
        self.pos += 1
        chunks = ['"']
        while self.pos < len(text):
            char = text[self.pos]
            if char == '"':
                self.pos += 1
                chunks.append('"')
                return "".join(chunks)
            if char == "\\":
                chunks.append(text[self.pos : self.pos + 2])
                self.pos += 2
            elif char == "`" or text.startswith("$(", self.pos):
                chunks.append(self.substitution())
            else:
                chunks.append(char)
                self.pos += 1
        raise _Unbalanced("unbalanced double quote")

    def ansi_c_quoted(self) -> str:
        """Consume ``$'...'``, in which a backslash escapes the next character (``\\'`` included)."""
        start, text = self.pos, self.text
        self.pos += 2
        while self.pos < len(text):
            if text[self.pos] == "'":
                self.pos += 1
                return text[start : self.pos]
            self.pos += 2 if text[self.pos] == "\\" else 1
        raise _Unbalanced("unbalanced single quote")

    def substitution(self) -> str:
        """Consume ``$(...)``, ``<(...)``, ``>(...)`` or backticks; record the inner commands as parts."""
        start = self.pos
        closer = "`" if self.text[start] == "`" else ")"
        self.pos += 1 if closer == "`" else 2
        slot = len(self.nested)
        inner = self.parts_until(closer)
        self.nested[slot:slot] = inner  # outer commands before the ones nested inside them
        return self.text[start : self.pos]
