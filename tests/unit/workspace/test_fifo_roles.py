"""A FIFO where agent-ls reads a file by name is refused without blocking (review of 2026-11-30).

Opening a FIFO for reading waits for a writer. Named ``.gitignore``, ``.ignore`` or ``.rgignore`` it hung
grep and list_files (ripgrep's open, then the Python walk's), named ``.gitmodules`` or ``agent-ls.toml``
it hung every walk and the config loading, and a ``SKILL.md`` replaced by one after discovery hung the
skill's activation. One FIFO per role (the table), each entry point driven for real; a guard opens the
FIFOs for writing after ``HANG_S`` seconds, which frees a blocked reader, so a hang fails the test
instead of stopping the suite. (AGENTS.md was read without blocking already; its row pins it.)
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from agent_ls.assembly import assemble_session
from agent_ls.config import load_config
from agent_ls.core.messages import ToolCall
from agent_ls.core.ports import Approval, ApprovalRequest
from agent_ls.instructions.agents_md import render_chain
from agent_ls.runtime import Session
from agent_ls.settings import EnvSnapshot
from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shell_runner import ShellRunner
from tests.support.processes import run_quietly as run
from tests.unit.workspace.conftest import write

HANG_S = 5.0
"""Far above what each probe takes (ripgrep is stopped 0.25 s after it starts waiting)."""
SKILL = "---\nname: demo\ndescription: a demo skill\n---\nDo the demo.\n"


class Deny:
    async def ask(self, request: ApprovalRequest) -> Approval:
        return Approval("deny")


@contextlib.contextmanager
def guard(fifos: list[Path]) -> Iterator[list[bool]]:
    """After ``HANG_S`` seconds, open each FIFO for writing and close it: a reader waiting in ``open``
    (or in ``read``) then gets an empty file. Yields ``[hung]``, set when that was needed."""
    hung = [False]
    done = threading.Event()

    def free() -> None:
        while not done.wait(HANG_S):
            for fifo in fifos:
                with contextlib.suppress(OSError):  # ENXIO: nobody reads it
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                    hung[0] = True

    watcher = threading.Thread(target=free, daemon=True)
    watcher.start()
    try:
        yield hung
    finally:
        done.set()
        watcher.join()


@pytest.fixture
def env(tmp_path: Path) -> EnvSnapshot:
    return EnvSnapshot({"HOME": str(tmp_path / "home"), "AGENT_LS_CONFIG_DIR": str(tmp_path / "config")})


def session_of(root: Path, env: EnvSnapshot) -> Session:
    made = assemble_session(root=root, approver=Deny(), environ={"PATH": os.environ.get("PATH", "")}, env=env)
    made.overlay._detect = False  # the FIFO is the subject, not the sandbox
    made.overlay._sandbox = None
    return made


async def call(session: Session, tool: str, **arguments: object) -> str:
    result = await session.registry.execute(ToolCall("c1", tool, json.dumps(arguments)), lambda _: None)
    return result.content.split("\n", 1)[1].rsplit("\n", 1)[0]


def tree(root: Path) -> None:
    write(root, {"src/app.py": "hello = 1\n", "docs/guide.md": "hello docs\n"})


async def list_files(root: Path, env: EnvSnapshot) -> str:
    session = session_of(root, env)
    try:
        return await call(session, "list_files", path=".")
    finally:
        session.close()


async def grep(root: Path, env: EnvSnapshot) -> str:
    session = session_of(root, env)
    try:
        return await call(session, "grep", pattern="hello")
    finally:
        session.close()


async def agents_md(root: Path, env: EnvSnapshot) -> str:
    session = session_of(root, env)
    try:
        chain = session.context.chain
        assert chain is not None
        return "\n".join([render_chain(chain), *(notice.message for notice in chain.notices)])
    finally:
        session.close()


async def skill_activation(root: Path, env: EnvSnapshot) -> str:
    (root / ".agents/skills/demo/SKILL.md").write_text(SKILL)
    session = session_of(root, env)  # discovered while it is a regular file
    try:
        (root / ".agents/skills/demo/SKILL.md").unlink()
        os.mkfifo(root / ".agents/skills/demo/SKILL.md")
        return await call(session, "skill", name="demo")
    finally:
        session.close()


async def hard_link(root: Path, env: EnvSnapshot) -> str:
    """The hard-link rule asks whether a folder is a git submodule: ``.gitmodules`` is read."""
    os.link(root / "docs/guide.md", root / "docs/copy.md")
    session = session_of(root, env)
    try:
        return await call(session, "read_file", path="docs/copy.md")
    finally:
        session.close()


async def config(root: Path, env: EnvSnapshot) -> str:
    loaded = load_config(env, root)
    return "\n".join(problem.message for problem in loaded.diagnostics)


async def shell(root: Path, env: EnvSnapshot) -> str:
    shadow = ShadowCopy(root, temp_parent=root.parent)
    runner = ShellRunner(
        shadow, Overlay(root, shadow=shadow), {"PATH": os.environ.get("PATH", "")}, sandbox=None
    )
    try:
        return (await run(runner, "cat src/app.py docs/guide.md")).output
    finally:
        shadow.close()


Probe = Callable[[Path, EnvSnapshot], Awaitable[str]]
SEARCH_STOPPED = "is a FIFO (named pipe), and ripgrep would wait forever to read its ignore rules"
CASES: list[tuple[str, Probe, str]] = [
    ("docs/.gitignore", list_files, "docs/guide.md\nsrc/app.py"),
    ("src/.gitignore", grep, f"Error: search stopped: src/.gitignore {SEARCH_STOPPED}"),
    ("docs/.ignore", grep, f"Error: search stopped: docs/.ignore {SEARCH_STOPPED}"),
    ("src/.rgignore", grep, f"Error: search stopped: src/.rgignore {SEARCH_STOPPED}"),
    ("AGENTS.md", agents_md, "AGENTS.md not loaded: not a regular file"),
    (
        ".agents/skills/demo/SKILL.md",
        skill_activation,
        "Error: skill demo: its SKILL.md cannot be read (not a regular file)",
    ),
    ("agent-ls.toml", config, "cannot read this file: not a regular file; it is ignored"),
    (".gitmodules", hard_link, "Error: refused: 'docs/copy.md' is a hard link (2 names); "),
    ("docs/.gitignore", shell, "hello = 1\nhello docs\n"),
]


@pytest.mark.parametrize(
    ("fifo", "probe", "expected"), CASES, ids=[f"{probe.__name__}-{fifo}" for fifo, probe, _ in CASES]
)
async def test_a_fifo_in_each_role_is_refused_without_blocking(
    fifo: str, probe: Probe, expected: str, root: Path, env: EnvSnapshot
) -> None:
    tree(root)
    (root / fifo).parent.mkdir(parents=True, exist_ok=True)
    if probe is not skill_activation:
        os.mkfifo(root / fifo)
    with guard([root / fifo]) as hung:
        seen = await probe(root, env)
    assert not hung[0], f"blocked on {fifo}"
    assert seen.startswith(expected) if expected.startswith("Error") else expected in seen
