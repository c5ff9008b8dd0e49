"""``agent-ls instructions``, ``agent-ls skills`` and ``agent-ls run --file`` as a user runs them: real
processes, exit codes, output. A user must be able to check that a file was actually loaded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.e2e.test_cli import _agent_ls, _script
from tests.support.corpus import CORPUS, require_corpus


def _home(tmp_path: Path) -> dict[str, str]:
    """An empty home: the developer's own ~/.agents/skills never leak into these runs."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home)}


def _monorepo(tmp_path: Path) -> Path:
    """AM04 (pydantic-ai's nested AGENTS.md files) copied with its symlinks, plus a .git marker."""
    root = tmp_path / "pydantic-ai"
    require_corpus()
    shutil.copytree(CORPUS / "agents-md" / "pydantic__pydantic-ai", root, symlinks=True)
    (root / ".git").mkdir()
    return root


def test_instructions_prints_the_chain_for_a_file_root_first(tmp_path: Path) -> None:
    root = _monorepo(tmp_path)
    target = root / "pydantic_ai_slim" / "pydantic_ai" / "models" / "openai.py"
    ran = _agent_ls("instructions", str(target), "--workspace", str(root), cwd=tmp_path, env=_home(tmp_path))
    assert ran.returncode == 0, ran.stderr
    lines = [line for line in ran.stdout.splitlines() if line[:2] in ("1.", "2.", "3.", "4.")]
    assert [line.split()[1] for line in lines] == [
        "AGENTS.md",
        "pydantic_ai_slim/pydantic_ai/AGENTS.md",
        "pydantic_ai_slim/pydantic_ai/models/AGENTS.md",
    ]

    as_json = _agent_ls(
        "instructions", str(target), "--workspace", str(root), "--json", cwd=tmp_path, env=_home(tmp_path)
    )
    chain = json.loads(as_json.stdout)
    assert [f["label"] for f in chain["files"]] == [line.split()[1] for line in lines]
    assert chain["totalBytes"] == 26_720


def test_instructions_shows_truncation_and_refused_imports(tmp_path: Path) -> None:
    require_corpus()
    jint = tmp_path / "jint"
    shutil.copytree(CORPUS / "agents-md" / "sebastienros__jint", jint, symlinks=True)
    ran = _agent_ls("instructions", "--workspace", str(jint), cwd=tmp_path, env=_home(tmp_path))
    assert "truncated: 32,768 of 126,123 bytes" in ran.stdout, ran.stdout
    assert "warning" in ran.stdout

    dotfiles = tmp_path / "dotfiles"
    shutil.copytree(CORPUS / "agents-md" / "mkarrmann__dotfiles", dotfiles, symlinks=True)
    target = dotfiles / "claude_config" / "x.md"
    ran = _agent_ls(
        "instructions", str(target), "--workspace", str(dotfiles), "--json", cwd=tmp_path, env=_home(tmp_path)
    )
    (file,) = json.loads(ran.stdout)["files"]
    assert {i["status"] for i in file["imports"]} == {"refused"}
    assert ran.returncode in (0, 1)


def test_skills_lists_bundled_and_project_skills_with_diagnostics(tmp_path: Path) -> None:
    require_corpus()
    root = tmp_path / "ws"
    skill = root / ".agents" / "skills" / "astrolicious-astro"
    skill.parent.mkdir(parents=True)
    shutil.copytree(
        CORPUS / "skills" / "dallay__agentsync" / ".agents" / "skills" / "astrolicious-astro", skill
    )
    ran = _agent_ls("skills", "--workspace", str(root), cwd=tmp_path, env=_home(tmp_path))
    assert "code-review [bundled, model and user]" in ran.stdout, ran.stdout
    assert "astro [project" in ran.stdout
    assert "must match skill name" in ran.stdout

    listed = json.loads(
        _agent_ls("skills", "--workspace", str(root), "--json", cwd=tmp_path, env=_home(tmp_path)).stdout
    )
    names = {s["name"]: s["source"] for s in listed["skills"]}
    assert names["astro"] == "project" and names["explain"] == "bundled"


def test_run_with_a_file_and_a_slash_task_invokes_the_skill(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print(1)\n", encoding="utf-8")
    model = _script(tmp_path, [{"content": "app.py:1 fine."}])
    ran = _agent_ls(
        "run",
        "/code-review look at prints",
        "--model",
        model,
        "--workspace",
        str(root),
        "--file",
        str(root / "app.py"),
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    assert "instructions (skill): skill:code-review" in ran.stderr
    assert "instructions (chain)" in ran.stderr


def test_a_file_outside_the_workspace_is_a_usage_error(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text("x = 1\n", encoding="utf-8")
    ran = _agent_ls(
        "instructions", str(elsewhere), "--workspace", str(root), cwd=tmp_path, env=_home(tmp_path)
    )
    assert ran.returncode == 2 and "not inside the workspace" in ran.stderr
    ran = _agent_ls(
        "run",
        "hi",
        "--model",
        "replay:x.json",
        "--workspace",
        str(root),
        "--file",
        str(elsewhere),
        cwd=tmp_path,
    )
    assert ran.returncode == 2 and "not inside the workspace" in ran.stderr
