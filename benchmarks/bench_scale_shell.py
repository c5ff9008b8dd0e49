"""Shell commands on large generated repositories, against the raw tools in the same run (issue 14).

Run from the repository root with the dev install:

    .venv/bin/python benchmarks/bench_scale_shell.py [--sizes 1000,10000,50000] [--repeat 7] [--first 3]

For each size it generates a repository (``scale_trees.generate_tree``: a git checkout, ten files to
a folder), measures it, then adds a 30k-file gitignored ``node_modules`` (``scale_trees.
add_node_modules``) and measures it again. Per tree, through the agent's public entry points
(``assembly.assemble_session`` and ``session.registry.execute``, as a front end calls a tool; the
sandbox as this machine has it):

- the first bash call of a session (``true``; a new session each time), against ``bash -c true`` and
  ``cp -a`` of the tree;
- a bash call (``true``) after one file of the tree changed, against ``bash -c true``;
- what the shadow copy did for each (``ShadowCopy.trace``): whether it walked the workspace or the
  copy, and how many entries it copied.

Overhead is the call's time minus ``bash -c true``'s; the ratio compares it with the smallest tree's
(same ``node_modules`` variant). Prints a markdown table (medians; these machines are noisy: compare
the ratios).
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import scale_trees as trees  # noqa: E402

from agent_ls.assembly import assemble_session  # noqa: E402
from agent_ls.core.messages import ToolCall  # noqa: E402
from agent_ls.core.ports import Approval, ApprovalRequest  # noqa: E402
from agent_ls.runtime import Session  # noqa: E402
from agent_ls.workspace.sandbox import unsandboxed_reason  # noqa: E402

NODE_MODULES_FILES = 30_000


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


def _session(root: Path) -> Session:
    # The first call on a large tree copies it (tens of seconds on a slow disk): past the default 60 s.
    environ = {"PATH": os.environ.get("PATH", "")}
    return assemble_session(root=root, approver=Allow(), environ=environ, tool_timeout_s=900)


async def _bash_s(session: Session) -> float:
    started = time.perf_counter()
    call = ToolCall("c1", "bash", json.dumps({"command": "true"}))
    result = await session.registry.execute(call, lambda _: None)
    elapsed = time.perf_counter() - started
    if result.is_error:
        raise SystemExit(f"bash failed: {result.content[:400]}")
    return elapsed


def _fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _trace(session: Session) -> str:
    trace = session.shadow.trace
    walked = [
        name for name, did in (("workspace", trace.walked_workspace), ("copy", trace.walked_copy)) if did
    ]
    return f"walked {' and '.join(walked) or 'nothing'}, copied {len(trace.copied):,}"


def measure(root: Path, size: int, repeat: int, first_repeat: int) -> dict[str, float | str]:
    """One tree's timings in seconds (medians), with the raw tools of the same run."""
    out: dict[str, float | str] = {}
    copy = root.parent / f"{root.name}-cp"

    def cp_a() -> None:
        subprocess.run(["cp", "-a", str(root), str(copy)], check=True)
        shutil.rmtree(copy)

    out["cp_a"] = _median_s(cp_a, first_repeat)
    out["bash_true"] = _median_s(lambda: subprocess.run(["bash", "-c", "true"], check=True), repeat * 3)

    async def tools() -> None:
        firsts: list[float] = []
        for _ in range(first_repeat):
            session = _session(root)
            try:
                firsts.append(await _bash_s(session))
                out["first_trace"] = _trace(session)
            finally:
                session.close()
        changed: list[float] = []
        session = _session(root)
        originals: dict[Path, str] = {}
        try:
            await _bash_s(session)
            for i in range(repeat):
                path = root / trees.source_path(1 + i * 37 % max(size - 3, 1))
                originals.setdefault(path, path.read_text())
                path.write_text(originals[path] + f"# changed {i}\n")
                changed.append(await _bash_s(session))
                out["changed_trace"] = _trace(session)
        finally:
            session.close()
            for path, text in originals.items():
                path.write_text(text)
        out.update(first=statistics.median(firsts), changed=statistics.median(changed))

    asyncio.run(tools())
    return out


def render(results: dict[str, dict[str, float | str]], sizes: list[int], command: str) -> str:
    reason = unsandboxed_reason(True)
    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with `{command}`; "
        f"CPUs: {os.cpu_count()}; commands sandboxed: {'no: ' + reason if reason else 'yes'}.",
        "",
        "| tree | call | measured | overhead | × smallest tree | raw tools, same run | shadow copy |",
        "|---|---|---|---|---|---|---|",
    ]
    for variant in ("", " + node_modules"):
        base = results.get(f"{sizes[0]}{variant}")
        for size in sizes:
            r = results.get(f"{size}{variant}")
            if r is None or base is None:
                continue
            for key, what in (("first", "first bash call (`true`)"), ("changed", "after one changed file")):
                took, bash = float(r[key]), float(r["bash_true"])
                scale = (took - bash) / max(float(base[key]) - float(base["bash_true"]), 1e-4)
                raw = f"`bash -c true` {_fmt_s(bash)}" + (
                    f"; `cp -a` {_fmt_s(float(r['cp_a']))}" if key == "first" else ""
                )
                lines.append(
                    f"| {size:,}{variant} | {what} | {_fmt_s(took)} | {_fmt_s(took - bash)} | {scale:.2f}× "
                    f"| {raw} | {r[f'{key}_trace']} |"
                )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000", help="comma-separated tree sizes in files")
    parser.add_argument("--node-modules", type=int, default=NODE_MODULES_FILES, help="files in node_modules")
    parser.add_argument("--repeat", type=int, default=7, help="calls after one changed file")
    parser.add_argument("--first", type=int, default=3, help="first calls (a new session each)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[str, dict[str, float | str]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-shell-") as name:
        tmp = Path(name)
        shared = tmp / "node_modules"
        for size in sizes:
            root = tmp / f"tree-{size}"
            trees.generate_tree(root, size)
            results[f"{size}"] = measure(root, size, args.repeat, args.first)
            print(f"  {size:,}: {results[f'{size}']}", file=sys.stderr)
            if args.node_modules:
                if not shared.exists():  # made once, moved from tree to tree
                    trees.add_node_modules(tmp, args.node_modules)
                shared.rename(root / "node_modules")
                results[f"{size} + node_modules"] = measure(root, size, args.repeat, args.first)
                print(f"  {size:,} + node_modules: {results[f'{size} + node_modules']}", file=sys.stderr)
                (root / "node_modules").rename(shared)
            shutil.rmtree(root)
    command = " ".join([".venv/bin/python benchmarks/bench_scale_shell.py", *sys.argv[1:]])
    print(render(results, sizes, command))


if __name__ == "__main__":
    main()
