"""Compaction through ``agent-ls run`` (issue 15): the same 40-turn session in a 4,000-token window as
tests/e2e/test_compaction.py, in a CLI subprocess against the scripted model server."""

from __future__ import annotations

from pathlib import Path

from tests.support.agent_cli import environment, run
from tests.support.long_session import TASK, LongSession, body_tokens, is_summary_request, write_files
from tests.support.model_server import FakeModelServer

WINDOW = 4_000
FOLLOW_UP = "Also handle negative amounts."


def test_cli_run_completes_through_compactions(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    write_files(root)
    config = tmp_path / "config"
    config.mkdir()
    (config / "agent-ls.toml").write_text(
        f"[providers.openai]\ncontext_window = {WINDOW}\nmax_output_tokens = 200\n", encoding="utf-8"
    )
    script = LongSession(turns=40)
    with FakeModelServer([], responder=script) as server:
        env = environment(tmp_path, config, AGENT_LS_API_KEY="k", AGENT_LS_BASE_URL=server.base_url)
        args = ["run", TASK, "--model", "openai/test-model", "--workspace", str(root), "--max-turns", "45"]
        done = run(args, cwd=tmp_path, env=env, timeout=300)
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr[-3000:]
    assert script.summaries >= 3
    assert "context compacted (auto, summarized" in done.stderr
    assert "context compacted (auto, pruned" in done.stderr
    assert max(body_tokens(r) for r in requests) <= WINDOW
    after = [r for r in requests if not is_summary_request(r)]
    assert len(after) == 40
    assert all(TASK in "\n".join(str(m.get("content")) for m in r["messages"]) for r in after)

    # The session file holds the compacted history: --continue starts from it, not from all 40 turns.
    with FakeModelServer([{"content": "ok"}]) as server:
        env = environment(tmp_path, config, AGENT_LS_API_KEY="k", AGENT_LS_BASE_URL=server.base_url)
        args = ["run", "--continue", FOLLOW_UP, "--model", "openai/test-model", "--workspace", str(root)]
        follow = run(args, cwd=tmp_path, env=env)
        (request,) = server.requests
    assert follow.returncode == 0, follow.stderr[-3000:]
    text = "\n".join(str(m.get("content")) for m in request["messages"])
    assert TASK in text and "SUMMARY" in text and FOLLOW_UP in text
    assert len(request["messages"]) < 20  # 80 without the compaction record
    assert body_tokens(request) <= WINDOW
