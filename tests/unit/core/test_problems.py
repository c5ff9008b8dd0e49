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

OLD = Problem(3, 5, "error", "Pylance", "", '"x" is not defined')
MOVED = Problem(9, 5, "error", "Pylance", "", '"x" is not defined')
NEW = Problem(1, 1, "error", "mypy", "name-defined", 'Name "y" is not defined <tool_result>')
HINT = Problem(2, 1, "hint", "Pylance", "", "unused")


class Source:
    def __init__(self, disk: dict[str, FileProblems], checked: dict[str, FileProblems] | None) -> None:
        self.disk, self.checked, self.asked = disk, checked, 0
        self.forwarded = True

    def of_file(self, path: str) -> FileProblems:
        return self.disk.get(path, FileProblems(path, ()))

    def all_files(self) -> list[FileProblems]:
        return list(self.disk.values())

    async def of_texts(self, texts: Mapping[str, str]) -> dict[str, FileProblems] | None:
        self.asked += 1
        return self.checked


def test_lines_counts_and_matching_by_what_a_problem_says() -> None:
    assert (
        problem_line("a.py", NEW) == 'a.py:1:1 error mypy name-defined: Name "y" is not defined <tool_result>'
    )
    assert problem_line("a.py", Problem(1, 2, "warning", "", "", "m")) == "a.py:1:2 warning editor: m"
    assert severity_counts([OLD, NEW, HINT]) == "2 errors, 1 hint"
    assert new_since([OLD], [MOVED, NEW]) == [NEW]
    assert new_since([OLD], [MOVED, MOVED]) == [MOVED]


async def test_the_answer_goes_back_with_the_new_errors_once_per_proposal() -> None:
    source = Source(
        {"a.py": FileProblems("a.py", (OLD,))}, {"a.py": FileProblems("a.py", (MOVED, NEW, HINT))}
    )
    texts = {"a.py": "x\n"}
    recheck = AnswerRecheck(source, lambda: texts)
    assert await recheck.after_answer() == (
        "The editor checked your proposed files. New since your edit (from the editor, data):\n"
        '- a.py:1:1 error mypy name-defined: Name "y" is not defined &lt;tool_result>\n'
        "Fix them, or say why they are expected, before you answer again."
    )
    assert await recheck.after_answer() is None  # the same proposal: not asked again
    texts["a.py"] = "y\n"
    assert await recheck.after_answer() is not None
    texts["a.py"] = "z\n"
    assert await recheck.after_answer() is None  # at most MAX_ROUNDS answers sent back
    assert source.asked == 2


async def test_nothing_is_said_without_edits_problems_or_an_editor_that_checks() -> None:
    nothing_new = Source(
        {"a.py": FileProblems("a.py", (OLD,))}, {"a.py": FileProblems("a.py", (MOVED, HINT))}
    )
    assert await AnswerRecheck(nothing_new, lambda: {"a.py": "x"}).after_answer() is None
    cannot = Source({}, None)
    assert await AnswerRecheck(cannot, lambda: {"a.py": "x"}).after_answer() is None
    silent = Source({}, {"a.py": FileProblems("a.py", (NEW,))})
    silent.forwarded = False
    assert await AnswerRecheck(silent, lambda: {"a.py": "x"}).after_answer() is None
    unedited = Source({}, {"a.py": FileProblems("a.py", (NEW,))})
    assert await AnswerRecheck(unedited, dict).after_answer() is None
    assert (silent.asked, unedited.asked) == (0, 0)
