"""JSON-RPC fuzz, random part: hypothesis sequences of messages sent to a real ``agent-ls serve`` over
raw stdio (the named cases are in ``test_jsonrpc_fuzz.py``; docs/reliability.md).

Each example is a short sequence of frames. A frame carries a message of a known method whose params
had one value replaced by random JSON (lone surrogates, NaN and deep values included) or a key
removed, an ``agent.*`` command with random arguments, a request of an unknown method, a cancel of an
earlier request, an answer to a request never made, or a huge document; and the frame itself may be
malformed (header names in any case, LF-only lines, a wrong or missing length, junk around it).

After each example: every request in a frame the server can read was answered exactly once, no
request at all was answered twice, the next valid request is answered, and stderr holds no traceback.
``AGENT_LS_FUZZ_LONG=1`` runs ``LONG_EXAMPLES`` sequences of up to 12 frames with documents up to
64 MiB, and prints the figures reported in docs/reliability.md.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.raw_lsp import ServerPool

LONG = os.environ.get("AGENT_LS_FUZZ_LONG") == "1"
LONG_EXAMPLES = 3000
EXAMPLES = LONG_EXAMPLES if LONG else 40
ANSWER_TIMEOUT_S = 120.0 if LONG else 10.0
"""pygls converts positions in Python, one character at a time: one didChange of a one-line document
of 64 MiB holds the server for about 15 s on a loaded 2-core machine (docs/reliability.md)."""
MAX_FRAMES = 12 if LONG else 6
DOCUMENT_SIZES = [2**20, 16 * 2**20, 64 * 2**20] if LONG else [2**20]
COMMANDS = [
    "agent.run",
    "agent.cancel",
    "agent.proposal",
    "agent.applyProposal",
    "agent.discardProposal",
    "agent.listSkills",
    "agent.runSkill",
    "agent.instructions",
]
# Never sent at random: they end the session (tested in test_jsonrpc_fuzz.py), or could make "/" a
# workspace folder that a run would then copy.
EXCLUDED = {"exit", "shutdown", "initialize", "workspace/didChangeWorkspaceFolders"}

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(st.characters(exclude_categories=()), max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
JUNK_PIECES = [b"Content-Length: ", b"content-length:", b"\r\n", b"\n", b"\r\n\r\n", b"{}", b"Foo: bar"]
JUNK_PIECES += [
    b"12",
    b"999999999999",
    b"C",
    b"Content-Length: 3\r\n\r\n",
    b'{"jsonrpc"',
    b"\x00",
    b" ",
    b":",
]
JUNK = st.lists(
    st.sampled_from(JUNK_PIECES) | st.binary(max_size=16),
    max_size=6,
).map(b"".join)
# How a frame is written; the first six can be read (their requests must be answered).
READABLE = ["good", "lf-only", "lower-case", "extra-header", "junk-before", "junk-after"]
FRAMINGS = [*READABLE, "short", "long", "no-length", "bad-length"]


def templates(ws: Path) -> list[tuple[str, Any, bool]]:
    """Valid (method, params, is_request) of what an editor sends, for ``ws`` and its files."""
    uri = (ws / "main.py").as_uri()
    skill = (ws / ".agents" / "skills" / "x" / "SKILL.md").as_uri()
    pos = {"line": 0, "character": 1}
    rng = {"start": pos, "end": {"line": 1, "character": 0}}
    text_doc = {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}
    return [
        ("textDocument/didOpen", {"textDocument": text_doc}, False),
        (
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": rng, "text": "y"}]},
            False,
        ),
        ("textDocument/didSave", {"textDocument": {"uri": uri}, "text": "x = 2\n"}, False),
        ("textDocument/didClose", {"textDocument": {"uri": uri}}, False),
        ("textDocument/hover", {"textDocument": {"uri": skill}, "position": pos}, True),
        (
            "textDocument/codeAction",
            {"textDocument": {"uri": uri}, "range": rng, "context": {"diagnostics": []}},
            True,
        ),
        ("workspace/didChangeConfiguration", {"settings": {"agentLs": {"model": "openai/none"}}}, False),
        (
            "workspace/didChangeWatchedFiles",
            {"changes": [{"uri": (ws / "AGENTS.md").as_uri(), "type": 2}]},
            False,
        ),
        ("window/workDoneProgress/cancel", {"token": "agent-ls/x"}, False),
        ("$/setTrace", {"value": "off"}, False),
        (
            "workspace/executeCommand",
            {"command": "agent.run", "arguments": [{"task": "t", "uri": uri}]},
            True,
        ),
        (
            "workspace/executeCommand",
            {"command": "agent.runSkill", "arguments": [{"skill": "x", "uri": uri}]},
            True,
        ),
        *[
            ("workspace/executeCommand", {"command": c, "arguments": [{"sessionId": "s"}]}, True)
            for c in COMMANDS
        ],
        ("workspace/executeCommand", {"command": "agent.instructions", "arguments": [{"uri": uri}]}, True),
    ]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (keys and indices from the root), the root first."""
    found = [prefix]
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, inner in items:
        found += _paths(inner, (*prefix, key))
    return found


