"""The scripted model for the VS Code end-to-end test (clients/vscode/test/e2e.sh).

Serves ``STEPS`` with ``tests/support/model_server.FakeModelServer`` (an OpenAI-compatible HTTP server on
127.0.0.1), writes its port to ``--port-file`` once it listens, and rewrites ``--requests`` (a JSON list of
the request bodies) after every request, so the driver can check what the model was sent.

Run with the Python that has agent_ls installed: ``python model_server.py --port-file P --requests R``.
It serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO))

from tests.support.model_server import FakeModelServer  # noqa: E402

# The command the policy has no rule for, so it asks the user (window/showMessageRequest).
ASKED_COMMAND = "wc -l stats.py"

# The answers of the two /code-review runs (explicit invocation: the skill body is in the first request,
# so the model answers at once). The driver finds them in the end-of-run notifications.
REVIEW_FROM_PALETTE = (
    "Review of stats.py (1 finding):\n"
    "- stats.py:14: spread() of an empty list raises ValueError from max(); "
    "say so in its docstring, as mean() does."
)
REVIEW_FROM_CODE_ACTION = (
    "Review of stats.py from the code action (1 finding):\n"
    "- stats.py:9: mean() returns a float for ints too; the annotation says list[float], so this is fine."
)

# The Agent view's task and its follow-up (same session): markdown answers, streamed in 8-character pieces
# 60 ms apart so the driver sees (and photographs) the answer while it streams.
VIEW_ANSWER = (
    "## What mean() returns\n\n"
    "`mean(values)` returns the **arithmetic mean**: `sum(values) / len(values)`.\n\n"
    "- a `float`, also for a list of ints;\n"
    "- it divides by the number of values, so the result lies between the smallest and the largest.\n\n"
    "The fix you applied removed the `- 1` that made it divide by one value too few."
)
FOLLOW_UP_ANSWER = (
    "For an **empty list** `len(values)` is 0, so `mean([])` raises `ZeroDivisionError` "
    "(see the answer above: it divides by the number of values)."
)

# The partial accept: two changes (hunks) in stats.py; the driver ticks only the first in the preview.
MEAN_DOC = '    """Arithmetic mean of a non-empty list of numbers."""'
MEAN_DOC_NEW = '    """Arithmetic mean of a non-empty list of numbers, as a float."""'
SPREAD_DOC = '    """Largest value minus smallest value."""'
SPREAD_DOC_NEW = '    """Largest value minus smallest value of a non-empty list."""'

# A review whose finding goes to the Problems panel (review_findings), then "Agent: Fix this finding".
FINDING = "spread() of an empty list raises ValueError from max(); say so in its docstring"
REVIEW_WITH_FINDINGS = f"Review of stats.py (1 finding):\n- stats.py:14: warning: {FINDING}"
FIX_ANSWER = "The finding is fixed once spread()'s docstring says it needs a non-empty list."

# The Agent view in plan mode (driver steps 20-22, plan_steps.mjs): a plan run that reads stats.py and also
# tries to write median.py (refused: the policy is in plan mode), then submits its plan; "Revise" sends
# feedback (a second plan run, which submits the revised plan); "Approve plan" implements it (write_file
# median.py), and the acceptance check typed in the view passes on the proposal; the user applies it.
PLAN_CHECK = 'grep -c "def median" median.py'
MEDIAN_TEXT = (
    '"""The median of a list of numbers."""\n'
    "\n"
    "\n"
    "def median(values: list[float]) -> float:\n"
    '    """Middle value of a non-empty list; median([]) raises IndexError."""\n'
    "    ordered = sorted(values)\n"
    "    middle = len(ordered) // 2\n"
    "    if len(ordered) % 2:\n"
    "        return ordered[middle]\n"
    "    return (ordered[middle - 1] + ordered[middle]) / 2\n"
)
PLAN = {
    "summary": "Add **median()** in a new module `median.py`, beside `mean()` in `stats.py`.",
    "files": ["median.py"],
    "steps": [
        "Write `median()` in `median.py`: sort the values and take the middle one.",
        "For an even count, return the mean of the two middle values.",
    ],
    "checks": [PLAN_CHECK],
    "risks": ["Callers may look for median() in stats.py; it lives in median.py."],
}
REVISED_PLAN = {
    **PLAN,
    "steps": [*PLAN["steps"], "Say in the docstring that median([]) raises IndexError."],
    "risks": [*PLAN["risks"], "median([]) raises IndexError; the docstring says so."],
}
IMPLEMENTED_ANSWER = "Added median() in median.py, as the approved plan says."

STEPS: list[dict[str, object]] = [
    # The delay keeps the run's progress notification on screen long enough for its screenshot.
    {
        "content": "Let me read stats.py.",
        "tool_calls": [{"name": "read_file", "arguments": {"path": "stats.py"}}],
        "delay_s": 2.0,
    },
    {"tool_calls": [{"name": "bash", "arguments": {"command": ASKED_COMMAND}}]},
    {
        "content": "mean() divides by len(values) - 1; it should divide by len(values).",
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {
                    "path": "stats.py",
                    "old_string": "    return sum(values) / (len(values) - 1)",
                    "new_string": "    return sum(values) / len(values)",
                },
            }
        ],
    },
    {"content": "Fixed mean() in stats.py: it divided by len(values) - 1. Review the diff and apply it."},
    # "Agent: Review Current File" from the palette.
    {"content": REVIEW_FROM_PALETTE, "delay_s": 1.0},
    # "Agent: Review this file (/code-review)" from Source Action… (a server code action).
    {"content": REVIEW_FROM_CODE_ACTION, "delay_s": 1.0},
    # A task typed into the Agent view (a new session), then a follow-up in the same session.
    {"content": VIEW_ANSWER, "chunk_delay_s": 0.06},
    {"content": FOLLOW_UP_ANSWER, "chunk_delay_s": 0.02},
    # A new session from the view: one proposal of two changes in stats.py.
    {
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": "stats.py", "old_string": MEAN_DOC, "new_string": MEAN_DOC_NEW},
            },
            {
                "name": "edit_file",
                "arguments": {"path": "stats.py", "old_string": SPREAD_DOC, "new_string": SPREAD_DOC_NEW},
            },
        ]
    },
    {"content": "Both docstrings now say what the functions need and return."},
    # "Agent: Review Current File" again: the finding through the review_findings tool, then the answer.
    {
        "tool_calls": [
            {
                "name": "review_findings",
                "arguments": {
                    "findings": [{"path": "stats.py", "line": 14, "severity": "warning", "message": FINDING}]
                },
            }
        ]
    },
    {"content": REVIEW_WITH_FINDINGS},
    # "Agent: Fix this finding" (the quick fix on the finding's diagnostic) continues the review's session.
    {"content": FIX_ANSWER},
    # Plan mode from the Agent view: the plan run (its write_file is refused), then its plan.
    {
        "content": "Let me read stats.py first.",
        "tool_calls": [
            {"name": "read_file", "arguments": {"path": "stats.py"}},
            {"name": "write_file", "arguments": {"path": "median.py", "content": MEDIAN_TEXT}},
        ],
    },
    {"tool_calls": [{"name": "submit_plan", "arguments": PLAN}]},
    # "Revise": the feedback's plan run submits the revised plan.
    {"tool_calls": [{"name": "submit_plan", "arguments": REVISED_PLAN}]},
    # "Approve plan": the implementation run writes median.py, then answers (the check then passes).
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "median.py", "content": MEDIAN_TEXT}}]},
    {"content": IMPLEMENTED_ANSWER},
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port-file", type=Path, required=True)
    parser.add_argument("--requests", type=Path, required=True)
    args = parser.parse_args()

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    def dump(requests: list[object]) -> None:
        tmp = args.requests.with_suffix(".tmp")
        tmp.write_text(json.dumps(requests, indent=1))
        os.replace(tmp, args.requests)

    with FakeModelServer(STEPS) as server:
        dump([])
        port = server.base_url.split(":")[-1].split("/")[0]
        tmp = args.port_file.with_suffix(".tmp")
        tmp.write_text(port)
        os.replace(tmp, args.port_file)
        print(f"scripted model server on {server.base_url}, {len(STEPS)} steps", flush=True)
        seen = 0
        while not stop.is_set():
            server.wait_for_requests(seen + 1, timeout_s=0.2)
            if len(server.requests) != seen:
                seen = len(server.requests)
                dump(list(server.requests))
                print(f"request {seen} ({len(server.requests[-1].get('messages', []))} messages)", flush=True)
        dump(list(server.requests))
    return 0


if __name__ == "__main__":
    sys.exit(main())
