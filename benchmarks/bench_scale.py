"""The scale targets of issue 14, each measured against the raw tool in the same run.

Run from the repository root with the dev install:

    .venv/bin/python benchmarks/bench_scale.py [--quick] [--write-docs] [--json PATH]

It generates deterministic repositories (``scale_trees.py``) of 1k, 10k and 50k files (``--quick``: 1k
and 10k, fewer repetitions), each measured without and then with a 30k-file gitignored
``node_modules``, in a temporary directory, and measures through the agent's public entry points
(``assembly.assemble_session`` and ``session.registry.execute``, as a front end does):

- the first bash call of a session (``true``), against ``bash -c true`` and ``cp -a`` of the tree,
  with the workspace's secret index built, as the language server builds it when the editor opens
  the folder (its build time is a row of its own, against ``rg --files --hidden --no-ignore``);
- a bash call after one file of the tree changed, against ``bash -c true``;
- the first grep of a session and later ones, against ``rg`` on the same tree (the first one also as
  ``agent-ls run`` meets it, while its own secret index walks the tree); list_files against
  ``rg --files``;
- the unified diff (``workspace.diffs.unified_diff``) and the WorkspaceEdit (``lsp.convert.
  build_workspace_edit``) of a 10,000-line file with 1,000 spread changes and of 100 files of 2,000
  lines with 200 each, against GNU ``diff -u`` of the same files (every repetition diffs new texts,
  so no cache answers for the diff);
- on the largest tree, over stdio on a real ``agent-ls serve`` (``scale_editor.py``): the server's
  memory growth during a grep, and the p50/p99 latency of hover and codeAction requests during each
  phase of a run that proposes the 10,000-line change, against the same requests when idle.

Prints one markdown table per target (measured, raw tool, ratio, target, met or missed) and machine
notes; ``--write-docs`` puts them between the ``bench_scale`` markers of docs/benchmarks.md.
Times are medians. These machines are noisy: compare the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import scale_trees as trees  # noqa: E402
from scale_editor import measure_editor, server_env  # noqa: E402

from agent_ls.assembly import assemble_session  # noqa: E402
from agent_ls.core.messages import ToolCall  # noqa: E402
from agent_ls.core.ports import Approval, ApprovalRequest  # noqa: E402
from agent_ls.core.proposal import FileChange  # noqa: E402
from agent_ls.lsp.convert import build_workspace_edit  # noqa: E402
from agent_ls.runtime import Session  # noqa: E402
from agent_ls.workspace.diffs import unified_diff  # noqa: E402
from agent_ls.workspace.paths import PathPolicy  # noqa: E402
from agent_ls.workspace.sandbox import unsandboxed_reason  # noqa: E402
from agent_ls.workspace.secret_index import SecretIndex  # noqa: E402

DOCS = REPO / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench_scale:begin -->", "<!-- bench_scale:end -->"
NODE_MODULES_FILES = 30_000
LATENCY_P99_S = 0.050
INDEX_ROW = "the workspace's secret index, built once in the background when it opens"
COLD_GREP = "first grep of `agent-ls run`, its own secret index walking the tree meanwhile"


@dataclass(frozen=True)
class Row:
    """One line of a target's table; ``met`` is None when the row has no target of its own."""

    target: str
    what: str
    measured: str
    raw: str
    ratio: str
    goal: str
    met: bool | None
    value: float


class Allow:
    """Answers every question "once": the benchmark measures the tools, not the prompts."""

    async def ask(self, request: ApprovalRequest) -> Approval:
        return Approval("once")


