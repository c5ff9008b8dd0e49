"""Agent files through a real server: SKILL.md and AGENTS.md problems as diagnostics, cleared once fixed
(after a save, or a change the client's file watch reports), and the hover's token costs."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import CAPABILITIES

# An empty home and config dir: the developer's own ~/.agents/skills and global AGENTS.md never leak in.
HOME = Path(tempfile.mkdtemp(prefix="agent-ls-e2e-home-"))
SERVER_ENV = {"HOME": str(HOME), "AGENT_LS_CONFIG_DIR": str(HOME / "config")}

BROKEN_SKILL = """\
---
name: other-name
description: Review code: find bugs and report them with line numbers
---

# Review
"""
FIXED_SKILL = """\
---
name: broken-dir
description: "Review code: find bugs and report them with line numbers"
---

# Review
"""
FORMAT = "Format Python source files with black and isort before committing"
ALPHA = f"---\nname: alpha\ndescription: {FORMAT}\n---\nA\n"
BETA = f"---\nname: beta\ndescription: {FORMAT.replace('Format', 'Format the')}\n---\nB\n"
DISTINCT_BETA = "---\nname: beta\ndescription: Draw architecture diagrams of a service with Mermaid\n---\nB\n"
BIG_AGENTS_MD = "# Rules\n" + "- keep functions small and named after what they do\n" * 900  # ~46 KB > 32 KiB
SMALL_AGENTS_MD = "# Rules\n- keep functions small\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\n", encoding="utf-8")
    (root / "AGENTS.md").write_text(BIG_AGENTS_MD, encoding="utf-8")
    for name, text in (("broken-dir", BROKEN_SKILL), ("alpha", ALPHA), ("beta", BETA)):
        folder = root / ".agents" / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return root


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "agent_ls", "serve"], server_env=SERVER_ENV
    )
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    registrations: list[t.RegistrationParams] = []
    lsp_client.registrations = registrations  # type: ignore[attr-defined]

    @lsp_client.feature(t.CLIENT_REGISTER_CAPABILITY)
    def _register(params: t.RegistrationParams) -> None:
        registrations.append(params)

    yield lsp_client
    await lsp_client.shutdown_session()


async def start(
    client: LanguageClient, root: Path, capabilities: t.ClientCapabilities = CAPABILITIES
) -> None:
    await client.initialize_session(
        t.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=root.as_uri(), name="ws")],
        )
    )


async def published(
    client: LanguageClient, path: Path, predicate: Any = bool, timeout_s: float = 15.0
) -> list[t.Diagnostic]:
    """The diagnostics of ``path`` once a publication satisfies ``predicate`` (the latest one wins)."""
    uri = path.as_uri()
    async with asyncio.timeout(timeout_s):
        while uri not in client.diagnostics or not predicate(client.diagnostics[uri]):
            await client.wait_for_notification(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


def cleared(diagnostics: list[t.Diagnostic]) -> bool:
    return len(diagnostics) == 0


def skill(root: Path, name: str) -> Path:
    return root / ".agents" / "skills" / name / "SKILL.md"


def summary(diagnostics: list[t.Diagnostic]) -> list[tuple[int, t.DiagnosticSeverity | None, str]]:
    return sorted((d.range.start.line, d.severity, d.message.split(" (")[0]) for d in diagnostics)


WATCHING_CLIENT = t.ClientCapabilities(
    workspace=t.WorkspaceClientCapabilities(
        did_change_watched_files=t.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)
    ),
    text_document=t.TextDocumentClientCapabilities(
        hover=t.HoverClientCapabilities(content_format=[t.MarkupKind.Markdown])
    ),
)


async def test_skill_and_agents_md_problems_are_published_and_cleared_after_a_save(
    client: LanguageClient, workspace: Path
) -> None:
    """The client watches files (so the server does not): only the save can bring the change."""
    await start(client, workspace, WATCHING_CLIENT)

    broken = await published(client, skill(workspace, "broken-dir"))
    assert summary(broken) == [
        (1, t.DiagnosticSeverity.Warning, "Directory name 'broken-dir' must match skill name 'other-name'"),
        (2, t.DiagnosticSeverity.Warning, "loaded leniently: the frontmatter is not valid YAML"),
    ]
    assert all(d.source == "agent-ls" for d in broken)
    for mine, other in (("alpha", "beta"), ("beta", "alpha")):
        [overlap] = await published(client, skill(workspace, mine))
        assert overlap.range.start.line == 2  # the description line
        assert overlap.message.startswith(f"description overlaps strongly with skill '{other}'")
    [truncated] = await published(client, workspace / "AGENTS.md")
    assert truncated.severity == t.DiagnosticSeverity.Warning
    assert truncated.message.startswith("truncated: only the first 32768 of ")

    # The user fixes the files and saves one (the client's watch says nothing): each fixed file is cleared.
    skill(workspace, "broken-dir").write_text(FIXED_SKILL, encoding="utf-8")
    skill(workspace, "beta").write_text(DISTINCT_BETA, encoding="utf-8")
    (workspace / "AGENTS.md").write_text(SMALL_AGENTS_MD, encoding="utf-8")
    client.text_document_did_save(
        t.DidSaveTextDocumentParams(
            text_document=t.TextDocumentIdentifier(uri=skill(workspace, "beta").as_uri())
        )
    )
    for path in (skill(workspace, "broken-dir"), skill(workspace, "alpha"), skill(workspace, "beta")):
        assert await published(client, path, cleared) == []
    assert await published(client, workspace / "AGENTS.md", cleared) == []


async def test_a_client_that_watches_files_reports_the_changes_that_relint(
    client: LanguageClient, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text(SMALL_AGENTS_MD, encoding="utf-8")
    await start(client, workspace, WATCHING_CLIENT)
    await published(client, skill(workspace, "broken-dir"))

    [registration] = [r for p in client.registrations for r in p.registrations]  # type: ignore[attr-defined]
    assert registration.method == "workspace/didChangeWatchedFiles"
    globs = [w["globPattern"] for w in registration.register_options["watchers"]]
    assert globs == ["**/{AGENTS.override.md,AGENTS.md,CLAUDE.md,SKILL.md}", "**/skills/**"]

    # The server does not watch the workspace itself then: the client's notification brings the change.
    (workspace / "AGENTS.md").write_text(BIG_AGENTS_MD, encoding="utf-8")
    client.workspace_did_change_watched_files(
        t.DidChangeWatchedFilesParams(
            changes=[t.FileEvent(uri=(workspace / "AGENTS.md").as_uri(), type=t.FileChangeType.Changed)]
        )
    )
    [truncated] = await published(client, workspace / "AGENTS.md")
    assert truncated.message.startswith("truncated: only the first 32768 of ")


async def test_without_a_client_watch_the_server_sees_files_change_on_disk(
    client: LanguageClient, workspace: Path
) -> None:
    await start(client, workspace)  # a client that cannot watch files (no dynamic registration)
    await published(client, workspace / "AGENTS.md")
    assert client.registrations == []  # type: ignore[attr-defined]

    (workspace / "AGENTS.md").write_text(SMALL_AGENTS_MD, encoding="utf-8")  # no LSP message at all
    assert await published(client, workspace / "AGENTS.md", cleared) == []


async def hover_text(client: LanguageClient, path: Path, line: int = 0) -> str:
    result = await client.text_document_hover_async(
        t.HoverParams(text_document=t.TextDocumentIdentifier(uri=path.as_uri()), position=t.Position(line, 0))
    )
    assert result is not None and isinstance(result.contents, t.MarkupContent)
    return result.contents.value


async def test_hover_shows_what_the_files_cost(client: LanguageClient, workspace: Path) -> None:
    await start(client, workspace, WATCHING_CLIENT)
    await published(client, skill(workspace, "broken-dir"))  # the lint has loaded the skills

    text = await hover_text(client, skill(workspace, "alpha"), line=5)
    body_tokens = -(-len("A\n") // 4)
    assert (
        text.splitlines()[0]
        == "**Skill `alpha`** · project skill · the model may invoke it (it is in the catalog)"
    )
    assert "- Catalog: ~" in text and "tokens in every request (catalog entry: name and description)" in text
    assert f"- Activation: ~{body_tokens} tokens (2 bytes of body) when activated" in text
    assert "Tokens are estimates: bytes / 4." in text

    text = await hover_text(client, workspace / "AGENTS.md")
    size = len(BIG_AGENTS_MD.encode())
    assert text.splitlines()[0] == "**Instructions `AGENTS.md`** · scope `**`"
    assert (
        f"- Cost: ~{32768 // 4} tokens (32768 bytes) in every request in this workspace; truncated: " in text
    )
    assert f"32768 of {size} bytes kept" in text
    assert "- Governs 2 files (not ignored by Git), e.g.:" in text  # hidden .agents/ is not listed
    assert "  - `src/app.py`" in text and "  - `AGENTS.md`" in text

    assert (
        await client.text_document_hover_async(
            t.HoverParams(
                text_document=t.TextDocumentIdentifier(uri=(workspace / "src" / "app.py").as_uri()),
                position=t.Position(0, 0),
            )
        )
        is None
    )
