"""Record (or record again) the fixtures of the replayed regression tests (docs/replay-format.md).

    .venv/bin/python tests/replay/record.py                  # every case, with its script.json
    .venv/bin/python tests/replay/record.py demo-mean-bug    # one case
    .venv/bin/python tests/replay/record.py NAME --model openai/gpt-4.1   # against a real model

Each case folder (``tests/replay/cases/NAME``) is an evaluation task (docs/evals.md: ``task.toml``,
``repo/``) with the ``script.json`` its run is recorded with by default. The run is ``agent-ls run
--record NAME/session.jsonl`` in a temporary copy of ``repo/``, with an empty user config, home and state
dir, so nothing of the machine's own configuration enters the recording. Record again when a change to
the harness changes what it sends (the replay test says where), and review the fixture's diff: it is the
change to the prompt, the tools or the tool results the model will see.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

CASES = Path(__file__).resolve().parent / "cases"


def isolated_environment(temp: Path) -> dict[str, str]:
    """The environment of a recorded or replayed run: no ``AGENT_LS_*`` or provider variables of ours, and
    an empty home, user config and state dir under ``temp``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_", "ANTHROPIC_"))}
    for name in ("home", "config", "state", "tmp"):
        (temp / name).mkdir(exist_ok=True)
    env |= {
        "HOME": str(temp / "home"),
        "XDG_CONFIG_HOME": str(temp / "home" / ".config"),
        "AGENT_LS_CONFIG_DIR": str(temp / "config"),
        "AGENT_LS_STATE_DIR": str(temp / "state"),
        "TMPDIR": str(temp / "tmp"),
    }
    return env


def run_case(
    case: Path, workspace: Path, env: dict[str, str], model: str, *extra: str, task: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``agent-ls run`` of ``case``'s task (or ``task``) in ``workspace`` (a copy of its ``repo/``)."""
    spec = tomllib.loads((case / "task.toml").read_text(encoding="utf-8"))
    args = ["--model", model, "--workspace", str(workspace), "--yes", "--max-turns", str(spec["max_turns"])]
    return subprocess.run(
        [sys.executable, "-m", "agent_ls", "run", *args, *extra, task or spec["prompt"]],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


def record(case: Path, model: str | None) -> int:
    with tempfile.TemporaryDirectory(prefix="agent-ls-record-") as scratch:
        temp = Path(scratch)
        workspace = temp / "ws"
        shutil.copytree(case / "repo", workspace, symlinks=True)
        chosen = model or f"replay:{case / 'script.json'}"
        done = run_case(
            case, workspace, isolated_environment(temp), chosen, "--record", str(case / "session.jsonl")
        )
    print(f"{case.name}: exit {done.returncode}", file=sys.stderr)
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
    return done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    parser.add_argument("--model", help="record against this model instead of each case's script.json")
    args = parser.parse_args()
    names = args.cases or sorted(p.name for p in CASES.iterdir() if (p / "task.toml").is_file())
    return max((record(CASES / name, args.model) for name in names), default=0)


if __name__ == "__main__":
    sys.exit(main())