def _median_s(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _raw(*argv: str, cwd: Path | None = None) -> Callable[[], object]:
    return lambda: subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _session(root: Path, index: SecretIndex | None = None) -> Session:
    environ = {"PATH": os.environ.get("PATH", "")}
    return assemble_session(root=root, approver=Allow(), environ=environ, secret_index=index)


def _built_index(root: Path) -> tuple[SecretIndex, float]:
    """The workspace's secret index as the language server builds it when the editor opens the folder,
    and how long the build took (seconds)."""
    started = time.perf_counter()
    index = SecretIndex(root, PathPolicy(root).is_secret)
    index.start()
    index.masks()
    return index, time.perf_counter() - started


async def _tool_s(session: Session, name: str, arguments: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = await session.registry.execute(ToolCall("c1", name, json.dumps(arguments)), lambda _: None)
    elapsed = time.perf_counter() - started
    if result.is_error:
        raise SystemExit(f"{name} {arguments} failed: {result.content[:400]}")
    return elapsed


def _fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def measure_tree(root: Path, size: int, label: str, repeat: int, first_repeat: int) -> dict[str, float]:
    """The per-tool timings of one tree, in seconds (medians), with the raw tools of the same run."""
    out: dict[str, float] = {}
    copy = root.parent / f"{root.name}-cp"

    def cp() -> None:
        subprocess.run(["cp", "-a", str(root), str(copy)], check=True)

    def cp_timed() -> float:
        started = time.perf_counter()
        cp()
        elapsed = time.perf_counter() - started
        shutil.rmtree(copy)
        return elapsed

    out["cp_a"] = statistics.median(cp_timed() for _ in range(first_repeat))
    out["bash_true"] = _median_s(_raw("bash", "-c", "true"), repeat * 3)
    out["rg"] = _median_s(_raw("rg", "-n", "--column", trees.NEEDLE, cwd=root), repeat)
    out["rg_files"] = _median_s(_raw("rg", "--files", cwd=root), repeat)
    out["rg_files_all"] = _median_s(_raw("rg", "--files", "--hidden", "--no-ignore", cwd=root), repeat)

    async def tools() -> None:
        firsts, first_greps, cold_greps = [], [], []
        for _ in range(first_repeat):  # agent-ls run: the session's own index walks meanwhile
            session = _session(root)
            try:
                cold_greps.append(await _tool_s(session, "grep", {"pattern": trees.NEEDLE}))
            finally:
                session.close()
        builds: list[float] = []
        for _ in range(first_repeat):
            index, took = _built_index(root)
            builds.append(took)
            index.close()
        index, _ = _built_index(root)  # the workspace is open: its index is built (the server's)
        for _ in range(first_repeat):
            session = _session(root, index)
            try:
                first_greps.append(await _tool_s(session, "grep", {"pattern": trees.NEEDLE}))
            finally:
                session.close()
        session = _session(root, index)
        changed: list[float] = []
        later: list[float] = []
        listed: list[float] = []
        originals: dict[Path, str] = {}
        try:
            for _ in range(first_repeat):
                session.close()
                session = _session(root, index)
                firsts.append(await _tool_s(session, "bash", {"command": "true"}))
            for i in range(repeat):
                path = root / trees.source_path(1 + i * 37 % max(size - 3, 1))
                originals.setdefault(path, path.read_text())
                path.write_text(originals[path] + f"# changed {i}\n")
                changed.append(await _tool_s(session, "bash", {"command": "true"}))
            for _ in range(repeat):
                later.append(await _tool_s(session, "grep", {"pattern": trees.NEEDLE}))
                listed.append(await _tool_s(session, "list_files", {}))
        finally:
            session.close()
            index.close()
            for path, text in originals.items():
                path.write_text(text)
        out.update(
            index_build=statistics.median(builds),
            first_bash=statistics.median(firsts),
            changed_bash=statistics.median(changed),
            first_grep=statistics.median(first_greps),
            cold_grep=statistics.median(cold_greps),
            later_grep=statistics.median(later),
            list_files=statistics.median(listed),
        )

    asyncio.run(tools())
    print(f"  {label}: " + ", ".join(f"{k} {_fmt_s(v)}" for k, v in out.items()), file=sys.stderr)
    return out


def tree_rows(results: dict[str, dict[str, float]], sizes: list[int], node_modules: int) -> list[Row]:
    rows: list[Row] = []
    for variant in ("", " + node_modules"):
        base = results.get(f"{sizes[0]}{variant}")
        for size in sizes:
            r = results.get(f"{size}{variant}")
            if r is None or base is None:
                continue
            tree = f"{size:,} files" + (f" + {node_modules:,}-file node_modules" if variant else "")
            for key, target, what, goal in (
                (
                    "first_bash",
                    "First command of a session",
                    "first bash call (`true`)",
                    "overhead ≤ 0.5 s and ≤ 1.2× the smallest tree's (same node_modules)",
                ),
                (
                    "changed_bash",
                    "A command after one file changed",
                    "bash call (`true`) after one changed file",
                    "overhead ≤ 1.2× the smallest tree's (same node_modules)",
                ),
            ):
                overhead = r[key] - r["bash_true"]
                scale = overhead / max(base[key] - base["bash_true"], 1e-4)
                met = scale <= 1.2 and (key != "first_bash" or overhead <= 0.5)
                raw = f"`bash -c true` {_fmt_s(r['bash_true'])}" + (
                    f"; `cp -a` {_fmt_s(r['cp_a'])}" if key == "first_bash" else ""
                )
                rows.append(
                    Row(
                        target,
                        f"{what}, {tree}",
                        f"{_fmt_s(r[key])} (overhead {_fmt_s(overhead)})",
                        raw,
                        f"{scale:.2f}× the smallest",
                        goal,
                        met,
                        r[key],
                    )
                )
            if "index_build" in r:
                rows.append(
                    Row(
                        "First command of a session",
                        f"{INDEX_ROW}, {tree}",
                        _fmt_s(r["index_build"]),
                        f"`rg --files --hidden --no-ignore` {_fmt_s(r['rg_files_all'])}",
                        f"{r['index_build'] / r['rg_files_all']:.1f}×",
                        "none (not on a command's path)",
                        None,
                        r["index_build"],
                    )
                )
            grep_rows: tuple[tuple[str, str, str, str, float | None], ...] = (
                ("first_grep", "rg", "first grep of a session", "`rg`", 1.2),
                ("cold_grep", "rg", COLD_GREP, "`rg`", None),
                ("later_grep", "rg", "later grep", "`rg`", 1.2),
                ("list_files", "rg_files", "list_files", "`rg --files`", 1.5),
            )
            for key, raw_key, what, raw_name, limit in grep_rows:
                if key not in r:
                    continue
                ratio = r[key] / r[raw_key]
                target = "list_files" if key == "list_files" else "grep"
                rows.append(
                    Row(
                        target,
                        f"{what}, {tree}",
                        _fmt_s(r[key]),
                        f"{raw_name} {_fmt_s(r[raw_key])}",
                        f"{ratio:.2f}×",
                        f"≤ {limit}× {raw_name}" if limit else "none (the editor builds the index at open)",
                        ratio <= limit if limit else None,
                        r[key],
                    )
                )
    return rows


def _diff_s(
    changes: Callable[[int], list[FileChange]], repeat: int, work: Callable[[list[FileChange]], object]
) -> float:
    times = []
    for i in range(repeat):
        fresh = changes(i)
        started = time.perf_counter()
        work(fresh)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def diff_rows(tmp: Path, repeat: int) -> list[Row]:
    """The diff and WorkspaceEdit rows: one 10k-line file with 1,000 spread changes; 100 files × 2k lines."""
    big = trees.big_base_text()
    small = ["".join(big.splitlines(keepends=True)[i * 20 : i * 20 + 2000]) for i in range(100)]

    def one(i: int) -> list[FileChange]:
        new = trees.spread_changes(big, trees.SPREAD_CHANGES, seed=i, tag=f"fmt {i}")
        return [FileChange("src/big_table.py", False, big, None, new)]

    def hundred(i: int) -> list[FileChange]:
        return [
            FileChange(
                f"src/f{n}.py", False, text, None, trees.spread_changes(text, 200, seed=n + i, tag=f"fmt {i}")
            )
            for n, text in enumerate(small)
        ]

    (tmp / "old").mkdir(parents=True)
    (tmp / "new").mkdir()
    for change in [*one(0), *hundred(0)]:
        name = change.path.replace("/", "_")
        (tmp / "old" / name).write_text(change.base_text)
        (tmp / "new" / name).write_text(change.new_text)
    raw_one = _median_s(
        _raw("diff", "-u", str(tmp / "old/src_big_table.py"), str(tmp / "new/src_big_table.py")), repeat
    )
    (tmp / "old/src_big_table.py").unlink()
    (tmp / "new/src_big_table.py").unlink()
    raw_hundred = _median_s(_raw("diff", "-ru", str(tmp / "old"), str(tmp / "new")), repeat)

    def edit(changes: list[FileChange]) -> object:
        return build_workspace_edit(
            changes, root=tmp, encoding="utf-16", change_annotations=True, resource_create=True, label="bench"
        )

    def diff(changes: list[FileChange]) -> object:
        return [unified_diff(change) for change in changes]

    rows = []
    for target, work in (("Diffs", diff), ("Proposal → WorkspaceEdit", edit)):
        for what, make, raw, limit in (
            ("10,000-line file, 1,000 spread changes", one, raw_one, 0.050),
            ("100 files × 2,000 lines, 200 spread changes each", hundred, raw_hundred, 0.100),
        ):
            value = _diff_s(make, repeat, work)
            rows.append(
                Row(
                    target,
                    what,
                    _fmt_s(value),
                    f"GNU `diff -u` {_fmt_s(raw)}",
                    f"{value / raw:.1f}×",
                    f"≤ {limit * 1000:.0f} ms",
                    value <= limit,
                    value,
                )
            )
    return rows


def editor_rows(root: Path, label: str, tmp: Path, runs: int) -> list[Row]:
    """Memory during a grep and the editor's latency per phase, on ``root`` over a real server."""
    scripts, config, home = tmp / "scripts", tmp / "config", tmp / "home"
    for folder in (scripts, config, home):
        folder.mkdir(exist_ok=True)
    new_text = trees.spread_changes(trees.big_base_text(), trees.SPREAD_CHANGES, seed=99)
    result = asyncio.run(
        measure_editor(
            root,
            scripts,
            server_env(config, home),
            big_rel=trees.BIG_FILE,
            new_text=new_text,
            open_rel=trees.source_path(1),
            needle=trees.NEEDLE,
            runs=runs,
        )
    )
    if trees.NEEDLE not in result.grep_output:
        raise SystemExit(f"the server's grep did not find the needle: {result.grep_output[:400]}")
    files = f"{label} tree"
    growth = result.grep_growth_mb or 0.0
    rows = [
        Row(
            "Memory",
            f"server RSS growth during a grep of the {files}",
            f"{growth:.1f} MB",
            f"server RSS before {result.rss_before_mb:.0f} MB",
            "—",
            "≤ 30 MB",
            growth <= 30,
            growth,
        )
    ]
    idle = result.latencies.get("idle", [0.0])
    idle_p99 = _percentile(idle, 99)
    for phase, samples in result.latencies.items():
        if phase in ("between", "after", "warm-up"):
            continue
        p50, p99 = _percentile(samples, 50), _percentile(samples, 99)
        rows.append(
            Row(
                "The editor never waits",
                f"hover + codeAction while {phase} ({files})",
                f"p50 {_fmt_s(p50)} / p99 {_fmt_s(p99)} (n={len(samples)})",
                f"idle p50 {_fmt_s(_percentile(idle, 50))} / p99 {_fmt_s(idle_p99)}",
                f"{p99 / max(idle_p99, 1e-6):.1f}× idle p99",
                "p99 ≤ 50 ms",
                None if phase == "idle" else p99 <= LATENCY_P99_S,
                p99,
            )
        )
    return rows


def _percentile(samples: list[float], pct: int) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered)) - 1))]


