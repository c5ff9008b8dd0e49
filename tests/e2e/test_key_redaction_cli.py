"""Keys never reach the model, the transcript or the session file through what the tools return
(README "Keys"; docs/sessions.md "Redaction"): the value of a known key variable in a workspace file, and
keys that a command printed where the output cap cuts it, whole or in pieces (issue 15, findings F1, F9)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_ls.sessions.store import SessionStore
from tests.support import agent_cli
from tests.support.model_server import FakeModelServer

HEAD_CHARS = 8_000  # the shell output cap: the first 8,000 and the last 12,000 characters
TAIL_CHARS = 12_000
LONG_KEY = "sk-proj-Ia84yRnBUbHoWC8FJowoRoWD8s7bA16J7PglOU3shVv5UTG79BG16QmtsL4F28GzL2cEpVZzAQlxJ4" + "q" * 42
SHORT_KEY = "sk-test-SECRET123"  # too short for the sk- pattern: only its known value finds it
PLAIN_KEY = "plainvalue0123456789abcdefXYZ"  # no key format at all


def big_log() -> str:
    """A log where LONG_KEY straddles the head cut and SHORT_KEY the tail cut."""
    head = ("filler " * 10 + "\n") * (HEAD_CHARS // 71)
    head += "f" * (HEAD_CHARS - 40 - len(head) - 1) + " "
    middle = ("m" * 79 + "\n") * 100
    text = head + LONG_KEY + "\n" + middle
    tail = "x " + SHORT_KEY + "\n" + ("b" * 79 + "\n") * 150
    cut = len(tail) - TAIL_CHARS  # the tail cut falls 6 characters into SHORT_KEY
    return text + " " * (8 - cut) + tail


def fragments(key: str) -> list[str]:
    """Every 9-character piece of ``key`` past its first 8 (what a cut could leave of it)."""
    return [key[i : i + 9] for i in range(8, len(key) - 8)]


def test_known_key_values_and_keys_cut_by_the_output_cap_are_redacted_everywhere(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "big.log").write_text(big_log())
    (root / "conf.py").write_text(f'TOKEN = "{PLAIN_KEY}"\n')
    steps = [
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "cat big.log"}}]},
        {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": {"path": "conf.py"}}]},
        {"content": "ok"},
    ]
    with FakeModelServer(steps) as server:
        env = agent_cli.user_environment(
            AGENT_LS_BASE_URL=server.base_url,
            OPENAI_API_KEY=LONG_KEY,
            OTHER_API_KEY=SHORT_KEY,
            MY_PROVIDER_TOKEN=PLAIN_KEY,
        )
        args = ["run", "Look", "--model", "openai/test", "--workspace", str(root), "--yes", "--debug"]
        done = agent_cli.run(args, cwd=root, env=env)
        assert done.returncode == 0, done.stderr
        sent = json.dumps([r["messages"] for r in server.requests])
    assert "omitted" in sent and "TOKEN = " in sent  # the cut happened, the file was read
    store = SessionStore(Path(os.environ["AGENT_LS_STATE_DIR"])).folder(root)
    stored = "".join(p.read_text() for p in store.glob("*.jsonl"))
    for where, text in (("model", sent), ("stderr", done.stderr), ("session file", stored)):
        assert PLAIN_KEY not in text, where
        for piece in fragments(LONG_KEY) + fragments(SHORT_KEY):
            assert piece not in text, (where, piece)
