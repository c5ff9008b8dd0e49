"""``agent-ls run`` keeps a long command output whole in the session store: the model reads where its cut
note points with ``read_output``, in the same run and in a ``--continue`` run of another process
(docs/context.md, "Long tool output"; docs/sessions.md, "Kept outputs")."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agent_ls.sessions.store import SessionStore
from tests.support import agent_cli
from tests.support.model_server import FakeModelServer

NOTE = (
    '[the whole output (5,400 lines) is kept: read_output {"call_id": "c1", "offset": 1601} reads on from '
    "line 1,601]"
)


def tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def read_output(call_id: str, offset: int, limit: int) -> dict[str, Any]:
    arguments = {"call_id": call_id, "offset": offset, "limit": limit}
    return {"tool_calls": [{"id": f"r{offset}", "name": "read_output", "arguments": arguments}]}


def test_the_cut_middle_of_a_command_output_is_read_again_also_from_a_continued_run(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    steps = [
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "seq -w 1 5400"}}]},
        read_output("c1", 2_500, 3),
        {"content": "Line 2500 is 2500."},
    ]
    with FakeModelServer(steps) as server:
        env = agent_cli.user_environment(AGENT_LS_BASE_URL=server.base_url)
        args = ["run", "Count", "--model", "openai/test", "--workspace", str(root), "--yes"]
        done = agent_cli.run(args, cwd=root, env=env)
        assert done.returncode == 0, done.stderr
        requests = list(server.requests)
    (cut,) = tool_results(requests[1])
    assert "[... 7,000 characters omitted: lines 1,601–3,000 of 5,400 ...]" in cut
    assert cut.endswith(f"{NOTE}\n</tool_result>")
    page = tool_results(requests[2])[-1]
    assert "[lines 2,500–2,502 of 5,400 of the output of call c1]\n2500\n2501\n2502\n" in page

    later = [read_output("c1", 1_700, 2), {"content": "Done."}]
    with FakeModelServer(later) as server:
        env = agent_cli.user_environment(AGENT_LS_BASE_URL=server.base_url)
        args = ["run", "--continue", "Again", "--model", "openai/test", "--workspace", str(root), "--yes"]
        done = agent_cli.run(args, cwd=root, env=env)
        assert done.returncode == 0, done.stderr
        again = tool_results(server.requests[1])[-1]
    assert "[lines 1,700–1,701 of 5,400 of the output of call c1]\n1700\n1701\n" in again
    (kept,) = SessionStore(Path(os.environ["AGENT_LS_STATE_DIR"])).folder(root).glob("*.outputs/c1.txt")
    assert kept.read_text() == "".join(f"{n:04}\n" for n in range(1, 5_401))
