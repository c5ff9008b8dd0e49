"""A hard link to a secret is a secret (``workspace/hard_links.py``), at every entry point to file contents.

``ln .env notes.txt`` gave the key a second name no secret pattern matches: read_file, grep, an
``@import``, a skill, ``cat`` in the shadow copy and workspace mode all showed it (review of
2026-11-30). One workspace, one probe per entry point (the table); each probe returns what the model
or the command sees, which must not hold the secret. Hard links inside dependency folders (pnpm links
``node_modules`` into its store) stay readable: the controls in the same probes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from agent_ls.assembly import assemble_session
from agent_ls.core.messages import ToolCall
from agent_ls.core.ports import Approval, ApprovalRequest
from agent_ls.instructions.agents_md import render_chain
from agent_ls.runtime import Session
from agent_ls.settings import EnvSnapshot
from agent_ls.workspace.hard_links import ADVICE
from agent_ls.workspace.overlay import OpenBuffer, Overlay
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shell_runner import ShellRunner
from tests.support.processes import require_sandbox
from tests.support.processes import run_quietly as run
from tests.unit.workspace.conftest import FakeBuffers, write

SECRET = "SECRETVALUE"
ENVIRON = {"PATH": os.environ.get("PATH", os.defpath), "HOME": "/nonexistent-home"}
# A secret that is also a valid SKILL.md and Markdown, so every reader would show it.
SECRET_TEXT = f"---\nname: demo\ndescription: a demo skill {SECRET}\n---\nKEY={SECRET}\n"
NAMES = ("notes.txt", "rules.md", ".agents/skills/demo/SKILL.md", "ign/key.txt")
"""The second names of ``.env``: plain, imported, a skill, in a gitignored folder the copy links."""


class Deny:
    async def ask(self, request: ApprovalRequest) -> Approval:
        return Approval("deny")


def plant(root: Path) -> None:
    write(
        root,
        {
            ".env": SECRET_TEXT,
            ".gitignore": "ign/\n",
            "CLAUDE.md": "Project rules:\n@rules.md\n",
            "ign/ok.txt": "ok ignored\n",
            "node_modules/pkg/a.js": "DEPENDENCY\n",
            "vendor/lib/a.txt": "VENDORED\n",
            "src/app.py": "print('app')\n",
        },
    )
    for name in NAMES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        os.link(root / ".env", root / name)
    os.link(root / "node_modules/pkg/a.js", root / "node_modules/pkg/b.js")  # pnpm's store links
    os.link(root / "vendor/lib/a.txt", root / "vendor/lib/b.txt")


@pytest.fixture(params=["sandboxed", "unsandboxed"])
def sandboxed(request: pytest.FixtureRequest) -> bool:
    if request.param == "sandboxed":
        require_sandbox()
    return bool(request.param == "sandboxed")


@pytest.fixture
def session(root: Path, sandboxed: bool, tmp_path: Path) -> Iterator[Session]:
    plant(root)
    environ = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/")}
    buffers = FakeBuffers()  # the editor shows notes.txt: an unsaved buffer holds the secret too
    buffers.open[root / "notes.txt"] = OpenBuffer(SECRET_TEXT + "unsaved\n", 2)
    env = EnvSnapshot({"HOME": str(tmp_path / "home"), "AGENT_LS_CONFIG_DIR": str(tmp_path / "config")})
    made = assemble_session(root=root, approver=Deny(), environ=environ, env=env, buffers=buffers)
    if not sandboxed:
        made.overlay._detect = False
        made.overlay._sandbox = None
    yield made
    made.close()


async def call(session: Session, tool: str, **arguments: object) -> str:
    """What the model reads of one call through the registry (``Error: ...`` for an error)."""
    result = await session.registry.execute(ToolCall("c1", tool, json.dumps(arguments)), lambda _: None)
    return result.content.split("\n", 1)[1].rsplit("\n", 1)[0]


async def read_file(session: Session, root: Path, sandboxed: bool) -> str:
    seen = [await call(session, "read_file", path=name) for name in NAMES]
    return "\n".join([*seen, await call(session, "read_file", path="node_modules/pkg/b.js")])


async def grep(session: Session, root: Path, sandboxed: bool) -> str:
    found = await call(session, "grep", pattern=f"{SECRET}|VENDORED", glob="*")
    hidden = await call(session, "grep", pattern=SECRET, path="ign")
    return "\n".join([found, hidden, await call(session, "grep", pattern="DEPENDENCY", path="node_modules")])


async def imports(session: Session, root: Path, sandboxed: bool) -> str:
    chain = session.context.chain
    assert chain is not None
    return render_chain(chain)


async def skill(session: Session, root: Path, sandboxed: bool) -> str:
    return await call(session, "skill", name="demo")


async def shadow_cat(session: Session, root: Path, sandboxed: bool) -> str:
    shadow = ShadowCopy(root, temp_parent=root.parent)
    runner = ShellRunner(
        shadow, Overlay(root, shadow=shadow), ENVIRON, sandbox=require_sandbox() if sandboxed else None
    )
    try:
        result = await run(
            runner, "cat notes.txt ign/key.txt ign/ok.txt; grep -rh . vendor node_modules/pkg | sort"
        )
    finally:
        shadow.close()
    return result.output


async def workspace_mode(session: Session, root: Path, sandboxed: bool) -> str:
    if not sandboxed:
        pytest.skip("workspace mode masks through the sandbox")
    shadow = ShadowCopy(root, temp_parent=root.parent)
    runner = ShellRunner(
        shadow, Overlay(root, shadow=shadow), ENVIRON, sandbox=require_sandbox(), mode="workspace"
    )
    try:
        result = await run(
            runner,
            "cat notes.txt rules.md ign/key.txt 2>&1 | sed 's/^cat: //'; "
            "cat vendor/lib/b.txt node_modules/pkg/b.js",
        )
    finally:
        shadow.close()
    return result.output


def refused(name: str) -> str:
    return f"Error: refused: {name!r} is a hard link (5 names); {ADVICE}"


Probe = Callable[[Session, Path, bool], Awaitable[str]]
CASES: list[tuple[Probe, str]] = [
    (read_file, "\n".join([*map(refused, NAMES), "     1\tDEPENDENCY"])),
    (
        grep,
        "vendor/lib/a.txt:1:1:VENDORED\nvendor/lib/b.txt:1:1:VENDORED\nno matches\n"
        "node_modules/pkg/a.js:1:1:DEPENDENCY\nnode_modules/pkg/b.js:1:1:DEPENDENCY",
    ),
    (imports, f"Project rules:\n@rules.md\n[import refused: rules.md is a hard link (5 names); {ADVICE}]\n"),
    (skill, "Input should be 'code-review', 'explain', 'fix-diagnostics' or 'write-tests'"),  # no demo
    (
        shadow_cat,
        "cat: notes.txt: No such file or directory\ncat: ign/key.txt: No such file or directory\n"
        "ok ignored\nDEPENDENCY\nDEPENDENCY\nVENDORED\nVENDORED\n",
    ),
    (
        workspace_mode,
        "notes.txt: Permission denied\nrules.md: Permission denied\nign/key.txt: Permission denied\n"
        "VENDORED\nDEPENDENCY\n",
    ),
]


@pytest.mark.parametrize(("probe", "expected"), CASES, ids=[probe.__name__ for probe, _ in CASES])
async def test_a_hard_link_to_a_secret_is_a_secret_at_every_entry_point(
    probe: Probe, expected: str, session: Session, root: Path, sandboxed: bool
) -> None:
    seen = await probe(session, root, sandboxed)
    assert SECRET not in seen
    assert expected in seen if probe in (imports, skill) else seen == expected
