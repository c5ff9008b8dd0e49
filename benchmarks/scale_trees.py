"""Deterministic inputs for ``bench_scale.py``: generated repositories and proposals with spread changes.

A tree of ``files`` files is a git repository (``git init``, so ``rg`` honours its ``.gitignore`` as
in a real checkout) of source files in nested folders, ``src/aNN/pNN/mNN/``, ten to a folder: half
Python, a quarter TypeScript, the rest Markdown and JSON, 20 to 160 lines each (about 3 KB), built
from a fixed pool of blocks so 50k files take seconds. File 0 is ``src/big_table.py``, the 10,000-line
file the editor phases propose to change. Every ``NEEDLE_EVERY``-th file holds ``NEEDLE``, the word
the grep rows search for. ``add_node_modules`` adds a gitignored ``node_modules`` of small JavaScript
packages (20 files each). The same seed gives the same bytes.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

NEEDLE = "scale_needle_marker"
NEEDLE_EVERY = 97
BIG_FILE = "src/big_table.py"
BIG_LINES = 10_000
SPREAD_CHANGES = 1_000
_WORDS = (
    "account buffer cache client config cursor decode entry event fetch filter handle index item "
    "layout loader merge node option parse path query record render report request result route "
    "schema session state stream table token update user value window worker"
).split()


def _py_block(rng: random.Random) -> str:
    a, b, c = rng.sample(_WORDS, 3)
    return (
        f"def {a}_{b}({c}, limit=10):\n"
        f'    """Return the {b} of each {c}, at most limit of them."""\n'
        f"    found = []\n"
        f"    for {a} in {c}:\n"
        f"        if {a}.{b} is None:\n"
        f"            continue\n"
        f"        found.append({a}.{b})\n"
        f"        if len(found) >= limit:\n"
        f"            break\n"
        f"    return found\n\n\n"
    )


def _ts_block(rng: random.Random) -> str:
    a, b, c = rng.sample(_WORDS, 3)
    return (
        f"export function {a}{b.title()}({c}: {c.title()}[], limit = 10): string[] {{\n"
        f"  const found: string[] = [];\n"
        f"  for (const {a} of {c}) {{\n"
        f"    if ({a}.{b} === undefined) continue;\n"
        f"    found.push(String({a}.{b}));\n"
        f"    if (found.length >= limit) break;\n"
        f"  }}\n"
        f"  return found;\n"
        f"}}\n\n"
    )


def _md_block(rng: random.Random) -> str:
    words = " ".join(rng.choice(_WORDS) for _ in range(40))
    return f"## {rng.choice(_WORDS).title()}\n\n{words}.\n\n"


_POOLS = {".py": _py_block, ".ts": _ts_block, ".md": _md_block}


def _pools(rng: random.Random) -> dict[str, list[str]]:
    return {ext: [make(rng) for _ in range(200)] for ext, make in _POOLS.items()}


def _extension(index: int) -> str:
    return (".py", ".py", ".ts", ".py", ".md", ".ts", ".py", ".json", ".py", ".ts")[index % 10]


def source_path(index: int) -> str:
    """The workspace-relative path of generated file ``index`` (0 is ``BIG_FILE``)."""
    if index == 0:
        return BIG_FILE
    folder = index // 10
    return f"src/a{folder // 100:02d}/p{folder // 10 % 10:02d}/m{folder % 10:02d}/f{index}{_extension(index)}"


def _content(index: int, rng: random.Random, pools: dict[str, list[str]]) -> str:
    ext = _extension(index)
    if ext == ".json":
        keys = ", ".join(f'"{w}": {rng.randint(0, 999)}' for w in rng.sample(_WORDS, 12))
        return "{" + keys + "}\n"
    head = {
        ".py": f'"""Module {index}."""\n\n',
        ".ts": f"// module {index}\n\n",
        ".md": f"# Page {index}\n\n",
    }
    blocks = [rng.choice(pools[ext]) for _ in range(rng.randint(2, 14))]
    needle = (
        f"{'# ' if ext == '.py' else '// ' if ext == '.ts' else ''}{NEEDLE}\n"
        if index % NEEDLE_EVERY == 0
        else ""
    )
    return head[ext] + needle + "".join(blocks)


def big_base_text(seed: int = 7) -> str:
    """The 10,000-line Python file (a table of rows), the base of the big proposal."""
    rng = random.Random(seed)
    rows = [
        f"    ({i}, {rng.choice(_WORDS)!r}, {rng.randint(0, 10**6)}, {rng.random():.6f}),\n"
        for i in range(BIG_LINES - 2)
    ]
    return "TABLE = [\n" + "".join(rows) + "]\n"


def spread_changes(text: str, changes: int, seed: int, tag: str = "fmt") -> str:
    """``text`` with ``changes`` lines, picked at random through the whole text, rewritten as a formatter
    would (trailing comment ``# <tag>``); ``tag`` lets a caller make each repetition's text new."""
    lines = text.splitlines(keepends=True)
    rng = random.Random(seed)
    for i in rng.sample(range(len(lines)), changes):
        lines[i] = lines[i].rstrip("\n") + f"  # {tag}\n"
    return "".join(lines)


def generate_tree(root: Path, files: int, seed: int = 1) -> None:
    """Write a ``files``-file repository at ``root`` (module docstring); ``root`` must not exist."""
    rng = random.Random(seed)
    pools = _pools(rng)
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("node_modules/\n__pycache__/\n")
    (root / "README.md").write_text("# Generated repository\n\nInput of benchmarks/bench_scale.py.\n")
    made: set[Path] = set()
    for index in range(max(files - 2, 1)):
        path = root / source_path(index)
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        path.write_text(big_base_text() if index == 0 else _content(index, rng, pools))


def add_node_modules(root: Path, files: int, seed: int = 2) -> None:
    """Add a gitignored ``node_modules`` of ``files`` small JavaScript files, 20 to a package."""
    rng = random.Random(seed)
    for index in range(files):
        package = root / "node_modules" / f"pkg-{index // 20}"
        name = "package.json" if index % 20 == 0 else f"lib/m{index % 20}.js"
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name == "package.json":
            path.write_text(f'{{"name": "pkg-{index // 20}", "version": "1.0.{index % 7}"}}\n')
        else:
            body = "".join(
                f"exports.{rng.choice(_WORDS)}{i} = (x) => x + {i};\n" for i in range(rng.randint(5, 40))
            )
            path.write_text(f"'use strict';\n{body}")
