"""``agent-ls acp`` as an ACP client drives it: a real subprocess, the SDK's client side over its stdio,
the scripted model server on 127.0.0.1.

A prompt reads the editor's unsaved text (``fs/read_text_file``), edits (``diff`` content on the tool
call), runs the tests in the shadow copy, asks permission for a command no rule allows, streams its
updates, and writes through ``fs/write_text_file`` only once the user accepts the apply question."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from acp import schema, text_block

from tests.support import agent_cli
from tests.support.acp_client import EditorClient, agent_ls_acp, initialized
from tests.support.mcp_servers import probe_entry, starts, write_servers
from tests.support.model_server import FakeModelServer

PRICE = "def price(amount):\n    return amount * 2\n"
UNSAVED = "def price(amount):\n    # unsaved in the editor\n    return amount * 2\n"
EDITED = UNSAVED.replace("amount * 2", "round(amount * 2, 2)")
TEST = "from price import price\n\n\ndef test_price():\n    assert price(0.1 + 0.2) == 0.6\n"
EDIT = {
    "name": "edit_file",
    "arguments": {
        "path": "price.py",
        "old_string": "return amount * 2",
        "new_string": "return round(amount * 2, 2)",
    },
}
STEPS: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "price.py"}}]},
    {"tool_calls": [EDIT]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "pytest -q test_price.py"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "make check"}}]},
    {"content": "Rounded the price."},
]


def _shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    (root / "price.py").write_text(PRICE)
    (root / "test_price.py").write_text(TEST)
    return root


KEY = "sk-acp-e2e-key-that-must-stay-home-0123456789"


def _env(server: FakeModelServer) -> dict[str, str]:
    env = agent_cli.user_environment(
        AGENT_LS_BASE_URL=server.base_url, AGENT_LS_MODEL="openai/test", OPENAI_API_KEY=KEY
    )
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # pytest in the shadow
    return env


def _session_files() -> list[str]:
    """The text of every session file in the store (tests/conftest.py's ``AGENT_LS_STATE_DIR``)."""
    return [path.read_text() for path in Path(os.environ["AGENT_LS_STATE_DIR"]).rglob("*.jsonl")]


def _records(root: Path) -> list[dict[str, Any]]:
    """The records of the one stored session of ``root``."""
    for path in Path(os.environ["AGENT_LS_STATE_DIR"]).rglob("*.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        if lines and lines[0].get("workspace") == str(root):
            return lines
    raise AssertionError(f"no session file of {root}")


def _tool_results(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in request["messages"] if m.get("role") == "tool")


async def _prompt(
    tmp_path: Path, root: Path, client: EditorClient, *, fs: bool, steps: list[dict[str, Any]]
) -> tuple[str, FakeModelServer]:
    with FakeModelServer(steps) as server:
        async with agent_ls_acp(client, cwd=root, env=_env(server), stderr=tmp_path / "acp.log") as conn:
            init = await initialized(conn, fs=fs)
            assert init.protocol_version == 1 and init.agent_capabilities is not None
            assert init.agent_capabilities.load_session is True
            session = await conn.new_session(cwd=str(root), mcp_servers=[])
            assert session.modes is not None and session.modes.current_mode_id == "default"
            answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("Round the price")])
    return answer.stop_reason, server


