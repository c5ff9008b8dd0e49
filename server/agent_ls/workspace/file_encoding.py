"""A file's text encoding: found from its bytes, so a legacy file is read, edited and written in its own.

``decode`` decides, in order:

1. a byte order mark (UTF-8, UTF-32 LE/BE, UTF-16 LE/BE; UTF-32 is tried first, its LE mark starts like
   UTF-16's) names the codec; the mark is kept apart from the text and written back first;
2. bytes that are valid UTF-8 are UTF-8 (ASCII included; NUL bytes are valid UTF-8 too);
3. other bytes holding a NUL are binary: no legacy 8-bit text has one (UTF-16 without a mark is
   treated as binary, as git does);
4. otherwise charset-normalizer (a maintained detector, not heuristics of our own) ranks candidate code
   pages. On short texts it cannot tell Western code pages apart and ranks near-ties arbitrarily, so
   cp1252 is chosen whenever it decodes the bytes and reads as cleanly as the detector's choice (its
   mess ratio is at most ``max(best, CP1252_MAX_MESS)``): it is by far the most common legacy encoding
   of source files, and a superset of latin-1's printable characters;
5. a candidate is used only when its text encodes back to exactly the same bytes, so an edit keeps every
   byte it did not change; when the detector names none that does, cp1252 is the last resort for bytes
   it decodes into text without control characters (a short line dense in symbols); else the file is
   not text (``NotText``).

``stream_encoding`` makes the same choice from the first bytes of a file too large to read whole; its
decoder then replaces what does not decode (the text is only shown, never written back).
"""

from __future__ import annotations

import codecs
import re

from agent_ls.core.proposal import UTF8, TextEncoding

CP1252_MAX_MESS = 0.1
"""The mess ratio (charset-normalizer's measure of odd characters) up to which cp1252 is preferred."""

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class NotText(ValueError):
    """The bytes are binary, or in no encoding that reads them back exactly. The message says which."""


def decode(data: bytes) -> tuple[str, TextEncoding]:
    """The text of a whole file and the encoding it was found in (module docstring, steps 1-5).

    Raises:
        NotText: binary bytes, or bytes no candidate encoding reads back exactly.
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(codec), TextEncoding(codec, bom)
            except UnicodeDecodeError:
                raise NotText(f"it starts with a {codec} byte order mark but is not {codec}") from None
    try:
        return data.decode("utf-8"), UTF8
    except UnicodeDecodeError:
        pass
    if b"\0" in data:
        raise NotText("it is binary")
    for encoding in _candidates(data):
        try:
            text = data.decode(encoding.codec)
        except (UnicodeDecodeError, LookupError):
            continue
        if _encodes_back(text, encoding, data):
            return text, encoding
    western = _plain_cp1252(data)
    if western is not None:
        return western, TextEncoding("cp1252")
    raise NotText("it is binary or in an encoding that cannot be read back exactly")


def decode_as(data: bytes, encoding: TextEncoding) -> str:
    """The text of ``data`` in a known ``encoding`` (a file's, kept when a command rewrote it), exactly.

    Raises:
        NotText: the bytes lack the encoding's byte order mark, do not decode, do not encode back to
            themselves, or hold a NUL outside UTF (binary, as in ``decode``).
    """
    if not data.startswith(encoding.bom):
        raise NotText(f"it does not start with the {encoding.codec} byte order mark")
    if b"\0" in data and not encoding.codec.startswith("utf-"):
        raise NotText("it is binary")
    try:
        text = data[len(encoding.bom) :].decode(encoding.codec)
    except UnicodeDecodeError:
        raise NotText(f"it is not {encoding.label}") from None
    if not _encodes_back(text, encoding, data):
        raise NotText(f"it does not read back exactly as {encoding.label}")
    return text


def stream_encoding(head: bytes) -> TextEncoding:
    """The encoding of a file from its first bytes (``head`` may end inside a character).

    Raises:
        NotText: the head is binary or undecodable, as ``decode`` would say.
    """
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return TextEncoding(codec, bom)
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        return UTF8
    except UnicodeDecodeError:
        pass
    if b"\0" in head:
        raise NotText("it is binary")
    for encoding in _candidates(head):
        try:
            codecs.getincrementaldecoder(encoding.codec)().decode(head, final=False)
        except (UnicodeDecodeError, LookupError):
            continue
        return encoding
    raise NotText("it is binary or in an encoding that cannot be read")


def stream_decoder(encoding: TextEncoding) -> codecs.IncrementalDecoder:
    """An incremental decoder for the bytes after ``encoding.bom``; undecodable bytes become U+FFFD."""
    return codecs.getincrementaldecoder(encoding.codec)(errors="replace")


def encodable(text: str, encoding: TextEncoding) -> str | None:
    """None when ``encoding`` can write ``text``; else one line naming the first character it cannot
    write and its 1-based line, for the model."""
    if encoding.codec.startswith("utf-"):
        return None if not _has_lone_surrogate(text) else "a lone surrogate cannot be written in UTF"
    try:
        text.encode(encoding.codec)
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        line = text.count("\n", 0, exc.start) + 1
        where = f"{bad!r} (U+{ord(bad):04X}, line {line})"
        return f"{where} cannot be written in {encoding.label}, the file's encoding"
    return None


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _candidates(data: bytes) -> list[TextEncoding]:
    """Code pages for ``data`` in order of preference: cp1252 first when it reads as cleanly as the
    detector's best, then the detector's ranking."""
    # Imported here: only a file that is not UTF-8 needs the detector (start-up time).
    from charset_normalizer import from_bytes
    from charset_normalizer.md import mess_ratio

    matches = from_bytes(data)
    # UTF-16/32 without a mark is binary here (step 3): the detector may still name it for a few bytes.
    ranked = [
        TextEncoding(codec)
        for codec in (_python_codec(match.encoding) for match in matches)
        if not codec.startswith(("utf-16", "utf-32"))
    ]
    best = matches.best()
    try:
        western = data.decode("cp1252")
    except UnicodeDecodeError:
        return ranked
    limit = max(best.chaos if best is not None else 0.0, CP1252_MAX_MESS)
    if mess_ratio(western, maximum_threshold=1.0) <= limit:
        return [TextEncoding("cp1252"), *ranked]
    return ranked


def _plain_cp1252(data: bytes) -> str | None:
    """The last resort when the detector names nothing (a short text dense in symbols): cp1252, when it
    decodes the bytes and the text holds no control character but whitespace."""
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return None
    return None if _CONTROLS.search(text) else text


_CONTROLS = re.compile("[\x00-\x08\x0e-\x1f\x7f]")


def _python_codec(name: str) -> str:
    """charset-normalizer's names are Python codec names (``cp1252``, ``shift_jis_2004``); normalized."""
    return codecs.lookup(name).name


def _encodes_back(text: str, encoding: TextEncoding, data: bytes) -> bool:
    try:
        return encoding.encode(text) == data
    except UnicodeEncodeError:
        return False
