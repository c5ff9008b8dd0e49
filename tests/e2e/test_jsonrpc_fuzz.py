"""JSON-RPC fuzz against a real ``agent-ls serve`` over raw stdio bytes (docs/reliability.md).

After anything an editor, a broken client or an attacker writes to its stdin (malformed frames, wrong
types in known methods, unknown methods, huge payloads, cancels interleaved with requests, requests
after shutdown) the server:
- stays alive and answers the next valid request;
- answers every well-framed request exactly once (a result or an error), never a second time;
- writes no traceback to stderr and sends no "Error in server" message to the editor.

A table of named cases runs first, then hypothesis sequences mixing them. ``AGENT_LS_FUZZ_LONG=1``
runs far more sequences and payloads of hundreds of MiB, and prints its figures (docs/reliability.md).
"""

from __future__ import annotations

import ast
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.corpus import AVAILABLE, CORPUS, corpus_params
from tests.support.model_server import FakeModelServer
from tests.support.raw_lsp import RawServer, ServerPool, frame

LONG = os.environ.get("AGENT_LS_FUZZ_LONG") == "1"
HUGE_BYTES = 300 * 1024 * 1024 if LONG else 8 * 1024 * 1024
"""The largest payloads: junk without a line end, and a frame over the size limit (128 MiB)."""
DOCUMENT_BYTES = 100 * 1024 * 1024 if LONG else 8 * 1024 * 1024
"""The largest valid message: a document opened (under the size limit)."""
FIRST_CASE_ID = 1_000_000  # ids the cases choose themselves; RawServer's own count from 1
INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND = -32602, -32600, -32601
RESULT = 0  # an expected answer: a result, no error
ANSWERED = 1  # an expected answer: a result or an error (a cancelled request may get either)


@pytest.fixture(scope="module")
def servers() -> Iterator[ServerPool]:
    with tempfile.TemporaryDirectory(prefix="agent-ls-fuzz-") as root:
        pool = ServerPool(Path(root))
        yield pool
        if LONG and pool.current is not None:
            peak = (pool.current.peak_memory_kib() or 0) // 1024
            sent = pool.current.bytes_sent
            print(f"\nJSON-RPC fuzz cases (long): {sent} bytes sent, server peak RSS {peak} MiB")
        pool.close()


def message(msg_id: int | None, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params} | ({} if msg_id is None else {"id": msg_id})


def body_frame(body: bytes, header: bytes = b"Content-Length: %d\r\n\r\n") -> bytes:
    return (header % len(body) if b"%d" in header else header) + body


@dataclass
class Case:
    name: str
    data: bytes | Callable[[], bytes]
    answers: dict[int, int] = field(default_factory=dict)
    """Request id to the expected answer: an error code, or ``RESULT``."""


