"""Code actions through a real server: the agent's actions, each an ``agent.runSkill`` command with the
exact arguments, filtered by ``context.only``, and none for files outside the workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Union

from lsprotocol import types as t
from pytest_lsp import LanguageClient

from tests.e2e.conftest import start


def read_code_actions_as_sent(client: LanguageClient) -> None:
    """lsprotocol 2025.0.0 reads every element with a ``command`` key as a ``Command``, so a ``CodeAction``
    carrying a command comes back mangled on the client side; LSP 3.17 tells them apart by the type of
    ``command`` (a string only in a ``Command``). The client's converter is taught that rule."""
    converter = client.protocol._converter

    def structure(value: Any, _: type) -> t.Command | t.CodeAction:
        if isinstance(value.get("command"), str):
            return converter.structure(value, t.Command)
        return converter.structure(value, t.CodeAction)

    converter.register_structure_hook(Union[t.Command, t.CodeAction], structure)  # noqa: UP007


def rng(start: tuple[int, int], end: tuple[int, int]) -> t.Range:
    return t.Range(start=t.Position(*start), end=t.Position(*end))


async def code_actions(
    client: LanguageClient, uri: str, selection: t.Range, diagnostics: list[t.Diagnostic], only: Any = None
) -> list[Any] | None:
    read_code_actions_as_sent(client)
    result = await client.text_document_code_action_async(
        t.CodeActionParams(
            text_document=t.TextDocumentIdentifier(uri=uri),
            range=selection,
            context=t.CodeActionContext(diagnostics=diagnostics, only=only),
        )
    )
    return None if result is None else list(result)


async def test_actions_carry_the_run_skill_arguments(client: LanguageClient, workspace: Path) -> None:
    await start(client, workspace)
    uri = (workspace / "stats.py").as_uri()
    problem = t.Diagnostic(
        range=rng((1, 11), (1, 39)),
        message="division by len(values) - 1",
        severity=t.DiagnosticSeverity.Error,
        source="mypy",
        code="bug",
    )
    actions = await code_actions(client, uri, rng((1, 20), (1, 20)), [problem])
    assert actions is not None
    converter = client.protocol._converter
    received = [converter.unstructure(action) for action in actions]
    problem_range = {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 39}}
    cursor = {"start": {"line": 1, "character": 20}, "end": {"line": 1, "character": 20}}

    def command(title: str, argument: dict[str, Any]) -> dict[str, Any]:
        return {"title": title, "command": "agent.runSkill", "arguments": [argument]}

    assert received == [
        {
            "title": "Agent: Fix this problem",
            "kind": "quickfix",
            "diagnostics": [
                {
                    "range": problem_range,
                    "message": problem.message,
                    "severity": 1,
                    "source": "mypy",
                    "code": "bug",
                }
            ],
            "command": command(
                "Agent: Fix this problem",
                {
                    "skill": "fix-diagnostics",
                    "uri": uri,
                    "range": problem_range,
                    "diagnostics": [
                        {
                            "range": problem_range,
                            "message": problem.message,
                            "severity": 1,
                            "source": "mypy",
                            "code": "bug",
                        }
                    ],
                },
            ),
        },
        {
            "title": "Agent: Review this file (/code-review)",
            "kind": "source",
            "command": command(
                "Agent: Review this file (/code-review)", {"skill": "code-review", "uri": uri}
            ),
        },
        {
            "title": "Agent: Write tests for this",
            "kind": "source",
            "command": command(
                "Agent: Write tests for this", {"skill": "write-tests", "uri": uri, "range": cursor}
            ),
        },
    ]


async def test_only_and_the_selection_choose_the_actions(client: LanguageClient, workspace: Path) -> None:
    await start(client, workspace)
    uri = (workspace / "stats.py").as_uri()
    problem = t.Diagnostic(range=rng((1, 0), (1, 5)), message="bad")
    selection = rng((0, 0), (2, 0))

    def titles(actions: list[Any] | None) -> list[str]:
        assert actions is not None
        return [action.title for action in actions]

    assert titles(await code_actions(client, uri, selection, [problem])) == [
        "Agent: Fix this problem",
        "Agent: Review this file (/code-review)",
        "Agent: Explain selection",
        "Agent: Write tests for this",
    ]
    quickfix = await code_actions(client, uri, selection, [problem], only=[t.CodeActionKind.QuickFix])
    assert titles(quickfix) == ["Agent: Fix this problem"]
    source = await code_actions(client, uri, selection, [problem], only=[t.CodeActionKind.Source])
    assert titles(source) == ["Agent: Review this file (/code-review)", "Agent: Write tests for this"]
    assert (
        titles(await code_actions(client, uri, selection, [problem], only=[t.CodeActionKind.Refactor])) == []
    )

    outside = (workspace.parent / "elsewhere.py").as_uri()
    assert await code_actions(client, outside, selection, [problem]) is None
    assert await code_actions(client, "untitled:Untitled-1", selection, [problem]) is None


async def test_the_server_declares_its_code_action_kinds(client: LanguageClient, workspace: Path) -> None:
    result = await client.initialize_session(
        t.InitializeParams(
            capabilities=t.ClientCapabilities(),
            root_uri=workspace.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        )
    )
    provider = result.capabilities.code_action_provider
    assert isinstance(provider, t.CodeActionOptions)
    assert list(provider.code_action_kinds or []) == ["quickfix", "", "source"]
    assert result.capabilities.hover_provider
