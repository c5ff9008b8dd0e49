"""grep against raw ``rg``, each call paired with an ``rg`` run at the same moment (issue 14's grep target).

Run from the repository root with the dev install:
    .venv/bin/python benchmarks/bench_grep.py [--sizes 1000,10000] [--node-modules 30000] [--repeat 7]

``bench_scale.py`` measures ``rg`` once, on an idle tree, and every grep of a row against it; on a
shared 2-core machine the load moves between the two, and a session's state (a file watch, the secret
index's first walk) slows ``rg`` itself as much as grep. Here each grep, through the tool registry as
the model calls it, is preceded by ``rg -n --column`` on the same tree, and the ratio is the median of
those pairs' ratios. Per tree (``scale_trees``, with and without a gitignored ``node_modules``):

- first grep: in a new session, whose secret index starts its first walk of the tree at the same time
  (as ``agent-ls run`` does at once, and the language server when the editor opens the folder);
- first grep, index built: in a new session sharing an index already built (the language server's case
  once the folder is open);
- later grep: in a session that ran two bash calls, one file changed in between (a watch running).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import scale_trees as trees  # noqa: E402

from agent_ls.assembly import assemble_session  # noqa: E402
from agent_ls.core.messages import ToolCall  # noqa: E402
from agent_ls.core.ports import Approval, ApprovalRequest  # noqa: E402
from agent_ls.runtime import Session  # noqa: E402
from agent_ls.workspace.paths import PathPolicy  # noqa: E402
from agent_ls.workspace.secret_index import SecretIndex  # noqa: E402


class Allow:
    async def ask(self, request: ApprovalRequest) -> Approval:
        return Approval("once")


def _rg_s(root: Path) -> float:
    started = time.perf_counter()
    subprocess.run(["rg", "-n", "--column", trees.NEEDLE], cwd=root, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


async def _tool_s(session: Session, name: str, arguments: dict[str, str]) -> float:
    started = time.perf_counter()
    result = await session.registry.execute(ToolCall("c1", name, json.dumps(arguments)), lambda _: None)
    elapsed = time.perf_counter() - started
    if result.is_error or (name == "grep" and trees.NEEDLE not in result.content):
        raise SystemExit(f"{name} failed: {result.content[:400]}")
    return elapsed


Timing = tuple[float, float, float]
"""(median grep s, median rg s, median of the per-pair ratios)."""


async def _paired(root: Path, repeat: int, grep: Callable[[], Awaitable[float]]) -> Timing:
    greps, rgs = [], []
    for _ in range(repeat):
        rgs.append(_rg_s(root))
        greps.append(await grep())
    ratio = statistics.median(g / r for g, r in zip(greps, rgs, strict=True))
    return statistics.median(greps), statistics.median(rgs), ratio


async def measure(root: Path, repeat: int) -> dict[str, Timing]:
    """The three measures of the module docstring on ``root`` (resolved)."""
    environ = {"PATH": os.environ.get("PATH", "")}
    out: dict[str, Timing] = {}

    async def first(index: SecretIndex | None) -> float:
        session = assemble_session(root=root, approver=Allow(), environ=environ, secret_index=index)
        try:
            return await _tool_s(session, "grep", {"pattern": trees.NEEDLE})
        finally:
            session.close()

    out["first grep"] = await _paired(root, repeat, lambda: first(None))
    shared = SecretIndex(root, PathPolicy(root).is_secret)
    try:
        await asyncio.to_thread(shared.masks)
        out["first grep, index built"] = await _paired(root, repeat, lambda: first(shared))
    finally:
        shared.close()
    session = assemble_session(root=root, approver=Allow(), environ=environ)
    path = root / trees.source_path(1)
    original = path.read_text()
    try:
        await _tool_s(session, "bash", {"command": "true"})
        path.write_text(original + "# changed\n")
        await _tool_s(session, "bash", {"command": "true"})
        out["later grep"] = await _paired(
            root, repeat, lambda: _tool_s(session, "grep", {"pattern": trees.NEEDLE})
        )
    finally:
        session.close()
        path.write_text(original)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated tree sizes in files")
    parser.add_argument("--node-modules", type=int, default=30_000, help="files in node_modules (0: none)")
    parser.add_argument("--repeat", type=int, default=7, help="pairs per measure")
    args = parser.parse_args()
    variants = [0, args.node_modules] if args.node_modules else [0]
    print("| tree | measure | grep | `rg` (paired) | median ratio |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="bench-grep-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            for node_modules in variants:
                root = Path(tmp).resolve() / f"t{size}-{node_modules}"
                trees.generate_tree(root, size)
                if node_modules:
                    trees.add_node_modules(root, node_modules)
                label = f"{size:,} files" + (f" + {node_modules:,}-file node_modules" if node_modules else "")
                for what, (grep_s, rg_s, ratio) in asyncio.run(measure(root, args.repeat)).items():
                    print(
                        f"| {label} | {what} | {grep_s * 1000:.1f} ms | {rg_s * 1000:.1f} ms | {ratio:.2f}× |"
                    )
                    sys.stdout.flush()


if __name__ == "__main__":
    main()
