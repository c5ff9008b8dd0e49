"""The window a request must fit in, for compaction (``core.compaction``): the provider's configured
``context_window`` and ``max_output_tokens`` (agent-ls.toml), and the token estimate of a request body.

The estimate is the one ``agent.context`` reports (``context_report``): the bytes of the exact JSON body
the client sends (``request_body.encoder_of``) divided by 4, as ``models.base.estimate_usage``.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_ls.core.compaction import Estimator
from agent_ls.core.messages import Message, ToolSpec
from agent_ls.core.ports import ModelClient
from agent_ls.models.request_body import context_window_of, encoder_of

BYTES_PER_TOKEN = 4
DEFAULT_MAX_OUTPUT_TOKENS = 4_096
"""Reserved for the answer when the provider sets no ``max_output_tokens`` (Anthropic's default cap)."""


def max_output_tokens_of(model: ModelClient) -> int | None:
    """The output cap (tokens) the provider's config gives ``model``, through wrappers; None when unset."""
    found: object = model
    for _ in range(4):
        cap = getattr(getattr(found, "config", None), "max_output_tokens", None)
        if isinstance(cap, int):
            return cap
        found = getattr(found, "inner", None)
        if found is None:
            break
    return None


def window_of(model: ModelClient) -> tuple[int | None, int]:
    """(context window or None when not configured, tokens reserved for the answer).

    The reserve is the configured ``max_output_tokens``, else ``DEFAULT_MAX_OUTPUT_TOKENS`` (at most a
    quarter of a known window)."""
    window = context_window_of(model)
    configured = max_output_tokens_of(model)
    if configured is not None:
        return window, configured
    return window, DEFAULT_MAX_OUTPUT_TOKENS if window is None else min(
        DEFAULT_MAX_OUTPUT_TOKENS, window // 4
    )


def token_estimator(model: ModelClient) -> Estimator:
    """Estimated tokens of the body ``model`` would send for (messages, tools): bytes / 4."""
    encode = encoder_of(model)

    def estimate(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> int:
        return len(encode(messages, tools)) // BYTES_PER_TOKEN

    return estimate
