"""``agent-ls trace show [ID]`` and ``agent-ls trace html [ID] [-o FILE]`` (docs/sessions.md, "Reading a
trajectory"): read one stored session of ``--workspace`` (default: the current folder; ID default: its
most recently written session) and print its timeline, or write its HTML page.

Exit codes: 0 done, 2 no such session, an unreadable one, or a page that cannot be written (one line on
stderr saying which).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from agent_ls.sessions.store import SessionFormatError, SessionNotFound, SessionStore
from agent_ls.sessions.trace import load_trace
from agent_ls.sessions.trace_html import trace_html
from agent_ls.sessions.trace_text import trace_text

EXIT_DONE, EXIT_USAGE = 0, 2


def trace_main(
    action: str,
    session_id: str | None,
    workspace: Path,
    output: Path | None,
    environ: Mapping[str, str] = os.environ,
) -> int:
    """Run ``trace show`` (``action="show"``) or ``trace html``; returns the exit code.

    The page goes to ``output``, by default ``agent-ls-trace-<id>.html`` in the current folder, written
    ``0600`` (it holds the session's texts); its path is printed on stderr."""
    if not workspace.is_dir():
        print(f"agent-ls: workspace {workspace} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    store = SessionStore.from_environ(environ)
    try:
        trace = load_trace(store, workspace.resolve(), session_id)
    except (SessionNotFound, SessionFormatError) as exc:
        print(f"agent-ls: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if action == "show":
        sys.stdout.write(trace_text(trace))
        return EXIT_DONE
    target = output or Path(f"agent-ls-trace-{trace.session_id}.html")
    try:
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as page:
            page.write(trace_html(trace))
    except OSError as exc:
        print(f"agent-ls: cannot write {target}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"agent-ls: wrote {target}", file=sys.stderr)
    return EXIT_DONE
