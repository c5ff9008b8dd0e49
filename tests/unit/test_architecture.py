"""The house a newcomer can walk (docs/architecture.md): the import contracts of pyproject.toml hold
(import-linter), no module of ``agent_ls`` imports itself back through others, and no hand-written
module is over 600 lines. Each check is also run on a tree broken on purpose, so it is known to fail."""

from __future__ import annotations

import graphlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Set
from pathlib import Path

import grimp
import pytest

import agent_ls

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path(agent_ls.__file__).parent
MAX_LINES = 600
NOT_HAND_WRITTEN = ("demo/sample",)  # the demo's sample project: input data, not our code
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint_imports(package_parent: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the contracts of pyproject.toml, on the package found in ``package_parent``."""
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(REPO / "pyproject.toml"), "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_import_contracts_are_kept(tmp_path: Path) -> None:
    result = _lint_imports(PACKAGE.parent, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_an_upward_import_breaks_the_layers_contract(tmp_path: Path) -> None:
    copy = tmp_path / "src" / "agent_ls"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    errors = copy / "core" / "errors.py"
    errors.write_text(errors.read_text(encoding="utf-8") + "\nfrom agent_ls import runtime  # noqa\n")
    result = _lint_imports(tmp_path / "src", tmp_path)
    assert result.returncode != 0
    assert "agent_ls.core.errors -> agent_ls.runtime" in result.stdout


def _import_graph(package: str) -> dict[str, set[str]]:
    """Module to the modules of ``package`` it imports, TYPE_CHECKING imports included (grimp)."""
    graph = grimp.build_graph(package, cache_dir=None)
    return {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}


def _cycle(graph: Mapping[str, Set[str]]) -> list[str]:
    """One import cycle of ``graph`` (first module repeated last), or [] when there is none."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return []


def test_no_module_imports_itself_back() -> None:
    assert _cycle(_import_graph("agent_ls")) == []


def test_a_cycle_is_found() -> None:
    graph = {"a.overlay": {"a.shadow"}, "a.shadow": {"a.bring_back"}, "a.bring_back": {"a.overlay"}}
    assert sorted(set(_cycle(graph))) == ["a.bring_back", "a.overlay", "a.shadow"]
    assert _cycle({"a.overlay": {"a.shadow"}, "a.shadow": set()}) == []


def _hand_written_modules(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*.py")):
        if not any(path.relative_to(root).as_posix().startswith(skip) for skip in NOT_HAND_WRITTEN):
            yield path


def _long_modules(root: Path) -> dict[str, int]:
    counts = {
        p.relative_to(root).as_posix(): len(p.read_bytes().splitlines()) for p in _hand_written_modules(root)
    }
    return {name: count for name, count in counts.items() if count > MAX_LINES}


def test_no_module_is_over_600_lines() -> None:
    assert _long_modules(PACKAGE) == {}


def test_a_long_module_is_found(tmp_path: Path) -> None:
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES)
    assert _long_modules(tmp_path) == {"long.py": MAX_LINES + 1}


@pytest.mark.parametrize("skipped", NOT_HAND_WRITTEN)
def test_what_is_not_hand_written_still_exists(skipped: str) -> None:
    assert (PACKAGE / skipped).is_dir(), f"{skipped} is gone: drop it from NOT_HAND_WRITTEN"