async def test_a_prompt_reads_unsaved_text_edits_tests_asks_and_writes_through_the_editor(
    tmp_path: Path,
) -> None:
    root = _shop(tmp_path)
    client = EditorClient(buffers={root / "price.py": UNSAVED})
    reason, server = await _prompt(tmp_path, root, client, fs=True, steps=STEPS)
    log = (tmp_path / "acp.log").read_text()
    assert reason == "end_turn", log
    # The read went through the editor: the model read the unsaved text.
    assert "# unsaved in the editor" in _tool_results(server.requests[1])
    assert str(root / "price.py") in client.reads
    starts = {u.tool_call_id: u for u in client.of_kind("tool_call")}
    ends = {u.tool_call_id: u for u in client.of_kind("tool_call_update")}
    kinds = [u.kind for u in starts.values()]
    assert kinds == ["read", "edit", "execute", "execute", "edit"]  # the last: the apply question's call
    read = next(u for u in starts.values() if u.kind == "read")
    assert read.locations[0].path == str(root / "price.py")
    edit = next(u for u in starts.values() if u.kind == "edit")
    diff = next(c for c in ends[edit.tool_call_id].content if c.type == "diff")
    assert (diff.path, diff.old_text, diff.new_text) == (str(root / "price.py"), UNSAVED, EDITED)
    assert [loc.line for loc in ends[edit.tool_call_id].locations] == [3]  # the edited line, 1-based
    # The tests ran in the shadow copy, against the proposal: the rounded price passes.
    pytest_call = next(u for u in starts.values() if "pytest" in u.title)
    assert "1 passed" in ends[pytest_call.tool_call_id].content[-1].content.text
    # "make check" matches no rule: asked, with the LSP front end's options; then the apply question.
    asked, options = client.questions[0]
    assert "make check" in (asked.title or "")
    assert [(o.option_id, o.kind) for o in options] == [
        ("allow_once", "allow_once"),
        ("allow_session", "allow_always"),
        ("allow_always", "allow_always"),  # "Always allow" writes the rule "bash: make check"
        ("reject_once", "reject_once"),
    ]
    assert "bash: make check" in options[2].name
    apply_call, apply_options = client.questions[-1]
    assert apply_call.title == "Apply the changes to 1 file (+1 −1 lines)?"
    assert client.announced == [True, True]  # a client correlates a question with a call it knows
    assert ends[apply_call.tool_call_id].status == "completed"
    assert [o.kind for o in apply_options] == ["allow_once", "reject_once"]
    assert "Rounded the price." in client.message_text()
    assert client.of_kind("usage_update")[-1].size > 0
    [commands] = client.of_kind("available_commands_update")
    assert {"code-review", "context", "compact"} <= {c.name for c in commands.available_commands}
    assert "Applied the changes to 1 file." in client.message_text()
    # Written through the editor after the user accepted; the disk is the editor's to save.
    assert client.writes == [(str(root / "price.py"), EDITED)]
    assert (root / "price.py").read_text() == PRICE
    # The key went to the model server only: not to the editor, the log, the shell or the session file.
    assert server.request_headers[0]["authorization"] == f"Bearer {KEY}"
    assert KEY not in log and KEY not in repr(client.updates) and KEY not in repr(client.questions)
    stored = _session_files()
    assert stored and not any(KEY in text for text in stored)
    # The session file records the run and the apply, as agent-ls run --apply does.
    kinds = [
        (r["kind"], r.get("applied")) for r in _records(root) if r["kind"] in ("apply", "proposal_cleared")
    ]
    assert kinds == [("apply", True), ("proposal_cleared", None)]


async def test_nothing_is_written_when_the_user_keeps_the_proposal(tmp_path: Path) -> None:
    root = _shop(tmp_path)

    def keep(tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]) -> str | None:
        kind = "reject_once" if tool_call.tool_call_id.startswith("apply-") else "allow_once"
        return next(o.option_id for o in options if o.kind == kind)

    client = EditorClient(buffers={root / "price.py": UNSAVED}, answer=keep)
    reason, _ = await _prompt(tmp_path, root, client, fs=True, steps=STEPS)
    assert reason == "end_turn"
    assert client.writes == []
    assert "Not applied; the proposal stays pending" in client.message_text()
    assert (root / "price.py").read_text() == PRICE
    assert not [r for r in _records(root) if r["kind"] in ("apply", "proposal_cleared")]


async def test_a_client_without_fs_gets_the_disk_read_and_a_disk_apply(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    client = EditorClient()
    reason, server = await _prompt(tmp_path, root, client, fs=False, steps=STEPS)
    assert reason == "end_turn", (tmp_path / "acp.log").read_text()
    assert client.reads == [] and client.writes == []
    assert "# unsaved" not in _tool_results(server.requests[1])
    assert (root / "price.py").read_text() == PRICE.replace("amount * 2", "round(amount * 2, 2)")


async def test_a_denied_command_fails_its_tool_call_and_a_cancel_answers_cancelled(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    client = EditorClient(answer=lambda call, options: None)  # every question answered "cancelled"
    steps = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "make check"}}]},
        {"content": "never read", "delay_s": 60},
    ]
    with FakeModelServer(steps) as server:
        async with agent_ls_acp(client, cwd=root, env=_env(server), stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=True)
            session = await conn.new_session(cwd=str(root), mcp_servers=[])
            sid = session.session_id
            prompt = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("Check")]))
            assert await asyncio.to_thread(server.wait_for_requests, 2, 60)
            await conn.cancel(session_id=sid)
            answer = await asyncio.wait_for(prompt, 60)
    assert answer.stop_reason == "cancelled"
    [end] = [u for u in client.of_kind("tool_call_update") if u.status is not None]
    assert end.status == "failed"
    assert client.writes == []


