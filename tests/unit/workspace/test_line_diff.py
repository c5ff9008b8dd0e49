"""The server's line diff: exact hunks on any text, few changed lines on a formatter's output, one diff
per change."""

from __future__ import annotations

import itertools
import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.core.proposal import FileChange
from agent_ls.workspace.diffs import line_counts, unified_diff
from agent_ls.workspace.line_diff import line_opcodes, text_diff
from agent_ls.workspace.text_edits import Hunk, line_hunks, split_lines

# Few distinct lines, so texts repeat lines (the case a unique-line anchor diff must still get right),
# with every LSP terminator and a last line that may lack one.
_LINE = st.sampled_from(["a", "b", "}", "", "  x = 1", "\x0c", "é"]).flatmap(
    lambda body: st.sampled_from(["\n", "\r\n", "\r"]).map(lambda end: body + end)
)
_TEXT = st.builds(
    lambda lines, tail: "".join(lines) + tail, st.lists(_LINE, max_size=40), st.sampled_from(["", "z", "}"])
)


def _apply(old: str, hunks: list[Hunk]) -> str:
    lines = split_lines(old)
    for hunk in reversed(hunks):
        lines[hunk.start_line : hunk.end_line] = [hunk.new_text]
    return "".join(lines)


@settings(max_examples=400, deadline=None)
@given(old=_TEXT, new=_TEXT)
def test_applying_the_hunks_to_the_old_text_gives_the_new_text_exactly(old: str, new: str) -> None:
    hunks = line_hunks(old, new)
    assert _apply(old, hunks) == new
    starts = [h.start_line for h in hunks]
    assert starts == sorted(starts)
    assert all(a.end_line <= b.start_line for a, b in itertools.pairwise(hunks))


@settings(max_examples=200, deadline=None)
@given(old=_TEXT, new=_TEXT)
def test_the_unified_diff_holds_both_texts_and_the_counts_match_it(old: str, new: str) -> None:
    change = FileChange("f.txt", False, old, None, new)
    diff = unified_diff(change, context_lines=10_000)
    if old == new:
        assert diff == ""
        return
    body = diff.split("\n", 2)[2]  # after the --- and +++ headers
    minus = sum(1 for line in body.splitlines(True) if line.startswith("-"))
    plus = sum(1 for line in body.splitlines(True) if line.startswith("+"))
    assert line_counts(change) == (plus, minus)


def _formatter_file(rng: random.Random, lines: int) -> list[str]:
    """Python-like source where most lines repeat (blank lines, ``return``, ``pass``, closing brackets)."""
    common = ["\n", "    return None\n", "        pass\n", "    )\n", "]\n", "    else:\n"]
    return [f"def function_{i}(arg):\n" if i % 7 == 0 else rng.choice(common) for i in range(lines)]


def test_spread_changes_in_a_formatters_output_are_exact_and_change_few_lines() -> None:
    rng = random.Random(14)
    old_lines = _formatter_file(rng, 10_000)
    new_lines = list(old_lines)
    changed = range(5, 10_000, 10)  # 1,000 changes spread through the file
    for index in changed:
        new_lines[index] = "\t" + old_lines[index].strip() + "  # fmt\n"  # a line no old line equals
    old, new = "".join(old_lines), "".join(new_lines)

    hunks = line_hunks(old, new)

    assert _apply(old, hunks) == new
    added, removed = text_diff(old, new).counts
    assert len(changed) <= removed <= len(changed) * 1.05
    assert len(changed) <= added <= len(changed) * 1.05


def test_a_changes_diff_is_computed_once_for_its_hunks_counts_and_unified_diff() -> None:
    old = "".join(f"line {i}\n" for i in range(500))
    new = old.replace("line 250\n", "line 250 changed\n")
    change = FileChange("big.txt", False, old, None, new)
    before = text_diff.cache_info()

    line_counts(change)
    unified_diff(change)
    line_hunks(change.base_text, change.new_text)

    after = text_diff.cache_info()
    assert after.misses - before.misses == 1
    assert after.hits - before.hits == 2


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029é", max_size=30))
def test_lines_are_cut_only_at_lsp_terminators_whichever_way_the_split_is_made(text: str) -> None:
    reference = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)
    assert split_lines(text) == reference


