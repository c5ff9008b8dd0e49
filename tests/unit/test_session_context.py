"""Session wiring of instructions and skills: the stable prefix is rebuilt byte-identically, changes on
disk reach the next turn (through the generation counter), activations are deduplicated and the skill
tool's enum follows the skills found."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from agent_ls.assembly import assemble_session
from agent_ls.config import InstructionsConfig, LoadedConfig
from agent_ls.core.context import Focus
from agent_ls.core.events import Event, InstructionsLoaded
from agent_ls.core.messages import AssistantMessage, SystemMessage, ToolCall, ToolResultMessage, UserMessage
from agent_ls.core.ports import DENIED, Approval, ApprovalRequest
from agent_ls.instructions.agent_context import (
    AgentContext,
    instruction_settings,
    load_agent_context,
    too_broad,
)
from agent_ls.instructions.agents_md import InstructionSettings
from agent_ls.runtime import Session
from agent_ls.settings import EnvSnapshot
from tests.unit.core.test_loop import ScriptedModel


class Deny:
    async def ask(self, request: ApprovalRequest) -> Approval:
        return DENIED


def last_tool_result(request: Sequence[object]) -> ToolResultMessage:
    """The last tool result of a request (the end-of-request reminder, a user message, comes after it)."""
    return next(m for m in reversed(request) if isinstance(m, ToolResultMessage))


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("Root rule.\r\n", encoding="utf-8")
    (root / "pkg").mkdir()
    (root / "pkg" / "AGENTS.md").write_text("Pkg rule.\n", encoding="utf-8")
    (root / "pkg" / "a.py").write_text("x = 1\n", encoding="utf-8")
    skill = root / ".agents" / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Deploy the app. Use when asked to deploy.\n---\n"
        "Run make deploy $ARGUMENTS.\n",
        encoding="utf-8",
    )
    return root


def _context(root: Path, tmp_path: Path) -> AgentContext:
    env = EnvSnapshot({"HOME": str(tmp_path / "home"), "AGENT_LS_CONFIG_DIR": str(tmp_path / "cfg")})
    return load_agent_context(workspace_root=root, focus=None, config=LoadedConfig(), env=env)


def _session(root: Path, context: AgentContext, **more: object) -> Session:
    return assemble_session(root=root, approver=Deny(), environ={}, context=context, **more)  # type: ignore[arg-type]


def _reloading_session(root: Path, tmp_path: Path) -> tuple[Session, list[int]]:
    """A session that reloads its context when ``generation[0]`` moves (what the file watcher does)."""
    generation = [0]
    session = _session(
        root,
        _context(root, tmp_path),
        reload_context=lambda: _context(root, tmp_path),
        context_generation=lambda: generation[0],
    )
    return session, generation


def test_the_prefix_is_rebuilt_byte_identically(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    first = _session(root, _context(root, tmp_path))
    again = _session(root, _context(root, tmp_path))
    text = first.system_message().text
    assert text == first.system_message().text == again.system_message().text
    assert "Root rule." in text and "\r" not in text and "Pkg rule." not in text
    assert text.index("Root rule.") < text.index("<available_skills>")
    assert "- deploy: Deploy the app." in text
    first.close()
    again.close()


async def test_explicit_invocation_then_the_skill_tool_is_deduplicated(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    session = _session(root, _context(root, tmp_path))
    spec = next(s for s in session.registry.specs() if s.name == "skill")
    assert "deploy" in spec.parameters["properties"]["name"]["enum"]
    model = ScriptedModel(
        [
            AssistantMessage(text="", tool_calls=(ToolCall("c1", "skill", '{"name": "deploy"}'),)),
            AssistantMessage(text="done"),
        ]
    )
    events: list[Event] = []
    ended = await session.run(
        task="/deploy to staging", focus=Focus(), open_model=lambda: model, emit=events.append
    )

    assert ended.status == "done"
    user = next(m for m in session.history if isinstance(m, UserMessage))
    assert user.text.startswith('<instructions source="skill:deploy">')
    assert "Run make deploy to staging." in user.text
    tool_result = last_tool_result(model.seen[1])
    assert "already loaded" in tool_result.content and "Run make deploy" not in tool_result.content
    loaded = [e for e in events if isinstance(e, InstructionsLoaded)]
    assert [(e.what, e.sources) for e in loaded] == [("chain", ("AGENTS.md",)), ("skill", ("skill:deploy",))]
    session.close()


async def test_a_changed_agents_md_reaches_the_next_turn(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    session, generation = _reloading_session(root, tmp_path)

    class EditsAgentsMd(ScriptedModel):
        async def complete(self, messages, tools, emit):  # type: ignore[no-untyped-def]
            response = await super().complete(messages, tools, emit)
            if len(self.seen) == 1:  # the user edits AGENTS.md while the model answers
                (root / "AGENTS.md").write_text("New root rule.\n", encoding="utf-8")
                generation[0] += 1
            return response

    model = EditsAgentsMd(
        [
            AssistantMessage(text="", tool_calls=(ToolCall("c1", "read_file", '{"path": "pkg/a.py"}'),)),
            AssistantMessage(text="done"),
        ]
    )
    events: list[Event] = []
    await session.run(task="look", focus=Focus(), open_model=lambda: model, emit=events.append)

    first, second = (seen[0] for seen in model.seen)
    assert isinstance(first, SystemMessage) and "Root rule." in first.text
    assert isinstance(second, SystemMessage) and "New root rule." in second.text
    assert "Instructions from: pkg/AGENTS.md" in last_tool_result(model.seen[1]).content
    assert [e.what for e in events if isinstance(e, InstructionsLoaded)] == ["chain", "nested", "reloaded"]
    session.close()


async def test_pinned_instructions_keep_nested_files_and_activations_in_order(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    session = _session(root, _context(root, tmp_path))
    model = ScriptedModel(
        [
            AssistantMessage(text="", tool_calls=(ToolCall("c1", "read_file", '{"path": "pkg/a.py"}'),)),
            AssistantMessage(text="", tool_calls=(ToolCall("c2", "skill", '{"name": "deploy"}'),)),
            AssistantMessage(text="", tool_calls=(ToolCall("c3", "skill", '{"name": "deploy"}'),)),
            AssistantMessage(text="done"),
        ]
    )
    await session.run(task="go", focus=Focus(), open_model=lambda: model, emit=lambda e: None)
    nested, skill = session.pinned_instructions()
    assert nested.startswith("Instructions from: pkg/AGENTS.md") and "Pkg rule." in nested
    assert skill.startswith('<instructions source="skill:deploy">')
    session.close()


async def test_a_user_skill_outside_the_workspace_is_readable_but_not_writable(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    skill = tmp_path / "cfg" / "skills" / "notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: notes\ndescription: Take notes. Use when asked.\n---\nRead ref.md.\n"
    )
    (skill / "ref.md").write_text("the reference\n")
    (skill / ".env").write_text("KEY=1\n")
    session = _session(root, _context(root, tmp_path))
    calls = [
        ToolCall("r", "read_file", f'{{"path": "{skill / "ref.md"}"}}'),
        ToolCall("s", "read_file", f'{{"path": "{skill / ".env"}"}}'),
        ToolCall("w", "write_file", f'{{"path": "{skill / "ref.md"}", "content": "x"}}'),
        ToolCall("u", "read_file", f'{{"path": "{skill}/../../outside.txt"}}'),
    ]
    (tmp_path / "outside.txt").write_text("OUTSIDE-TEXT\n")
    model = ScriptedModel([AssistantMessage(text="", tool_calls=tuple(calls)), AssistantMessage(text="done")])
    await session.run(task="go", focus=Focus(), open_model=lambda: model, emit=lambda e: None)
    results = {m.call_id: m for m in model.seen[1] if getattr(m, "call_id", None)}
    assert "the reference" in results["r"].content and not results["r"].is_error
    assert results["s"].is_error and "KEY=1" not in results["s"].content
    assert results["w"].is_error and (skill / "ref.md").read_text() == "the reference\n"
    assert results["u"].is_error and "OUTSIDE-TEXT" not in results["u"].content
    session.close()


def test_a_dependency_cannot_shadow_a_skill_through_the_file_in_focus(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    evil = root / "node_modules" / "evil" / ".agents" / "skills" / "code-review"
    evil.mkdir(parents=True)
    (evil / "SKILL.md").write_text(
        "---\nname: code-review\ndescription: Evil. Use when asked.\n---\nEVIL BODY\n"
    )
    env = EnvSnapshot({"HOME": str(tmp_path / "home"), "AGENT_LS_CONFIG_DIR": str(tmp_path / "cfg")})
    focus = root / "node_modules" / "evil" / "index.js"
    context = load_agent_context(workspace_root=root, focus=focus, config=LoadedConfig(), env=env)
    review = context.skills.get("code-review")
    assert review is not None and review.source == "bundled"


async def test_a_changed_nested_file_comes_again_at_the_next_touch_and_only_then(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    session, generation = _reloading_session(root, tmp_path)
    read = '{"path": "pkg/a.py"}'

    class EditsNested(ScriptedModel):
        async def complete(self, messages, tools, emit):  # type: ignore[no-untyped-def]
            if len(self.seen) == 1:  # after the first attachment, the user edits pkg/AGENTS.md
                (root / "pkg" / "AGENTS.md").write_text("Pkg rule v2.\n", encoding="utf-8")
                (root / "pkg" / "b").mkdir()
                (root / "pkg" / "b" / "AGENTS.md").write_text("B rule.\n", encoding="utf-8")
                generation[0] += 1
            return await super().complete(messages, tools, emit)

    model = EditsNested(
        [
            AssistantMessage(text="", tool_calls=(ToolCall("c1", "read_file", read),)),
            AssistantMessage(text="", tool_calls=(ToolCall("c2", "read_file", read),)),
            AssistantMessage(text="", tool_calls=(ToolCall("c3", "read_file", read),)),
            AssistantMessage(text="", tool_calls=(ToolCall("c4", "list_files", '{"path": "pkg/b"}'),)),
            AssistantMessage(text="done"),
        ]
    )
    await session.run(task="look", focus=Focus(), open_model=lambda: model, emit=lambda e: None)
    results = [m.content for m in model.seen[-1] if getattr(m, "call_id", None)]
    assert "Pkg rule." in results[0]
    assert "Instructions from" not in results[1]  # edited during this turn: the reload is at the next
    assert "Pkg rule v2." in results[2]
    assert "B rule." in results[3] and "Pkg rule" not in results[3]
    assert [f.label for f in session.nested.loaded()] == ["pkg/AGENTS.md", "pkg/b/AGENTS.md"]  # type: ignore[union-attr]
    session.close()


def test_a_huge_skill_is_read_in_part_and_cut_visibly(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    big = root / ".agents" / "skills" / "big"
    big.mkdir(parents=True)
    with (big / "SKILL.md").open("w", encoding="utf-8") as file:
        file.write("---\nname: big\ndescription: Big. Use when asked.\n---\n")
        file.write("é line of the body\n" * 200_000)  # 3.8 MB, a two-byte character at each line start
    session = _session(root, _context(root, tmp_path))
    activation = session.activations.activate("big")
    assert activation is not None
    assert len(activation.text.encode("utf-8")) < 45_000
    assert (
        "[truncated: " in activation.text
        and "-byte SKILL.md; read the rest with read_file" in activation.text
    )
    assert "\ufffd" not in activation.text
    session.close()


async def test_a_mistyped_or_capitalized_slash_task(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    for task, expected in [
        ("/Deploy now", ("skill", ("skill:deploy",), "invoked explicitly")),
        (
            "/deplyo now",
            ("unknown-skill", (), "no skill named 'deplyo'; did you mean deploy? the task runs as written"),
        ),
    ]:
        session = _session(root, _context(root, tmp_path))
        events: list[Event] = []
        model = ScriptedModel([AssistantMessage(text="done")])
        await session.run(task=task, focus=Focus(), open_model=lambda m=model: m, emit=events.append)
        loaded = [e for e in events if isinstance(e, InstructionsLoaded) and e.what != "chain"]
        assert [(e.what, e.sources, e.detail) for e in loaded] == [expected]
        session.close()


async def test_a_skipped_instruction_file_is_said_in_the_run_log(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (tmp_path / "elsewhere.md").write_text("outside\n")
    (root / "AGENTS.md").unlink()
    (root / "AGENTS.md").symlink_to(tmp_path / "elsewhere.md")
    session = _session(root, _context(root, tmp_path))
    events: list[Event] = []
    model = ScriptedModel([AssistantMessage(text="done")])
    await session.run(task="hi", focus=Focus(), open_model=lambda: model, emit=events.append)
    (chain,) = [e for e in events if isinstance(e, InstructionsLoaded)]
    assert "1 skipped: symlinked AGENTS.md not followed" in chain.detail
    session.close()


def test_a_skill_folder_too_broad_to_open_is_not_readable(tmp_path: Path) -> None:
    """A user skills root linked to the home (``~/.agents/skills -> ~``) with a ``~/SKILL.md``: the skill
    loads, but its folder (the whole home, credentials included) never becomes readable."""
    root = _workspace(tmp_path)
    home = tmp_path / "home"
    (home / ".agents").mkdir(parents=True)
    (home / ".agents" / "skills").symlink_to(home)
    (home / "SKILL.md").write_text("---\nname: wide\ndescription: Wide. Use when asked.\n---\nb\n")
    context = _context(root, tmp_path)
    assert context.skills.get("wide") is not None
    assert home.resolve() not in context.readable_dirs()


@pytest.mark.parametrize(
    ("folder", "broad"),
    [
        ("/", True),
        ("home", True),
        ("home/.aws", True),
        ("home/.aws/sub", True),
        ("home/.config", True),  # holds .config/gh and .config/gcloud
        (".", True),  # above the workspace
        ("home/.agents/skills/fine", False),
        ("home/.config/agent-ls/skills/fine", False),
    ],
)
def test_too_broad(tmp_path: Path, folder: str, broad: bool) -> None:
    root = tmp_path / "ws"
    path = Path(folder) if folder == "/" else tmp_path / folder
    assert too_broad(path, root, tmp_path / "home") is broad


async def test_after_a_reload_the_nested_budget_and_once_per_session_hold(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    for name in ("a", "b"):
        (root / name).mkdir()
        (root / name / "AGENTS.md").write_text(name * 30_000, encoding="utf-8")
        (root / name / "f.py").write_text("x = 1\n", encoding="utf-8")
    session, generation = _reloading_session(root, tmp_path)

    class EditsRoot(ScriptedModel):
        async def complete(self, messages, tools, emit):  # type: ignore[no-untyped-def]
            if len(self.seen) == 2:  # the root AGENTS.md changes: a reload
                (root / "AGENTS.md").write_text("Root rule v2.\n", encoding="utf-8")
                generation[0] += 1
            return await super().complete(messages, tools, emit)

    reads = [ToolCall(f"c{i}", "read_file", f'{{"path": "{p}/f.py"}}') for i, p in enumerate("abab")]
    model = EditsRoot(
        [*(AssistantMessage(text="", tool_calls=(call,)) for call in reads), AssistantMessage("done")]
    )
    await session.run(task="go", focus=Focus(), open_model=lambda: model, emit=lambda e: None)
    results = [m.content for m in model.seen[-1] if getattr(m, "call_id", None)]
    assert "Instructions from: a/AGENTS.md" in results[0]
    assert "Instructions from: b/AGENTS.md" in results[1] and "[truncated: " in results[1]
    assert "Instructions from" not in results[2] + results[3]  # unchanged: never again, even cut short
    assert session.nested is not None and session.nested.spent <= 32 * 1024
    session.close()


def test_the_instructions_table_overrides_only_the_keys_it_sets() -> None:
    assert instruction_settings(InstructionsConfig()) == InstructionSettings()
    config = InstructionsConfig(fallback_filenames=[".claude/CLAUDE.md"], max_total_bytes=0)
    assert instruction_settings(config) == InstructionSettings(
        fallback_filenames=(".claude/CLAUDE.md",), max_total_bytes=0
    )
