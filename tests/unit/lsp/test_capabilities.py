"""Client capabilities resolve into the booleans the server acts on, for real clients' profiles."""

from __future__ import annotations

import pytest
from lsprotocol import types as t
from pytest_lsp import client_capabilities

from agent_ls.lsp.capabilities import ClientFlags


@pytest.mark.parametrize(
    ("client", "expected"),
    [
        (
            "visual-studio-code",
            ClientFlags(
                apply_edit=True,
                document_changes=True,
                resource_create=True,
                change_annotations=True,
                work_done_progress=True,
                show_message_request=True,
                watched_files_registration=True,
            ),
        ),
        (
            "neovim@v0.7.0",
            ClientFlags(
                apply_edit=True,
                document_changes=True,
                resource_create=True,
                change_annotations=False,
                work_done_progress=True,
                show_message_request=True,
            ),
        ),
    ],
)
def test_real_client_profiles(client: str, expected: ClientFlags) -> None:
    assert ClientFlags.from_capabilities(client_capabilities(client)) == expected


def test_an_empty_client_supports_nothing() -> None:
    assert ClientFlags.from_capabilities(t.ClientCapabilities()) == ClientFlags()
    assert ClientFlags.from_capabilities(None) == ClientFlags()
