"""Finding a file's encoding: byte order marks, UTF-8, legacy code pages through the detector, binary."""

from __future__ import annotations

import codecs

import pytest

from agent_ls.core.proposal import UTF8, TextEncoding
from agent_ls.workspace.file_encoding import NotText, decode, decode_as, encodable, stream_encoding


@pytest.mark.parametrize(
    ("data", "text", "encoding"),
    [
        (b"plain ascii\n", "plain ascii\n", UTF8),
        ("caf\u00e9 \U0001f600\n".encode(), "caf\u00e9 \U0001f600\n", UTF8),
        (b"a\x00b\n", "a\x00b\n", UTF8),  # NUL is valid UTF-8 (a sparse file reads as text)
        (codecs.BOM_UTF8 + b"hi\r\n", "hi\r\n", TextEncoding("utf-8", codecs.BOM_UTF8)),
        (
            codecs.BOM_UTF16_LE + "hé\n".encode("utf-16-le"),
            "hé\n",
            TextEncoding("utf-16-le", codecs.BOM_UTF16_LE),
        ),
        (
            codecs.BOM_UTF16_BE + "hé\n".encode("utf-16-be"),
            "hé\n",
            TextEncoding("utf-16-be", codecs.BOM_UTF16_BE),
        ),
        (
            codecs.BOM_UTF32_LE + "hé\n".encode("utf-32-le"),
            "hé\n",
            TextEncoding("utf-32-le", codecs.BOM_UTF32_LE),
        ),
    ],
)
def test_marks_and_utf8_decide_before_any_detection(data: bytes, text: str, encoding: TextEncoding) -> None:
    assert decode(data) == (text, encoding)
    assert encoding.encode(text) == data


@pytest.mark.parametrize(
    "text",
    [
        "def café():\n    return 'crème brûlée, naïve'\n",
        "caf\u00e9\n",  # too short for the detector to tell code pages apart: cp1252 is preferred
        "# “quoted” — dash €\nprint(1)\n",
        "# Größe der Übung: schön\n",
    ],
)
def test_western_legacy_text_reads_as_cp1252(text: str) -> None:
    data = text.encode("cp1252")
    assert decode(data) == (text, TextEncoding("cp1252"))


@pytest.mark.parametrize(
    ("text", "codec"),
    [
        ("# Это комментарий на русском языке для проверки.\n", "cp1251"),
        ("# 日本語のコメントです。これはテストです。\nx = 1\n", "shift_jis"),
        ("# 这是一个中文注释，用于测试编码检测。\nx = 1\n", "gbk"),
    ],
)
def test_other_legacy_text_reads_back_byte_for_byte(text: str, codec: str) -> None:
    data = text.encode(codec)
    decoded, encoding = decode(data)
    assert decoded == text
    assert encoding.encode(decoded) == data


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff",  # a NUL outside UTF-8: binary
        bytes(range(128, 256)) * 3,  # no encoding reads it back exactly
        codecs.BOM_UTF16_LE + b"\x00",  # a mark, then not that encoding
    ],
)
def test_binary_is_not_text(data: bytes) -> None:
    with pytest.raises(NotText):
        decode(data)


def test_a_known_encoding_reads_a_commands_rewrite_exactly_or_not_at_all() -> None:
    cp1252 = TextEncoding("cp1252")
    assert decode_as("thé\n".encode("cp1252"), cp1252) == "thé\n"
    with pytest.raises(NotText, match="binary"):
        decode_as(b"th\xe9\x00", cp1252)
    with pytest.raises(NotText, match="byte order mark"):
        decode_as(b"hi", TextEncoding("utf-8", codecs.BOM_UTF8))
    with pytest.raises(NotText, match="not utf-8"):
        decode_as(b"th\xe9", UTF8)


def test_what_an_encoding_cannot_write_is_named_with_its_line() -> None:
    assert encodable("é €\n", TextEncoding("cp1252")) is None
    assert encodable("ok\nsmile 😀\n", TextEncoding("cp1252")) == (
        "'😀' (U+1F600, line 2) cannot be written in cp1252, the file's encoding"
    )
    assert encodable("\ud83d", UTF8) == "a lone surrogate cannot be written in UTF"


def test_a_streamed_file_is_judged_by_its_head_even_cut_inside_a_character() -> None:
    head = "é".encode()[:1]
    assert stream_encoding(b"abc" + "é".encode() + head) == UTF8
    assert stream_encoding(codecs.BOM_UTF16_BE + b"\x00a") == TextEncoding("utf-16-be", codecs.BOM_UTF16_BE)
    with pytest.raises(NotText):
        stream_encoding(b"\xff\xd8\xff\x00JFIF")
