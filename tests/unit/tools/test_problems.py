"""The ``problems`` tool over a fake ``ProblemSource``: a file's lines, a folder's summary, an edited
file's problems fetched again (new and gone since the edit) or, from an editor that cannot check a text,
the problems on disk said to be so; and its model-facing spec, pinned."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path

from agent_ls.core.problems import FileProblems, Problem
from agent_ls.tools.problems import NOT_FORWARDED, problems_tool
from tests.unit.tools.harness import Harness, make_harness

SNAPSHOT = Path(__file__).parent / "snapshots" / "problems_spec.json"

UNDEFINED = Problem(3, 12, "error", "Pylance", "", '"x" is not defined')
UNUSED = Problem(1, 1, "warning", "Ruff", "F401", "`os` imported but unused")
HINT = Problem(7, 5, "hint", "Pylance", "", "unreachable code")


class FakeProblems:
    """Problems per path, and what the editor says of a text it checks, by text (``checked`` None: it cannot
    check texts; a text missing from it: not checked)."""

    def __init__(
        self,
        files: dict[str, FileProblems],
        checked: dict[str, FileProblems] | None = None,
        forwarded: bool = True,
    ) -> None:
        self.files = files
        self.checked = checked
        self._forwarded = forwarded
        self.asked: list[dict[str, str]] = []

    @property
    def forwarded(self) -> bool:
        return self._forwarded

    def of_file(self, path: str) -> FileProblems:
        return self.files.get(path, FileProblems(path, ()))

    def covers(self, path: str) -> bool:
        return not path.endswith(".txt")

    def all_files(self) -> list[FileProblems]:
        return [self.files[path] for path in sorted(self.files)]

    async def of_texts(self, texts: Mapping[str, str]) -> dict[str, FileProblems] | None:
        self.asked.append(dict(texts))
        if self.checked is None:
            return None
        return {path: self.checked[text] for path, text in texts.items() if text in self.checked}


def _harness(source: FakeProblems) -> Harness:
    files = {"src/app.py": "import os\n", "src/util.py": "x\n", "README.md": "hi\n"}
    return make_harness(files, tools=[problems_tool(source)])


async def test_a_file_s_problems_one_line_each() -> None:
    source = FakeProblems({"src/app.py": FileProblems("src/app.py", (UNUSED, UNDEFINED), left_out=4)})
    text = await _harness(source).text("problems", {"path": "src/app.py"})
    assert text == (
        "src/app.py:1:1 warning Ruff F401: `os` imported but unused\n"
        'src/app.py:3:12 error Pylance: "x" is not defined\n'
        "(and 4 more the editor reported, not kept)"
    )
    assert (
        await _harness(source).text("problems", {"path": "README.md"}) == "no problems reported for README.md"
    )


async def test_a_folder_s_summary_counts_per_severity() -> None:
    source = FakeProblems(
        {
            "src/app.py": FileProblems("src/app.py", (UNUSED, UNDEFINED, UNDEFINED)),
            "src/util.py": FileProblems("src/util.py", (HINT,)),
            "README.md": FileProblems("README.md", (UNUSED,)),
            ".env": FileProblems(".env", (UNUSED,)),  # a secret file: not even named
        }
    )
    harness = _harness(source)
    assert await harness.text("problems", {}) == (
        "README.md: 1 warning\n"
        "src/app.py: 2 errors, 1 warning\n"
        "src/util.py: 1 hint\n"
        "3 files: 2 errors, 2 warnings, 1 hint"
    )
    assert await harness.text("problems", {"path": "src"}) == (
        "src/app.py: 2 errors, 1 warning\nsrc/util.py: 1 hint\n2 files: 2 errors, 1 warning, 1 hint"
    )


async def test_an_edited_file_is_checked_again_and_the_new_problems_named() -> None:
    before = FileProblems("src/app.py", (UNUSED, UNDEFINED))
    new = Problem(2, 1, "error", "Pylance", "", '"y" is not defined')
    after = FileProblems("src/app.py", (new, Problem(4, 12, *UNDEFINED.what)))  # the old one moved a line
    # The copy the editor checks has a problem of its own (an import it cannot resolve outside the
    # workspace): before and after the edit alike, so it is not new.
    unresolved = Problem(1, 8, "error", "Pylance", "", 'Import "os" could not be resolved')
    checked_before = FileProblems("src/app.py", (unresolved, *before.problems))
    checked_after = FileProblems("src/app.py", (unresolved, *after.problems))
    source = FakeProblems(
        {"src/app.py": before}, checked={"import os\n": checked_before, "import sys\ny\n": checked_after}
    )
    harness = _harness(source)
    harness.workspace.pending["src/app.py"] = "import sys\ny\n"
    text = await harness.text("problems", {"path": "src/app.py"})
    assert source.asked == [{"src/app.py": "import os\n"}, {"src/app.py": "import sys\ny\n"}]
    assert text == (
        "Problems of your proposed src/app.py (checked by the editor):\n"
        'src/app.py:1:8 error Pylance: Import "os" could not be resolved\n'
        'src/app.py:2:1 error Pylance: "y" is not defined\n'
        'src/app.py:4:12 error Pylance: "x" is not defined\n'
        "new since your edit: 1:\n"
        'src/app.py:2:1 error Pylance: "y" is not defined\n'
        "gone since your edit: 1"
    )
    summary = await harness.text("problems", {})
    assert summary.startswith(
        "src/app.py: 1 error, 1 warning (you edited it: give its path for your proposal's"
    )


async def test_an_editor_that_cannot_check_a_text_gives_the_problems_on_disk_and_says_so() -> None:
    source = FakeProblems({"src/app.py": FileProblems("src/app.py", (UNUSED,))}, checked=None)
    harness = _harness(source)
    harness.workspace.pending["src/app.py"] = "import sys\n"
    assert await harness.text("problems", {"path": "src/app.py"}) == (
        "(the problems of src/app.py on disk, before your proposed edit: the editor could not check your "
        "proposed text)\nsrc/app.py:1:1 warning Ruff F401: `os` imported but unused"
    )
    # An editor whose language servers did not report on the text leaves it out of its answer: the same.
    source.checked = {}
    assert (await harness.text("problems", {"path": "src/app.py"})).startswith(
        "(the problems of src/app.py on disk"
    )


async def test_an_editor_that_sends_no_problems_is_not_said_to_have_none() -> None:
    source = FakeProblems({}, forwarded=False)
    assert await _harness(source).text("problems", {"path": "src/app.py"}) == NOT_FORWARDED


def test_the_problems_spec_matches_the_snapshot() -> None:
    spec = asdict(problems_tool(FakeProblems({})).spec())
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(json.dumps(spec, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert spec == json.loads(SNAPSHOT.read_text(encoding="utf-8"))
