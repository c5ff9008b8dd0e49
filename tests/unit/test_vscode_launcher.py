"""The VS Code extension's launcher (clients/vscode/bundled/tool/launch_server.py), run as the extension does.

The interpreter is this one with ``-S`` (no site-packages, so no installed agent-ls) unless a test wants
the installed one; the bundle is a folder laid out as bundle_python.py lays it out, with a stand-in
``agent_ls`` package that reports what it was given.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

LAUNCHER = Path(__file__).resolve().parents[2] / "clients/vscode/bundled/tool/launch_server.py"
HERE_TAG = "cp{}{}".format(*sys.version_info[:2])
HERE_VERSION = "{}.{}".format(*sys.version_info[:2])
STAND_IN = (
    "import json, os, sys\n"
    "print(json.dumps({'argv': sys.argv, 'path': sys.path[:2], 'PATH': os.environ['PATH']}))\n"
)


def _extension(tmp_path: Path, pythons: list[str] | None) -> Path:
    tool = tmp_path / "ext/bundled/tool"
    tool.mkdir(parents=True)
    shutil.copy(LAUNCHER, tool)
    libs = tmp_path / "ext/bundled/libs"
    if pythons is not None:
        (libs / "common/agent_ls").mkdir(parents=True)
        (libs / "common/agent_ls/__init__.py").write_text("")
        (libs / "common/agent_ls/__main__.py").write_text(STAND_IN)
        (libs / "common/bin").mkdir()
        (libs / HERE_TAG).mkdir()
        (libs / "manifest.json").write_text(json.dumps({"target": "linux-x64", "pythons": pythons}))
    return tool / "launch_server.py"


def _launch(launcher: Path, *python_flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *python_flags, str(launcher), "serve"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_without_an_installed_agent_ls_the_bundle_runs_with_this_pythons_wheels_first(tmp_path: Path) -> None:
    launcher = _extension(tmp_path, [HERE_VERSION])
    done = _launch(launcher, "-S")
    libs = launcher.parents[1] / "libs"
    assert (done.returncode, done.stderr) == (0, "")
    seen = json.loads(done.stdout)
    assert seen["argv"][1:] == ["serve"]
    assert seen["path"] == [str(libs / HERE_TAG), str(libs / "common")]
    assert seen["PATH"].split(":")[0] == str(libs / "common/bin")


def test_a_python_version_the_bundle_lacks_is_named_with_the_bundled_ones(tmp_path: Path) -> None:
    done = _launch(_extension(tmp_path, ["3.98", "3.99"]), "-S")
    version = "{}.{}.{}".format(*sys.version_info[:3])
    assert (done.returncode, done.stdout) == (3, "")
    assert done.stderr == f"agent-ls-launcher: no-wheels {version} {sys.executable} bundled=3.98,3.99\n"


def test_the_universal_package_without_a_bundle_says_so(tmp_path: Path) -> None:
    done = _launch(_extension(tmp_path, None), "-S")
    assert (done.returncode, done.stderr.split(" ")[:2]) == (3, ["agent-ls-launcher:", "no-bundle"])


def test_an_installed_agent_ls_wins_over_the_bundle(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(_extension(tmp_path, [HERE_VERSION])), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("agent-ls ")
