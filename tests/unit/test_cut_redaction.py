"""A key cut by an output cap or a truncation is redacted whole or left out whole: never a piece of it in
clear (issue 15, finding F1): the shell's head-and-tail cap, the registry's cut, acceptance output tails,
and the pieces of a known key value the redactor recognises."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from agent_ls.core.events import Event, ToolCallFinished
from agent_ls.core.messages import ToolCall
from agent_ls.core.ports import CommandResult
from agent_ls.policy.engine import PermissionPolicy
from agent_ls.sessions.redaction import Redactor
from agent_ls.tools.acceptance import AcceptanceChecks
from agent_ls.tools.base import Tool, ToolContext, ToolOutput
from agent_ls.tools.registry import ToolRegistry
from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.processes import _CappedOutput
from tests.unit.tools.fakes import ROOT, FakeRunner, FakeWorkspace, ScriptedApprover
from tests.unit.tools.harness import make_harness

LONG_KEY = "sk-proj-Ia84yRnBUbHoWC8FJowoRoWD8s7bA16J7PglOU3shVv5UTG79BG16QmtsL4F28GzL2cEpVZzAQlxJ4" + "q" * 42
SHORT_KEY = "sk-test-SECRET123"


def pieces(key: str) -> list[str]:
    return [key[i : i + 6] for i in range(3, len(key) - 5)]


def assert_no_piece(text: str, *keys: str) -> None:
    for key in keys:
        for piece in pieces(key):
            assert piece not in text, piece


def capped(text: str, head: int, tail: int) -> str:
    output = _CappedOutput(head, tail)
    for start in range(0, len(text), 7):  # in chunks, as a pipe delivers it
        output.feed(text[start : start + 7].encode())
    return output.text()


def test_a_key_pattern_cut_by_the_head_or_the_tail_of_the_shell_cap_leaves_no_piece() -> None:
    for offset in range(1, len(LONG_KEY), 9):
        text = "a" * (100 - offset) + " " + LONG_KEY + " " + "m" * 300 + "\n" + "z" * 50
        assert_no_piece(Redactor().text(capped(text, 101, 60)), LONG_KEY)
        text = "a" * 100 + "\n" + "m" * 300 + " " + LONG_KEY + " " + "z" * (60 - len(LONG_KEY) - 1 + offset)
        assert_no_piece(Redactor().text(capped(text, 100, 60)), LONG_KEY)


def test_the_shell_cap_keeps_whole_words_next_to_the_cut_and_counts_what_it_left_out() -> None:
    text = "word " * 40 + "\n" + "x" * 500 + "\nend line\n"
    shown = capped(text, 100, 8)  # the tail cut falls inside "end"
    assert shown.startswith("word " * 20 + "\n[... ")  # the cut fell after a space: nothing dropped
    assert shown.endswith("\n[... 605 characters omitted: lines 1–3 of 3 ...]\n line\n")


def test_known_key_values_are_redacted_also_when_only_their_start_or_end_is_left() -> None:
    redactor = Redactor([SHORT_KEY, "plainvalue0123456789abcdefXYZ"])
    shown = redactor.text(f"a {SHORT_KEY[:13]}\n[... cut ...]\n{SHORT_KEY[4:]} b plainvalue0123456789 c")
    assert shown == "a [redacted]\n[... cut ...]\n[redacted] b [redacted] c"
    assert redactor.text("no key at all, plainvalue") == "no key at all, plainvalue"


class _Args(BaseModel):
    pass


async def _loud(args: _Args, ctx: ToolContext) -> ToolOutput:
    """A long text with a key across the registry's cut and a known key value."""
    return ToolOutput("a" * 95 + " " + LONG_KEY + "\n" + "m" * 500 + "\nkey plainvalue0123456789abcdefXYZ\n")


LOUD = Tool("loud", "prints keys", _Args, _loud, mutates=False, permission="session")


def test_the_registry_redacts_the_whole_result_before_it_cuts_shows_or_sends_it() -> None:
    registry = ToolRegistry(
        [LOUD],
        PermissionPolicy(PathPolicy(ROOT)),
        ScriptedApprover(()),
        ToolContext(workspace=FakeWorkspace(), runner=FakeRunner(())),
        max_output_chars=200,
        redact=Redactor(["plainvalue0123456789abcdefXYZ"]).text,
    )
    events: list[Event] = []
    message = asyncio.run(registry.execute(ToolCall("c1", "loud", "{}"), events.append))
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    for text in (message.content, finished.output):
        assert "omitted" in text
        assert_no_piece(text, LONG_KEY, "plainvalue0123456789abcdefXYZ")


def test_an_acceptance_tail_is_cut_from_the_redacted_output() -> None:
    harness = make_harness()
    checks: Any = AcceptanceChecks(harness.registry, ["true"], redact=Redactor().text)
    result = checks._result("true", CommandResult(1, "x " + LONG_KEY + "\n" + "y" * 1990 + "\nFAILED\n"))
    assert_no_piece(result.output_tail, LONG_KEY)


def test_a_run_longer_than_any_key_keeps_its_ends_at_the_cut() -> None:
    shown = capped("a" * 1000, 300, 300)
    assert shown == "a" * 300 + "\n[... 400 characters omitted: line 1 of 1 ...]\n" + "a" * 300
