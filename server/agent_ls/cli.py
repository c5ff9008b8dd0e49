"""Command line: ``agent-ls serve | acp | run | demo | policy check | doctor | eval``.

- ``serve``: the language server on stdio (imports pygls).
- ``acp``: the Agent Client Protocol agent on stdio, for Zed, JetBrains and other ACP clients (imports the
  ACP SDK; docs/acp.md).
- ``run "TASK"``: the same core, headless. The transcript goes to stderr, the proposal's unified diff
  to stdout; ``--apply`` writes it to disk. It must not import pygls or lsprotocol (cold-start budget,
  DESIGN.md), so every import of the LSP layer below is local to its subcommand.
- ``demo``: copies the bundled sample project and drives ``agent-ls serve`` with a real LSP client.
- ``policy check [--workspace DIR] [--json] -- 'COMMAND'`` or ``policy check --path PATH [--write]``:
  the permission verdict the agent would get, the commands parsed out of COMMAND (normalized) with
  each one's verdict, and the rule that decided; built from the user config
  (``$AGENT_LS_CONFIG_DIR`` or the platform's config directory) and the workspace's ``agent-ls.toml``,
  or the built-in rules when there are none (editor settings do not apply). Config problems go to
  stderr.
- ``doctor``: ``agent_ls.doctor.main`` (sandbox, ripgrep, model reachability, config).
- ``trace show [ID]`` / ``trace html [ID] [-o FILE]``: a stored session's timeline, or its HTML page
  (``sessions.trace_cli``).
- ``apply [FILE...]`` / ``discard [FILE...]`` (``--session ID``, default the latest): all or part of a
  stored session's proposal (``sessions.pending``); exit 0 done, 1 refused (a stale file), 2 usage error.
- ``eval SUITE``: ``agent_ls.evals.command`` (pass@1, pass@k and the rest over a suite of tasks,
  docs/evals.md).

Whatever a subcommand prints to a terminal goes through ``terminal_text`` (control characters shown
escaped; stderr always, stdout when it is a terminal).

Exit codes of ``run``: 0 done, 1 stopped or failed (a run whose model claims done while an acceptance
check, ``--check``, fails is stopped), 2 usage error (including no usable model),
130 cancelled (Ctrl-C); SIGTERM and SIGHUP cancel it the same way (the shadow copy is removed), with
exit code 143 and 129. Of ``policy check``: 0 allow, 10 ask, 20 deny, 2 usage error.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from agent_ls import __version__
from agent_ls.evals.arguments import add_eval_parser  # argparse only
from agent_ls.terminal_text import guard_std_streams

EXIT_DONE, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130
MAX_STDIN_TASK_CHARS = 1_000_000
"""The longest task ``agent-ls run -`` reads from standard input."""
EXIT_BY_VERDICT = {"allow": 0, "ask": 10, "deny": 20}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-ls", description="A coding agent hosted in a language server."
    )
    parser.add_argument("--version", action="version", version=f"agent-ls {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("serve", help="run the language server on stdio (for editors)")
    sub.add_parser("acp", help="run the Agent Client Protocol agent on stdio (Zed, JetBrains; docs/acp.md)")

    run = sub.add_parser("run", help="run a task headless; transcript on stderr, diff on stdout")
    run.add_argument("task", help="what the agent should do; - reads it from standard input")
    run.add_argument("--model", help="model string: <provider>/<model> or replay:<path>")
    run.add_argument("--workspace", type=Path, default=Path.cwd(), help="workspace root (default: cwd)")
    run.add_argument("--max-turns", type=int, default=None, help="stop after N turns (default 15)")
    run.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="stop once the run's model calls used N tokens (in + out)",
    )
    run.add_argument(
        "--max-cost",
        type=float,
        default=None,
        help="stop once the run cost USD dollars (the provider's prices)",
    )
    run.add_argument("--yes", action="store_true", help="answer 'allow once' to every permission question")
    run.add_argument("--apply", action="store_true", help="write the proposal to disk when the run is done")
    run.add_argument(
        "--plan",
        action="store_true",
        help='plan mode: read-only tools, edits refused; ends with a plan (then: run --continue "go")',
    )
    run.add_argument(
        "--check",
        dest="checks",
        action="append",
        default=[],
        metavar="CMD",
        help="an acceptance check, run in the proposal when the model says it is done (repeatable)",
    )
    run.add_argument(
        "--resource",
        dest="resources",
        action="append",
        default=[],
        metavar="URI",
        help="attach an MCP resource (<server>:<uri>) to the task (repeatable; docs/mcp.md)",
    )
    run.add_argument("--session", metavar="ID", default=None, help="continue the stored session ID")
    run.add_argument(
        "--continue",
        dest="continue_latest",
        action="store_true",
        help="continue the latest session of the workspace (with --apply: its whole proposal)",
    )
    run.add_argument(
        "--file", type=Path, default=None, help="the file in focus (its AGENTS.md chain applies)"
    )
    run.add_argument(
        "--debug",
        action="store_true",
        help="print each model request on stderr before it is sent (key redacted)",
    )
    run.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="FILE",
        help="save the session, every model call whole, to FILE (redacted): replay it with "
        "--model replay:FILE (docs/replay-format.md)",
    )

    demo = sub.add_parser("demo", help="fix a bug in a sample project through a real LSP session")
    demo.add_argument("--model", help="use a real model instead of the bundled replay script")
    demo.add_argument("--keep", action="store_true", help="keep the temporary sample project")

    policy = sub.add_parser("policy", help="debug permission rules").add_subparsers(
        dest="policy", required=True
    )
    check = policy.add_parser(
        "check",
        help="the verdict for a shell command or a file access; exit 0 allow, 10 ask, 20 deny",
        description="Print the permission verdict the agent would get. Exit 0 allow, 10 ask, 20 deny.",
    )
    check.add_argument(
        "shell_command", nargs="?", metavar="COMMAND", help="a shell command (put it after --)"
    )
    check.add_argument("--path", help="judge a file access instead of a command")
    check.add_argument("--write", action="store_true", help="with --path: an edit instead of a read")
    check.add_argument("--workspace", type=Path, default=Path.cwd(), help="workspace root (default: cwd)")
    check.add_argument("--json", action="store_true", help="print one JSON object")

    # Listed for --help only: main() hands everything after "doctor" to agent_ls.doctor.main, which
    # parses its own options (argparse's REMAINDER drops a leading "--json").
    sub.add_parser(
        "doctor", help="check the sandbox, ripgrep, the model, the config and the MCP servers", add_help=False
    )
    instructions = sub.add_parser("instructions", help="print the AGENTS.md chain that applies to a file")
    instructions.add_argument("file", nargs="?", type=Path, help="the file in focus (default: the workspace)")
    instructions.add_argument("--workspace", type=Path, default=None, help="workspace root (default: cwd)")
    instructions.add_argument("--json", action="store_true", help="print one JSON object")
    skills = sub.add_parser("skills", help="list the skills found, with their diagnostics")
    skills.add_argument("--workspace", type=Path, default=None, help="workspace root (default: cwd)")
    skills.add_argument(
        "--file", type=Path, default=None, help="the file in focus (its .agents/skills count)"
    )
    skills.add_argument("--json", action="store_true", help="print one JSON object")
    stored = sub.add_parser("sessions", help="list the stored sessions of a workspace, newest first")
    stored.add_argument("--workspace", type=Path, default=Path.cwd(), help="workspace root (default: cwd)")
    stored.add_argument("--json", action="store_true", help="print one JSON object")
    trace = sub.add_parser("trace", help="read a stored session's trajectory").add_subparsers(
        dest="trace_action", required=True
    )
    for action, does in (("show", "print its timeline"), ("html", "write it as one HTML page")):
        shown = trace.add_parser(action, help=does)
        shown.add_argument("session", nargs="?", metavar="ID", help="the session (default: the latest)")
        shown.add_argument("--workspace", type=Path, default=Path.cwd(), help="workspace root (default: cwd)")
        if action == "html":
            shown.add_argument("-o", "--output", type=Path, help="the page (default: agent-ls-trace-ID.html)")
    for verb, does in (("apply", "write"), ("discard", "drop")):
        pending = sub.add_parser(
            verb, help=f"{does} a stored session's pending proposal: all, or the files named"
        )
        pending.add_argument(
            "files", nargs="*", type=Path, metavar="FILE", help="only these files of the proposal"
        )
        pending.add_argument(
            "--session", metavar="ID", default=None, help="the session (default: the latest)"
        )
        pending.add_argument(
            "--workspace", type=Path, default=Path.cwd(), help="workspace root (default: cwd)"
        )
    add_eval_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The ``agent-ls`` command; returns its exit code. A reader that goes away (``agent-ls policy
    check ... | head -1``) ends it quietly with 141 (128 + SIGPIPE), as shell tools do."""
    try:
        code = _main(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the flush at exit must not fail again
        return 128 + 13


def _main(argv: Sequence[str] | None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    # Every subcommand's terminal output shows control characters escaped; serve's stdout is JSON-RPC.
    guard_std_streams(stdout=given[:1] not in (["serve"], ["acp"]))
    if given[:1] == ["doctor"]:
        return _doctor(given[1:])
    args = _parser().parse_args(given)
    if args.command in ("serve", "acp", "run", "eval"):
        from agent_ls.key_handoff import protect_keys

        # Before asyncio and the layers are imported: a re-execution pays only for what is above.
        protect_keys()  # may re-execute this process (same pid) without the keys in its environment
    if args.command == "serve":
        from agent_ls.lsp.server import serve_stdio

        serve_stdio()
        return EXIT_DONE
    if args.command == "acp":
        from agent_ls.acp.server import serve_acp

        serve_acp()
        return EXIT_DONE
    if args.command == "demo":
        from agent_ls.demo.runner import run_demo

        ended_by = _end_like_ctrl_c()
        try:
            return run_demo(model=args.model, keep=args.keep)
        except KeyboardInterrupt:
            print("agent-ls: cancelled", file=sys.stderr)
            return 128 + ended_by[0] if ended_by else EXIT_CANCELLED
    if args.command == "policy":
        return _policy_check(args)
    if args.command in ("instructions", "skills"):
        from agent_ls import inspect_cli

        return inspect_cli.main(args)
    if args.command == "sessions":
        return _sessions(args)
    if args.command == "trace":
        from agent_ls.sessions.trace_cli import trace_main

        output = getattr(args, "output", None)
        return trace_main(args.trace_action, args.session, args.workspace, output)
    if args.command in ("apply", "discard"):
        return _settle_pending(args)
    if args.command == "eval":
        from agent_ls.evals.command import main as run_eval

        return run_eval(args)
    import asyncio

    from agent_ls.headless import run_headless

    if args.session is not None and args.continue_latest:
        print("agent-ls: give --session ID or --continue, not both", file=sys.stderr)
        return EXIT_USAGE

    if args.task == "-":
        args.task = sys.stdin.read(MAX_STDIN_TASK_CHARS + 1)
        if len(args.task) > MAX_STDIN_TASK_CHARS:
            print(f"agent-ls: the task on stdin is over {MAX_STDIN_TASK_CHARS:,} characters", file=sys.stderr)
            return EXIT_USAGE
    if args.max_turns is not None and args.max_turns < 1:
        print("agent-ls: --max-turns must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    for flag, value in (("--max-tokens", args.max_tokens), ("--max-cost", args.max_cost)):
        if value is not None and not (math.isfinite(value) and value > 0):  # nan > 0 is False, inf is not
            print(f"agent-ls: {flag} must be above 0 and finite, not {value}", file=sys.stderr)
            return EXIT_USAGE
    if not args.task.strip():
        print("agent-ls: the task is empty; say what the agent should do", file=sys.stderr)
        return EXIT_USAGE
    # A plan run edits nothing and runs no checks (docs/modes.md): both flags belong to the run that
    # implements the plan, so taking them here would apply an earlier run's proposal or drop the checks.
    if args.plan and (args.apply or args.checks):
        flag = "--apply" if args.apply else "--check"
        print(
            f"agent-ls: {flag} does not go with --plan: a plan run edits nothing and runs no checks; "
            f'give it to the run that implements the plan (agent-ls run --continue {flag} … "go")',
            file=sys.stderr,
        )
        return EXIT_USAGE
    if any(not check.strip() for check in args.checks):
        print("agent-ls: --check needs a command; an empty one checks nothing", file=sys.stderr)
        return EXIT_USAGE
    if not args.workspace.is_dir():
        print(f"agent-ls: workspace {args.workspace} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    file = args.file.resolve() if args.file is not None else None
    if file is not None and not file.exists():
        print(f"agent-ls: --file {args.file} does not exist", file=sys.stderr)
        return EXIT_USAGE
    if file is not None and not file.is_relative_to(args.workspace.resolve()):
        print(f"agent-ls: --file {args.file} is not inside the workspace {args.workspace}", file=sys.stderr)
        return EXIT_USAGE
    ended_by = _end_like_ctrl_c()
    try:
        code = asyncio.run(
            run_headless(
                task=args.task,
                model=args.model,
                workspace=args.workspace.resolve(),
                max_turns=args.max_turns,
                max_tokens=args.max_tokens,
                max_cost_usd=args.max_cost,
                yes=args.yes,
                apply=args.apply,
                file=file,
                session_id=args.session,
                continue_latest=args.continue_latest,
                debug=args.debug,
                mode="plan" if args.plan else "default",
                checks=args.checks,
                resources=args.resources,
                record=args.record.absolute() if args.record is not None else None,
            )
        )
    except KeyboardInterrupt:
        print("agent-ls: cancelled", file=sys.stderr)
        code = EXIT_CANCELLED
    return 128 + ended_by[0] if ended_by and code == EXIT_CANCELLED else code


def _sessions(args: argparse.Namespace) -> int:
    """``agent-ls sessions``: the stored sessions of the workspace, newest first (docs/sessions.md)."""
    from agent_ls.sessions.continuation import sessions_text, summaries
    from agent_ls.sessions.store import SessionStore

    if not args.workspace.is_dir():
        print(f"agent-ls: workspace {args.workspace} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    store = SessionStore.from_environ(os.environ)
    notes: list[str] = []  # a file that cannot be listed (a newer format): said, never silently left out
    print(sessions_text(summaries(store, [args.workspace.resolve()], notes=notes), as_json=args.json))
    for note in notes:
        print(f"agent-ls: {note}", file=sys.stderr)
    return EXIT_DONE


def _settle_pending(args: argparse.Namespace) -> int:
    """``agent-ls apply|discard [FILE...] [--session ID]``: all or part of a stored session's proposal
    (``sessions.pending``; docs/sessions.md). Exit 0 done, 1 the apply was refused, 2 a usage error."""
    from agent_ls.sessions.continuation import find_saved
    from agent_ls.sessions.pending import NotInProposal, chosen_paths, settle
    from agent_ls.sessions.run_lock import RunLock, SessionBusy
    from agent_ls.sessions.store import SessionFormatError, SessionNotFound, SessionStore
    from agent_ls.workspace.apply import recover_interrupted_apply

    if not args.workspace.is_dir():
        print(f"agent-ls: workspace {args.workspace} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    root = args.workspace.resolve()
    if args.command == "apply" and (recovered := recover_interrupted_apply(root)) is not None:
        print(f"agent-ls: {recovered}", file=sys.stderr)
    store = SessionStore.from_environ(os.environ)
    try:
        saved = find_saved(store, root, session_id=args.session, latest=args.session is None)
        assert saved is not None  # asked for one
        paths = chosen_paths(root, saved, args.files)
    except (SessionNotFound, SessionFormatError, NotInProposal) as exc:
        print(f"agent-ls: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not paths:
        print(f"agent-ls: session {saved.session_id} has no pending proposal", file=sys.stderr)
        return EXIT_FAILED
    lock = RunLock(store.path(root, saved.session_id))
    try:  # not while a run of the session (an editor's, another terminal's) may extend the proposal
        lock.acquire()
    except SessionBusy as exc:
        print(f"agent-ls: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        settled = settle(
            store, root, saved, paths, apply=args.command == "apply", edit_refusal=_edit_refusal(root)
        )
    finally:
        lock.release()
    if settled.message:
        print(f"agent-ls: {settled.message}", file=sys.stderr)
    if not settled.ok:
        return EXIT_FAILED
    done = f"{'applied' if args.command == 'apply' else 'discarded'} {', '.join(settled.done)}"
    still = f"; still pending: {', '.join(settled.pending)}" if settled.pending else ""
    print(f"agent-ls: session {saved.session_id}: {done}{still}", file=sys.stderr)
    return EXIT_DONE


def _edit_refusal(root: Path) -> Callable[[str], str | None]:
    """The edit rules of ``root`` (its config files' and the built-in ones) as ``apply`` judges a stored
    proposal's files again (``policy.apply_check``)."""
    from agent_ls.assembly import build_policy
    from agent_ls.config import load_config
    from agent_ls.policy.apply_check import edit_refusal
    from agent_ls.settings import EnvSnapshot

    return edit_refusal(build_policy(root, load_config(EnvSnapshot.from_environ(), root)))


def _end_like_ctrl_c() -> list[int]:
    """Make SIGTERM and SIGHUP do what Ctrl-C does (cancel the run, so its ``finally`` blocks remove the
    shadow copy); returns the list where the signals received are appended, first first.

    Ctrl-C's handler is looked up when the signal comes: inside ``asyncio.run`` it cancels the main task,
    outside it raises ``KeyboardInterrupt``. A SIGHUP that ``nohup`` set to be ignored stays ignored.
    """
    received: list[int] = []

    def as_ctrl_c(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:  # SIGINT ignored (a background job of a script): end all the same
            signal.default_int_handler(signal.SIGINT, frame)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, as_ctrl_c)
    return received


def _doctor(argv: list[str]) -> int:
    """``agent-ls doctor ...``: ``agent_ls.doctor.main(argv)``, or a usage error when it is not built in."""
    try:
        doctor = importlib.import_module("agent_ls.doctor")
    except ModuleNotFoundError as exc:
        if exc.name != "agent_ls.doctor":
            raise
        print("agent-ls: doctor is not available in this build", file=sys.stderr)
        return EXIT_USAGE
    result: int = doctor.main(argv)
    return result


def _policy_check(args: argparse.Namespace) -> int:
    """``agent-ls policy check``: print a decision; the exit code is its verdict (``EXIT_BY_VERDICT``)."""
    from agent_ls.assembly import build_policy
    from agent_ls.config import load_config
    from agent_ls.settings import EnvSnapshot
    from agent_ls.workspace.sandbox import unsandboxed_reason

    if (args.shell_command is None) == (args.path is None):
        print("agent-ls: give either a command (after --) or --path PATH", file=sys.stderr)
        return EXIT_USAGE
    if args.write and args.path is None:
        print("agent-ls: --write goes with --path", file=sys.stderr)
        return EXIT_USAGE
    if not args.workspace.is_dir():
        print(f"agent-ls: workspace {args.workspace} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    config = load_config(EnvSnapshot.from_environ(), args.workspace)
    for diagnostic in config.diagnostics:
        print(f"agent-ls: {diagnostic}", file=sys.stderr)
    unsandboxed = unsandboxed_reason(config.permissions.sandbox_enabled)
    policy = build_policy(args.workspace.resolve(), config, sandboxed=not unsandboxed)
    if args.path is not None:
        decision = policy.check_access(args.path, write=args.write)
        kind = "edit" if args.write else "read"
    else:
        decision = policy.check_command(args.shell_command)
        kind = "bash"
    parts = [
        {"subject": part, "verdict": j.verdict, "rule": j.rule, "reason": j.reason}
        for part, j in zip(decision.parts, decision.judgements, strict=True)
    ]
    report: dict[str, Any] = {
        "verdict": decision.verdict,
        "rule": decision.rule,
        "reason": decision.reason,
        "kind": kind,
        "subject": decision.subject,
        "parts": parts,
        "always": [rule.text for rule in decision.always],
        "unsandboxed": unsandboxed or None,
    }
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(f"{decision.verdict}: {kind} {decision.subject}")
        print(f"  decided by: {decision.rule}")
        print(f"  reason: {decision.reason}")
        print("commands:" if kind == "bash" else "path:")
        for part in parts:
            print(f"  {part['verdict']:<5}  {part['subject']}  ({part['rule']})")
        if unsandboxed and kind == "bash":
            print(f"note: {unsandboxed}")
    return EXIT_BY_VERDICT[decision.verdict]
