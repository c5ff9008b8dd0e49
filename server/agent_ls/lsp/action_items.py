"""The ``MessageActionItem`` of a ``window/showMessageRequest`` reply, with its ``feedback`` property.

A client may send a ``feedback`` string property on the chosen item (LSP 3.16
``window.showMessage.messageActionItem.additionalPropertiesSupport``; our VS Code extension asks for it
after "Deny"). lsprotocol's ``MessageActionItem`` has no field for it, so the server's converter
(``approval_converter``, installed by ``state.AgentLanguageServer``) reads replies as
``FeedbackActionItem``. Kept apart from ``approver.py`` so that the server class can install it
without importing the approver, which needs the server class.
"""

from __future__ import annotations

from typing import Any

import attrs
import cattrs
from lsprotocol import types as t
from pygls.protocol import default_converter


@attrs.define
class FeedbackActionItem(t.MessageActionItem):
    """A ``MessageActionItem`` as a client answered it, with its optional ``feedback`` property."""

    feedback: str | None = None


def _structure_action(data: Any, _: type) -> FeedbackActionItem:
    feedback = data.get("feedback") if isinstance(data, dict) else None
    title = data.get("title") if isinstance(data, dict) else None
    return FeedbackActionItem(
        title=title if isinstance(title, str) else "",
        feedback=feedback if isinstance(feedback, str) else None,
    )


def approval_converter() -> cattrs.Converter:
    """pygls's converter, reading ``MessageActionItem`` replies with their ``feedback`` property."""
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    converter.register_structure_hook(t.MessageActionItem, _structure_action)
    return converter
