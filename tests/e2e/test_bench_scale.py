"""The scale benchmark keeps working: its quick mode on a 200-file tree produces every row.

Not timed (timings belong in benchmarks/): it asserts only that each target's rows are there, so a
change to the tools, the server or the diffs that breaks ``benchmarks/bench_scale.py`` fails here
instead of when the benchmark is next run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.bench_scale import COLD_GREP, INDEX_ROW
from benchmarks.scale_editor import GREP_RUN, RUN_END, WRITE_RUN

from tests.conftest import require_tool

REPO = Path(__file__).resolve().parents[2]
TREE = "200 files"
WITH_DEPS = "200 files + 200-file node_modules"


def test_quick_mode_on_a_200_file_tree_produces_every_row(tmp_path: Path) -> None:
    for tool in ("rg", "git", "diff", "cp"):
        require_tool(tool)
    out = tmp_path / "rows.json"
    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/bench_scale.py",
            "--quick",
            "--sizes",
            "200",
            "--node-modules",
            "200",
            "--repeat",
            "1",
            "--json",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {(row["target"], row["what"]) for row in json.loads(out.read_text())}
    phases = (
        "idle",
        GREP_RUN,
        f"{GREP_RUN}, {RUN_END}",
        WRITE_RUN,
        f"{WRITE_RUN}, {RUN_END}",
        "agent.proposal",
        "agent.applyProposal",
    )
    expected = {
        *(
            (target, f"{what}, {tree}")
            for tree in (TREE, WITH_DEPS)
            for target, what in (
                ("First command of a session", "first bash call (`true`)"),
                ("A command after one file changed", "bash call (`true`) after one changed file"),
                ("grep", "first grep of a session"),
                ("grep", COLD_GREP),
                ("First command of a session", INDEX_ROW),
                ("grep", "later grep"),
                ("list_files", "list_files"),
            )
        ),
        *(
            (target, what)
            for target in ("Diffs", "Proposal → WorkspaceEdit")
            for what in (
                "10,000-line file, 1,000 spread changes",
                "100 files × 2,000 lines, 200 spread changes each",
            )
        ),
        ("Memory", "server RSS growth during a grep of the 200-file tree"),
        *(
            ("The editor never waits", f"hover + codeAction while {phase} (200-file tree)")
            for phase in phases
        ),
    }
    assert rows == expected
    assert "### The editor never waits" in done.stdout