def machine_notes() -> list[str]:
    def version(tool: str) -> str:
        if shutil.which(tool) is None:
            return "absent"
        done = subprocess.run([tool, "--version"], capture_output=True, text=True, check=False)
        return done.stdout.splitlines()[0] if done.stdout else "present"

    reason = unsandboxed_reason(True)
    return [
        f"CPUs: {os.cpu_count()}; kernel {platform.release()}; Python {platform.python_version()}",
        f"bubblewrap: {version('bwrap')}; commands sandboxed: {'no: ' + reason if reason else 'yes'}",
        f"ripgrep: {version('rg')}; GNU diff: {version('diff')}",
    ]


def render(rows: list[Row], command: str, notes: list[str]) -> str:
    out = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with:",
        "",
        "```sh",
        command,
        "```",
        "",
    ]
    out += [f"- {note}" for note in notes]
    for target in dict.fromkeys(row.target for row in rows):
        out += [
            "",
            f"### {target}",
            "",
            "| what | measured | raw tool, same run | ratio | target | met |",
            "|---|---|---|---|---|---|",
        ]
        for r in (row for row in rows if row.target == target):
            met = "—" if r.met is None else "met" if r.met else "**missed**"
            out.append(f"| {r.what} | {r.measured} | {r.raw} | {r.ratio} | {r.goal} | {met} |")
    return "\n".join(out) + "\n"


