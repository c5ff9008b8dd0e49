"""The skills shipped with the server meet the Agent Skills specification (the reference validator
``skills-ref`` finds nothing), which is why discovery does not run the validator on them at every start
(start-up time, issue 16): a bundled skill that drifts from the spec fails here instead."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_ls.instructions.agent_context import bundled_skills_dir
from agent_ls.instructions.skill_lint import spec_diagnostics
from agent_ls.instructions.skill_parse import parse_skill

BUNDLED = sorted(path.parent for path in bundled_skills_dir().glob("*/SKILL.md"))


def test_there_are_bundled_skills() -> None:
    assert len(BUNDLED) >= 4


@pytest.mark.parametrize("skill_dir", BUNDLED, ids=lambda path: path.name)
def test_a_bundled_skill_parses_and_meets_the_spec(skill_dir: Path) -> None:
    path = skill_dir / "SKILL.md"
    parsed, diagnostics = parse_skill(
        path, path.read_text(encoding="utf-8"), complete=True, dir_name=skill_dir.name
    )

    assert parsed is not None
    assert diagnostics == []
    assert spec_diagnostics(path, parsed, skill_dir) == []


def test_discovering_only_the_bundled_skills_does_not_load_the_validator(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from agent_ls.instructions.agent_context import bundled_skills_dir\n"
        "from agent_ls.instructions.skills import discover_skills\n"
        f"root = Path({str(tmp_path)!r})\n"
        "found = discover_skills(workspace_root=root, project_root=root, focus_dir=None, home=None,\n"
        "                        user_config_dir=None, bundled_dir=bundled_skills_dir())\n"
        "assert len(found.skills) >= 4 and not found.diagnostics, found\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('skills_ref', 'strictyaml')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert done.stdout.strip() == "[]"
