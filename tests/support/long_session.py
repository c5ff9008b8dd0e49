"""A long scripted session for the compaction tests: a responder for ``FakeModelServer`` that activates a
skill, then reads large files turn after turn, and answers every summary request with a summary that
leaves the user's constraint out (so a test shows the code, not the summary, keeps it)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from agent_ls.core.compaction import SUMMARY_SYSTEM

CONSTRAINT = "the free-shipping threshold is computed after the discount"
TASK = f"Add shipping costs to the cart. Constraint: {CONSTRAINT}."
AGENTS_MD = "Project rule: prices are integers in cents.\n"
NESTED_RULE = "Nested rule: the sub folder uses tabs."
FILES = 5
TODO = {"content": "Compute shipping after the discount", "status": "in_progress", "activeForm": "Computing"}


def write_files(root: Path, lines: int = 20) -> None:
    """``AGENTS.md`` and ``data_0.txt`` … ``data_4.txt`` (``lines`` lines of ~45 bytes each) in ``root``."""
    (root / "AGENTS.md").write_text(AGENTS_MD, encoding="utf-8")
    (root / "sub").mkdir(exist_ok=True)
    (root / "sub" / "AGENTS.md").write_text(NESTED_RULE + "\n", encoding="utf-8")
    (root / "sub" / "notes.txt").write_text("notes\n", encoding="utf-8")
    for number in range(FILES):
        text = "".join(f"row {number}-{line:03d}: {'abcdefghij' * 3}\n" for line in range(lines))
        (root / f"data_{number}.txt").write_text(text, encoding="utf-8")


def is_summary_request(body: Any) -> bool:
    messages = body.get("messages") if isinstance(body, dict) else None
    return bool(messages) and messages[0].get("content") == SUMMARY_SYSTEM


def body_tokens(body: Any) -> int:
    """The estimate ``agent.context`` uses: bytes of the JSON body / 4."""
    return len(json.dumps(body, ensure_ascii=False).encode()) // 4


class LongSession:
    """Answers: turn 1 activates the ``explain`` skill, turn 2 writes the todo list (``TODO``), turn 3 reads
    ``sub/notes.txt`` (attaching ``sub/AGENTS.md``), turns 4 … ``turns - 1`` read ``data_<n>.txt``,
    turn ``turns`` answers "Done."; a summary request gets ``## Goal … SUMMARY <n>``.

    ``overflow_at``: the request numbers (1-based, summary requests not counted) answered once with
    HTTP 400 ``context_length_exceeded`` instead.
    """

    def __init__(self, turns: int = 40, overflow_at: tuple[int, ...] = ()) -> None:
        self.turns = turns
        self.turn = 0
        self.summaries = 0
        self.overflows = set(overflow_at)
        self._lock = threading.Lock()

    def __call__(self, body: Any) -> dict[str, Any]:
        with self._lock:
            if is_summary_request(body):
                self.summaries += 1
                goal = "## Goal\nShipping costs in the cart.\n## Next steps\nKeep reading."
                return {"content": f"{goal} SUMMARY {self.summaries}"}
            if self.turn + 1 in self.overflows:
                self.overflows.discard(self.turn + 1)
                return {
                    "status": 400,
                    "body": {
                        "error": {
                            "message": "This model's maximum context length is 4000 tokens",
                            "type": "invalid_request_error",
                            "code": "context_length_exceeded",
                        }
                    },
                }
            self.turn += 1
            turn = self.turn
        if turn == 1:
            return {"tool_calls": [{"id": "call_skill", "name": "skill", "arguments": {"name": "explain"}}]}
        if turn == 2:
            return {"tool_calls": [{"id": "call_todo", "name": "todo_write", "arguments": {"todos": [TODO]}}]}
        if turn == 3:  # attaches sub/AGENTS.md (a nested instruction file) to the result
            return {
                "tool_calls": [{"id": "call_3", "name": "read_file", "arguments": {"path": "sub/notes.txt"}}]
            }
        if turn < self.turns:
            path = f"data_{turn % FILES}.txt"
            return {"tool_calls": [{"id": f"call_{turn}", "name": "read_file", "arguments": {"path": path}}]}
        return {"content": "Done."}
