"""grep and list_files attacked through the real tool registry, now that ripgrep walks the user's tree.

The search used to run in a private copy that never held a secret file; it now reads the real tree
(``tree_search``, ``ripgrep_files``), so a secret stays out of the output only because its hits are
dropped by path. Each test is an attack from an adversarial review (2026-11-30): a repository's
contents, a model's tool calls, or an unusual but legitimate workspace. The first ones are the faults
found; the last ones pin the attacks that held.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_ls.assembly import assemble_session
from agent_ls.core.messages import ToolCall
from agent_ls.core.ports import Approval, ApprovalRequest
from agent_ls.runtime import Session
from agent_ls.settings import EnvSnapshot
from agent_ls.workspace.overlay import OpenBuffer
from agent_ls.workspace.search import MAX_JSON_LINE_BYTES
from tests.unit.workspace.conftest import FakeBuffers, write

SECRET = "SECRETVALUE"


class Deny:
    async def ask(self, request: ApprovalRequest) -> Approval:
        return Approval("deny")


@pytest.fixture
def session(root: Path) -> Iterator[Session]:
    yield from _session(root)


def _session(
    root: Path, *, env: EnvSnapshot | None = None, buffers: FakeBuffers | None = None
) -> Iterator[Session]:
    """A session as the editor's (ripgrep runs outside the sandbox whatever the machine has)."""
    environ = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/")}
    if env is not None:
        environ["HOME"] = env.get("HOME") or environ["HOME"]
    session = assemble_session(root=root, approver=Deny(), environ=environ, env=env, buffers=buffers)
    yield session
    session.close()


async def call(session: Session, name: str, **arguments: object) -> tuple[bool, str]:
    """(is_error, the text the model reads) of one call through the registry."""
    result = await session.registry.execute(ToolCall("c1", name, json.dumps(arguments)), lambda _: None)
    body = result.content.split("\n", 1)[1].rsplit("\n", 1)[0]  # inside <tool_result ...>...</tool_result>
    return result.is_error, body


# -- the faults found ------------------------------------------------------------------------------


async def test_a_long_line_of_a_secret_with_a_non_utf8_name_is_no_oracle(
    session: Session, root: Path
) -> None:
    """A matching line over 8 MiB was reported with the path "?" when ripgrep gave the path as bytes
    (a name that is not UTF-8), so it escaped the secret filter: grep told whether a regex matched the
    secret, which reads it out one guess at a time."""
    line = b"KEY=" + SECRET.encode() + b"x" * (MAX_JSON_LINE_BYTES + 1024) + b"\n"
    (root / os.fsdecode(b"key\xff.pem")).write_bytes(line)
    (root / os.fsdecode(b"notes\xff.txt")).write_bytes(line)
    assert await call(session, "grep", pattern="KEY=SECRET") == (
        False,
        "notes\ufffd.txt:1: a matching line over 8 MiB; read it in pieces with read_file (column)\n"
        "(showing 0 of 1 matches, 1 of the 1 files not shown at all; narrow with path, glob or pattern)",
    )
    assert await call(session, "grep", pattern="KEY=SECRET", glob="*.pem") == (False, "no matches")


async def test_grep_never_writes_an_open_buffer_outside_the_workspace(
    tmp_path: Path, root: Path, temp: Path
) -> None:
    """The pending pass wrote each unsaved buffer at ``<temp dir> / path``; a buffer of a file in a skill's
    folder (readable, outside the workspace) has an absolute path, so the editor's unsaved text was
    written over the user's file there, and grep of that folder said "no matches"."""
    home = tmp_path / "home"
    skill = home / ".agents" / "skills" / "demo"
    write(
        skill, {"SKILL.md": "---\nname: demo\ndescription: a demo skill\n---\nbody\n", "notes.md": "disk\n"}
    )
    write(root, {"a.txt": "hello\n"})
    buffers = FakeBuffers()
    buffers.open[skill / "notes.md"] = OpenBuffer("hello from an unsaved buffer\n", 3)
    env = EnvSnapshot({"HOME": str(home), "AGENT_LS_CONFIG_DIR": str(tmp_path / "config")})
    for session in _session(root, env=env, buffers=buffers):
        assert await call(session, "grep", pattern="hello") == (False, "a.txt:1:1:hello")
        assert (skill / "notes.md").read_text() == "disk\n"
        is_error, output = await call(session, "grep", pattern="disk", path=str(skill))
        assert is_error and output.startswith(f"Error: grep searches the workspace {root} only; ")
        assert (skill / "notes.md").read_text() == "disk\n"
    assert not any(temp.iterdir())  # noqa: ASYNC240 (a test's directory listing)


async def test_a_link_name_cannot_forge_entries_in_the_ripgrep_debug_log(
    session: Session, root: Path
) -> None:
    """list_files read symlinks from ripgrep's --debug log line by line: a link whose name holds a
    newline and a forged log line listed a file that does not exist, and a gitignored one, and the real
    links with a newline in their name were lost."""
    write(root, {"a.txt": "x\n", ".gitignore": "debug.log\n", "debug.log": "ignored\n"})
    forged = "z\nrg: DEBUG|rg::haystack|haystack.rs:70: ignoring {}"
    (root / forged.format("phantom.txt")).symlink_to("a.txt")
    (root / forged.format("debug.log")).symlink_to("a.txt")
    (root / "plain link").symlink_to("a.txt")
    (root / "new\nline").symlink_to("a.txt")
    assert await call(session, "list_files") == (
        False,
        "\n".join(
            ["a.txt", "new\nline", "plain link", forged.format("debug.log"), forged.format("phantom.txt")]
        ),
    )


async def test_a_forged_log_line_naming_a_real_link_lists_it_only_as_the_walk_does(
    session: Session, root: Path
) -> None:
    """The same forgery written as whole log lines, naming only real links: a gitignored one and one to a
    directory. The forging link itself may go unlisted (its name is the attacker's); nothing else
    differs from the walk."""
    write(root, {"a.txt": "x\n", ".gitignore": "dbg\n", "d/b.txt": "y\n"})
    (root / "dbg").symlink_to("a.txt")
    (root / "dir").symlink_to("d")
    forged = "z: failed to pass haystack filter: x\nrg: DEBUG|rg::haystack|haystack.rs:70: ignoring {}"
    (root / forged.format("dbg")).symlink_to("a.txt")
    (root / forged.format("dir")).symlink_to("a.txt")
    is_error, output = await call(session, "list_files")
    assert not is_error
    lines = output.split("\n")
    assert "dbg" not in lines and "dir" not in lines and {"a.txt", "d/b.txt"} <= set(lines)


# -- the output the search in the copy gave ---------------------------------------------------------


async def test_the_agents_edits_in_a_dependency_folder_are_found_as_the_copy_found_them(
    session: Session, root: Path
) -> None:
    """The copy held the pending texts wherever they were, so grep of the root found the agent's own
    edits in ``node_modules``; the pending pass skipped the dependency folders like the disk pass."""
    write(root, {"node_modules/dep/index.js": "needle on disk\n", "a.txt": "needle\n"})
    for path, content in [
        ("node_modules/dep/index.js", "needle patched\n"),
        ("node_modules/dep/new.js", "needle new\n"),
    ]:
        assert (await call(session, "write_file", path=path, content=content))[0] is False
    assert await call(session, "grep", pattern="needle") == (
        False,
        "a.txt:1:1:needle\n"
        "node_modules/dep/index.js:1:1:needle patched\n"
        "node_modules/dep/new.js:1:1:needle new",
    )
