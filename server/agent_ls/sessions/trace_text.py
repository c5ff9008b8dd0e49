"""``agent-ls trace show``: a stored session as a readable timeline, one line per turn and per tool call
(docs/sessions.md, "Reading a trajectory"). Shape::

    session 2675aaf1c40d · /home/me/proj · agent-ls 0.1.0 · 2026-12-01T06:48:19.875Z
    run 1 · done: the model answered · replay:s.json
      task: change it
      turn 1 · replay:s.json · 0.3 ms · ~1,306 in / ~6 out · request 5,227 bytes sha256 4b908bf7b498
        read_file a.py · allow (read: ** (built-in)) · 6.3 ms · print(1)
      compaction auto, summarized: 12,000 → 3,000 tokens
      answer: Done.
      usage: ~4,243 in / ~26 out
    proposal (pending), 1 file:
      a.py  +1 -1

Text only: the CLI's stdout guard escapes control characters (``terminal_text``).
"""

from __future__ import annotations

from agent_ls.sessions.trace import Note, ToolStep, Trace, Turn, one_line, seconds_text, tokens_text


def trace_text(trace: Trace) -> str:
    """The timeline of ``trace`` (module docstring), ending with a newline."""
    lines = [
        f"session {trace.session_id} · {trace.workspace} · agent-ls {trace.harness or '?'} · "
        f"{trace.created_at}"
    ]
    if trace.skipped:
        lines.append(f"({trace.skipped} unreadable line(s) skipped)")
    for run in trace.runs:
        said = f"{run.status}: {run.reason}" if run.reason else run.status
        lines.append(f"run {run.number} · {said} · {run.model or '?'}")
        lines.append(f"  task: {one_line(run.task, 200)}")
        for item in run.items:
            if isinstance(item, Note):
                lines.append(f"  {item.kind} {item.text}")
            else:
                lines.extend(_turn(item))
        if run.answer:
            lines.append(f"  answer: {one_line(run.answer, 200)}")
        if run.usage:
            lines.append(f"  usage: {tokens_text(run.usage)}")
    lines.extend(_proposal(trace))
    return "\n".join(lines) + "\n"


def _turn(turn: Turn) -> list[str]:
    head = [f"turn {turn.number}"]
    if turn.model:
        head.append(turn.model)
    if turn.latency_s is not None:
        head.append(seconds_text(turn.latency_s))
    if turn.usage:
        head.append(tokens_text(turn.usage))
    if turn.request_bytes is not None:
        head.append(f"request {turn.request_bytes:,} bytes sha256 {turn.request_sha256[:12]}")
    lines = [f"  {' · '.join(head)}"]
    if turn.text and turn.tools:  # the answer of the last turn is the run's answer, shown once
        lines.append(f"    says: {one_line(turn.text)}")
    lines.extend(f"    {_tool(step)}" for step in turn.tools)
    return lines


def _tool(step: ToolStep) -> str:
    parts = [f"{step.name} {one_line(step.about, 60)}".rstrip()]
    if step.verdict:
        asked = f", {step.approval}" if step.approval else ""
        parts.append(f"{step.verdict} ({step.rule}{asked})")
    else:
        parts.append("no permission check")
    if step.duration_s is not None:
        parts.append(seconds_text(step.duration_s))
    result = one_line(step.result) or "(no output)"
    parts.append(f"error: {result}" if step.is_error else result)
    return " · ".join(parts)


def _proposal(trace: Trace) -> list[str]:
    files = sorted(trace.proposal.values(), key=lambda f: f.path)
    if not files:
        return [f"proposal: none{' left' if trace.proposal_state != 'pending' else ''}"]
    noun = "file" if len(files) == 1 else "files"
    lines = [f"proposal ({trace.proposal_state}), {len(files)} {noun}:"]
    for file in files:
        added, removed = file.counts()
        lines.append(f"  {file.path}{' (new)' if file.is_new else ''}  +{added} -{removed}")
    return lines