def test_a_formatters_comments_on_repeated_lines_change_those_lines_only() -> None:
    # A formatter appending to 1,000 lines picked at random, most of them lines the file repeats (blank
    # lines, "pass", closing brackets): only those lines are changed, none of the repeated lines
    # around them (a unique-line anchor diff, patience, changed 1,089 lines each way here).
    rng = random.Random(4)
    old_lines = _formatter_file(rng, 10_000)
    new_lines = list(old_lines)
    for index in rng.sample(range(len(old_lines)), 1_000):
        new_lines[index] = old_lines[index].rstrip("\n") + "  # fmt\n"
    old, new = "".join(old_lines), "".join(new_lines)

    assert text_diff(old, new).counts == (1_000, 1_000)
    assert _apply(old, line_hunks(old, new)) == new


# Any character (NUL, lone surrogates, other Unicode breaks, non-ASCII) but a bare "\r": texts the diff
# reads as bytes, and whose unified diff must give the new text back exactly.
_ANY_LINE = st.text(st.characters(blacklist_characters="\r\n"), max_size=6).flatmap(
    lambda body: st.sampled_from(["\n", "\r\n"]).map(lambda end: body + end)
)
_ANY_TEXT = st.builds(
    lambda lines, tail: "".join(lines) + tail,
    st.lists(st.one_of(_ANY_LINE, st.sampled_from(["\n", "}\n", "\ud800\n", "\udcff\r\n"])), max_size=30),
    st.text(st.characters(blacklist_characters="\r\n"), max_size=3),
)


def _patch(old: str, diff: str) -> str:
    """``diff`` (a unified diff of ``old`` without a bare ``\\r``) applied to ``old``, as ``patch`` would."""
    old_lines = split_lines(old)
    out: list[str] = []
    at = 0
    rows = [row + "\n" for row in diff.split("\n")[2:-1]]  # every diff line ends with \n, and only there
    for n, row in enumerate(rows):
        if row.startswith("@@"):
            start = int(row.split()[1][1:].split(",")[0])
            length = row.split()[1].split(",")
            begin = start - 1 if len(length) == 1 or length[1] != "0" else start
            out.extend(old_lines[at:begin])
            at = begin
        elif row.startswith("\\"):
            continue
        else:
            line = row[1:]
            if n + 1 < len(rows) and rows[n + 1].startswith("\\"):
                line = line[:-1]  # "\ No newline at end of file": the line had no terminator
            if row[0] in " -":
                assert old_lines[at] == line
                at += 1
            if row[0] in " +":
                out.append(line)
    return "".join(out + old_lines[at:])


@settings(max_examples=400, deadline=None)
@given(old=_ANY_TEXT, new=_ANY_TEXT)
def test_a_text_without_a_bare_cr_is_rebuilt_from_its_hunks_and_its_unified_diff(old: str, new: str) -> None:
    assert _apply(old, line_hunks(old, new)) == new
    assert _patch(old, unified_diff(FileChange("f.txt", False, old, None, new))) == new
    opcodes = text_diff(old, new).opcodes
    assert [code[1:] for code in opcodes] == sorted(code[1:] for code in opcodes)


def test_lists_of_any_hashable_values_are_diffed() -> None:
    old, new = [1, (2, 3), "x", None, 1], [1, "x", None, 4, 1]
    opcodes = line_opcodes(old, new)
    rebuilt: list[object] = []
    for tag, i1, i2, j1, j2 in opcodes:
        rebuilt.extend(old[i1:i2] if tag == "equal" else new[j1:j2])
    assert rebuilt == new
    assert ("delete", 1, 2, 1, 1) in opcodes
