"""Issue 12, edit races: a user types into the document the agent is editing, at random moments and
places, then applies. The user's text is never lost.

Each round, in one ``agent-ls serve``: the buffer gets a fresh text; the agent reads ``race.py`` and
changes ``TARGET = 1`` to ``TARGET = 2``; the user inserts marker lines at random lines, at a random
moment (before the run, while it runs, or after it and before the apply) and sometimes rewrites the
``TARGET`` line itself (a conflict). Then the proposal is applied, and applied again when the first
apply answered that it re-based the proposal.

What must hold after every round: every marker line the user typed is in the buffer, where it was typed; the
``TARGET`` line is the agent's when an apply succeeded, else the user's (their own rewrite, or the
original); nothing else changed. Outcomes seen are counted (applied at once, applied after a re-base,
refused for an overlap, the agent's write refused because the file changed since it read it).

``AGENT_LS_FUZZ_LONG=1`` runs 1,000 rounds instead of 20.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections import Counter
from pathlib import Path

from lsprotocol import types as t
from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, model_settings, run_ended, start
from tests.support.model_server import FakeModelServer

ROUNDS = 1000 if os.environ.get("AGENT_LS_FUZZ_LONG") == "1" else 20
AGENT = "TARGET = 2\n"
ORIGINAL = "TARGET = 1\n"
THEIRS = "TARGET = 'user'\n"


class Buffer:
    """The client's view of ``race.py``: its lines and version, changed only through didChange."""

    def __init__(self, client: LanguageClient, uri: str, lines: list[str]) -> None:
        self.client, self.uri, self.lines, self.version = client, uri, lines, 1
        client.text_document_did_open(
            t.DidOpenTextDocumentParams(
                t.TextDocumentItem(uri=uri, language_id="python", version=1, text=self.text)
            )
        )
        client.files.open(uri, self.text, 1)  # type: ignore[attr-defined]

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def _send(self, change: t.TextDocumentContentChangeEvent) -> None:
        self.version += 1
        self.client.text_document_did_change(
            t.DidChangeTextDocumentParams(
                t.VersionedTextDocumentIdentifier(version=self.version, uri=self.uri), [change]
            )
        )
        self.client.files.open(self.uri, self.text, self.version)  # type: ignore[attr-defined]

    def reset(self, lines: list[str]) -> None:
        self.lines = lines
        self._send(t.TextDocumentContentChangeWholeDocument(text=self.text))

    def insert(self, index: int, line: str) -> None:
        """Insert ``line`` before line ``index`` (0-based), as a ranged change."""
        self.lines.insert(index, line)
        at = t.Position(line=index, character=0)
        self._send(t.TextDocumentContentChangePartial(range=t.Range(at, at), text=line))

    def replace_line(self, index: int, line: str) -> None:
        start, end = t.Position(line=index, character=0), t.Position(line=index + 1, character=0)
        self.lines[index] = line
        self._send(t.TextDocumentContentChangePartial(range=t.Range(start, end), text=line))

    def sync_from_client(self) -> None:
        """After an applied WorkspaceEdit: the client's text and version are the truth."""
        document = self.client.files.buffers[self.uri]  # type: ignore[attr-defined]
        self.lines, self.version = document.text.splitlines(keepends=True), document.version


def _steps(delay_s: float) -> list[dict[str, object]]:
    return [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "race.py"}}]},
        {
            "delay_s": delay_s,
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "race.py", "old_string": ORIGINAL, "new_string": AGENT},
                }
            ],
        },
        {"delay_s": delay_s, "content": "done"},
    ]


def _type(buffer: Buffer, rng: random.Random, number: int, markers: list[str], conflict: bool) -> None:
    for k in range(rng.randint(1, 3)):
        marker = f"# user {number}.{k}\n"
        buffer.insert(rng.randint(0, len(buffer.lines)), marker)
        markers.append(marker)
    if conflict:
        buffer.replace_line(buffer.lines.index(ORIGINAL), THEIRS)


async def _apply(client: LanguageClient, session_id: str) -> tuple[bool, str]:
    answer = await command(client, "agent.applyProposal", {"sessionId": session_id})
    return bool(field(answer, "applied")), field(answer, "failureReason") or ""


async def test_a_user_typing_during_runs_never_loses_text(
    client: LanguageClient, tmp_path: Path, model_server: FakeModelServer
) -> None:
    rng = random.Random(20261130)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "race.py").write_text("x\n")
    await start(client, root, model_settings(model_server))
    buffer = Buffer(client, (root / "race.py").as_uri(), ["x\n"])
    seen: Counter[str] = Counter()
    for number in range(ROUNDS):
        lines = [f"line {i}\n" for i in range(rng.randint(3, 30))]
        lines.insert(rng.randint(0, len(lines)), ORIGINAL)
        buffer.reset(lines)
        when = rng.choice(["before", "during", "after", "none"])
        conflict = when in ("during", "after") and rng.random() < 0.25
        markers: list[str] = []
        model_server.steps.extend(_steps(delay_s=rng.choice([0, 0.01, 0.03])))
        if when == "before":
            _type(buffer, rng, number, markers, conflict)
        started = await command(client, "agent.run", {"task": f"round {number}"})
        session_id = field(started, "sessionId")
        if when == "during":
            await asyncio.sleep(rng.uniform(0, 0.08))
            _type(buffer, rng, number, markers, conflict)
        ended = await run_ended(client, session_id, timeout_s=60)
        assert field(ended, "status") == "done", field(ended, "reason")
        if when == "after":
            _type(buffer, rng, number, markers, conflict)
        typed = buffer.text
        applied, reason = await _apply(client, session_id)
        outcome = "applied" if applied else "refused"
        if not applied and "re-based" in reason:
            applied, reason = await _apply(client, session_id)
            outcome = "applied after a re-base" if applied else "refused after a re-base"
        elif not applied and "overlaps" in reason:
            outcome = "refused: overlap"
        elif not applied and "no proposed change" in reason:
            outcome = "the agent's write was refused (changed since it read it)"
        seen[outcome] += 1
        if applied:
            buffer.sync_from_client()
        text = buffer.text
        assert sorted(line for line in buffer.lines if line.startswith("# user")) == sorted(markers), number
        if applied:
            assert text == typed.replace(ORIGINAL, AGENT), (number, when, reason)
        else:
            assert text == typed, (number, when, reason)
            assert reason, number
        if conflict and ORIGINAL not in typed:
            assert THEIRS in text and AGENT not in text  # the user's own rewrite is never replaced
    print(f"\nedit races: {ROUNDS} rounds: {dict(seen)}")
    assert seen["applied"] + seen["applied after a re-base"] > 0
