"""Model routing through ``agent-ls run`` (issue 17): the subagent model from ``[models]``, a usage line per
role on stderr, and the role of each usage event in the session file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.agent_cli import environment, run
from tests.support.model_server import FakeModelServer

REPORT = "mean() divides by len(values) - 1 in stats.py."
STEPS = [
    {
        "tool_calls": [
            {"id": "c1", "name": "task", "arguments": {"description": "find it", "prompt": "Where?"}}
        ]
    },
    {"content": REPORT},  # the subagent's only turn
    {"content": "Found it."},
]


def test_the_cli_uses_the_subagent_model_and_prints_usage_per_role(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "stats.py").write_text("def mean(values):\n    return sum(values) / (len(values) - 1)\n")
    config = tmp_path / "config"
    config.mkdir()
    (config / "agent-ls.toml").write_text('[models]\nsubagent = "openai/sub-model"\n', encoding="utf-8")
    state = tmp_path / "state"
    with FakeModelServer(STEPS) as server:
        env = environment(
            tmp_path,
            config,
            AGENT_LS_API_KEY="k",
            AGENT_LS_BASE_URL=server.base_url,
            AGENT_LS_STATE_DIR=str(state),
        )
        args = ["run", "Find the bug", "--model", "openai/test-model", "--workspace", str(root)]
        done = run(args, cwd=tmp_path, env=env)
        models = [request["model"] for request in server.requests]

    assert done.returncode == 0, done.stderr[-3000:]
    assert models == ["test-model", "sub-model", "test-model"]
    lines = [line for line in done.stderr.splitlines() if line.startswith("agent-ls: usage")]
    assert [line.split(":")[1].strip() for line in lines] == ["usage", "usage (main)", "usage (subagent)"]

    (session_file,) = state.glob("sessions/*/*.jsonl")
    records = [json.loads(line) for line in session_file.read_text().splitlines()]
    roles = [record["role"] for record in records if record["kind"] == "usage"]
    assert roles == ["main", "subagent", "main"]
    (run_end,) = [record for record in records if record["kind"] == "run_end"]
    assert list(run_end["usageByRole"]) == ["main", "subagent"]
    total = run_end["usage"]["inputTokens"]
    assert total == sum(usage["inputTokens"] for usage in run_end["usageByRole"].values())


def test_a_role_model_that_cannot_be_used_stops_the_run_before_any_request(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    config = tmp_path / "config"
    config.mkdir()
    (config / "agent-ls.toml").write_text('[models]\ncompaction = "nowhere/small"\n', encoding="utf-8")
    with FakeModelServer([{"content": "never asked"}]) as server:
        env = environment(tmp_path, config, AGENT_LS_API_KEY="k", AGENT_LS_BASE_URL=server.base_url)
        args = ["run", "Hello", "--model", "openai/test-model", "--workspace", str(root)]
        done = run(args, cwd=tmp_path, env=env)
        asked = len(server.requests)

    assert done.returncode == 2, done.stderr[-3000:]
    assert asked == 0
    assert "agent-ls: models.compaction in agent-ls.toml: unknown provider 'nowhere'" in done.stderr
