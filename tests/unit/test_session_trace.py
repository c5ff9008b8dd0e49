"""``sessions.trace``: a session file's lines grouped into runs, turns and tool calls, read defensively
(a hand-edited file's mistyped fields read as absent), and the text and HTML renderings of it."""

from __future__ import annotations

from typing import Any

from agent_ls.sessions.store import StoredFile
from agent_ls.sessions.trace import Note, build_trace
from agent_ls.sessions.trace_html import trace_html
from agent_ls.sessions.trace_text import trace_text

HEADER = {"kind": "session", "format": 1, "harness": "9.9.9", "sessionId": "s1", "workspace": "/w"}


def _usage(tokens: int, **facts: Any) -> dict[str, Any]:
    usage = {"inputTokens": tokens, "outputTokens": 3, "cachedInputTokens": 0, "costUsd": None}
    return {"kind": "usage", "usage": usage, "role": "main", **facts}


def _assistant(text: str = "", *calls: tuple[str, str]) -> dict[str, Any]:
    tool_calls = [{"callId": c, "name": n, "arguments": '{"path": "a.py"}'} for c, n in calls]
    return {"kind": "message", "message": {"role": "assistant", "text": text, "toolCalls": tool_calls}}


def _result(call_id: str, content: str) -> dict[str, Any]:
    message = {"role": "tool", "callId": call_id, "name": "read_file", "content": content, "isError": False}
    return {"kind": "message", "message": message}


RECORDS: list[dict[str, Any]] = [
    {"kind": "run_start", "run": 1, "task": "fix it", "model": "openai/m"},
    _assistant("", ("c1", "read_file")),
    _usage(100, model="openai/m", provider="openai", latencyS=1.5, requestBytes=400, requestSha256="ab" * 32),
    {"kind": "verdict", "callId": "c1", "name": "read_file", "verdict": "allow", "rule": "read: **"},
    {"kind": "tool", "callId": "c1", "name": "read_file", "isError": False, "durationS": 0.002},
    _result("c1", '<tool_result tool="read_file" trust="data">\n1\tx = 1\n</tool_result>'),
    {"kind": "compaction", "reason": "auto", "how": "pruned", "tokensBefore": 9000, "tokensAfter": 4000},
    {"kind": "usage", "usage": {"inputTokens": 50, "outputTokens": 5}, "role": "subagent", "model": "o/s"},
    _assistant("", ("c1", "read_file")),  # a local model numbers its calls per turn: c1 again
    _usage(200),
    _result("c1", "second"),
    {
        "kind": "proposal",
        "changes": [{"path": "a.py", "isNew": False, "baseText": "x = 1\n", "newText": "x = 2\ny = 3\n"}],
        "removed": [],
    },
    _assistant("All done."),
    _usage(300),
    {"kind": "run_end", "run": 1, "status": "done", "reason": "the model answered", "answer": "All done."},
    {"kind": "proposal_cleared", "why": "applied"},
]


def test_lines_are_grouped_into_runs_turns_and_tool_calls() -> None:
    trace = build_trace(StoredFile(HEADER, RECORDS, 0, False))
    (run,) = trace.runs
    assert [turn.number for turn in run.turns] == [1, 2, 3]
    first, second, third = run.turns
    assert (first.model, first.provider, first.latency_s, first.request_bytes) == (
        "openai/m",
        "openai",
        1.5,
        400,
    )
    (step,) = first.tools
    assert (step.verdict, step.rule, step.duration_s, step.result) == ("allow", "read: **", 0.002, "1\tx = 1")
    assert [t.result for t in second.tools] == ["second"] and second.latency_s is None
    assert third.text == "All done." and not third.tools
    notes = [item for item in run.items if isinstance(item, Note)]
    assert [n.kind for n in notes] == ["compaction", "subagent"]
    assert trace.proposal_state == "applied" and trace.proposal["a.py"].counts() == (2, 1)


def test_the_text_and_the_page_show_it() -> None:
    trace = build_trace(StoredFile(HEADER, RECORDS, 0, False))
    text = trace_text(trace)
    assert "turn 1 · openai/m · 1.50 s · 100 in / 3 out · request 400 bytes sha256 abababababab" in text
    assert "    read_file a.py · allow (read: **) · 2.0 ms · 1\tx = 1" in text
    assert "  compaction auto, pruned: 9,000 → 4,000 tokens" in text
    assert "turn 2 · 200 in / 3 out\n    read_file a.py · no permission check · second" in text
    assert text.endswith("proposal (applied), 1 file:\n  a.py  +2 -1\n")
    page = trace_html(trace)
    assert "Final proposal (applied)" in page and '<span class="add">+y = 3</span>' in page


def test_a_hand_edited_file_with_mistyped_fields_is_read_without_raising() -> None:
    hostile: list[dict[str, Any]] = [
        {"kind": "usage", "usage": "lots", "latencyS": "fast", "requestBytes": True, "model": 3},
        {"kind": "message", "message": {"role": "assistant", "toolCalls": "none", "text": ["x"]}},
        {"kind": "message", "message": "not an object"},
        {"kind": "verdict", "callId": None, "verdict": 1},
        {"kind": "tool", "durationS": "slow"},
        {"kind": "proposal", "changes": [{"path": 1}, "x", {"path": "b.py"}], "removed": "all"},
        {"kind": "compaction"},
        {"kind": "checks", "results": [{"command": "pytest", "passed": False}, 7]},
        {"kind": "run_end", "usage": [], "status": None},
    ]
    trace = build_trace(StoredFile({"kind": "session", "format": 1}, hostile, 2, False))
    text = trace_text(trace)
    assert "(2 unreadable line(s) skipped)" in text
    assert "checks round 1: 0 of 1 passed; not passed: pytest" in text
    assert "b.py (new)" not in text and "b.py  +0 -0" in text
    assert "<!DOCTYPE html>" in trace_html(trace)
