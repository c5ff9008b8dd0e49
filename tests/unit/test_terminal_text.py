"""The CLI's terminal output (``terminal_text``): the stream wrapper, the notes that go with a diff, and the
approval question of ``agent-ls run``."""

from __future__ import annotations

import io
import sys

import pytest

from agent_ls.core.ports import ApprovalRequest
from agent_ls.headless import terminal_prompt
from agent_ls.terminal_text import VisibleStream, diff_notes, escapes, guard_std_streams


def test_the_stream_writes_escaped_and_keeps_the_wrapped_streams_attributes() -> None:
    raw = io.StringIO()
    stream = VisibleStream(raw)
    print("README: # Project\x1b]52;c;Y3VybA==\x07", file=stream)  # type: ignore[arg-type]
    stream.writelines(["\x9b2J\n", "ok\r\n"])
    assert raw.getvalue() == "README: # Project^[]52;c;Y3VybA==^G\n<U+009B>2J\nok^M\n"
    assert stream.getvalue() == raw.getvalue()  # type: ignore[attr-defined]  # StringIO's own method
    assert escapes(stream) and not escapes(raw)  # type: ignore[arg-type]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_guard_wraps_stderr_always_and_stdout_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    guard_std_streams()
    assert escapes(sys.stderr) and not escapes(sys.stdout)
    monkeypatch.setattr(sys, "stdout", FakeTerminal())
    guard_std_streams(stdout=False)  # agent-ls serve: stdout is the JSON-RPC channel
    assert not escapes(sys.stdout)
    guard_std_streams()
    guard_std_streams()  # idempotent: one wrapper, not two
    assert escapes(sys.stdout) and not escapes(sys.stdout.wrapped)  # type: ignore[attr-defined]


DIFF = "--- a/a.py\n+++ b/a.py\n@@ -1 +1,2 @@\n+\x1b[1A\x1b[2K\r\n x = 1\r\n"


def test_on_a_terminal_a_note_before_the_diff_names_the_escaped_forms() -> None:
    assert diff_notes(DIFF, "a.py", terminal=True) == (
        "# agent-ls: control characters in a.py are shown escaped: ^[ (ESC), ^M (CR); "
        "--apply writes them as they are\n",
        "",
    )


def test_piped_the_note_goes_to_stderr_and_crlf_endings_alone_are_not_worth_one() -> None:
    assert diff_notes(DIFF, "a.py", terminal=False) == (
        "",
        "agent-ls: note: the diff of a.py on stdout holds control characters as they are: ^[ (ESC)",
    )
    crlf = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-two\r\n+TWO\r\n"
    assert diff_notes(crlf, "a.txt", terminal=False) == ("", "")
    assert diff_notes(crlf, "a.txt", terminal=True)[0].startswith("# agent-ls: control characters in a.txt")
    assert diff_notes("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "x", terminal=True) == ("", "")


def test_an_approval_question_keeps_a_scripts_lines_apart_from_its_own() -> None:
    request = ApprovalRequest(
        tool_name="bash",
        subject="cat <<'EOF' | sh\ncurl x\x1b[2K\n  (allowed: read-only command)\nEOF",
        reason='no rule matches "sh"',
    )
    assert terminal_prompt(request) == (
        "agent-ls wants to run bash: cat <<'EOF' | sh\n"
        "  │ curl x^[[2K\n"
        "  │   (allowed: read-only command)\n"
        "  │ EOF\n"
        '  (no rule matches "sh")'
    )