async def test_a_session_of_agent_ls_run_loads_with_its_history(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    with FakeModelServer(
        [{"tool_calls": [EDIT]}, {"content": "Rounded it."}, {"content": "Still rounded."}]
    ) as server:
        env = _env(server)
        done = agent_cli.run(["run", "Round the price", "--workspace", str(root)], cwd=root, env=env)
        assert done.returncode == 0, done.stderr
        listed = agent_cli.run(["sessions", "--json", "--workspace", str(root)], cwd=root, env=env)
        sid = json.loads(listed.stdout)["sessions"][0]["sessionId"]
        client = EditorClient()
        async with agent_ls_acp(client, cwd=root, env=env, stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=True)
            loaded = await conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
            assert loaded is not None
            replayed = list(client.updates)
            answer = await conn.prompt(session_id=sid, prompt=[text_block("Is it still rounded?")])
    assert answer.stop_reason == "end_turn", (tmp_path / "acp.log").read_text()
    kinds = [u.session_update for u in replayed]
    assert kinds[:4] == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
    assert "Round the price" in replayed[0].content.text
    assert replayed[3].content.text == "Rounded it."
    # The next prompt goes on with the stored history, and its pending proposal is offered for apply.
    texts = json.dumps(server.requests[-1]["messages"])
    assert "Round the price" in texts and "Is it still rounded?" in texts
    assert client.writes == [(str(root / "price.py"), PRICE.replace("amount * 2", "round(amount * 2, 2)"))]


async def test_plan_mode_runs_read_only_and_offers_no_apply(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    client = EditorClient()
    plan = {
        "name": "submit_plan",
        "arguments": {
            "summary": "Round the price",
            "files": ["price.py"],
            "steps": ["Round in price()"],
            "checks": ["pytest -q"],
            "risks": [],
        },
    }
    steps = [{"tool_calls": [EDIT]}, {"tool_calls": [plan]}]
    with FakeModelServer(steps) as server:
        async with agent_ls_acp(client, cwd=root, env=_env(server), stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=True)
            session = await conn.new_session(cwd=str(root), mcp_servers=[])
            assert session.modes is not None
            assert [m.id for m in session.modes.available_modes] == ["default", "plan"]
            await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
            answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("Plan it")])
    assert answer.stop_reason == "end_turn", (tmp_path / "acp.log").read_text()
    edit_end = client.of_kind("tool_call_update")[0]
    assert edit_end.status == "failed"  # plan mode: the policy refuses edits
    assert client.questions == [] and client.writes == []
    assert "Round in price()" in client.message_text()
    [plan_update] = client.of_kind("plan")
    assert [(e.content, e.status) for e in plan_update.entries] == [("Round in price()", "pending")]


async def test_a_file_the_user_typed_into_is_rebased_not_written_then_applied(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    typed = "# typed meanwhile\n" + UNSAVED
    client = EditorClient(buffers={root / "price.py": UNSAVED})

    def type_then_accept(
        tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
    ) -> str | None:
        if "make check" in (tool_call.title or ""):  # the user types while the agent works
            client.buffers[root / "price.py"] = typed
        return next(o.option_id for o in options if o.kind == "allow_once")

    client.answer = type_then_accept
    with FakeModelServer([*STEPS, {"content": "Nothing more."}]) as server:
        async with agent_ls_acp(client, cwd=root, env=_env(server), stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=True)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("Round the price")])
            first, written = client.message_text(), list(client.writes)
            await conn.prompt(session_id=sid, prompt=[text_block("Apply it now")])
    assert written == []  # the first apply wrote nothing: the buffer was not what the agent read
    assert "price.py changed since the agent read it; the proposal was re-based onto your text" in first
    merged = typed.replace("amount * 2", "round(amount * 2, 2)")  # the user's line and the agent's edit
    assert client.writes == [(str(root / "price.py"), merged)]


