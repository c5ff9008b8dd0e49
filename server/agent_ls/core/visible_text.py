"""Text for people to read on a terminal or in a log: characters that act instead of showing are made visible.

Text from the workspace, a tool or the model may hold escape sequences (``ESC ] 52 ; c ; … BEL`` sets a
terminal's clipboard, ``ESC ] 0 ; …`` its window title, ``ESC [ 1 A`` moves the cursor up so a later line
overwrites one the user should have read), a carriage return that overwrites the start of its line, or
Unicode format characters that reorder or hide text ("Trojan Source": bidi overrides and isolates,
zero-width characters). ``visible`` shows each of them as printable ASCII instead, with the conventions
of ``less`` and ``cat -v``:

- C0 controls (U+0000 to U+001F) other than tab and line feed, in caret notation: ``^[`` for ESC, ``^G``
  for BEL, ``^M`` for a carriage return (also before a line feed: a CRLF line ending shows as ``^M``,
  as ``git diff`` shows it), ``^H`` for backspace, ``^@`` for NUL;
- DEL (U+007F) as ``^?``;
- as ``<U+XXXX>``: C1 controls (U+0080 to U+009F, as code points; a terminal may read U+009B as CSI),
  Unicode format characters (category Cf: bidi embeddings, overrides, isolates and marks, zero-width
  space, joiners and non-joiners, the byte order mark, soft hyphen, tag characters), the line and
  paragraph separators U+2028 and U+2029, and lone surrogates (a file name's undecodable bytes).

Tab and line feed stay (``newlines=False`` makes a line feed ``^J`` too, for one-line fields such as
file names and commands). Printable text, emoji and every script are unchanged, except that an emoji
sequence joined by U+200D shows its parts with ``<U+200D>`` between them. The output of ``visible``
holds none of the characters above, so applying it twice changes nothing.
"""

from __future__ import annotations

import re

# Cf (format), Zl and Zp (line and paragraph separators) as of Unicode 15; test_visible_text.py checks that
# every such character of the running Python's Unicode database is in the set. Cs: surrogates.
_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\ud800-\udfff"
)
_HIDDEN = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_FORMAT}]")
_HIDDEN_OR_NEWLINE = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f{_FORMAT}]")


def _shown(found: re.Match[str]) -> str:
    char = found[0]
    code = ord(char)
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    return f"<U+{code:04X}>"


def visible(text: str, *, newlines: bool = True) -> str:
    """``text`` with every control and format character shown as printable ASCII (module docstring).

    Args:
        text: any text.
        newlines: keep line feeds as they are (True) or show them as ``^J`` (False, for one-line fields).

    Returns:
        The text to show; ``text`` itself when nothing needed escaping.
    """
    pattern = _HIDDEN if newlines else _HIDDEN_OR_NEWLINE
    return pattern.sub(_shown, text)


def hidden_forms(text: str) -> list[str]:
    """The distinct escaped forms ``visible(text)`` would show (``["^[", "^M"]``), in order of appearance."""
    forms: dict[str, None] = {}
    for found in _HIDDEN.finditer(text):
        forms.setdefault(_shown(found))
    return list(forms)