def write_docs(text: str) -> None:
    doc = DOCS.read_text(encoding="utf-8")
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    DOCS.write_text(doc[:start] + "\n" + text + doc[end:], encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k files, fewer repetitions")
    parser.add_argument("--sizes", help="comma-separated tree sizes in files (default 1000,10000,50000)")
    parser.add_argument("--node-modules", type=int, default=NODE_MODULES_FILES, help="files in node_modules")
    parser.add_argument("--repeat", type=int, help="repetitions of the cheap measures (default 7, quick 3)")
    parser.add_argument(
        "--write-docs", action="store_true", help="replace the Scale section of docs/benchmarks.md"
    )
    parser.add_argument("--json", type=Path, help="also write the rows as JSON to this file")
    args = parser.parse_args()
    sizes = (
        [int(s) for s in args.sizes.split(",")]
        if args.sizes
        else [1_000, 10_000]
        if args.quick
        else [1_000, 10_000, 50_000]
    )
    repeat = args.repeat or (3 if args.quick else 7)
    first_repeat = 1 if args.quick else 3
    results: dict[str, dict[str, float]] = {}
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as name:
        tmp = Path(name)
        shared = tmp / "node_modules"
        for size in sizes:
            root = tmp / f"tree-{size}"
            started = time.perf_counter()
            trees.generate_tree(root, size)
            print(f"tree of {size:,} files in {time.perf_counter() - started:.1f} s", file=sys.stderr)
            results[f"{size}"] = measure_tree(root, size, f"{size:,}", repeat, first_repeat)
            if size == sizes[-1]:
                rows += editor_rows(root, f"{size:,}-file", tmp, 1 if args.quick else 3)
            if args.node_modules:
                if not shared.exists():  # made once, moved from tree to tree
                    started = time.perf_counter()
                    trees.add_node_modules(tmp, args.node_modules)
                    made_s = time.perf_counter() - started
                    print(f"node_modules of {args.node_modules:,} files in {made_s:.1f} s", file=sys.stderr)
                shared.rename(root / "node_modules")
                label = f"{size:,} + node_modules"
                results[f"{size} + node_modules"] = measure_tree(root, size, label, repeat, first_repeat)
                (root / "node_modules").rename(shared)
            shutil.rmtree(root)
        rows = tree_rows(results, sizes, args.node_modules) + diff_rows(tmp / "diffs", repeat) + rows
    command = "  ".join([".venv/bin/python benchmarks/bench_scale.py", *sys.argv[1:]]).replace("  ", " ")
    text = render(rows, command, machine_notes())
    print(text)
    if args.json:
        args.json.write_text(json.dumps([asdict(row) for row in rows], indent=2))
    if args.write_docs:
        write_docs(text)


if __name__ == "__main__":
    main()
