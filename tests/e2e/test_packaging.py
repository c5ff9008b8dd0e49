"""The wheel: built from this checkout, installed into a fresh venv, ``agent-ls demo`` runs from it.

This proves package data (the demo sample, the replay script, the bundled skills) is found through
importlib.resources outside the source tree. It downloads dependencies from the package index
(allowed; cached by pip after the first run).
"""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_installs_and_runs_the_demo(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(REPO)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = dist.glob("agent_ls-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "agent_ls/bundled_skills/code-review/SKILL.md" in names
    assert "agent_ls/demo/sample/stats.py" in names and "agent_ls/demo/script.json" in names

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    install = subprocess.run(
        [str(bin_dir / "pip"), "install", "-q", "--disable-pip-version-check", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr
    demo = subprocess.run(
        [str(bin_dir / "agent-ls"), "demo"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "4 passed" in demo.stdout and "agent-ls demo: done" in demo.stdout
    skills = subprocess.run(
        [
            str(bin_dir / "python"),
            "-c",
            "import importlib.resources as r;"
            " print((r.files('agent_ls') / 'bundled_skills' / 'code-review').is_dir())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert skills.stdout.strip() == "True"
