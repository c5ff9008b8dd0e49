"""Byte budgets for instruction files: who gets how many bytes, and where a file is cut.

Two caps apply (``InstructionSettings``): ``max_file_bytes`` per file and ``max_total_bytes`` over a
chain (or over a session's nested files). Budgets count the real bytes a file brings: its bytes on disk
without the BOM (a CRLF counts 2) plus the text inlined from its imports.

Allocation is nearest-first (``allocate``): the deepest file is served first, then its parent, and so
on up to the global file, so a large root file is cut before a small leaf one. This deliberately
reverses Codex ``project_doc``, whose cumulative budget is spent root-first and starves the most
specific file (openai/codex#13386, #36371).

A cut never splits a UTF-8 sequence nor a CRLF pair (``cut_point``), and the prompt text says so
visibly with ``truncation_marker``.
"""

from __future__ import annotations

from collections.abc import Sequence


def allocate(costs: Sequence[int], *, max_file_bytes: int, max_total_bytes: int) -> list[int]:
    """How many bytes each file may keep, nearest-first.

    Args:
        costs: the bytes each file brings, in prompt order (shallowest first, deepest last).
        max_file_bytes: the cap of any one file.
        max_total_bytes: the cap of all of them together.

    Returns:
        One allowance per file, in the same order: ``min(cost, max_file_bytes, what is left)``, where
        "what is left" is the total minus the allowances of the deeper files. The allowances sum to at
        most ``max_total_bytes``; a shallow file may get 0 (dropped).
    """
    left = max(max_total_bytes, 0)
    allowances = [0] * len(costs)
    for index in range(len(costs) - 1, -1, -1):
        allowances[index] = min(costs[index], max(max_file_bytes, 0), left)
        left -= allowances[index]
    return allowances


def cut_point(data: bytes, limit: int) -> int:
    """The largest ``n <= limit`` where ``data[:n]`` ends on a UTF-8 character boundary.

    A boundary is where the next byte is not a continuation byte (``0b10xxxxxx``). A cut between the
    ``\\r`` and ``\\n`` of a CRLF moves before the ``\\r``, so a kept line never ends in a lone CR.

    Args:
        data: UTF-8 bytes.
        limit: the most bytes to keep; clamped to ``0..len(data)``.
    """
    n = max(0, min(limit, len(data)))
    if n == len(data):
        return n
    while n > 0 and data[n] & 0xC0 == 0x80:
        n -= 1
    if n > 0 and data[n - 1] == 0x0D and data[n] == 0x0A:
        n -= 1
    return n


def truncation_marker(kept_bytes: int, size_bytes: int) -> str:
    """The visible marker appended to a cut text: ``[truncated: N of M bytes]``."""
    return f"[truncated: {kept_bytes} of {size_bytes} bytes]"


def truncation_message(
    kept_bytes: int,
    size_bytes: int,
    allowance: int,
    *,
    max_file_bytes: int,
    max_total_bytes: int,
    nested: bool,
) -> str:
    """The one-line diagnostic message of a cut (or dropped) file, naming the setting that cut it.

    Args:
        kept_bytes / size_bytes: N and M of the marker.
        allowance: what ``allocate`` gave the file (N is at most 3 bytes less, at a character boundary).
        max_file_bytes / max_total_bytes: the caps in force.
        nested: the file was loaded on touch, against the session's nested budget.
    """
    pool = "the session's nested-instructions budget" if nested else "the instruction budget"
    if allowance >= max_file_bytes:
        return (
            f"truncated: only the first {kept_bytes} of {size_bytes} bytes reach the model "
            f"(per-file limit max_file_bytes = {max_file_bytes})"
        )
    if kept_bytes == 0:
        return (
            f"dropped: none of its {size_bytes} bytes reach the model; deeper instruction files used "
            f"{pool} (max_total_bytes = {max_total_bytes})"
        )
    return (
        f"truncated: only the first {kept_bytes} of {size_bytes} bytes reach the model; deeper "
        f"instruction files used the rest of {pool} (max_total_bytes = {max_total_bytes})"
    )
