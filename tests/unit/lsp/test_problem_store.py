"""The server's store of the editor's problems: replace and clear per file, our own sources dropped, the
per-file and file-count bounds, and what a workspace root sees of it."""

from __future__ import annotations

from pathlib import Path

from pygls.workspace.position_codec import PositionCodec

from agent_ls.core.problems import Problem
from agent_ls.lsp import protocol as p
from agent_ls.lsp.editor_problems import problem
from agent_ls.lsp.problem_store import MAX_FILES, MAX_PER_FILE, ProblemStore


def _diagnostic(
    line: int, message: str, severity: int | None = 1, source: str | None = "Pylance"
) -> p.WireDiagnostic:
    position = {"line": line, "character": 4}
    return p.WireDiagnostic.model_validate(
        {
            "range": {"start": position, "end": position},
            "message": message,
            "severity": severity,
            "source": source,
        }
    )


def test_a_file_s_problems_are_replaced_then_cleared(tmp_path: Path) -> None:
    store = ProblemStore()
    uri = (tmp_path / "a.py").as_uri()
    store.replace(uri, [_diagnostic(1, "first")])
    store.replace(uri, [_diagnostic(2, "second")])
    [(rel, kept)] = store.under(tmp_path)
    assert (rel, [d.message for d in kept.diagnostics]) == ("a.py", ["second"])
    assert store.kinds == {".py"}  # some language server checks .py files
    store.replace(uri, [])
    assert store.under(tmp_path) == []


def test_our_own_sources_are_never_kept(tmp_path: Path) -> None:
    store = ProblemStore()
    uri = (tmp_path / "a.py").as_uri()
    store.replace(
        uri,
        [
            _diagnostic(1, "finding", source="agent-ls review"),
            _diagnostic(2, "config", source="agent-ls"),
            _diagnostic(3, "theirs", source="agent-lsp-like"),
        ],
    )
    [(_, kept)] = store.under(tmp_path)
    assert [d.message for d in kept.diagnostics] == ["theirs"]
    store.replace(uri, [_diagnostic(1, "finding", source="agent-ls review")])
    assert store.under(tmp_path) == []


def test_a_file_keeps_its_most_severe_problems_in_line_order(tmp_path: Path) -> None:
    store = ProblemStore()
    hints = [_diagnostic(line, f"hint {line}", severity=4) for line in range(MAX_PER_FILE)]
    errors = [_diagnostic(1000 + line, f"error {line}", severity=1) for line in range(5)]
    store.replace((tmp_path / "a.py").as_uri(), [*hints, *errors])
    [(_, kept)] = store.under(tmp_path)
    assert len(kept.diagnostics) == MAX_PER_FILE
    assert kept.left_out == 5
    assert [d.message for d in kept.diagnostics[-5:]] == [f"error {n}" for n in range(5)]
    lines = [d.range.start.line for d in kept.diagnostics]
    assert lines == sorted(lines)


def test_the_least_recently_updated_files_go_first(tmp_path: Path) -> None:
    store = ProblemStore()
    for number in range(MAX_FILES + 2):
        store.replace((tmp_path / f"f{number}.py").as_uri(), [_diagnostic(0, "x")])
        if number == MAX_FILES - 1:  # f0 updated last before the store is full
            store.replace((tmp_path / "f0.py").as_uri(), [_diagnostic(0, "again")])
    kept = {rel for rel, _ in store.under(tmp_path)}
    assert len(kept) == MAX_FILES
    assert "f0.py" in kept
    assert {"f1.py", "f2.py"}.isdisjoint(kept)


def test_a_root_sees_only_its_files_and_non_file_uris_are_ignored(tmp_path: Path) -> None:
    store = ProblemStore()
    (tmp_path / "one").mkdir()
    store.replace((tmp_path / "one" / "a.py").as_uri(), [_diagnostic(0, "in one")])
    store.replace((tmp_path / "two.py").as_uri(), [_diagnostic(0, "outside")])
    store.replace("untitled:Untitled-1", [_diagnostic(0, "unsaved")])
    assert [rel for rel, _ in store.under(tmp_path / "one")] == ["a.py"]
    assert len(store.under(tmp_path)) == 2


def test_a_problem_is_one_based_with_its_column_in_characters() -> None:
    codec = PositionCodec("utf-16")
    line = 'x = "😋" + y\n'  # the emoji is 2 UTF-16 code units, 1 character
    diagnostic = p.WireDiagnostic.model_validate(
        {
            "range": {"start": {"line": 0, "character": 11}, "end": {"line": 0, "character": 12}},
            "message": "  undefined\n name  ",
            "source": "Pylance",
            "code": 2322,
        }
    )
    assert problem(diagnostic, [line], codec) == Problem(1, 11, "error", "Pylance", "2322", "undefined name")
    assert problem(diagnostic, None, codec).column == 12  # no text: the editor's column, 1-based
