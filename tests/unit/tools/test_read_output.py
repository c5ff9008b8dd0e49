"""The registry keeps the whole text of cut results (``keep_outputs``) and says how to read it; the
``read_output`` tool pages through it (issue 15: truncated output can be fetched again)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import pytest

from agent_ls.core.ports import CommandResult
from agent_ls.core.todos import TodoList
from agent_ls.tools import sent_tools
from agent_ls.tools.read_output import read_output_tool
from agent_ls.tools.session_tools import deferred_tools
from tests.unit.tools.harness import Harness, make_harness


class MemoryKeeper:
    """An ``OutputKeeper`` in memory; ``fails`` makes ``keep`` report a full disk."""

    def __init__(self, fails: bool = False) -> None:
        self.kept: dict[str, str] = {}
        self.fails = fails

    def keep(self, call_id: str, text: str) -> bool:
        if self.fails:
            return False
        self.kept[call_id] = text
        return True

    def read(self, call_id: str) -> str | None:
        return self.kept.get(call_id)


NUMBERED = "".join(f"line {n}\n" for n in range(1, 5_401))


def harness(
    keeper: MemoryKeeper | None, results: Sequence[CommandResult] = (), chars: int = 30_000
) -> Harness:
    made = make_harness(results=results, replies=["once"] * 2, max_output_chars=chars)
    if keeper is not None:
        made.registry.keep_outputs(keeper)
        made.registry.set_extra_tools([], [read_output_tool(keeper)])
    return made


def cut_command() -> CommandResult:
    shown = "line 1\n[... 50,000 characters omitted: lines 2–5,399 of 5,400 ...]\nline 5400\n"
    return CommandResult(0, shown, full_output=NUMBERED)


async def test_a_commands_whole_output_is_kept_and_the_result_says_how_to_read_it() -> None:
    keeper = MemoryKeeper()
    made = harness(keeper, [cut_command()])
    text = await made.text("bash", {"command": "seq"})
    assert keeper.kept == {"c1": NUMBERED}
    assert text == (
        "exit code 0\nline 1\n[... 50,000 characters omitted: lines 2–5,399 of 5,400 ...]\nline 5400\n\n"
        "[the whole output (5,400 lines) is kept: "
        'read_output {"call_id": "c1", "offset": 2} reads on from line 2]'
    )


async def test_the_registrys_own_cut_keeps_the_whole_text() -> None:
    keeper = MemoryKeeper()
    made = harness(keeper, [CommandResult(0, NUMBERED)], chars=1_000)
    text = await made.text("bash", {"command": "seq"})
    whole = f"exit code 0\n{NUMBERED}"
    assert keeper.kept == {"c1": whole}
    assert text.endswith(
        "\n[the whole output (5,401 lines) is kept: "
        'read_output {"call_id": "c1", "offset": 64} reads on from line 64]'
    )
    assert "omitted: lines 64–" in text


async def test_nothing_is_kept_when_nothing_was_cut_or_nothing_keeps_it() -> None:
    keeper = MemoryKeeper()
    made = harness(keeper, [CommandResult(0, "ok\n")])
    assert await made.text("bash", {"command": "true"}) == "exit code 0\nok\n"
    assert keeper.kept == {}
    no_keeper = harness(None, [cut_command()])
    assert "read_output" not in await no_keeper.text("bash", {"command": "seq"})
    full_disk = harness(MemoryKeeper(fails=True), [cut_command()])
    assert "read_output" not in await full_disk.text("bash", {"command": "seq"})


async def test_read_output_pages_through_the_kept_text() -> None:
    keeper = MemoryKeeper()
    keeper.kept["c7"] = NUMBERED
    made = harness(keeper)
    page = await made.text("read_output", {"call_id": "c7", "offset": 2_501, "limit": 3})
    assert page == (
        "[lines 2,501–2,503 of 5,400 of the output of call c7]\nline 2501\nline 2502\nline 2503\n"
        "… 2,897 more lines; call again with offset=2504"
    )
    first = await made.text("read_output", {"call_id": "c7"})
    assert first.startswith("[lines 1–200 of 5,400 of the output of call c7]\nline 1\n")
    assert first.endswith("line 200\n… 5,200 more lines; call again with offset=201")
    last = await made.text("read_output", {"call_id": "c7", "offset": 5_400})
    assert last == "[line 5,400 of 5,400 of the output of call c7]\nline 5400"


async def test_read_output_keeps_a_page_within_its_character_budget() -> None:
    keeper = MemoryKeeper()
    keeper.kept["c1"] = ("y" * 2_500 + "\n") * 40
    made = harness(keeper)
    page = await made.text("read_output", {"call_id": "c1", "limit": 40})
    assert page.startswith("[lines 1–13 of 40 of the output of call c1]\n")
    assert f"{'y' * 2_000} [line truncated: 2,500 chars]" in page
    assert page.endswith("… 27 more lines; call again with offset=14")
    assert len(page) < 30_000


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (
            {"call_id": "nope"},
            "Error: no output of a call 'nope' in this session; use the call_id of an earlier tool call "
            "exactly as given (in a truncation note or a pruned result)",
        ),
        (
            {"call_id": "c7", "offset": 5_401},
            "Error: offset 5,401 is past the end: the output of call c7 has 5,400 lines",
        ),
    ],
)
async def test_read_output_errors_say_what_to_fix(arguments: dict[str, object], error: str) -> None:
    keeper = MemoryKeeper()
    keeper.kept["c7"] = NUMBERED
    result = await harness(keeper).call("read_output", arguments, call_id="r1")
    assert result.is_error
    assert result.content == error
    assert "r1" not in keeper.kept  # read_output's own results are not kept again


SNAPSHOT = Path(__file__).parent / "snapshots" / "read_output_spec.json"


async def test_read_output_costs_nothing_until_an_output_is_kept_then_its_schema_is_sent() -> None:
    made = harness(MemoryKeeper(), [CommandResult(0, "short\n"), cut_command()])
    assert "read_output" not in str(made.registry.specs())  # not even named by load_tools
    await made.text("bash", {"command": "true"})
    assert "read_output" not in str(made.registry.specs())
    await made.text("bash", {"command": "seq"})
    assert made.registry.specs()[-1] == read_output_tool(MemoryKeeper()).spec()


def test_read_outputs_schema_matches_the_snapshot() -> None:
    spec = asdict(read_output_tool(MemoryKeeper()).spec())
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(json.dumps(spec, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert spec == json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_once_a_placeholder_names_it_load_tools_names_it_too() -> None:
    keeper = MemoryKeeper()
    quiet = deferred_tools(TodoList(), None, str, outputs=keeper)
    named = deferred_tools(TodoList(), None, str, outputs=keeper, outputs_named=True)
    made = make_harness(tools=sent_tools())
    made.registry.set_extra_tools([], quiet)
    assert "read_output" not in made.registry.specs()[-1].description
    made.registry.set_extra_tools([], named)
    assert made.registry.specs()[-1].description.endswith(
        ", read_output (the whole output of a cut or pruned tool result)."
    )