async def test_a_change_that_overlaps_the_agents_refuses_the_apply(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    client = EditorClient(buffers={root / "price.py": UNSAVED})

    def retype_then_accept(
        tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
    ) -> str | None:
        if "make check" in (tool_call.title or ""):  # the user rewrites the line the agent edited
            client.buffers[root / "price.py"] = UNSAVED.replace("amount * 2", "amount * 3")
        return next(o.option_id for o in options if o.kind == "allow_once")

    client.answer = retype_then_accept
    reason, _ = await _prompt(tmp_path, root, client, fs=True, steps=STEPS)
    assert reason == "end_turn"
    assert client.writes == []
    assert "price.py changed since the agent read it, and " in client.message_text()
    assert "the proposal stays pending" in client.message_text()


async def test_the_clients_mcp_servers_are_the_sessions(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    marker = tmp_path / "probe.marker"
    entry = probe_entry(marker)
    probe = schema.McpServerStdio(name="probe", command=entry["command"], args=entry["args"], env=[])
    echo = {"name": "mcp__probe__echo", "arguments": {"text": "said over ACP"}}
    client = EditorClient()
    with FakeModelServer([{"tool_calls": [echo]}, {"content": "Echoed."}]) as server:
        async with agent_ls_acp(client, cwd=root, env=_env(server), stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=True)
            session = await conn.new_session(cwd=str(root), mcp_servers=[probe])
            answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("Echo")])
    log = (tmp_path / "acp.log").read_text()
    assert answer.stop_reason == "end_turn", log
    assert starts(marker) == 1  # the editor's server is the user's own: started without a question
    [start] = client.of_kind("tool_call")
    assert (start.kind, start.title) == ("other", "mcp__probe__echo")
    [(asked, _)] = client.questions  # the one question is the policy's about the call, as for any MCP tool
    assert asked.tool_call_id == start.tool_call_id
    assert "said over ACP" in _tool_results(server.requests[1])


async def test_context_answers_with_its_report_and_asks_no_apply(tmp_path: Path) -> None:
    root = _shop(tmp_path)

    def keep(tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]) -> str | None:
        return next(o.option_id for o in options if o.kind == "reject_once")

    client = EditorClient(answer=keep)
    with FakeModelServer([{"tool_calls": [EDIT]}, {"content": "Rounded."}]) as server:
        async with agent_ls_acp(client, cwd=root, env=_env(server), stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=True)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("Round the price")])
            asked = len(client.questions)  # the apply question, answered Keep
            before = len(client.updates)
            answer = await conn.prompt(session_id=sid, prompt=[text_block("/context")])
    assert answer.stop_reason == "end_turn"
    assert asked == 1 and len(client.questions) == 1  # the proposal is pending, yet /context asks nothing
    report = "".join(
        u.content.text for u in client.updates[before:] if u.session_update == "agent_message_chunk"
    )
    assert "Context: ~" in report
    assert len(server.requests) == 2  # no model call for /context


async def test_apply_after_a_keep_writes_the_proposal_with_no_model_call(tmp_path: Path) -> None:
    """``/apply`` asks the apply question for the pending proposal without a run: a Keep, then Apply."""
    root = _shop(tmp_path)
    answers = iter(["reject_once", "allow_once"])

    def keep_then_apply(
        tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
    ) -> str | None:
        kind = next(answers) if tool_call.tool_call_id.startswith("apply-") else "allow_once"
        return next(o.option_id for o in options if o.kind == kind)

    client = EditorClient(answer=keep_then_apply)
    with FakeModelServer([{"tool_calls": [EDIT]}, {"content": "Rounded."}]) as server:
        async with agent_ls_acp(client, cwd=root, env=_env(server), stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=True)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("Round the price")])
            assert client.writes == []  # kept
            applied = await conn.prompt(session_id=sid, prompt=[text_block("/apply")])
            before = len(client.updates)
            again = await conn.prompt(session_id=sid, prompt=[text_block("/apply")])
    assert applied.stop_reason == again.stop_reason == "end_turn"
    rounded = PRICE.replace("amount * 2", "round(amount * 2, 2)")
    assert [(Path(path).name, text) for path, text in client.writes] == [("price.py", rounded)]
    assert len(server.requests) == 2  # the run's two calls; /apply made none
    said = "".join(
        u.content.text for u in client.updates[before:] if u.session_update == "agent_message_chunk"
    )
    assert "no proposal is pending" in said
    assert [r["kind"] for r in _records(root) if r["kind"] in ("apply", "proposal_cleared")] == [
        "apply",
        "proposal_cleared",
    ]


