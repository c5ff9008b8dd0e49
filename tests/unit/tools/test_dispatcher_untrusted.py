"""The dispatcher on a real session, fed what a broken model sends: each call gets one clear error result.

Regressions found by the dispatcher fuzz (``test_dispatcher_fuzz.py``) and the named instances of issue 12
(items 7 and 8), through the real registry, tools, overlay and runner on a temp workspace.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_ls.assembly import assemble_session
from agent_ls.core.events import Event, ToolCallFinished, ToolCallStarted
from agent_ls.core.messages import ToolCall
from agent_ls.core.ports import Approval, ApprovalRequest
from agent_ls.runtime import Session
from agent_ls.tools.registry import NUL_REFUSAL

DEEP = "[" * 100_000 + "]" * 100_000
FFFD = "\ufffd"


class Deny:
    async def ask(self, request: ApprovalRequest) -> Approval:
        return Approval("deny")


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    session = assemble_session(root=tmp_path, approver=Deny(), environ={"PATH": os.environ.get("PATH", "")})
    yield session
    session.close()


async def call(session: Session, name: str, arguments: str) -> tuple[bool, str, list[Event]]:
    """(is_error, the text the model reads, the events) of one call."""
    events: list[Event] = []
    result = await session.registry.execute(ToolCall("c1", name, arguments), events.append)
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert len(finished) == 1 and result.is_error == finished[0].is_error
    return result.is_error, finished[0].output, events


@pytest.mark.parametrize(
    "arguments",
    [DEEP, '{"path": ' + DEEP + "}", '{"path": "notes.txt", "extra": ' + DEEP + "}", "[" * 100_000],
    ids=["bare", "in-a-field", "in-an-extra-field", "unclosed"],
)
async def test_arguments_nested_100k_deep_get_a_clear_error(session: Session, arguments: str) -> None:
    is_error, output, _ = await call(session, "read_file", arguments)
    assert is_error
    assert output.startswith(
        "Error: the arguments of read_file nest arrays or objects more than 32 levels deep. "
        "Send one flat JSON object matching the tool's schema: read_file(path: string"
    )


async def test_lone_surrogates_in_every_argument_become_fffd(session: Session) -> None:
    is_error, output, events = await call(
        session, "write_file\ud83d", '{"path": "a\\ud83d.txt", "content": "x\\udc80"}'
    )
    assert is_error and output.startswith(f"Error: no tool named 'write_file{FFFD}'")
    started = events[0]
    assert isinstance(started, ToolCallStarted) and started.name == f"write_file{FFFD}"

    assert (await call(session, "write_file", '{"path": "a\\ud83d.txt", "content": "x\\udc80"}'))[0] is False
    assert (
        await call(
            session, "edit_file", '{"path": "notes.txt", "old_string": "beta", "new_string": "\\ud83d"}'
        )
    )[0] is False
    assert {c.path: c.new_text for c in session.proposal()} == {
        f"a{FFFD}.txt": f"x{FFFD}",
        "notes.txt": f"alpha\n{FFFD}\n",
    }
    for change in session.proposal():
        change.new_text.encode("utf-8")


async def test_a_nul_character_the_os_refuses_is_said_plainly(session: Session) -> None:
    is_error, output, _ = await call(session, "grep", '{"pattern": "notes.txt\\u0000.png"}')
    assert (is_error, output) == (True, f"Error: grep: {NUL_REFUSAL}")


async def test_a_path_the_file_system_refuses_is_said_plainly(session: Session) -> None:
    is_error, output, _ = await call(session, "list_files", '{"path": "' + "a" * 300 + '"}')
    assert is_error
    assert output.startswith("Error: ") and "File name too long" in output
    assert "failed: OSError" not in output


async def test_every_bad_field_is_named_even_an_empty_or_invisible_one(session: Session) -> None:
    """Found by the dispatcher fuzz: an extra key "\\r" was listed as a bare carriage return."""
    is_error, output, _ = await call(session, "bash", '{"command": "ls", "\\r": null, "": 1, "ok_key": 2}')
    assert is_error
    assert output.splitlines()[:4] == [
        "Error: invalid arguments for bash:",
        '- "\\r": Extra inputs are not permitted',
        '- "": Extra inputs are not permitted',
        "- ok_key: Extra inputs are not permitted",
    ]


async def test_a_glob_pathspec_cannot_read_is_an_invalid_pattern_error(session: Session) -> None:
    """Found by the dispatcher fuzz: list_files with pattern "\\" ended in 'failed: GitIgnorePatternError'."""
    is_error, output, _ = await call(session, "list_files", '{"pattern": "\\\\"}')
    assert (is_error, output) == (
        True,
        "Error: invalid pattern '\\\\': Invalid git pattern: '\\\\'; use a glob such as **/*.py",
    )


async def test_a_gitignore_line_pathspec_cannot_read_is_skipped_as_git_does(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("\\\nsecret-notes.txt\n", encoding="utf-8")
    (tmp_path / "secret-notes.txt").write_text("x\n", encoding="utf-8")
    (tmp_path / "kept.txt").write_text("y\n", encoding="utf-8")
    session = assemble_session(root=tmp_path, approver=Deny(), environ={"PATH": os.environ.get("PATH", "")})
    try:
        is_error, output, _ = await call(session, "list_files", "{}")
        assert (is_error, output) == (False, "kept.txt")
    finally:
        session.close()
