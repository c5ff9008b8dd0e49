"""``agent-ls instructions`` and ``agent-ls skills``: what the agent would load, so a user can check it.

``instructions [FILE] [--workspace DIR] [--json]`` prints the AGENTS.md chain that applies to FILE (the
workspace root when left out): order, path, scope, bytes kept of bytes, truncation, and each import resolved
or refused. ``skills [--workspace DIR] [--file FILE] [--json]`` prints every skill found: name, source,
whether the model may invoke it, path, description, and diagnostics; then the SKILL.md files not loaded and
why. ``--json`` prints the same data as the ``agent.instructions`` / ``agent.listSkills`` commands.

Exit codes: 0, or 1 when a problem of severity ``error`` was found (a skill skipped, an import refused), so
CI can lint a repository's agent files; 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from pathlib import Path

from agent_ls.config import load_config
from agent_ls.core.file_diagnostics import FileDiagnostic
from agent_ls.instructions.agent_context import AgentContext, load_agent_context, marker_above
from agent_ls.settings import EnvSnapshot

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2


def main(args: argparse.Namespace) -> int:
    """Run ``agent-ls instructions`` or ``agent-ls skills`` (the parser lives in ``cli.py``)."""
    try:
        return instructions_main(args) if args.command == "instructions" else skills_main(args)
    except BrokenPipeError:  # `agent-ls instructions | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


def _context(workspace: Path | None, file: Path | None) -> AgentContext | str:
    root = (workspace or Path.cwd()).resolve()
    if not root.is_dir():
        return f"workspace {root} is not a directory"
    focus = file.resolve() if file is not None else None
    if focus is not None and not focus.is_relative_to(root):
        return f"{file} is not inside the workspace {root}; pass --workspace"
    env = EnvSnapshot.from_environ()
    config = load_config(env, root)
    above = marker_above(root, config)
    if above is not None and workspace is None:
        print(
            f"agent-ls: note: {above} holds a project marker; its AGENTS.md files and skills apply only "
            f"with --workspace {above}",
            file=sys.stderr,
        )
    return load_agent_context(workspace_root=root, focus=focus, config=config, env=env)


def instructions_main(args: argparse.Namespace) -> int:
    context = _context(args.workspace, args.file)
    if isinstance(context, str):
        print(f"agent-ls: {context}", file=sys.stderr)
        return EXIT_USAGE
    chain = context.chain
    assert chain is not None
    if args.json:
        print(json.dumps(chain.wire(), indent=2, ensure_ascii=False))
        return _exit(chain.diagnostics)
    print(f"project root: {chain.project_root}")
    print(f"focus: {chain.focus_dir}")
    print(f"budget: {chain.total_bytes:,} of {chain.budget_bytes:,} bytes used")
    if not chain.files:
        print("no instruction file applies")
    for order, file in enumerate(chain.files, 1):
        cut = f", truncated: {file.kept_bytes:,} of {file.size_bytes:,} bytes" if file.truncated else ""
        print(f"{order}. {file.label} ({file.kind}, scope {file.scope}) {file.kept_bytes:,} bytes{cut}")
        if file.path != file.real_path:
            print(f"   → {file.real_path}")
        for record in file.imports:
            where = f"line {record.line + 1}"
            if record.importer != file.path:
                where += f" of {record.importer.name}"
            said = (
                record.message
                if record.message.startswith(record.status)
                else f"{record.status}: {record.message}"
            )
            print(f"   @{record.spec} ({where}): {said}")
    _print_diagnostics(chain.diagnostics)
    return _exit(chain.diagnostics)


def skills_main(args: argparse.Namespace) -> int:
    context = _context(args.workspace, args.file)
    if isinstance(context, str):
        print(f"agent-ls: {context}", file=sys.stderr)
        return EXIT_USAGE
    found = context.skills
    if args.json:
        print(json.dumps(found.wire(), indent=2, ensure_ascii=False))
        return _exit(found.diagnostics)
    if not found.skills:
        print("no skills found")
    for skill in found.skills:
        who = "model and user" if skill.model_invocable else "user only (/" + skill.name + ")"
        print(f"{skill.name} [{skill.source}, {who}] {skill.path}")
        print(textwrap.indent(textwrap.fill(" ".join(skill.description.split()), 100), "    "))
        if skill.allowed_tools:
            print(f"    allowed-tools (shown only, never widens the policy): {' '.join(skill.allowed_tools)}")
    for skill in found.shadowed:
        print(f"(shadowed) {skill.name} [{skill.source}] {skill.path}")
    _print_diagnostics(found.diagnostics)
    return _exit(found.diagnostics)


def _print_diagnostics(diagnostics: tuple[FileDiagnostic, ...]) -> None:
    if diagnostics:
        print("\ndiagnostics:")
    for diagnostic in diagnostics:
        print(f"  {diagnostic}")


def _exit(diagnostics: tuple[FileDiagnostic, ...]) -> int:
    return EXIT_PROBLEMS if any(d.severity == "error" for d in diagnostics) else EXIT_OK