def _cases(ws: Path) -> list[Case]:
    """The cases (huge payloads are built only when their case runs)."""
    uri = (ws / "main.py").as_uri()
    n = iter(range(FIRST_CASE_ID, FIRST_CASE_ID + 1000))
    ids = [next(n) for _ in range(40)]
    pos = {"line": 0, "character": 0}
    hover = {"textDocument": {"uri": uri}, "position": pos}
    command = "workspace/executeCommand"
    return [
        # Frames the base protocol's reader must get through (issue 12.13), and the next frame after each.
        Case("header block without Content-Length", b"Foo: bar\r\n\r\n{}"),
        Case("lower-case header name", b"content-length: 2\r\n\r\n{}"),
        Case("LF-only header lines", b"Content-Length: 2\n\n{}"),
        Case("body one byte shorter than declared", b"Content-Length: 3\r\n\r\n{}"),
        Case("body far shorter than declared", b"Content-Length: 100000\r\n\r\n{}"),
        Case("body longer than declared", b"Content-Length: 2\r\n\r\n{}}}}"),
        Case("Content-Length not a number", b"Content-Length: two\r\n\r\n{}"),
        Case("negative Content-Length", b"Content-Length: -2\r\n\r\n{}"),
        Case("zero Content-Length", b"Content-Length: 0\r\n\r\n"),
        Case("two different Content-Lengths", b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"),
        Case("Content-Length over the limit", b"Content-Length: 99999999999999\r\n\r\n{}"),
        Case("Content-Length of 5000 digits", b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n{}"),
        Case("space before the colon", b"Content-Length : 2\r\n\r\n{}"),
        Case("Content-Type only", b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}"),
        Case("binary junk", bytes(range(256)) * 4),
        Case("junk glued to the next header", b"garbage without a line end"),
        Case("blank lines", b"\r\n\n\r\n\n"),
        Case("header line of 20 KiB", b"X-Long: " + b"a" * 20000 + b"\r\n\r\n{}"),
        Case("junk of HUGE_BYTES without a line end", lambda: b"x" * HUGE_BYTES),
        Case(
            "frame of HUGE_BYTES over the limit",
            lambda: b"Content-Length: 99999999999\r\n\r\n" + b"[" * HUGE_BYTES,
        ),
        # Contents that are not a JSON-RPC message.
        Case("not JSON", body_frame(b'{"jsonrpc": ')),
        Case("not UTF-8", body_frame(b'{"jsonrpc": "2.0", "method": "x\xff"}')),
        Case("a JSON scalar", body_frame(b"42")),
        Case("a batch (not in LSP)", body_frame(json.dumps([message(ids[0], "shutdown", None)]).encode())),
        Case("nested 100,000 deep", body_frame(b"[" * 100_000 + b"]" * 100_000)),
        Case(
            "no jsonrpc field",
            frame({"id": ids[1], "method": "textDocument/hover"}),
            {ids[1]: INVALID_REQUEST},
        ),
        Case(
            "jsonrpc 1.0",
            frame({"jsonrpc": "1.0", "id": ids[2], "method": "textDocument/hover", "params": hover}),
            {ids[2]: INVALID_REQUEST},
        ),
        Case("id is an object", frame({"jsonrpc": "2.0", "id": {"a": 1}, "method": "textDocument/hover"})),
        Case(
            "method is a number",
            frame({"jsonrpc": "2.0", "id": ids[3], "method": 7}),
            {ids[3]: INVALID_REQUEST},
        ),
        Case("lone surrogate", body_frame(b'{"jsonrpc": "2.0", "method": "\\ud83d", "params": "\\udc00"}')),
        # Known methods with the wrong types: requests answered InvalidParams, notifications dropped.
        Case(
            "initialize with a list", frame(message(ids[4], "initialize", [1, 2])), {ids[4]: INVALID_PARAMS}
        ),
        Case(
            "hover without params",
            frame(message(ids[5], "textDocument/hover", None)),
            {ids[5]: INVALID_PARAMS},
        ),
        Case(
            "hover with a number as document",
            frame(message(ids[6], "textDocument/hover", {"textDocument": 5, "position": pos})),
            {ids[6]: INVALID_PARAMS},
        ),
        Case(
            "codeAction with strings as positions",
            frame(message(ids[7], "textDocument/codeAction", {"textDocument": {"uri": uri}, "range": "a-b"})),
            {ids[7]: INVALID_PARAMS},
        ),
        Case(
            "command is a number", frame(message(ids[8], command, {"command": 5})), {ids[8]: INVALID_PARAMS}
        ),
        Case(
            "arguments is a string",
            frame(message(ids[9], command, {"command": "agent.proposal", "arguments": "abc"})),
            {ids[9]: INVALID_PARAMS},
        ),
        Case(
            "unknown command",
            frame(message(ids[10], command, {"command": "agent.nope"})),
            {ids[10]: INVALID_PARAMS},
        ),
        Case(
            "run with a selection in a file that does not exist",
            frame(
                message(
                    ids[11],
                    command,
                    {
                        "command": "agent.run",
                        "arguments": [
                            {
                                "task": "t",
                                "uri": (ws / "gone.py").as_uri(),
                                "range": {"start": pos, "end": pos | {"line": 3}},
                            }
                        ],
                    },
                )
            ),
            {ids[11]: INVALID_PARAMS},
        ),
        Case(
            "didOpen without a text",
            frame(message(None, "textDocument/didOpen", {"textDocument": {"uri": uri}})),
        ),
        Case(
            "didChange of a document never opened",
            frame(
                message(
                    None,
                    "textDocument/didChange",
                    {
                        "textDocument": {"uri": (ws / "x.py").as_uri(), "version": 2},
                        "contentChanges": [{"text": "y"}],
                    },
                )
            ),
        ),
        Case("didClose of a number", frame(message(None, "textDocument/didClose", {"textDocument": 1}))),
        Case(
            "didSave of a document never opened",
            frame(message(None, "textDocument/didSave", {"textDocument": {"uri": "file:///nope"}})),
        ),
        Case(
            "configuration of a list",
            frame(message(None, "workspace/didChangeConfiguration", {"settings": [1, {"agentLs": 5}]})),
        ),
        Case(
            "workspace folders of the wrong shape",
            frame(
                message(None, "workspace/didChangeWorkspaceFolders", {"event": {"added": "x", "removed": []}})
            ),
        ),
        Case(
            "watched files of a string",
            frame(message(None, "workspace/didChangeWatchedFiles", {"changes": "all"})),
        ),
        Case("$/setTrace to a number", frame(message(None, "$/setTrace", {"value": 3}))),
        # Unknown methods.
        Case("unknown request", frame(message(ids[12], "foo/bar", {})), {ids[12]: METHOD_NOT_FOUND}),
        Case("unknown notification", frame(message(None, "foo/bar", {}))),
        Case("unknown $/ notification", frame(message(None, "$/agentLsNothing", None))),
        Case(
            "a server-to-client method",
            frame(message(ids[13], "window/showMessageRequest", {"type": 1, "message": "m"})),
            {ids[13]: METHOD_NOT_FOUND},
        ),
        # Answers from the editor to requests never made, or unreadable.
        Case("response to an unknown id", frame({"jsonrpc": "2.0", "id": 987654, "result": {"x": 1}})),
        Case(
            "error response to an unknown id",
            frame({"jsonrpc": "2.0", "id": 987655, "error": {"code": 1, "message": "m"}}),
        ),
        Case("response with neither result nor error", frame({"jsonrpc": "2.0", "id": 987656})),
        # Cancels: of a request in flight, of one answered, of none, of a malformed id, before the request.
        Case(
            "cancel right after the request",
            frame(message(ids[14], command, {"command": "agent.instructions"}))
            + frame(message(None, "$/cancelRequest", {"id": ids[14]})),
            {ids[14]: ANSWERED},
        ),
        Case("cancel of an unknown id", frame(message(None, "$/cancelRequest", {"id": 424242}))),
        Case("cancel of an object id", frame(message(None, "$/cancelRequest", {"id": {"x": 1}}))),
        Case(
            "cancel before the request",
            frame(message(None, "$/cancelRequest", {"id": ids[15]}))
            + frame(message(ids[15], command, {"command": "agent.listSkills"})),
            {ids[15]: ANSWERED},
        ),
        Case(
            "progress cancel of an unknown token",
            frame(message(None, "window/workDoneProgress/cancel", {"token": "t"})),
        ),
        # Huge payloads that are valid.
        Case(
            "a document of DOCUMENT_BYTES",
            lambda: (
                frame(
                    message(
                        None,
                        "textDocument/didOpen",
                        {
                            "textDocument": {
                                "uri": uri,
                                "languageId": "python",
                                "version": 1,
                                "text": "x" * DOCUMENT_BYTES,
                            }
                        },
                    )
                )
                + frame(message(ids[16], "textDocument/hover", hover))
            ),
            {ids[16]: RESULT},
        ),
        Case(
            "a session id of 1 MiB",
            frame(
                message(
                    ids[17], command, {"command": "agent.proposal", "arguments": [{"sessionId": "s" * 2**20}]}
                )
            ),
            {ids[17]: RESULT},
        ),
    ]


CASE_NAMES = [case.name for case in _cases(Path("/ws"))]


@pytest.mark.parametrize("index", range(len(CASE_NAMES)), ids=CASE_NAMES)
def test_the_server_gets_through_each_case(servers: ServerPool, index: int) -> None:
    server = servers.get()
    case = _cases(servers.workspace)[index]
    server.write(case.data() if callable(case.data) else case.data)
    for msg_id, expected in case.answers.items():
        reply = server.response(msg_id)
        code = reply["error"]["code"] if "error" in reply else RESULT
        assert code == expected or expected == ANSWERED, reply
    server.assert_healthy(case.name)


def _wedge_cases() -> list[tuple[str, bytes]]:
    """The CASES of the corpus's wedge.py (issue 12.13), read without running the script."""
    source = (CORPUS / "found-2026-11-30" / "F11-jsonrpc-wedge" / "wedge.py").read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "CASES" for t in node.targets):
            return list(ast.literal_eval(node.value).items())
    raise AssertionError("wedge.py has no CASES")


@pytest.mark.parametrize(
    "case", corpus_params(_wedge_cases() if AVAILABLE else [], lambda case: case[0])
)
def test_corpus_wedge_frames_are_followed_by_an_answer(servers: ServerPool, case: tuple[str, bytes]) -> None:
    label, garbage = case
    server = servers.get()
    server.write(garbage)
    server.assert_healthy(label)


def test_an_unreadable_answer_of_the_editor_fails_its_request_instead_of_hanging(
    tmp_path: Path, model_server: FakeModelServer
) -> None:
    """The editor answers ``workspace/applyEdit`` with a result that is no ApplyWorkspaceEditResult:
    the apply ends with a reason (pygls alone would leave it waiting for ever, and the command too)."""
    model_server.steps.extend(
        [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "new.py", "content": "y = 1\n"}}]},
            {"content": "Wrote new.py."},
        ]
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    capabilities = {
        "workspace": {
            "applyEdit": True,
            "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create"]},
        }
    }
    with RawServer(workspace, home) as server:
        server.replies["workspace/applyEdit"] = {"failureReason": "no applied field"}
        server.initialize(capabilities, {"model": "openai/test-model", "baseUrl": model_server.base_url})
        started = server.command("agent.run", {"task": "write new.py"})["result"]
        ended = server.notification("agent/runEnded", timeout_s=30)
        assert ended["params"]["status"] == "done", ended
        reply = server.command("agent.applyProposal", {"sessionId": started["sessionId"]})
        assert reply["result"]["applied"] is False, reply
        reason = reply["result"]["failureReason"]
        assert reason.startswith("the editor declined the edit (the answer could not be read: "), reason
        assert "required field missing @ $.result.applied" in reason, reason
        assert not (workspace / "new.py").exists()
        server.assert_healthy("unreadable applyEdit answer")


