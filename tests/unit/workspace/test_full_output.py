"""A command's whole output kept beside the capped one (``processes.execute(keep_full=True)``), bounded
at ``FULL_OUTPUT_MAX_BYTES`` (issue 15: the full output is kept and can be fetched again)."""

from __future__ import annotations

from agent_ls.workspace.processes import FULL_OUTPUT_MAX_BYTES, _CappedOutput


def capped(chunks: list[bytes], *, keep_full: bool = True, head: int = 10, tail: int = 10) -> _CappedOutput:
    output = _CappedOutput(head, tail, keep_full=keep_full)
    output.note("[agent-ls: a note]")
    for chunk in chunks:
        output.feed(chunk)
    return output


def test_the_whole_output_is_kept_when_it_was_cut() -> None:
    lines = b"".join(b"line %d\n" % n for n in range(1, 101))
    output = capped([lines[:333], lines[333:]])
    assert "characters omitted" in output.text()
    assert output.full() == lines.decode()  # the note stays out: lines numbered as the omission note's


def test_nothing_extra_is_kept_when_nothing_was_cut_or_when_not_asked() -> None:
    short = capped([b"short\n"])
    assert short.text() == "[agent-ls: a note]\nshort\n"
    assert short.full() is None
    not_asked = capped([b"x" * 1000], keep_full=False)
    assert "omitted" in not_asked.text()
    assert not_asked.full() is None


def test_a_multibyte_character_split_across_chunks_is_kept_whole() -> None:
    data = ("é" * 50).encode()
    output = capped([data[:7], data[7:]])
    output.text()
    assert output.full() == "é" * 50


def test_the_kept_output_stops_at_the_bound_with_a_note_of_what_was_dropped() -> None:
    block = b"0123456789abcde\n" * 4096  # 64 KiB
    chunks = [block] * (FULL_OUTPUT_MAX_BYTES // len(block) + 3)
    output = capped(chunks)
    output.text()
    full = output.full()
    assert full is not None
    kept, note = full[:FULL_OUTPUT_MAX_BYTES], full[FULL_OUTPUT_MAX_BYTES:]
    assert kept == (block * (FULL_OUTPUT_MAX_BYTES // len(block))).decode()
    assert note == f"[agent-ls: {3 * len(block):,} more bytes of output were not kept]\n"


def test_a_character_cut_by_the_bound_is_dropped_not_replaced() -> None:
    data = b"a" * (FULL_OUTPUT_MAX_BYTES - 1) + "é".encode() + b"z"
    output = capped([data])
    output.text()
    full = output.full()
    assert full == "a" * (FULL_OUTPUT_MAX_BYTES - 1) + "\n[agent-ls: 2 more bytes of output were not kept]\n"
