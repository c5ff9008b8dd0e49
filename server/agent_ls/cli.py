"""Command line: ``agent-ls serve | run | demo``.

- ``serve``: the language server on stdio (imports pygls).
- ``run "TASK"``: the same core, headless. The transcript goes to stderr, the proposal's unified diff
  to stdout; ``--apply`` writes it to disk. It must not import pygls or lsprotocol (cold-start budget,
  DESIGN.md), so every import of the LSP layer below is local to its subcommand.
- ``demo``: copies the bundled sample project and drives ``agent-ls serve`` with a real LSP client.

Exit codes of ``run``: 0 done, 1 stopped or failed, 2 usage error (including no usable model),
130 cancelled (Ctrl-C).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from agent_ls import __version__

EXIT_DONE, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-ls", description="A coding agent hosted in a language server."
    )
    parser.add_argument("--version", action="version", version=f"agent-ls {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("serve", help="run the language server on stdio (for editors)")

    run = sub.add_parser("run", help="run a task headless; transcript on stderr, diff on stdout")
    run.add_argument("task", help="what the agent should do")
    run.add_argument("--model", help="model string: <provider>/<model> or replay:<path>")
    run.add_argument("--workspace", type=Path, default=Path.cwd(), help="workspace root (default: cwd)")
    run.add_argument("--max-turns", type=int, default=None, help="stop after N turns (default 15)")
    run.add_argument("--yes", action="store_true", help="answer 'allow once' to every permission question")
    run.add_argument("--apply", action="store_true", help="write the proposal to disk when the run is done")

    demo = sub.add_parser("demo", help="fix a bug in a sample project through a real LSP session")
    demo.add_argument("--model", help="use a real model instead of the bundled replay script")
    demo.add_argument("--keep", action="store_true", help="keep the temporary sample project")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        from agent_ls.lsp.server import serve_stdio

        serve_stdio()
        return EXIT_DONE
    if args.command == "demo":
        from agent_ls.demo.runner import run_demo

        return run_demo(model=args.model, keep=args.keep)
    from agent_ls.headless import run_headless

    if args.max_turns is not None and args.max_turns < 1:
        print("agent-ls: --max-turns must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    if not args.task.strip():
        print("agent-ls: the task is empty; say what the agent should do", file=sys.stderr)
        return EXIT_USAGE
    if not args.workspace.is_dir():
        print(f"agent-ls: workspace {args.workspace} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(
            run_headless(
                task=args.task,
                model=args.model,
                workspace=args.workspace,
                max_turns=args.max_turns,
                yes=args.yes,
                apply=args.apply,
            )
        )
    except KeyboardInterrupt:
        print("agent-ls: cancelled", file=sys.stderr)
        return EXIT_CANCELLED
