"""Dependency direction (STYLE.md): core imports neither pygls, lsprotocol nor httpx; ``agent-ls run``
never imports pygls or lsprotocol (its cold start is budgeted)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import agent_ls

PACKAGE = Path(agent_ls.__file__).parent
FORBIDDEN_IN_CORE = {"pygls", "lsprotocol", "httpx"}


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_core_imports_no_protocol_or_http_library() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(_imported_roots(path) & FORBIDDEN_IN_CORE)
        for path in (PACKAGE / "core").rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_only_lsp_and_the_demo_import_pygls() -> None:
    allowed = {"lsp", "demo"}
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0] not in allowed
        and {"pygls", "lsprotocol"} & _imported_roots(path)
    ]
    assert offenders == []


def test_headless_run_does_not_load_pygls(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('[{"content": "nothing to do"}]')
    probe = (
        "import sys, runpy\n"
        f"sys.argv = ['agent-ls', 'run', 'hi', '--model', 'replay:{script}',"
        f" '--workspace', {str(tmp_path)!r}]\n"
        "from agent_ls.cli import main\n"
        "code = main()\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol'))\n"
        "print('LOADED', loaded, code)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert "LOADED [] 0" in out
