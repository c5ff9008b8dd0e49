"""Special-token and tool-call markup left in a model's final answer: a sign that nothing was understood.

A model served without the right chat template or tool-call parser writes its own markup as answer text:
gpt-oss Harmony (``<|channel|>commentary to=functions.read_file…<|call|>``), Llama's ``<|python_tag|>``,
DeepSeek's ``<｜tool▁calls▁begin｜>``, Mistral's ``[TOOL_CALLS]``, an unclosed Hermes ``<tool_call>``…
``models/`` recovers the forms it knows as tool calls; whatever is left means the model meant something
that neither ran nor reads as an answer, so the loop never reports such a reply as a clean "done".

``leftover_markup`` finds, outside Markdown code (fenced blocks and inline code spans, where a model
quotes markup on purpose when it explains it):

- ASCII special tokens ``<|name|>`` (Llama, ChatML, Harmony, Kimi, Granite, InternLM…);
- full-width ``<｜…｜>`` tokens and ``｜DSML｜`` tags (DeepSeek);
- Mistral's control tokens ``[TOOL_CALLS]``, ``[ARGS]``, ``[CALL_ID]``, ``[TOOL_RESULTS]``,
  ``[AVAILABLE_TOOLS]``;
- tool-call tags: ``<tool_call>`` and ``</tool_call>`` with their prefixed variants (``<minimax:tool_call>``,
  ``<seed:tool_call>``, ``<longcat_tool_call>``, ``<tool_calls>``), ``<function=NAME>``, GLM's
  ``<arg_key>``/``<arg_value>``, MiniMax's ``<invoke name="…">``;
- a Harmony recipient whose tokens a server stripped: ``to=functions.NAME``.
"""

from __future__ import annotations

import re

MARKUP = re.compile(
    r"<\|[A-Za-z_][\w.:-]{0,40}\|>"
    r"|</?｜[^>\n]{1,60}>"
    r"|\[(?:TOOL_CALLS|ARGS|CALL_ID|TOOL_RESULTS|AVAILABLE_TOOLS)\]"
    r"|</?(?:\w+[:_])?tool_calls?>"
    r"|<function=[^>\n]{1,80}>"
    r"|</?arg_(?:key|value)>"
    r'|<invoke name="'
    r"|\bto=functions\.[\w.-]+"
)
_FENCED = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)
_INLINE_CODE = re.compile(r"(`+)(?!`)[^\n]+?(?<!`)\1(?!`)")


def leftover_markup(text: str, *, limit: int = 3) -> list[str]:
    """The distinct pieces of markup (see the module docstring) in ``text`` outside Markdown code, in
    order of first appearance, at most ``limit``; empty when there is none."""
    if not MARKUP.search(text):
        return []
    prose = _INLINE_CODE.sub(" ", _FENCED.sub("\n", text))
    found: dict[str, None] = {}
    for match in MARKUP.finditer(prose):
        found.setdefault(match.group(), None)
        if len(found) >= limit:
            break
    return list(found)
