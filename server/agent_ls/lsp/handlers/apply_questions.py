"""The ask-before-apply questions for editors without a preview (no change annotations: Neovim, Emacs).

VS Code shows its refactor preview, where the user unticks files and changes. An editor without one gets
``window/showMessageRequest`` questions instead, in order:

1. one file: ``Apply 1 file(s) (+a −d)?`` with ``Apply`` / ``Discard`` (the question agent-ls always asked);
2. more files: one question per file, ``Apply changes to src/a.py (+a −d)? (file 1 of 3)`` with
   ``Apply`` / ``Skip`` / ``Discard`` / ``Apply all`` / ``Cancel``: Apply takes the file, Skip keeps it
   pending, Discard drops it from the proposal, Apply all takes it and every file after it without asking,
   Cancel (or dismissing the question) stops: nothing is applied and nothing dropped.

Source: LSP 3.17 ``window/showMessageRequest`` (a dismissed request answers null).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from lsprotocol import types as t

from agent_ls.core.proposal import FileChange
from agent_ls.lsp.state import AgentLanguageServer
from agent_ls.workspace.diffs import line_counts

APPLY, SKIP, DISCARD, APPLY_ALL, CANCEL = "Apply", "Skip", "Discard", "Apply all", "Cancel"
PER_FILE_ACTIONS = (APPLY, SKIP, DISCARD, APPLY_ALL, CANCEL)


@dataclass
class Answers:
    """What the user chose: the files to apply, to drop from the proposal, and whether they cancelled
    (then both lists are empty and everything stays pending)."""

    apply: list[FileChange] = field(default_factory=list)
    discard: list[FileChange] = field(default_factory=list)
    cancelled: bool = False


async def _ask(ls: AgentLanguageServer, message: str, actions: Sequence[str]) -> str | None:
    reply = await ls.window_show_message_request_async(
        t.ShowMessageRequestParams(
            type=t.MessageType.Info, message=message, actions=[t.MessageActionItem(title=a) for a in actions]
        )
    )
    return None if reply is None else reply.title


async def ask_before_apply(ls: AgentLanguageServer, changes: Sequence[FileChange]) -> Answers:
    """Ask which of ``changes`` to apply (module docstring); ``changes`` in the proposal's order.

    Returns:
        The answers; ``apply`` and ``discard`` keep the proposal's order.
    """
    counts = [line_counts(change) for change in changes]  # the edit's diffs, cached: no second diff
    if len(changes) == 1:
        (added, removed), (change,) = counts[0], changes
        reply = await _ask(ls, f"Apply 1 file(s) (+{added} −{removed})?", (APPLY, DISCARD))
        if reply == APPLY:
            return Answers(apply=[change])
        if reply == DISCARD:
            return Answers(discard=[change])
        return Answers(cancelled=True)
    answers = Answers()
    for index, (change, (added, removed)) in enumerate(zip(changes, counts, strict=True)):
        of = f"(file {index + 1} of {len(changes)})"
        question = f"Apply changes to {change.path} (+{added} −{removed})? {of}"
        reply = await _ask(ls, question, PER_FILE_ACTIONS)
        if reply == APPLY_ALL:
            answers.apply.extend(changes[index:])
            break
        if reply == APPLY:
            answers.apply.append(change)
        elif reply == DISCARD:
            answers.discard.append(change)
        elif reply != SKIP:  # Cancel, dismissed, or an answer that is none of ours
            return Answers(cancelled=True)
    return answers
