"""grep and list_files on large generated repositories, each against the raw tool in the same run (issue 14).

Run from the repository root with the dev install:

    .venv/bin/python benchmarks/bench_scale_search.py [--sizes 10000,50000] [--repeat 7] [--keep DIR]

For each size it generates a repository (``scale_trees.generate_tree``: a git checkout, ten files to
a folder, every 97th holding the needle), measures it, then adds a 30k-file gitignored
``node_modules`` (``scale_trees.add_node_modules``) and measures it again. Per tree, through the
agent's public entry points (``assembly.assemble_session`` and ``session.registry.execute``, as a front
end calls a tool; the sandbox as this machine has it):

- the first grep of a session (a new session each time) and later greps, against ``rg -n --column``
  of the needle in the same tree;
- list_files of the root, against ``rg --files``;
- grep with one pending edit (the pending pass added), against the same ``rg``.

On the largest tree it also measures the memory a grep adds to the process holding the session: a
child process assembles a session, resets its peak RSS (proc(5) ``clear_refs``, 5), greps the whole
tree for a word on about every tenth line (``return``: hundreds of thousands of matches, the worst
case the hit bounds must hold) and for the needle, and reports ``VmHWM`` minus the RSS before.

Prints a markdown table (medians; ratios are what count on these noisy machines). ``measure_search``
is importable: it returns the timings of one tree in seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import scale_trees as trees  # noqa: E402

from agent_ls.assembly import assemble_session  # noqa: E402
from agent_ls.core.messages import ToolCall  # noqa: E402
from agent_ls.core.ports import Approval, ApprovalRequest  # noqa: E402
from agent_ls.runtime import Session  # noqa: E402
from agent_ls.workspace.overlay import find_ripgrep  # noqa: E402
from agent_ls.workspace.sandbox import unsandboxed_reason  # noqa: E402

NODE_MODULES_FILES = 30_000
RG = find_ripgrep() or "rg"


class Allow:
    """Answers every question "once": the benchmark measures the tools, not the prompts."""

    async def ask(self, request: ApprovalRequest) -> Approval:
        return Approval("once")


def _session(root: Path) -> Session:
    return assemble_session(root=root, approver=Allow(), environ={"PATH": os.environ.get("PATH", "")})


async def _tool_s(session: Session, name: str, arguments: dict[str, Any]) -> tuple[float, str]:
    started = time.perf_counter()
    result = await session.registry.execute(ToolCall("c1", name, json.dumps(arguments)), lambda _: None)
    elapsed = time.perf_counter() - started
    if result.is_error:
        raise SystemExit(f"{name} {arguments} failed: {result.content[:400]}")
    return elapsed, result.content


def _median_s(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _raw(*argv: str, cwd: Path) -> Callable[[], object]:
    quiet = subprocess.DEVNULL
    return lambda: subprocess.run(argv, cwd=cwd, stdout=quiet, stderr=quiet, check=False)


def measure_search(root: Path, repeat: int) -> dict[str, float]:
    """Seconds (medians) for grep (first of a session, later, with a pending edit) and list_files on
    ``root``, and for ``rg`` and ``rg --files`` on it, interleaved so both see the same machine."""
    grep = {"pattern": trees.NEEDLE}
    out: dict[str, list[float]] = {key: [] for key in ("rg", "rg_files", "first", "later", "pending", "list")}

    async def run() -> None:
        for _ in range(repeat):
            out["rg"].append(_median_s(_raw(RG, "-n", "--column", trees.NEEDLE, cwd=root), 1))
            session = _session(root)
            try:
                elapsed, text = await _tool_s(session, "grep", grep)
                if trees.NEEDLE not in text:
                    raise SystemExit(f"grep did not find the needle: {text[:300]}")
                out["first"].append(elapsed)
                out["later"].append((await _tool_s(session, "grep", grep))[0])
                out["rg_files"].append(_median_s(_raw(RG, "--files", cwd=root), 1))
                out["list"].append((await _tool_s(session, "list_files", {}))[0])
                session.overlay.propose("src/pending_file.py", f"# {trees.NEEDLE}\n")
                out["pending"].append((await _tool_s(session, "grep", grep))[0])
            finally:
                session.overlay.close()

    asyncio.run(run())
    return {key: statistics.median(values) for key, values in out.items()}


_RSS_CHILD = """
import asyncio, json, sys
sys.path[:0] = [{repo!r}, {bench!r}]
from bench_scale_search import _session, _tool_s

def kb(name):
    for line in open("/proc/self/status"):
        if line.startswith(name + ":"):
            return int(line.split()[1])

async def main():
    session = _session(__import__("pathlib").Path({root!r}))
    await _tool_s(session, "list_files", {{"path": "src/a00"}})
    out = {{}}
    for pattern in ("return", {needle!r}):
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = kb("VmRSS")
        await _tool_s(session, "grep", {{"pattern": pattern}})
        out[pattern] = (kb("VmHWM") - before) / 1024
    out["rss_before_mb"] = before / 1024
    session.overlay.close()
    print(json.dumps(out))

asyncio.run(main())
"""


def measure_rss_growth(root: Path) -> dict[str, float]:
    """MB the peak RSS of a process holding a session grows by during one grep of ``root``, per pattern."""
    bench = str(REPO / "benchmarks")
    code = _RSS_CHILD.format(repo=str(REPO), bench=bench, root=str(root), needle=trees.NEEDLE)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="generate the trees here and keep them (reused if there)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-scale-search-"))
    print(f"ripgrep {RG}; sandbox: {unsandboxed_reason(True) or 'bubblewrap'}; cpus {os.cpu_count()}\n")
    print(
        "| tree | grep first | grep later | grep, 1 pending | `rg` | ratios first/later/pending "
        "| list_files | `rg --files` | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    rss: dict[str, float] = {}
    for size in sizes:
        root = base / f"t{size}"
        if not root.exists():
            trees.generate_tree(root, size)
        for variant in ("", f" + {NODE_MODULES_FILES // 1000}k node_modules"):
            if not variant and (root / "node_modules").exists():
                shutil.rmtree(root / "node_modules")  # a kept tree of an earlier run
            if variant and not (root / "node_modules").exists():
                trees.add_node_modules(root, NODE_MODULES_FILES)
            t = measure_search(root, args.repeat)
            print(
                f"| {size // 1000}k{variant} | {_ms(t['first'])} | {_ms(t['later'])} | {_ms(t['pending'])} "
                f"| {_ms(t['rg'])} | {t['first'] / t['rg']:.2f} / {t['later'] / t['rg']:.2f} / "
                f"{t['pending'] / t['rg']:.2f} | {_ms(t['list'])} | {_ms(t['rg_files'])} "
                f"| {t['list'] / t['rg_files']:.2f} |",
                flush=True,
            )
        if size == max(sizes):
            rss = measure_rss_growth(root)
    print(
        f"\nRSS growth during one grep of the {max(sizes) // 1000}k tree (+ node_modules), "
        f"RSS before {rss.get('rss_before_mb', 0):.0f} MB: "
        + ", ".join(f"`{k}` {v:.1f} MB" for k, v in rss.items() if k != "rss_before_mb")
    )


if __name__ == "__main__":
    main()