def test_requests_after_shutdown_are_refused_and_exit_ends_the_process(tmp_path: Path) -> None:
    """LSP 3.17: after ``shutdown`` requests error with InvalidRequest; ``exit`` then ends with code 0."""
    (tmp_path / "home").mkdir()
    with RawServer(tmp_path, tmp_path / "home") as server:
        server.initialize()
        assert server.request("shutdown") == {"jsonrpc": "2.0", "id": 2, "result": None}
        after = [
            server.command("agent.proposal"),
            server.request("textDocument/hover", {"textDocument": {"uri": "file:///x"}, "position": {}}),
            server.request("foo/bar"),
            server.request("shutdown"),
        ]
        assert [reply["error"]["code"] for reply in after] == [INVALID_REQUEST] * 4, after
        assert after[0]["error"]["message"] == "workspace/executeCommand: the server is shutting down"
        server.notify("textDocument/didOpen", {"textDocument": 1})
        server.notify("exit")
        assert server.wait_exit(timeout_s=10) == 0
        assert not server.tracebacks(), server.describe()


@pytest.mark.parametrize("ending", ["exit without shutdown", "end of input"])
def test_the_process_ends_without_shutdown(tmp_path: Path, ending: str) -> None:
    """``exit`` before ``shutdown`` ends with code 1 (LSP 3.17); the end of stdin ends the process."""
    (tmp_path / "home").mkdir()
    with RawServer(tmp_path, tmp_path / "home") as server:
        server.initialize()
        if ending == "end of input":
            assert server.process.stdin is not None
            server.process.stdin.close()
        else:
            server.notify("exit")
        assert server.wait_exit(timeout_s=10) == (1 if ending.startswith("exit") else 0)
        assert not server.tracebacks(), server.describe()


def test_a_frame_left_unfinished_is_reported_then_the_next_one_is_read(servers: ServerPool) -> None:
    """A client that declares more bytes than it sends and waits is told so (the server does not wait
    silently); its next frame is then read."""
    server = servers.get()
    server.write(b"Content-Length: 500\r\n\r\n" + b'{"jsonrpc": "2.0"')
    said = "agent-ls: waiting for the rest of the input for 5 s: a message declared 500 bytes, 17 came"
    deadline = time.monotonic() + 30
    while not any(n["params"].get("message") == said for n in server.notifications[-5:]):
        assert time.monotonic() < deadline, server.notifications[-5:]
        time.sleep(0.1)
    assert said + "\n" in server.stderr
    server.assert_healthy("after an unfinished frame")
