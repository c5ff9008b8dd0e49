"""Starts agent-ls for the VS Code extension: ``<python> launch_server.py serve``.

Order, following Microsoft's vscode-python-tools-extension-template (``bundled/tool/lsp_server.py``
and its ``importStrategy``):

1. A Python older than 3.11 stops here with one ``agent-ls-launcher:`` line on stderr and exit code 3.
2. An ``agent_ls`` the interpreter can already import (``pip install agent-ls`` in it) wins: it runs
   unchanged, with its own dependencies.
3. Otherwise the dependencies the .vsix carries are put first on ``sys.path``: ``../libs/common``
   (wheels that fit every bundled Python) and ``../libs/cp3XX`` (this Python's native wheels, built
   by ``clients/vscode/bundle_python.py``); ``../libs/common/bin`` (ripgrep) goes first on ``PATH``.
   A Python whose version has no bundled wheels, or a .vsix without them, stops with an
   ``agent-ls-launcher:`` line and exit code 3.

The ``agent-ls-launcher: <reason> ...`` lines are read by the extension (``src/launch.ts``), which
shows the user what to do. This file runs on whatever Python the user has, so it keeps to syntax
every Python 3 can parse up to the version check.
"""

import importlib.util
import json
import os
import runpy
import sys

MINIMUM = (3, 11)
EXIT_UNUSABLE = 3
HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = os.path.join(os.path.dirname(HERE), "libs")


def stop(reason, detail):
    sys.stderr.write("agent-ls-launcher: " + reason + " " + detail + "\n")
    sys.stderr.flush()
    sys.exit(EXIT_UNUSABLE)


def version_text():
    return "{}.{}.{}".format(*sys.version_info[:3])


def bundled_pythons():
    """The ``major.minor`` versions the .vsix has wheels for (``libs/manifest.json``), or []."""
    try:
        with open(os.path.join(LIBS, "manifest.json"), encoding="utf-8") as manifest:
            return list(json.load(manifest)["pythons"])
    except (OSError, ValueError, KeyError, TypeError):
        return []


def use_bundle():
    pythons = bundled_pythons()
    here = "{}.{}".format(*sys.version_info[:2])
    if not pythons:
        stop("no-bundle", f"{version_text()} {sys.executable}")
    if here not in pythons:
        stop("no-wheels", "{} {} bundled={}".format(version_text(), sys.executable, ",".join(pythons)))
    tag = "cp{}{}".format(*sys.version_info[:2])
    for folder in (os.path.join(LIBS, "common"), os.path.join(LIBS, tag)):  # this Python's own first
        if os.path.isdir(folder):
            sys.path.insert(0, folder)
    tools = os.path.join(LIBS, "common", "bin")
    if os.path.isdir(tools):
        os.environ["PATH"] = tools + os.pathsep + os.environ.get("PATH", os.defpath)


def main():
    if sys.version_info[:2] < MINIMUM:
        stop("too-old", f"{version_text()} {sys.executable}")
    if importlib.util.find_spec("agent_ls") is None:
        use_bundle()
    sys.argv = ["agent-ls", *sys.argv[1:]]
    runpy.run_module("agent_ls", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
