"""``agent-ls trace html``: a stored session as one self-contained HTML page (docs/sessions.md, "Reading a
trajectory"): the runs, each turn with its model, latency and tokens (drawn as bars scaled to the
session's largest), its tool calls with verdict, rule, duration and result, compactions and checks, and
the final proposal as coloured unified diffs.

Self-contained and inert: inline CSS, no script, no external resource (no font, image or link that
loads), and a ``Content-Security-Policy`` of ``default-src 'none'; style-src 'unsafe-inline'`` so a
browser refuses any that got in. Every text of the session is untrusted (a tool result may hold
``<script>``) and goes through ``html.escape`` (quotes too) before it is written.
"""

from __future__ import annotations

from html import escape

from agent_ls.sessions.trace import (
    Note,
    ProposedFile,
    Run,
    ToolStep,
    Trace,
    Turn,
    one_line,
    seconds_text,
    tokens_text,
)

RESULT_CHARS = 4000
"""How much of a tool result the page holds (in a closed ``<details>``); the session file has it all."""

CSP = "default-src 'none'; style-src 'unsafe-inline'"

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{margin:0;font-size:18px}
header p{margin:4px 0 0;color:#c5cad6;font-size:13px}main{padding:16px 24px;max-width:1100px}
section.run{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin:0 0 18px;padding:12px 16px}
h2{font-size:16px;margin:0 0 6px}h3{font-size:15px;margin:18px 0 6px}
.status{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;color:#fff;background:#6b7385}
.done{background:#2f8f4e}.error,.stopped{background:#c0392b}.cancelled,.interrupted{background:#b7791f}
.task{white-space:pre-wrap;background:#f0f2f6;padding:6px 8px;border-radius:4px}
table.turns{border-collapse:collapse;width:100%;margin:8px 0}
table.turns td,table.turns th{text-align:left;padding:3px 6px;border-bottom:1px solid #eef0f4;font-size:13px}
.bar{height:9px;border-radius:2px;display:inline-block;vertical-align:middle;margin-right:6px}
.in{background:#4a78c2}.out{background:#9b59b6}.lat{background:#e08a1e}
.turn{border-left:3px solid #4a78c2;margin:10px 0;padding:2px 0 2px 10px}
.meta{color:#5b6476;font-size:12px}.says{white-space:pre-wrap}
.tool{margin:6px 0 6px 6px;padding:4px 8px;background:#f8f9fb;border:1px solid #e4e7ed;border-radius:4px}
.tool .name{font-weight:600;font-family:ui-monospace,monospace}
.allow{color:#2f8f4e}.deny{color:#c0392b}.ask{color:#b7791f}.err{color:#c0392b}
pre{white-space:pre-wrap;word-break:break-word;font:12px/1.4 ui-monospace,Menlo,monospace;margin:4px 0;
background:#fff;border:1px solid #e4e7ed;padding:6px;max-height:360px;overflow:auto}
.note{color:#5b6476;font-style:italic;margin:6px 0}
.diff .add{background:#e6f6ea;display:block}.diff .del{background:#fbe9e7;display:block}
.diff .hunk{color:#6b7385;display:block}.diff .ctx{display:block}
"""


def trace_html(trace: Trace) -> str:
    """The page of ``trace`` (module docstring): one UTF-8 HTML document."""
    scale = _Scale(trace)
    title = f"agent-ls trace {trace.session_id}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>",
        f"<header><h1>{_e(title)}</h1><p>{_e(trace.workspace)} · agent-ls {_e(trace.harness or '?')} · "
        f"created {_e(trace.created_at)} · {len(trace.runs)} run(s)</p></header><main>",
    ]
    for run in trace.runs:
        parts.append(_run(run, scale))
    parts.append(_proposal(trace))
    parts.append("</main></body></html>\n")
    return "\n".join(parts)


class _Scale:
    """The largest figures of the session, so bars of different runs compare."""

    def __init__(self, trace: Trace) -> None:
        turns = [turn for run in trace.runs for turn in run.turns]
        self.tokens = max((_in(t) + _out(t) for t in turns), default=0) or 1
        self.latency = max((t.latency_s or 0.0 for t in turns), default=0.0) or 1.0

    def tokens_bar(self, turn: Turn) -> str:
        width_in = round(220 * _in(turn) / self.tokens)
        width_out = round(220 * _out(turn) / self.tokens)
        return (
            f'<span class="bar in" style="width:{width_in}px" title="input tokens"></span>'
            f'<span class="bar out" style="width:{max(width_out, 1 if _out(turn) else 0)}px" '
            'title="output tokens"></span>'
        )

    def latency_bar(self, turn: Turn) -> str:
        width = round(160 * (turn.latency_s or 0.0) / self.latency)
        return f'<span class="bar lat" style="width:{width}px" title="latency"></span>'


def _run(run: Run, scale: _Scale) -> str:
    status = _e(run.status)
    parts = [
        f'<section class="run" id="run-{run.number}">',
        f'<h2>Run {run.number} <span class="status {status}">{status}</span></h2>',
        f'<p class="meta">{_e(run.model or "?")} · {_e(run.reason)}</p>',
        f'<div class="task">{_e(run.task)}</div>',
        _turn_table(run, scale),
    ]
    for item in run.items:
        if isinstance(item, Note):
            parts.append(f'<p class="note">{_e(item.kind)}: {_e(item.text)}</p>')
        else:
            parts.append(_turn(item, shown=run.answer))
    if run.answer:
        parts.append(f'<h3>Answer</h3><div class="says">{_e(run.answer)}</div>')
    if run.usage:
        parts.append(f'<p class="meta">run usage: {_e(tokens_text(run.usage))}</p>')
    parts.append("</section>")
    return "\n".join(parts)


def _turn_table(run: Run, scale: _Scale) -> str:
    rows = [
        '<table class="turns"><tr><th>turn</th><th>tokens (in / out)</th><th>latency</th>'
        "<th>request</th><th>tools</th></tr>"
    ]
    for turn in run.turns:
        request = f"{turn.request_bytes:,} B" if turn.request_bytes is not None else ""
        tools = ", ".join(step.name for step in turn.tools)
        rows.append(
            f"<tr><td>{turn.number}</td><td>{scale.tokens_bar(turn)}{_e(tokens_text(turn.usage))}</td>"
            f"<td>{scale.latency_bar(turn)}{_e(seconds_text(turn.latency_s))}</td>"
            f"<td>{_e(request)}</td><td>{_e(tools)}</td></tr>"
        )
    rows.append("</table>")
    return "".join(rows)


def _turn(turn: Turn, *, shown: str) -> str:
    """A turn; its text is left out when it is the run's answer (``shown``), which follows the turns."""
    meta = [turn.model, seconds_text(turn.latency_s), tokens_text(turn.usage) if turn.usage else ""]
    if turn.request_bytes is not None:
        meta.append(f"request {turn.request_bytes:,} bytes, sha256 {turn.request_sha256[:16]}")
    parts = [
        f'<div class="turn"><div><b>Turn {turn.number}</b> '
        f'<span class="meta">{_e(" · ".join(m for m in meta if m))}</span></div>'
    ]
    if turn.reasoning:
        parts.append(f"<details><summary>reasoning</summary><pre>{_e(turn.reasoning)}</pre></details>")
    if turn.text and (turn.tools or turn.text != shown):
        parts.append(f'<div class="says">{_e(turn.text)}</div>')
    parts.extend(_tool(step) for step in turn.tools)
    parts.append("</div>")
    return "\n".join(parts)


def _tool(step: ToolStep) -> str:
    verdict = (
        f'<span class="{_e(step.verdict)}">{_e(step.verdict)}</span> by {_e(step.rule)}'
        + (f" ({_e(step.approval)})" if step.approval else "")
        if step.verdict
        else "no permission check"
    )
    took = f" · {_e(seconds_text(step.duration_s))}" if step.duration_s is not None else ""
    subject = one_line(step.about, 120)
    summary = one_line(step.result) or "(no output)"
    error = '<span class="err">error:</span> ' if step.is_error else ""
    result = step.result if len(step.result) <= RESULT_CHARS else step.result[:RESULT_CHARS] + "\n…"
    return (
        f'<div class="tool"><span class="name">{_e(step.name)}</span> {_e(subject)}'
        f'<div class="meta">{verdict}{took}</div>'
        f"<details><summary>{error}{_e(summary)}</summary>"
        f"<pre>arguments: {_e(step.arguments)}</pre><pre>{_e(result)}</pre></details></div>"
    )


def _proposal(trace: Trace) -> str:
    files = sorted(trace.proposal.values(), key=lambda f: f.path)
    head = f'<section class="run" id="proposal"><h2>Final proposal ({_e(trace.proposal_state)})</h2>'
    if not files:
        return head + "<p>No file was proposed.</p></section>"
    parts = [head, "<ul>"]
    for file in files:
        added, removed = file.counts()
        new = " (new)" if file.is_new else ""
        parts.append(f"<li><code>{_e(file.path)}</code>{new} +{added} −{removed}</li>")
    parts.append("</ul>")
    parts.extend(_diff(file) for file in files)
    parts.append("</section>")
    return "\n".join(parts)


def _diff(file: ProposedFile) -> str:
    lines = []
    for line in file.diff():
        if line.startswith(("@@", "+++", "---")):
            css = "hunk"
        else:
            css = {"+": "add", "-": "del"}.get(line[:1], "ctx")
        lines.append(f'<span class="{css}">{_e(line) or " "}</span>')
    return f'<h3>{_e(file.path)}</h3><pre class="diff">{"".join(lines)}</pre>'


def _in(turn: Turn) -> int:
    value = turn.usage.get("inputTokens")
    return value if isinstance(value, int) else 0


def _out(turn: Turn) -> int:
    value = turn.usage.get("outputTokens")
    return value if isinstance(value, int) else 0


def _e(text: str) -> str:
    return escape(text, quote=True)