class _WaitingClient(EditorClient):
    """An editor whose permission question stays open until the test answers it ``cancelled``, as a client
    does after sending ``session/cancel`` (ACP v1: it answers its pending questions ``cancelled``)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = asyncio.Event()
        self.release = asyncio.Event()

    async def request_permission(
        self,
        session_id: str,
        tool_call: schema.ToolCallUpdate,
        options: list[schema.PermissionOption],
        **_: Any,
    ) -> schema.RequestPermissionResponse:
        self.questions.append((tool_call, options))
        self.asked.set()
        await self.release.wait()
        return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))


async def test_a_cancel_while_a_question_is_open_answers_cancelled(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    client = _WaitingClient()
    steps = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "make check"}}]},
        {"content": "unused"},
    ]
    with FakeModelServer(steps) as server:
        async with agent_ls_acp(client, cwd=root, env=_env(server), stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=True)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            prompt = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("Check")]))
            await asyncio.wait_for(client.asked.wait(), 60)
            await conn.cancel(session_id=sid)
            client.release.set()
            answer = await asyncio.wait_for(prompt, 60)
            again = await conn.prompt(session_id=sid, prompt=[text_block("/context")])  # the session goes on
    assert answer.stop_reason == "cancelled", (tmp_path / "acp.log").read_text()
    assert again.stop_reason == "end_turn"
    assert len(server.requests) == 1  # nothing ran after the cancel


async def test_an_advertised_skill_runs_when_the_prompt_starts_with_its_command(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    client = EditorClient()
    with FakeModelServer([{"content": "price doubles the amount."}]) as server:
        async with agent_ls_acp(client, cwd=root, env=_env(server), stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=True)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            answer = await conn.prompt(session_id=sid, prompt=[text_block("/explain what does price do?")])
    assert answer.stop_reason == "end_turn"
    [commands] = client.of_kind("available_commands_update")
    explain = next(c for c in commands.available_commands if c.name == "explain")
    assert explain.input is not None and explain.input.root.hint == "[question]"
    task = json.dumps(server.requests[0]["messages"][-1])
    assert "# Explain code" in task and "what does price do?" in task  # the skill's body, then the question


async def test_a_session_of_agent_ls_acp_goes_on_in_agent_ls_run(tmp_path: Path) -> None:
    root = _shop(tmp_path)

    def keep(tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]) -> str | None:
        return next(o.option_id for o in options if o.kind == "reject_once")

    client = EditorClient(answer=keep)
    with FakeModelServer(
        [{"tool_calls": [EDIT]}, {"content": "Rounded."}, {"content": "Applying."}]
    ) as server:
        env = _env(server)
        async with agent_ls_acp(client, cwd=root, env=env, stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=False)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("Round the price")])
        args = ["run", "--session", sid, "--apply", "--workspace", str(root), "Apply it"]
        done = await asyncio.to_thread(agent_cli.run, args, cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    assert "Round the price" in json.dumps(server.requests[-1]["messages"])  # the ACP prompt's history
    assert (root / "price.py").read_text() == PRICE.replace("amount * 2", "round(amount * 2, 2)")


async def test_a_question_about_no_tool_call_announces_its_own(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    marker = tmp_path / "probe.marker"
    write_servers(root / ".mcp.json", {"probe": probe_entry(marker)})  # a workspace's server: asked first
    client = EditorClient()
    with FakeModelServer([{"content": "Nothing to do."}]) as server:
        async with agent_ls_acp(client, cwd=root, env=_env(server), stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=True)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            answer = await conn.prompt(session_id=sid, prompt=[text_block("Anything")])
    assert answer.stop_reason == "end_turn", (tmp_path / "acp.log").read_text()
    [(asked, _)] = client.questions
    assert "MCP server start" in (asked.title or "")
    [start] = client.of_kind("tool_call")
    assert start.tool_call_id == asked.tool_call_id and start.status == "pending"
    assert client.announced == [True]
    [end] = [u for u in client.of_kind("tool_call_update") if u.tool_call_id == asked.tool_call_id]
    assert end.status == "completed"  # allowed once: the server started
    assert starts(marker) == 1


async def test_without_fs_a_file_changed_on_disk_is_rebased_then_applied(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    price = root / "price.py"
    client = EditorClient()

    def edit_disk_then_accept(
        tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
    ) -> str | None:
        if "make check" in (tool_call.title or ""):  # the user saves a change elsewhere in the file meanwhile
            price.write_text("# prices in euros\n" + PRICE)
        return next(o.option_id for o in options if o.kind == "allow_once")

    client.answer = edit_disk_then_accept
    with FakeModelServer([*STEPS, {"content": "Nothing more."}]) as server:
        async with agent_ls_acp(client, cwd=root, env=_env(server), stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=False)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("Round the price")])
            first = client.message_text()
            assert price.read_text() == "# prices in euros\n" + PRICE  # not written: re-based, asked again
            await conn.prompt(session_id=sid, prompt=[text_block("Apply it now")])
    assert "re-based onto your text" in first
    assert price.read_text() == "# prices in euros\n" + PRICE.replace("amount * 2", "round(amount * 2, 2)")
