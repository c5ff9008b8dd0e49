"""Repair of the tool calls servers get wrong, shared by every wire API.

What is repaired, each seen in a public bug report (see ``../shared/corpus/tool-calls/`` and
``../shared/research/harness-conventions.md`` §5.4):

- arguments sent as a JSON object instead of a string (llama.cpp, corpus tc01), or double-encoded (a JSON
  string whose content is a JSON object or array: one layer is unwrapped, and only then);
- missing or null arguments, which mean ``{}``;
- a missing or empty id, replaced by a stable synthetic one (``synthetic_call_id``); a repeated id is
  made unique;
- an empty or missing name: the call is dropped (logged), never run (corpus tc04, tc06);
- gpt-oss Harmony framing in the text (``harmony``): its analysis channel becomes reasoning, its final
  and commentary channels the text;
- calls written into the answer text instead of the structured field, when tools were offered and no
  structured call came: Harmony calls (``harmony``), then the markup of the other open-weight families
  (``text_calls``, ``call_markup``: Hermes/Qwen, Qwen3-Coder XML, GLM, Llama, Mistral, Kimi K2, DeepSeek,
  MiniMax, Granite, InternLM…). Such a call is kept only when its name is a declared tool and its
  arguments validate against that tool's JSON Schema, and its markup ends the message; the markup is
  then removed from the text. Anything else stays in the text, and nothing of it runs (the loop then
  says the model emitted markup that was not understood);
- end-of-turn tokens the server did not stop at (``<|im_end|>``, ``<|eot_id|>``, ``<|return|>``…) ending a
  text that holds no other markup are dropped (``text_calls.strip_end_of_turn``).

A wire module calls ``finalize_reply`` once per response, which does the steps above in that order.
Arguments stay raw JSON text otherwise: malformed JSON is reported to the model by the dispatcher.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from typing import NamedTuple

from agent_ls.core.messages import ToolCall, ToolSpec
from agent_ls.models.call_markup import ToolCatalog
from agent_ls.models.harmony import read_harmony
from agent_ls.models.partial_call import PartialCall, raw_arguments
from agent_ls.models.text_calls import recover_text_calls, strip_end_of_turn

log = logging.getLogger(__name__)


def synthetic_call_id(position: int, name: str, arguments: str) -> str:
    """A stable id for a call sent without one: ``call_<position>_<12 hex of sha256(name, arguments)>``.

    ``position`` is the 1-based place of the call in the response.
    """
    digest = hashlib.sha256(f"{name}\x00{arguments}".encode()).hexdigest()[:12]
    return f"call_{position}_{digest}"


def finalize_calls(partials: Sequence[PartialCall]) -> tuple[ToolCall, ...]:
    """The executable calls of one response, in order (the rules are in the module docstring)."""
    calls: list[ToolCall] = []
    seen: set[str] = set()
    for position, partial in enumerate(partials, start=1):
        name = (partial.name or "").strip()
        if not name:
            log.warning("dropped a tool call without a name (id %r): it is never run", partial.id)
            continue
        arguments = raw_arguments(partial.arguments)
        call_id = (partial.id or "").strip() or synthetic_call_id(position, name, arguments)
        if call_id in seen:
            call_id = f"{call_id}_{position}"
        seen.add(call_id)
        calls.append(ToolCall(call_id=call_id, name=name, arguments=arguments))
    return tuple(calls)


class Reply(NamedTuple):
    """One response's visible text, executable calls, and the reasoning found in its text (Harmony's
    analysis channel; "" otherwise), which the wire module adds to the reasoning it read."""

    text: str
    calls: tuple[ToolCall, ...]
    reasoning: str = ""


def finalize_reply(text: str, partials: Sequence[PartialCall], tools: Sequence[ToolSpec]) -> Reply:
    """The visible text, the executable calls and the reasoning found in the text of one response.

    Args:
        text: the answer text as received (the wire's own reasoning already taken out).
        partials: the structured calls as received, in order.
        tools: the tools offered with the request; without any, no call is recovered from the text.

    Returns:
        ``finalize_calls(partials)`` when that gives any call; otherwise the calls recovered from the text
        (finalized the same way), and the text without their markup. Harmony framing becomes text and
        reasoning; a text whose only markup is the end-of-turn tokens that end it loses them.
    """
    calls = finalize_calls(partials)
    reasoning = ""
    harmony = read_harmony(text, ToolCatalog(tools) if tools and not calls else None)
    if harmony is not None:
        text, reasoning = harmony.text, harmony.reasoning
        if harmony.calls:
            return Reply(text, finalize_calls(harmony.calls), reasoning)
    if calls or not tools:
        return Reply(strip_end_of_turn(text), calls, reasoning)
    visible, recovered = recover_text_calls(text, tools)
    return Reply(strip_end_of_turn(visible), finalize_calls(recovered), reasoning)
