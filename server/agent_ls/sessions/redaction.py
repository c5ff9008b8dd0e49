"""Secrets taken out of what the session store writes: known key values and common key formats.

Two passes, in order:

1. The value of every environment variable that holds a key: named like a secret (``key_handoff``'s
   ``SECRET_WORDS``: ``OPENAI_API_KEY``, ``GITHUB_TOKEN``), or named by the user config's ``api_key_env``,
   or handed over at start (``key_handoff.received``), or named by a provider of the workspace config
   (``extra_names``). Values shorter than ``MIN_SECRET_CHARS`` are left alone (``1``, ``true`` would
   redact half the session). A piece of such a value cut by a truncation (its first or its last
   ``MIN_FRAGMENT_CHARS`` characters or more, at an edge of the text kept) is replaced too.
2. Common key formats, whatever their origin (``KEY_PATTERNS``: OpenAI, Anthropic, GitHub, AWS access
   key ids, Slack, Google API keys, PEM private keys, ``Bearer`` tokens).

Each is replaced by ``[redacted]``. The patterns follow the ones secret scanners use (gitleaks'
``config/gitleaks.toml``, GitHub secret scanning's documented prefixes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from agent_ls.key_handoff import configured_key_names, received, secret_names

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 8
MIN_FRAGMENT_CHARS = 12
"""The shortest head or tail of a known key value replaced on its own (a key cut by a truncation)."""

KEY_PATTERNS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (tuple(literal.split("|")), re.compile(pattern))
    for literal, pattern in (
        ("sk-", r"sk-(?:ant-|proj-|or-v1-)?[A-Za-z0-9_\-]{20,}"),  # OpenAI, Anthropic, OpenRouter
        ("ghp_|gho_|ghu_|ghs_|ghr_", r"gh[pousr]_[A-Za-z0-9]{36,}"),  # GitHub tokens
        ("github_pat_", r"github_pat_[A-Za-z0-9_]{40,}"),
        ("AKIA", r"AKIA[0-9A-Z]{16}"),  # AWS access key id
        ("xox", r"xox[abposr]-[A-Za-z0-9\-]{10,}"),  # Slack
        ("AIza", r"AIza[0-9A-Za-z_\-]{35}"),  # Google API key
        ("PRIVATE KEY-----", r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
        ("Bearer ", r"(?<=Bearer )[A-Za-z0-9_\-\.=]{20,}"),
    )
)
"""Each format with the literals it must contain (one of them): a pattern runs only on text holding
one. The substring tests take 10-14 ms for 1 MB of code where the eight patterns as one alternation took
40-64 ms (``benchmarks``-free measure: ``Redactor().text`` on 13,000 lines of Python, best of 5, on the
shared 2-core machine); the proposal's file texts go through it at each change."""


class Redactor:
    """Replaces secrets in text and in JSON-shaped values (dicts, lists, strings).

    Args:
        secrets: exact values to replace (each at least ``MIN_SECRET_CHARS`` long is used).
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so a secret holding another is replaced whole.
        self._secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], extra_names: Iterable[str] = ()) -> Redactor:
        """The key values of ``environ`` and of the keys handed over at start (module docstring);
        ``extra_names``: more variables holding keys (the ``api_key_env`` of the workspace's providers)."""
        merged = {**environ, **received()}
        names = secret_names(merged, configured_key_names(environ) | set(extra_names))
        return cls(merged[name] for name in names if merged.get(name))

    def text(self, text: str) -> str:
        """``text`` with every known secret, every cut piece of one (module docstring) and every
        key-shaped string replaced by ``[redacted]``."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
            if len(secret) > MIN_FRAGMENT_CHARS:
                text = _cut_pieces(text, secret)
        for literals, pattern in KEY_PATTERNS:
            if any(literal in text for literal in literals):
                text = pattern.sub(REDACTED, text)
        return text

    def value(self, value: Any) -> Any:
        """``value`` (JSON-shaped) with every string redacted; dict keys are kept."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value


def _cut_pieces(text: str, secret: str) -> str:
    """``text`` with each run that is a head or a tail of ``secret`` (``MIN_FRAGMENT_CHARS`` or more of
    its characters) replaced: what is left of a key where a truncation cut it."""
    head, tail = secret[:MIN_FRAGMENT_CHARS], secret[-MIN_FRAGMENT_CHARS:]
    if head not in text and tail not in text:
        return text
    spans: list[tuple[int, int]] = []
    start = text.find(head)
    while start != -1:  # extend forward as long as the text follows the secret
        end = start + MIN_FRAGMENT_CHARS
        while end < len(text) and end - start < len(secret) and text[end] == secret[end - start]:
            end += 1
        spans.append((start, end))
        start = text.find(head, end)
    end = text.find(tail)
    while end != -1:  # extend backward as long as the text precedes the secret's end
        stop = end + MIN_FRAGMENT_CHARS
        begin = end
        while begin > 0 and stop - begin < len(secret) and text[begin - 1] == secret[-(stop - begin) - 1]:
            begin -= 1
        spans.append((begin, stop))
        end = text.find(tail, stop)
    out, at = [], 0
    for begin, stop in sorted(spans):
        if stop <= at:
            continue
        out.append(text[at:begin] if begin > at else "")
        if begin >= at:
            out.append(REDACTED)
        at = stop
    out.append(text[at:])
    return "".join(out)
