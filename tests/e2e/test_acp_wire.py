"""``agent-ls acp`` against a client that sends what is not a JSON-RPC object: raw lines on the stdin of
a real ``agent-ls acp`` subprocess, the replies read from its stdout (docs/acp.md, "Limits")."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from tests.support import agent_cli

BAD_LINES = {
    b"[]": -32600,
    b"[1,2]": -32600,
    b"42": -32600,
    b'"x"': -32600,
    b"null": -32600,
    b'{"jsonrpc": "2.0", "id": 9, "method": "initialize", ': -32700,
    b"hello": -32700,
    b"\xff\xfe{}": -32700,
    b'{"jsonrpc": "2.0", "id": 5, "method": 5}': -32600,
}


async def _read(stdout: asyncio.StreamReader) -> dict[str, Any]:
    line = await asyncio.wait_for(stdout.readline(), 30)
    assert line.endswith(b"\n"), line
    message: dict[str, Any] = json.loads(line)
    return message


async def test_lines_not_json_objects_are_answered_and_the_agent_keeps_serving(tmp_path: Path) -> None:
    env = agent_cli.user_environment(AGENT_LS_MODEL="openai/test", OPENAI_API_KEY="sk-unused")
    with (tmp_path / "acp.log").open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agent_ls", "acp",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=log, env=env, cwd=tmp_path,
        )  # fmt: skip
        assert process.stdin is not None and process.stdout is not None
        replies = []
        for line, code in BAD_LINES.items():
            process.stdin.write(line + b"\n")
            await process.stdin.drain()
            reply = await _read(process.stdout)
            replies.append((line, reply["error"]["code"], reply["id"]))
            assert reply["error"]["code"] == code, (line, reply)
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
        process.stdin.write(json.dumps(initialize).encode() + b"\n")
        await process.stdin.drain()
        answer = await _read(process.stdout)
        process.stdin.close()
        code = await asyncio.wait_for(process.wait(), 30)
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 1, answer
    assert [reply_id for _, _, reply_id in replies] == [None] * 8 + [5]
    assert code == 0, (tmp_path / "acp.log").read_text()
