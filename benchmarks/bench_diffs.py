"""The line diff candidates side by side, against GNU ``diff`` on the same files in the same run (issue 14).

Run from the repository root with the dev install:  .venv/bin/python benchmarks/bench_diffs.py [--repeat N]

Inputs (``scale_trees``, the generator of ``bench_scale.py``):
- the 10,000-line table (every line unique) with 1,000 changes spread through it (a formatter's comment);
- a 10,000-line formatter-like file where most lines repeat (blank lines, ``return None``, ``pass``,
  closing brackets) with 1,000 spread changes: the case that made ``difflib`` quadratic;
- 100 files of 2,000 lines (slices of the table) with 200 spread changes each.

Candidates, each given the two texts split anew by the server's ``split_lines`` (lines keep their
terminators; fresh strings, so a matcher pays for hashing them as the server does):
``difflib.SequenceMatcher`` with ``autojunk=False`` (what the server used), ``cydifflib`` (the same
algorithm in C, when installed), ``rapidfuzz``'s Indel opcodes (when installed),
``patiencediff.PatienceSequenceMatcher`` (breezy's, Rust; what the server used, when installed), libgit2's
diff through ``pygit2`` (when installed), Mercurial's C ``bdiff.blocks`` and ``bdiff.xdiffblocks`` (git's
xdiff, which the server uses; these three are given the texts, joined and encoded, and cut lines at
``\\n`` themselves), and the server's own path:
``line_diff.text_diff`` uncached (split + xdiff), then everything a proposal needs (``line_hunks``,
``unified_diff``, ``line_counts``) first with an empty cache and then again (cache hits). ``changed`` is
removed + added lines (fewer is a tighter diff). GNU ``diff`` is timed as a process (``diff old new`` /
``diff -r old/ new/``), start-up included. Medians of ``--repeat`` runs (difflib runs once: it takes
seconds); compare ratios, not absolutes.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import scale_trees as trees  # noqa: E402
from mercurial.cext import bdiff  # noqa: E402

from agent_ls.core.proposal import FileChange  # noqa: E402
from agent_ls.workspace.diffs import line_counts, unified_diff  # noqa: E402
from agent_ls.workspace.line_diff import split_lines, text_diff  # noqa: E402
from agent_ls.workspace.text_edits import line_hunks  # noqa: E402

Pair = tuple[str, str]
Opcodes = Sequence[tuple[str, int, int, int, int]]


def _formatter_text(lines: int, seed: int = 11) -> str:
    rng = random.Random(seed)
    common = ["\n", "    return None\n", "        pass\n", "    )\n", "]\n", "    else:\n"]
    return "".join(f"def function_{i}(arg):\n" if i % 7 == 0 else rng.choice(common) for i in range(lines))


def _inputs() -> dict[str, list[Pair]]:
    table = trees.big_base_text()
    formatter = _formatter_text(trees.BIG_LINES)
    table_lines = table.splitlines(keepends=True)
    hundred = []
    for n in range(100):
        start = (n * 79) % (len(table_lines) - 2_000)
        base = "".join(table_lines[start : start + 2_000])
        hundred.append((base, trees.spread_changes(base, 200, seed=n)))
    return {
        "10k-line table, 1,000 spread changes": [(table, trees.spread_changes(table, 1_000, seed=3))],
        "10k lines, most repeated (formatter), 1,000 spread changes": [
            (formatter, trees.spread_changes(formatter, 1_000, seed=4))
        ],
        "100 files × 2k lines, 200 spread changes each": hundred,
    }


def _changed(opcodes: Opcodes) -> int:
    return sum((i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal")


def _matcher(factory: Callable[..., Any]) -> Callable[[list[str], list[str]], Opcodes]:
    return lambda a, b: factory(None, a, b).get_opcodes()


def _candidates() -> dict[str, Callable[[list[str], list[str]], Opcodes]]:
    found: dict[str, Callable[[list[str], list[str]], Opcodes]] = {
        "difflib.SequenceMatcher(autojunk=False)": lambda a, b: difflib.SequenceMatcher(
            None, a, b, autojunk=False
        ).get_opcodes()
    }
    try:
        cydifflib = importlib.import_module("cydifflib")
        found["cydifflib.SequenceMatcher(autojunk=False)"] = lambda a, b: cydifflib.SequenceMatcher(
            None, a, b, autojunk=False
        ).get_opcodes()
    except ImportError:
        pass
    try:
        indel = importlib.import_module("rapidfuzz.distance").Indel
        found["rapidfuzz Indel.opcodes"] = lambda a, b: [tuple(op) for op in indel.opcodes(a, b)]
    except ImportError:
        pass
    try:
        patiencediff = importlib.import_module("patiencediff")
        found["patiencediff.PatienceSequenceMatcher"] = _matcher(patiencediff.PatienceSequenceMatcher)
    except ImportError:
        pass
    try:
        pygit2 = importlib.import_module("pygit2")
        found["pygit2 Patch hunks (libgit2 xdiff, Myers)"] = lambda a, b: _libgit2_opcodes(pygit2, a, b)
    except ImportError:
        pass
    found["mercurial bdiff.blocks (Mercurial's own)"] = lambda a, b: _block_opcodes(bdiff.blocks, a, b)
    found["mercurial bdiff.xdiffblocks (git's xdiff; the server's)"] = lambda a, b: _block_opcodes(
        bdiff.xdiffblocks, a, b
    )
    return found


def _block_opcodes(blocks: Callable[[bytes, bytes], Any], a: list[str], b: list[str]) -> Opcodes:
    """The changed ranges between Mercurial's matching blocks of the joined, encoded texts."""
    found = blocks("".join(a).encode(), "".join(b).encode())
    codes, i, j = [], 0, 0
    for a1, a2, b1, b2 in [*found, (len(a), len(a), len(b), len(b))]:
        if a1 > i or b1 > j:
            codes.append(("replace", i, a1, j, b1))
        i, j = a2, b2
    return codes


