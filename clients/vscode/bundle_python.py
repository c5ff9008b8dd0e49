"""Puts agent-ls and its Python dependencies into ``bundled/libs`` for one platform-specific .vsix.

Follows Microsoft's vscode-python-tools-extension-template (``noxfile.py`` ``_install_bundle``:
``pip install --target bundled/libs --implementation cp --only-binary=:all:``), per Python version,
because the native wheels (pydantic-core, rpds-py, PyYAML, mercurial, charset-normalizer, watchfiles
as cp3XX; tree-sitter, tree-sitter-bash as abi3; ripgrep's static binary) are built per CPython ABI
and platform. Order:

1. ``pip wheel --no-deps`` builds agent-ls's own wheel from the checkout.
2. For each bundled Python, ``pip download --only-binary=:all:`` resolves agent-ls's dependencies
   for that CPython version and the target's platform tags (from PyPI only, nothing is compiled).
3. A wheel file resolved for every bundled Python goes once into ``libs/common``; the others into
   ``libs/cp3XX`` (``pip install --target --no-deps``).
4. Console scripts are dropped (their ``#!`` names this machine's Python); ``bin/rg`` (the ripgrep
   wheel's binary) stays. Of Mercurial only ``mercurial.cext.bdiff`` is kept, the one module agent-ls
   imports (``workspace/line_diff.py``): the rest is 35 MB per Python version. ``libs/manifest.json``
   records the target and the Pythons, which ``bundled/tool/launch_server.py`` checks first.

Usage: ``python bundle_python.py --target linux-x64 [--python 3.11 --python 3.12 ...]``. Needs pip
and network access to the package registry only. The .vsix is then ``vsce package --target <t>``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
LIBS = HERE / "bundled" / "libs"
DEFAULT_PYTHONS = ("3.11", "3.12", "3.13", "3.14")


def _manylinux(arch: str) -> list[str]:
    # VS Code itself needs glibc >= 2.28 on Linux (since 1.86), so every manylinux wheel up to 2_28 fits.
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(28, 4, -1)]
    return [*tags, f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}"]


def _macos(arch: str, oldest: int) -> list[str]:
    return [f"macosx_{major}_0_{arch}" for major in range(15, oldest - 1, -1)] + [
        f"macosx_{major}_0_universal2" for major in range(15, 10, -1)
    ]


# vsce --target name -> pip --platform tags, most specific first. linux-x64 is built and tested in CI;
# the others resolve the same way but are not run there.
TARGETS: dict[str, list[str]] = {
    "linux-x64": _manylinux("x86_64"),
    "linux-arm64": _manylinux("aarch64"),
    "alpine-x64": ["musllinux_1_2_x86_64", "musllinux_1_1_x86_64"],
    "alpine-arm64": ["musllinux_1_2_aarch64", "musllinux_1_1_aarch64"],
    "darwin-x64": [*_macos("x86_64", 10), "macosx_10_9_x86_64", "macosx_10_12_x86_64", "macosx_10_13_x86_64"],
    "darwin-arm64": _macos("arm64", 11),
    "win32-x64": ["win_amd64"],
    "win32-arm64": ["win_arm64"],
}


def _pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
    print("+", " ".join(command), file=sys.stderr, flush=True)
    subprocess.run(command, check=True)


def _platform_args(target: str, python: str) -> list[str]:
    args = ["--only-binary=:all:", "--implementation", "cp", "--python-version", python]
    for tag in TARGETS[target]:
        args += ["--platform", tag]
    return args


def bundle(target: str, pythons: list[str]) -> None:
    """Fills ``bundled/libs`` (removed first) for ``target`` and the ``major.minor`` versions in ``pythons``.

    Raises:
        subprocess.CalledProcessError: pip failed (a dependency has no wheel for a version or platform).
    """
    shutil.rmtree(LIBS, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="agent-ls-bundle-") as scratch:
        own = Path(scratch) / "own"
        _pip("wheel", "--no-deps", "--wheel-dir", str(own), str(REPO))
        (wheel,) = own.glob("agent_ls-*.whl")
        resolved: dict[str, set[str]] = {}
        for python in pythons:
            house = Path(scratch) / python
            _pip("download", "--dest", str(house), *_platform_args(target, python), str(wheel))
            resolved[python] = {path.name for path in house.glob("*.whl")}
        common = set.intersection(*resolved.values())
        _install(
            LIBS / "common",
            [Path(scratch) / pythons[0] / name for name in sorted(common)],
            target,
            pythons[0],
        )
        for python in pythons:
            own_wheels = [Path(scratch) / python / name for name in sorted(resolved[python] - common)]
            _install(LIBS / ("cp" + python.replace(".", "")), own_wheels, target, python)
    _prune(LIBS)
    manifest = {"target": target, "pythons": pythons}
    (LIBS / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _install(folder: Path, wheels: list[Path], target: str, python: str) -> None:
    if wheels:
        _pip(
            "install",
            "--target",
            str(folder),
            "--no-deps",
            "--no-compile",
            *_platform_args(target, python),
            *map(str, wheels),
        )


def _prune(libs: Path) -> None:
    for scripts in libs.glob("*/bin"):
        for script in scripts.iterdir():
            if script.name not in {"rg", "rg.exe"}:
                script.unlink()
    for cache in list(libs.rglob("__pycache__")):
        shutil.rmtree(cache)
    for folder in libs.iterdir():
        _keep_only_bdiff(folder)


def _keep_only_bdiff(folder: Path) -> None:
    for unused in ("hgext", "hgext3rd", "share"):
        shutil.rmtree(folder / unused, ignore_errors=True)
    mercurial = folder / "mercurial"
    if not mercurial.is_dir():
        return
    for path in sorted(mercurial.rglob("*"), reverse=True):
        relative = path.relative_to(mercurial).as_posix()
        kept = relative in {"__init__.py", "cext", "cext/__init__.py"} or relative.startswith("cext/bdiff.")
        if not kept:
            shutil.rmtree(path) if path.is_dir() else path.unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True, choices=sorted(TARGETS))
    parser.add_argument(
        "--python",
        action="append",
        help=f"major.minor to bundle (repeatable; default {' '.join(DEFAULT_PYTHONS)})",
    )
    args = parser.parse_args()
    bundle(args.target, args.python or list(DEFAULT_PYTHONS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
