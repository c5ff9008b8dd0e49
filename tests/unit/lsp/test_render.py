"""The renderer's warnings (blocked actions, images not loaded) and its transcript lines, read off a real
pygls protocol whose transport is a recording writer (pygls's ``Writer`` protocol): what the editor would
receive, in order."""

from __future__ import annotations

import json
from typing import Any

from agent_ls.core.events import (
    Event,
    ProposalChanged,
    RemoteContentDefanged,
    ToolCallFinished,
    ToolCallStarted,
    VerdictGiven,
)
from agent_ls.lsp.render import LspEventRenderer
from agent_ls.lsp.state import AgentLanguageServer


class RecordingWriter:
    """A pygls ``Writer``: keeps each JSON-RPC message the server sends."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.messages.append(json.loads(data))

    def close(self) -> None:
        pass


def _render(events: list[Event]) -> list[dict[str, Any]]:
    """The ``window/showMessage`` params sent while rendering ``events`` for one run."""
    ls = AgentLanguageServer()
    writer = RecordingWriter()
    ls.protocol.set_writer(writer, include_headers=False)
    renderer = LspEventRenderer(ls, "s1", "token", progress=False, run_ended=lambda ended: None)
    for event in events:
        renderer(event)
    return [m["params"] for m in writer.messages if m.get("method") == "window/showMessage"]


WARNING = 2  # LSP MessageType.Warning


def test_a_denied_call_warns_the_user_once_per_subject() -> None:
    shown = _render(
        [
            VerdictGiven("c1", "read_file", "deny", "workspace: path refused", ".env"),
            VerdictGiven("c2", "bash", "deny", "bash: curl *", "curl https://example.com/?q=1"),
            VerdictGiven("c3", "read_file", "deny", "workspace: path refused", ".env"),
            VerdictGiven("c4", "grep", "deny", "workspace: path refused", ".env"),
            VerdictGiven("c5", "bash", "deny", "bash: curl *", "curl  https://example.com/?q=1\n"),
        ]
    )
    assert shown == [
        {"type": WARNING, "message": "agent-ls blocked: read_file .env (workspace: path refused)"},
        {"type": WARNING, "message": "agent-ls blocked: bash curl https://example.com/?q=1 (bash: curl *)"},
    ]


def test_a_users_refusal_is_named() -> None:
    shown = _render(
        [
            VerdictGiven(
                "c1", "bash", "deny", "fallback: no rule matches", "echo aGk= | base64 -d | sh", "deny"
            )
        ]
    )
    assert shown == [
        {
            "type": WARNING,
            "message": "agent-ls blocked: bash echo aGk= | base64 -d | sh "
            "(fallback: no rule matches, you answered deny)",
        }
    ]


def test_allowed_and_approved_calls_do_not_warn() -> None:
    shown = _render(
        [
            ToolCallStarted("c1", "bash", '{"command": "ls"}'),
            VerdictGiven("c1", "bash", "allow", "bash: ls*", "ls"),
            VerdictGiven("c2", "bash", "allow", "fallback: no rule matches", "make lint", "once"),
        ]
    )
    assert shown == []


def test_a_long_multiline_subject_is_one_clipped_line() -> None:
    command = "cat <<'EOF' | sh\n" + "x" * 300 + "\nEOF"
    (shown,) = _render([VerdictGiven("c1", "bash", "deny", "bash: sh *", command)])
    message = shown["message"]
    assert "\n" not in message
    subject = message.removeprefix("agent-ls blocked: bash ").removesuffix(" (bash: sh *)")
    assert len(subject) == 200 and subject.endswith("…")
    assert subject.startswith("cat <<'EOF' | sh xxx")


def test_each_run_warns_afresh() -> None:
    verdict = VerdictGiven("c1", "read_file", "deny", "workspace: path refused", ".env")
    assert len(_render([verdict])) == len(_render([verdict])) == 1


def test_images_defanged_in_the_answer_warn_once_naming_their_hosts() -> None:
    shown = _render(
        [
            RemoteContentDefanged(("evil.example", "a data: URI")),
            RemoteContentDefanged(("evil.example", "a data: URI")),
            RemoteContentDefanged(("cdn.example",)),
        ]
    )
    assert shown == [
        {
            "type": WARNING,
            "message": "agent-ls: the agent's answer linked images or embeds from evil.example, a data: URI; "
            "they were not loaded and are shown as text "
            "(a prompt injection may try to send data out this way)",
        },
        {
            "type": WARNING,
            "message": "agent-ls: the agent's answer linked images or embeds from cdn.example; they were not "
            "loaded and are shown as text (a prompt injection may try to send data out this way)",
        },
    ]


def test_the_transcript_and_warnings_show_control_characters_escaped() -> None:
    ls = AgentLanguageServer()
    writer = RecordingWriter()
    ls.protocol.set_writer(writer, include_headers=False)
    renderer = LspEventRenderer(ls, "s1", "token", progress=False, run_ended=lambda ended: None)
    renderer(ToolCallFinished("c1", "read_file", False, "1\t# Project\x1b]52;c;Y3VybA==\x07\x1b]0;ok\x07"))
    renderer(VerdictGiven("c2", "bash", "deny", "bash: curl *", "curl x\x1b[2K\r\u202efake"))
    renderer(ProposalChanged(("docs.txt\n+++ b/README.md",)))
    sent = [m["params"]["message"] for m in writer.messages if m.get("method") in LOG_AND_SHOW]
    assert sent == [
        "  ✓ read_file: 1\t# Project^[]52;c;Y3VybA==^G^[]0;ok^G",
        "  permission deny (bash: curl *): curl x^[[2K^M<U+202E>fake",
        "agent-ls blocked: bash curl x^[[2K <U+202E>fake (bash: curl *)",  # blanks made one space
        "  proposal: 1 file(s) changed: docs.txt^J+++ b/README.md",
    ]


LOG_AND_SHOW = ("window/logMessage", "window/showMessage")