def _libgit2_opcodes(pygit2: Any, a: list[str], b: list[str]) -> Opcodes:
    """libgit2's hunks with no context (one per change) as the changed ranges (for ``changed``)."""
    patch = pygit2.Patch.create_from(
        "".join(a).encode(),
        "".join(b).encode(),
        context_lines=0,
        interhunk_lines=0,
        flag=pygit2.enums.DiffOption.FORCE_TEXT,
    )
    return [
        ("replace", h.old_start, h.old_start + h.old_lines, h.new_start, h.new_start + h.new_lines)
        for h in patch.hunks
    ]


def _split_and_diff(opcodes: Callable[[list[str], list[str]], Opcodes], pairs: list[Pair]) -> list[Opcodes]:
    """Each pair split anew (fresh line strings, whose hashes a matcher computes again, as in the server)."""
    return [opcodes(split_lines(old), split_lines(new)) for old, new in pairs]


def _median(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _gnu_diff(pairs: list[Pair], repeat: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        old_dir, new_dir = Path(tmp, "old"), Path(tmp, "new")
        old_dir.mkdir()
        new_dir.mkdir()
        for n, (old, new) in enumerate(pairs):
            Path(old_dir, f"f{n}.py").write_text(old)
            Path(new_dir, f"f{n}.py").write_text(new)
        if len(pairs) == 1:
            command = ["diff", str(old_dir / "f0.py"), str(new_dir / "f0.py")]
        else:
            command = ["diff", "-r", str(old_dir), str(new_dir)]
        return _median(lambda: subprocess.run(command, stdout=subprocess.DEVNULL, check=False), repeat)


def _proposal_path(pairs: list[Pair]) -> None:
    for n, (old, new) in enumerate(pairs):
        change = FileChange(f"f{n}.py", False, old, None, new)
        line_counts(change)
        unified_diff(change)
        line_hunks(old, new)


def _report(title: str, pairs: list[Pair], repeat: int) -> None:
    uncached = text_diff.__wrapped__
    raw = _gnu_diff(pairs, repeat)
    print(f"## {title}\n")
    print(f"{'candidate':58} {'ms':>9} {'× diff':>8} {'changed':>9}")
    print(f"{'GNU diff (process)':58} {raw * 1000:9.1f} {1:8.1f} {'':>9}")
    for name, opcodes in _candidates().items():
        runs = 1 if name.startswith("difflib") else repeat
        seconds = _median(lambda opcodes=opcodes: _split_and_diff(opcodes, pairs), runs)
        changed = sum(_changed(ops) for ops in _split_and_diff(opcodes, pairs))
        print(f"{name:58} {seconds * 1000:9.1f} {seconds / raw:8.1f} {changed:9,}")
    ours = _median(lambda: [uncached(old, new) for old, new in pairs], repeat)
    changed = sum(_changed(uncached(old, new).opcodes) for old, new in pairs)
    name = "agent_ls line_diff.text_diff (split + diff, uncached)"
    print(f"{name:58} {ours * 1000:9.1f} {ours / raw:8.1f} {changed:9,}")

    def first() -> None:
        text_diff.cache_clear()
        _proposal_path(pairs)

    cold = _median(first, repeat)
    warm = _median(lambda: _proposal_path(pairs), repeat)
    name = "proposal path: counts + unified diff + hunks, empty cache"
    print(f"{name:58} {cold * 1000:9.1f} {cold / raw:8.1f}")
    print(f"{'proposal path again (cached diffs)':58} {warm * 1000:9.1f} {warm / raw:8.1f}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}; medians of {args.repeat} (difflib: 1 run)\n")
    for title, pairs in _inputs().items():
        _report(title, pairs, args.repeat)


if __name__ == "__main__":
    main()
