"""Reconciling a proposal with the documents after a client applied only some of its changes."""

from __future__ import annotations

from agent_ls.core.proposal import FileChange
from agent_ls.workspace.reconcile import Reconciled, reconcile
from agent_ls.workspace.text_edits import line_hunks

BASE = "".join(f"line {n}\n" for n in range(1, 21))
# Three changes (hunks): line 2 replaced, a line inserted after line 10, line 19 deleted.
NEW = BASE.replace("line 2\n", "line two\n").replace("line 10\n", "line 10\ninserted\n")
NEW = NEW.replace("line 19\n", "")


def _change(base: str = BASE, new: str = NEW, *, is_new: bool = False) -> FileChange:
    return FileChange(path="a.py", is_new=is_new, base_text=base, base_version=3, new_text=new)


def test_the_fixture_has_three_changes() -> None:
    assert len(line_hunks(BASE, NEW)) == 3


def test_every_change_landed_leaves_nothing_pending() -> None:
    assert reconcile(_change(), NEW, 4) == Reconciled("a.py", 3, 3, None)


def test_nothing_landed_keeps_every_change_on_the_same_text() -> None:
    result = reconcile(_change(), BASE, 4)
    assert result == Reconciled("a.py", 3, 0, FileChange("a.py", False, BASE, 4, NEW))
    assert result.kept == 3


def test_some_changes_landed_the_others_stay_pending_rebased_on_the_new_text() -> None:
    # The user ticked the first and the last change only.
    current = BASE.replace("line 2\n", "line two\n").replace("line 19\n", "")
    result = reconcile(_change(), current, 5)
    assert (result.total, result.landed, result.kept, result.conflict) == (3, 2, 1, None)
    assert result.remaining == FileChange("a.py", False, current, 5, NEW)
    (kept,) = line_hunks(current, NEW)  # exactly the unticked insertion is left
    assert kept.new_text == "inserted\n"


def test_the_user_typed_elsewhere_meanwhile_the_kept_change_is_merged_onto_the_typing() -> None:
    landed = BASE.replace("line 2\n", "line two\n").replace("line 19\n", "")
    typed = landed.replace("line 15\n", "line 15 typed by the user\n")
    result = reconcile(_change(), typed, 6)
    assert (result.total, result.landed, result.conflict) == (3, 2, None)
    assert result.remaining is not None
    assert result.remaining.base_text == typed and result.remaining.base_version == 6
    assert result.remaining.new_text == typed.replace("line 10\n", "line 10\ninserted\n")


def test_the_user_typed_over_a_kept_change_it_is_kept_as_it_was() -> None:
    typed = BASE.replace("line 10\nline 11\n", "line 10 typed\nline 11\n")
    result = reconcile(_change(), typed, 6)
    assert result.landed == 0 and result.remaining == _change()
    assert result.conflict is not None and "overlaps the agent's at line(s) 10" in result.conflict


def test_a_new_file_not_created_stays_new_and_pending() -> None:
    change = _change(base="", new="print(1)\n", is_new=True)
    assert reconcile(change, None, None) == Reconciled("a.py", 1, 0, change)


def test_a_new_file_created_whole_landed() -> None:
    change = _change(base="", new="print(1)\n", is_new=True)
    assert reconcile(change, "print(1)\n", 1) == Reconciled("a.py", 1, 1, None)


def test_a_new_file_created_empty_keeps_its_text_pending_as_an_edit() -> None:
    change = _change(base="", new="print(1)\n", is_new=True)
    edit = FileChange("a.py", False, "", 1, "print(1)\n")
    assert reconcile(change, "", 1) == Reconciled("a.py", 1, 0, edit)


def test_crlf_line_endings_are_matched_byte_for_byte() -> None:
    base, new = BASE.replace("\n", "\r\n"), NEW.replace("\n", "\r\n")
    current = base.replace("line 2\r\n", "line two\r\n")
    result = reconcile(_change(base, new), current, 2)
    assert (result.landed, result.kept) == (1, 2)
    assert result.remaining == FileChange("a.py", False, current, 2, new)


def test_a_change_that_repeats_a_neighbouring_line_counts_as_landed_when_it_did() -> None:
    # Inserting a second "x" next to an "x": either reading matches the applied text; landed is preferred.
    base, new = "x\ny\n", "x\nx\ny\n"
    assert reconcile(_change(base, new), new, 2) == Reconciled("a.py", 1, 1, None)
    assert reconcile(_change(base, new), base, 2).landed == 0