def _mutate(params: Any, path: tuple[Any, ...], new: Any, delete: bool) -> Any:
    if not path:
        return new
    params = copy.deepcopy(params)
    parent = params
    for key in path[:-1]:
        parent = parent[key]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return params


@st.composite
def messages(draw: st.DrawFn, ws: Path) -> tuple[str, Any, bool]:
    """(method, params, is_request) of one message worth sending."""
    kind = draw(st.sampled_from(["mutated"] * 8 + ["command"] * 3 + ["unknown"] * 2 + ["huge"]))
    if kind == "command":
        arguments = draw(st.none() | st.lists(JSON, max_size=3))
        params = {"command": draw(st.sampled_from(COMMANDS))} | (
            {} if arguments is None else {"arguments": arguments}
        )
        return "workspace/executeCommand", params, True
    if kind == "unknown":
        method = draw(st.text(max_size=20).filter(lambda m: m not in EXCLUDED))
        return method, draw(JSON), draw(st.booleans())
    if kind == "huge":
        size = draw(st.sampled_from(DOCUMENT_SIZES))
        doc = {"uri": (ws / "main.py").as_uri(), "languageId": "python", "version": 1, "text": "x" * size}
        return "textDocument/didOpen", {"textDocument": doc}, False
    method, params, is_request = draw(st.sampled_from(templates(ws)))
    path = draw(st.sampled_from(_paths(params)))
    return method, _mutate(params, path, draw(JSON), draw(st.booleans())), is_request


def framed(body: bytes, framing: str, junk: bytes) -> bytes:
    length = len(body)
    if framing == "lf-only":
        return b"Content-Length: %d\n\n" % length + body
    if framing == "lower-case":
        return b"content-length: %d\r\n\r\n" % length + body
    if framing == "extra-header":
        return (
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n" % length
            + body
        )
    if framing == "short":
        return b"Content-Length: %d\r\n\r\n" % (length + 1 + len(junk)) + body
    if framing == "long":
        return b"Content-Length: %d\r\n\r\n" % max(0, length - 1) + body
    if framing == "no-length":
        return b"X-Length: %d\r\n\r\n" % length + body
    if framing == "bad-length":
        return b"Content-Length: %s\r\n\r\n" % (junk or b"x") + body
    good = b"Content-Length: %d\r\n\r\n" % length + body
    return junk + good if framing == "junk-before" else good + junk if framing == "junk-after" else good


@pytest.fixture(scope="module")
def servers() -> Iterator[ServerPool]:
    with tempfile.TemporaryDirectory(prefix="agent-ls-fuzz-random-") as root:
        pool = ServerPool(Path(root))
        yield pool
        pool.close()
    if LONG:
        print(f"\nJSON-RPC fuzz (long): {FIGURES}")


FIGURES: dict[str, Any] = {
    "examples": 0,
    "frames": 0,
    "requests": 0,
    "bytes": 0,
    "peak_rss_mib": 0,
    "slowest_answer_s": 0.0,
}


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
    derandomize=not LONG,
)
@given(data=st.data())
def test_random_sequences_leave_the_server_answering(servers: ServerPool, data: st.DataObject) -> None:
    server = servers.get()
    started = time.monotonic()
    must_answer: list[int] = []
    sent: list[int] = []
    for _ in range(data.draw(st.integers(1, MAX_FRAMES), label="frames")):
        message: dict[str, Any] = {"jsonrpc": "2.0"}
        if sent and data.draw(st.integers(0, 5), label="cancel?") == 0:
            message |= {"method": "$/cancelRequest", "params": {"id": data.draw(st.sampled_from(sent))}}
        elif data.draw(st.integers(0, 9), label="answer?") == 0:  # to a request the server never sent
            message |= {"id": 10**9 + FIGURES["frames"], "result": data.draw(JSON)}
        else:
            method, params, is_request = data.draw(messages(servers.workspace), label="message")
            message |= {"method": method, "params": params}
            if is_request:
                message["id"] = server.new_id()
                sent.append(message["id"])
        framing = data.draw(st.sampled_from(FRAMINGS), label="framing")
        if "method" in message and "id" in message and framing in READABLE:
            must_answer.append(message["id"])
        junk = data.draw(JUNK, label="junk")
        server.write(framed(json.dumps(message).encode(), framing, junk))
        FIGURES["frames"] += 1
    written = time.monotonic()
    for msg_id in must_answer:
        server.response(msg_id, timeout_s=ANSWER_TIMEOUT_S)
    server.assert_healthy(f"after requests {sent}", ANSWER_TIMEOUT_S)
    FIGURES["slowest_answer_s"] = round(max(FIGURES["slowest_answer_s"], time.monotonic() - written), 1)
    FIGURES["examples"] += 1
    FIGURES["requests"] += len(sent)
    FIGURES["bytes"] = server.bytes_sent
    FIGURES["peak_rss_mib"] = max(FIGURES["peak_rss_mib"], (server.peak_memory_kib() or 0) // 1024)
    FIGURES["seconds"] = round(FIGURES.get("seconds", 0) + time.monotonic() - started, 1)
    if LONG and FIGURES["examples"] % 100 == 0:
        print(f"JSON-RPC fuzz (long), so far: {FIGURES}", flush=True)
