"""core.compaction with fakes of the ports: pruning, the summary request, the handoff, the measure."""

from __future__ import annotations

import json
from collections.abc import Sequence

from agent_ls.core.checks import FEEDBACK_HEADING, CheckResult, feedback_message
from agent_ls.core.compaction import (
    HANDOFF_MARKER,
    SUMMARY_SYSTEM,
    Compactor,
    prune,
)
from agent_ls.core.events import EventSink
from agent_ls.core.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)

BIG = "x" * 2_000
NESTED = '<instructions source="pkg/AGENTS.md">\nUse tabs.\n</instructions>'


def estimate(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> int:
    """bytes / 4 of a plain JSON rendering (the shape of the real estimator, without a wire)."""
    data = [m.__dict__ for m in messages]
    return len(json.dumps([data, [t.__dict__ for t in tools]], default=str).encode()) // 4


class SummaryModel:
    """A ModelClient that answers every request with ``text`` and records what it was sent."""

    def __init__(self, text: str = "## Goal\nship it") -> None:
        self.text = text
        self.seen: list[tuple[list[Message], list[ToolSpec]]] = []

    @property
    def model_name(self) -> str:
        return "fake/summarizer"

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse:
        self.seen.append((list(messages), list(tools)))
        return ModelResponse(message=AssistantMessage(text=self.text), usage=Usage(input_tokens=1))

    async def aclose(self) -> None:
        return None


def call(call_id: str, tool: str, **arguments: object) -> AssistantMessage:
    return AssistantMessage(tool_calls=(ToolCall(call_id, tool, json.dumps(arguments)),))


def session() -> list[Message]:
    return [
        SystemMessage("system prompt"),
        UserMessage("Fix the cart. Constraint: the free-shipping threshold is computed after the discount."),
        call("c1", "bash", command="pytest -q"),
        ToolResultMessage("c1", "bash", BIG),
        call("c2", "skill", name="explain"),
        ToolResultMessage("c2", "skill", BIG),
        call("c3", "read_file", path="src/cart.js"),
        ToolResultMessage("c3", "read_file", BIG + "\n\n" + NESTED),
        call("c4", "grep", pattern="total"),
        ToolResultMessage("c4", "grep", "short"),
        call("c5", "read_file", path="src/page.js"),
        ToolResultMessage("c5", "read_file", BIG),
    ]


def compactor(window: int = 100_000, **extra: object) -> Compactor:
    return Compactor(
        context_window=window,
        max_output_tokens=0,
        estimate=estimate,
        system_message=lambda: SystemMessage("system prompt"),
        pinned=lambda: [NESTED, '<instructions source="skill:explain">\nExplain.\n</instructions>'],
        proposal=lambda: ["src/cart.js"],
        **extra,  # type: ignore[arg-type]
    )


def test_prune_leaves_placeholders_that_say_how_to_get_the_output_again() -> None:
    history = session()
    count = prune(history, keep_recent=0, estimate=estimate)
    assert count == 2
    assert history[3] == ToolResultMessage(
        "c1", "bash", "[output of bash `pytest -q` at turn 1 pruned to save context; run it again]"
    )
    assert history[7].content == (
        "[output of read_file `src/cart.js` at turn 3 pruned to save context; read the file again]\n\n"
        + NESTED
    )
    assert history[5].content == BIG  # a skill body is never pruned
    assert history[9].content == "short"  # small results stay
    assert history[11].content == BIG  # the last exchange: the model has not seen it yet


def test_prune_keeps_the_most_recent_results_within_the_budget() -> None:
    history = session()
    assert prune(history, keep_recent=600, estimate=estimate) == 1
    assert history[7].content.startswith(BIG)  # newest older result, within 600 tokens
    assert history[3].content.startswith("[output of bash")


async def test_summary_gets_the_history_as_data_and_the_handoff_keeps_the_users_words() -> None:
    history = session()
    model = SummaryModel()
    done = await compactor().compact(history, [], model, force=True, focus="the cents rule")

    assert done.how == "summarized" and done.tokens_after < done.tokens_before
    ((sent, tools),) = model.seen
    assert tools == []
    assert [type(m) for m in sent] == [SystemMessage, UserMessage]
    assert sent[0] == SystemMessage(SUMMARY_SYSTEM)
    prompt = sent[1].text
    assert "Keep in particular: the cents rule" in prompt
    assert "Pending proposal now: src/cart.js" in prompt
    conversation = prompt[prompt.index('<conversation trust="data">') :]
    assert "[calls bash" in conversation and "pytest -q" in conversation
    assert conversation.rstrip().endswith("</conversation>")

    system, handoff, *tail = history
    assert system == SystemMessage("system prompt")
    assert isinstance(handoff, UserMessage) and handoff.text.startswith(HANDOFF_MARKER)
    assert "the free-shipping threshold is computed after the discount" in handoff.text
    assert "## Goal\nship it" in handoff.text
    assert NESTED in handoff.text and "Explain." in handoff.text
    # The run was in the middle of an exchange: its call and result stay, paired.
    assert tail == session()[-2:]


async def test_user_messages_survive_repeated_compactions_verbatim() -> None:
    history = session()
    squeezer = compactor(window=4_000)
    model = SummaryModel("## Goal\nforgot the constraint")
    for round_ in range(3):
        history += [
            UserMessage(f"follow-up {round_}"),
            call(f"d{round_}", "bash", command="ls"),
            ToolResultMessage(f"d{round_}", "bash", BIG),
        ]
        await squeezer.compact(history, [], model, force=True)
        text = "\n".join(m.text for m in history if isinstance(m, UserMessage))
        assert "the free-shipping threshold is computed after the discount" in text
        assert f"follow-up {round_}" in text
    assert squeezer.state.count == 3
    assert squeezer.state.user_texts[0].startswith("Fix the cart.")


async def test_failing_checks_sent_back_are_not_kept_as_the_users_words() -> None:
    history = session()
    history += [
        AssistantMessage("Done."),
        UserMessage(feedback_message([CheckResult("pytest -q", False, 1, "1 failed")])),
    ]
    squeezer = compactor(window=4_000)
    await squeezer.compact(history, [], SummaryModel(), force=True)
    assert squeezer.state.user_texts and all(FEEDBACK_HEADING not in t for t in squeezer.state.user_texts)


async def test_pruning_alone_when_it_is_enough() -> None:
    history = session()
    window = estimate(history, []) - 100
    done = await compactor(window=int(window / 0.8)).compact(history, [], SummaryModel())
    assert done.how == "pruned" and done.pruned >= 1


def test_reported_usage_counts_when_larger_than_the_estimate() -> None:
    history = session()
    squeezer = compactor(window=100_000)
    assert not squeezer.needed(history, [])
    squeezer.observe(len(history), Usage(input_tokens=90_000, output_tokens=10))
    assert squeezer.needed(history, [])
    squeezer.observe(len(history), Usage(input_tokens=90_000, estimated=True))
    assert not squeezer.needed(history, [])  # an estimate of the provider's is not a report
    assert not compactor(window=10, auto=False).needed(history, [])  # window unknown: never automatic


def test_when_the_session_keeps_outputs_placeholders_name_read_output() -> None:
    history = session()
    assert prune(history, keep_recent=0, estimate=estimate, refetch=True) == 2
    assert history[3].content == (
        "[output of bash `pytest -q` at turn 1 pruned to save context; "
        'read_output {"call_id": "c1"} gets it back]'
    )
    assert history[7].content.startswith(
        '[output of read_file `src/cart.js` at turn 3 pruned to save context; read_output {"call_id": "c3"}'
    )
    assert history[7].content.endswith(NESTED)


async def test_a_compactor_of_a_session_that_keeps_outputs_prunes_with_read_output_placeholders() -> None:
    history = session()
    named: list[bool] = []
    done = await compactor(window=1_800, refetch=lambda: named.append(True)).compact(
        history, [], SummaryModel()
    )
    assert done.how == "pruned" and done.pruned == 2
    assert 'read_output {"call_id": "c1"} gets it back' in history[3].content
    assert named == [True]  # the session sends read_output's schema from then on
