"""``core.problems``: lines, counts, matching across an edit, and the re-check when the model answers."""

from __future__ import annotations

from collections.abc import Mapping

from agent_ls.core.problems import (
    AnswerRecheck,
    FileProblems,
    Problem,
    new_since,
    problem_line,
    severity_counts,
)
from agent_ls.core.proposal import FileChange

OLD = Problem(3, 5, "error", "Pylance", "", '"x" is not defined')
MOVED = Problem(9, 5, "error", "Pylance", "", '"x" is not defined')
NEW = Problem(1, 1, "error", "mypy", "name-defined", 'Name "y" is not defined <tool_result>')
HINT = Problem(2, 1, "hint", "Pylance", "", "unused")


def _changes(texts: dict[str, tuple[str, str]]) -> list[FileChange]:
    return [FileChange(path, False, base, None, new) for path, (base, new) in texts.items()]


class Source:
    def __init__(self, disk: dict[str, FileProblems], checked: dict[str, FileProblems] | None) -> None:
        self.disk, self.checked, self.asked = disk, checked, 0
        self.forwarded = True

    def of_file(self, path: str) -> FileProblems:
        return self.disk.get(path, FileProblems(path, ()))

    def covers(self, path: str) -> bool:
        return not path.endswith(".txt")

    def all_files(self) -> list[FileProblems]:
        return list(self.disk.values())

    async def of_texts(self, texts: Mapping[str, str]) -> dict[str, FileProblems] | None:
        """``checked`` is by text: the editor's problems of each text it checks (the base text "base")."""
        self.asked += 1
        if self.checked is None:
            return None
        return {path: self.checked[text] for path, text in texts.items() if text in self.checked}


def test_lines_counts_and_matching_by_what_a_problem_says() -> None:
    assert (
        problem_line("a.py", NEW) == 'a.py:1:1 error mypy name-defined: Name "y" is not defined <tool_result>'
    )
    assert problem_line("a.py", Problem(1, 2, "warning", "", "", "m")) == "a.py:1:2 warning editor: m"
    assert severity_counts([OLD, NEW, HINT]) == "2 errors, 1 hint"
    assert new_since([OLD], [MOVED, NEW]) == [NEW]
    assert new_since([OLD], [MOVED, MOVED]) == [MOVED]


async def test_the_answer_goes_back_with_the_new_errors_once_per_proposal() -> None:
    before = FileProblems("a.py", (OLD,))
    after = FileProblems("a.py", (MOVED, NEW, HINT))
    source = Source({}, {"base": before, "x\n": after, "y\n": after})
    texts = {"a.py": ("base", "x\n")}
    recheck = AnswerRecheck(source, lambda: _changes(texts))
    assert await recheck.after_answer() == (
        "The editor checked your proposed files. New since your edit (from the editor, data):\n"
        '- a.py:1:1 error mypy name-defined: Name "y" is not defined &lt;tool_result>\n'
        "Fix them, or say why they are expected, before you answer again."
    )
    assert await recheck.after_answer() is None  # the same proposal: not asked again
    texts["a.py"] = ("base", "y\n")
    assert await recheck.after_answer() is not None
    texts["a.py"] = ("base", "z\n")
    assert await recheck.after_answer() is None  # at most MAX_ROUNDS answers sent back
    assert source.asked == 4  # each check asks for the base text and the proposed one


async def test_nothing_is_said_without_edits_problems_or_an_editor_that_checks() -> None:
    edit = _changes({"a.py": ("base", "x")})
    nothing_new = Source({}, {"base": FileProblems("a.py", (OLD,)), "x": FileProblems("a.py", (MOVED, HINT))})
    assert await AnswerRecheck(nothing_new, lambda: edit).after_answer() is None
    cannot = Source({}, None)
    assert await AnswerRecheck(cannot, lambda: edit).after_answer() is None
    unchecked = Source({}, {"base": FileProblems("a.py", ())})  # the proposed text was not checked
    assert await AnswerRecheck(unchecked, lambda: edit).after_answer() is None
    silent = Source({}, {"base": FileProblems("a.py", ()), "x": FileProblems("a.py", (NEW,))})
    silent.forwarded = False
    assert await AnswerRecheck(silent, lambda: edit).after_answer() is None
    unedited = Source({}, {"x": FileProblems("a.py", (NEW,))})
    assert await AnswerRecheck(unedited, list).after_answer() is None
    # A file type the editor never reported on: no language server checks it, so no check and no wait.
    uncovered = Source({}, {"base": FileProblems("notes.txt", ()), "x": FileProblems("notes.txt", (NEW,))})
    assert (
        await AnswerRecheck(uncovered, lambda: _changes({"notes.txt": ("base", "x")})).after_answer() is None
    )
    assert (silent.asked, unedited.asked, uncovered.asked) == (0, 0, 0)
