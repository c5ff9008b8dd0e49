"""The figures ``run_all.py`` reads from each benchmark's output: one reader per benchmark script.

Each reader takes the script's stdout (or, for ``bench_scale.py``, its ``--json`` file) and returns
``Figure``s, each a ratio to a baseline measured in the same run (a budget, a raw tool, a bare
interpreter, the server before issue 14). A reader raises ``ValueError``/``KeyError``/``IndexError``/
``StopIteration`` on output it does not recognise; ``run_all`` reports that as the figures missing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

FIRST_REQUEST_BUDGET = 1_400
"""DESIGN.md "Budgets": the first request, every default tool + AGENTS.md + catalog, in est. tokens."""


@dataclass
class Figure:
    """One measured figure: ``value`` against ``baseline`` (same run); ``ratio`` is what the gate reads."""

    name: str
    what: str
    value: str
    baseline: str
    ratio: float


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("inf")


def read_slice(out: str) -> list[Figure]:
    r = json.loads(out)
    return [
        Figure(
            "first_request_vs_budget",
            "first request, est. tokens (bytes / 4)",
            f"{r['first_request_est_tokens']:,}",
            f"budget {FIRST_REQUEST_BUDGET:,}",
            _ratio(r["first_request_est_tokens"], FIRST_REQUEST_BUDGET),
        ),
        Figure(
            "requests_for_no_tool_task",
            "model requests for a task that needs no tool",
            str(r["model_requests_for_no_tool_task"]),
            "budget 1",
            r["model_requests_for_no_tool_task"],
        ),
        Figure(
            "harness_turn_vs_http",
            "harness time per turn (tool-call reply → next request)",
            f"{r['harness_ms_per_turn']} ms",
            f"one HTTP round trip {r['http_round_trip_ms']} ms",
            r["harness_ratio"],
        ),
        Figure(
            "cancel_vs_command",
            "`agent.cancel` → `agent/runEnded` over LSP",
            f"{r['cancel_to_run_ended_ms']} ms",
            f"`agent.listSkills` round trip {r['command_round_trip_ms']} ms",
            r["cancel_ratio"],
        ),
        Figure(
            "run_peak_rss_vs_python",
            "peak RSS of `agent-ls run`, 2-turn task",
            f"{r['agent_ls_run_peak_rss_mb']} MB",
            f"`python -c pass` {r['python_pass_rss_mb']} MB",
            _ratio(r["agent_ls_run_peak_rss_mb"], r["python_pass_rss_mb"]),
        ),
    ]


def read_startup(out: str) -> list[Figure]:
    r = json.loads(out)
    return [
        Figure(
            "run_start_vs_import_httpx",
            "`agent-ls run` exec → first model request (fastest of the runs)",
            f"{r['run_min_max_s'][0]} s",
            f'`python -c "import asyncio, httpx"` {r["python_import_asyncio_httpx_min_s"]} s (fastest)',
            r["run_min_ratio_to_asyncio_httpx"],
        ),
        Figure(
            "serve_start_vs_import_pygls",
            "`agent-ls serve` exec → `initialize` answer",
            f"{r['serve_initialize_s']} s",
            f'`python -c "import asyncio, pygls.lsp.server"` {r["python_import_asyncio_pygls_server_s"]} s',
            r["serve_ratio_to_asyncio_pygls_server"],
        ),
    ]


def read_models(out: str) -> list[Figure]:
    m = re.search(
        r"as (\d+) SSE events: ([\d.]+) ms \(baseline: the same answer as one JSON body ([\d.]+) ms", out
    )
    if not m:
        return []
    return [
        Figure(
            "sse_vs_json_body",
            f"one answer + tool call read as {m[1]} SSE events",
            f"{m[2]} ms",
            f"as one JSON body {m[3]} ms",
            _ratio(float(m[2]), float(m[3])),
        )
    ]


def read_diffs(out: str) -> list[Figure]:
    sections = {s.split("\n", 1)[0].strip(): s for s in out.split("## ")[1:]}

    def ms(section: str, candidate: str) -> float:
        row = next(line for line in sections[section].splitlines() if line.startswith(candidate))
        return float(row[58:].split()[0])

    table, repetitive, files = (
        next(k for k in sections if k.startswith(p)) for p in ("10k-line", "10k lines", "100 files")
    )
    ours, difflib_, proposal = (
        "agent_ls line_diff.text_diff",
        "difflib.SequenceMatcher",
        "proposal path: counts",
    )
    return [
        Figure(
            "text_diff_vs_difflib_table",
            f"line diff, {table}",
            f"{ms(table, ours)} ms",
            f"difflib {ms(table, difflib_)} ms",
            _ratio(ms(table, ours), ms(table, difflib_)),
        ),
        Figure(
            "text_diff_vs_difflib_repetitive",
            f"line diff, {repetitive}",
            f"{ms(repetitive, ours)} ms",
            f"difflib {ms(repetitive, difflib_)} ms",
            _ratio(ms(repetitive, ours), ms(repetitive, difflib_)),
        ),
        Figure(
            "proposal_diffs_vs_difflib_100_files",
            f"a proposal's diffs (counts, unified diff, hunks), {files}",
            f"{ms(files, proposal)} ms",
            f"difflib {ms(files, difflib_)} ms",
            _ratio(ms(files, proposal), ms(files, difflib_)),
        ),
    ]


def read_editor(out: str) -> list[Figure]:
    """agent.proposal's p50 on this tree's server against the server before issue 14, same run and tree."""
    p50: dict[tuple[str, str], float] = {}
    for line in out.splitlines():
        m = re.match(r"(.{92}) (before|after) .*?\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", line)
        if m:
            p50[(m[1].strip(), m[2])] = float(m[4])
    phase = "agent.proposal"
    if (phase, "after") not in p50 or (phase, "before") not in p50:
        return []
    after, before = p50[(phase, "after")], p50[(phase, "before")]
    return [
        Figure(
            "editor_p50_proposal_vs_before",
            f"hover + codeAction p50 during {phase}",
            f"{after} ms",
            f"the server before issue 14 {before} ms",
            _ratio(after, before),
        )
    ]


def read_grep(out: str) -> list[Figure]:
    figures = []
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if (
            len(cells) == 5
            and cells[1] in ("later grep", "first grep, index built")
            and "node_modules" not in cells[0]
        ):
            name = "later_grep_vs_rg" if cells[1] == "later grep" else "grep_index_built_vs_rg"
            figures.append(
                Figure(
                    name,
                    f"{cells[1]}, {cells[0]} (median of paired ratios)",
                    cells[2],
                    f"`rg` {cells[3]}",
                    float(cells[4].rstrip("×")),
                )
            )
    return figures


def read_scale(out: str) -> list[Figure]:
    rows = json.loads(out)  # the --json file, not stdout (see BENCHES)
    return [
        Figure("list_files_vs_rg_files", r["what"], r["measured"], r["raw"], float(r["ratio"].rstrip("×")))
        for r in rows
        if r["what"].startswith("list_files") and "node_modules" not in r["what"]
    ][:1]


def read_compaction(out: str) -> list[Figure]:
    m = re.search(r"largest request: ([\d,]+) estimated tokens; window ([\d,]+)", out)
    if not m:
        return []
    largest, window = (int(g.replace(",", "")) for g in m.groups())
    return [
        Figure(
            "compaction_largest_vs_window",
            "largest request of a 40-turn session in a small window",
            f"{largest:,} est. tokens",
            f"window {window:,}",
            _ratio(largest, window),
        )
    ]


def read_context(out: str) -> list[Figure]:
    m = re.search(r"agent.context total vs the recorded body: ([\d,]+) vs ([\d,]+) bytes", out)
    if not m:
        return []
    counted, sent = (int(g.replace(",", "")) for g in m.groups())
    return [
        Figure(
            "context_report_vs_body",
            "`agent.context` total of the first request",
            f"{counted:,} bytes",
            f"the recorded body {sent:,} bytes",
            _ratio(counted, sent),
        )
    ]


def read_mcp(out: str) -> list[Figure]:
    rows = {r["configuration"]: r for r in map(json.loads, out.splitlines()) if r}
    if "none" not in rows or "time + git, deferred" not in rows:
        return []
    none, deferred = rows["none"], rows["time + git, deferred"]
    return [
        Figure(
            "mcp_deferred_vs_no_mcp_tokens",
            "first request, 14 MCP tools deferred, est. tokens",
            f"{deferred['first_request_est_tokens']:,}",
            f"no MCP server {none['first_request_est_tokens']:,}",
            _ratio(deferred["first_request_est_tokens"], none["first_request_est_tokens"]),
        )
    ]
