"""Long command output from ``agent-ls run``: the model reads its head and tail with a note that says which
lines were left out (docs/context.md, "Long tool output")."""

from __future__ import annotations

from pathlib import Path

from tests.support import agent_cli
from tests.support.model_server import FakeModelServer


def test_a_long_command_output_reaches_the_model_as_head_and_tail_with_line_counts(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    steps = [
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "seq -w 1 5400"}}]},
        {"content": "It counts to 5400."},
    ]
    with FakeModelServer(steps) as server:
        env = agent_cli.user_environment(AGENT_LS_BASE_URL=server.base_url)
        args = ["run", "Count", "--model", "openai/test", "--workspace", str(root), "--yes"]
        done = agent_cli.run(args, cwd=root, env=env)
        assert done.returncode == 0, done.stderr
        (result,) = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    head = "".join(f"{n:04}\n" for n in range(1, 1_601))  # 8,000 characters: 5 a line
    tail = "".join(f"{n:04}\n" for n in range(3_001, 5_401))  # 12,000 characters
    note = "[... 7,000 characters omitted: lines 1,601–3,000 of 5,400 ...]"
    assert f"{head}\n{note}\n{tail}" in result
