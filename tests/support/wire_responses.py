"""Renders a scripted step in the responses wire format for the fake model server (see wire_formats.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.support.model_server import Rendered, ServerStep


def render(step: ServerStep, number: int, model: str, request_bytes: int, stream: bool) -> Rendered:
    raise NotImplementedError("responses rendering is not written yet")
