"""sessions.outputs: the whole outputs of a session's tool calls beside its JSONL file, redacted, read again
after a reopen, and the JSONL's tool results as the fallback (issue 15)."""

from __future__ import annotations

import time
from pathlib import Path

from agent_ls.core.context import instructions_block, wrap_tool_result
from agent_ls.core.messages import ToolResultMessage
from agent_ls.sessions.outputs import SessionOutputs, output_file_name, unwrap_tool_result
from agent_ls.sessions.records import message_json
from agent_ls.sessions.redaction import Redactor
from agent_ls.sessions.store import SessionStore
from agent_ls.workspace.processes import FULL_OUTPUT_MAX_BYTES

KEY = "sk-proj-" + "Zq7" * 12  # a key shape the redactor knows
PLANTED = "hunter2-very-secret-value"  # a value the store was told is a secret


def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "state", Redactor([PLANTED]))


def tool_result(call_id: str, text: str) -> dict[str, object]:
    wrapped = wrap_tool_result("bash", text, False)
    return {"message": message_json(ToolResultMessage(call_id, "bash", wrapped))}


def test_kept_outputs_are_redacted_files_beside_the_session_and_read_after_a_reopen(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    sessions = store(tmp_path)
    log = sessions.create(root, "s1")
    log.append("run_start", {"run": 1, "task": "t", "model": "m"})
    text = "".join(f"line {n}\n" for n in range(1, 1_001)) + f"OPENAI_API_KEY={KEY}\ntoken {PLANTED}\n"
    assert SessionOutputs(log).keep("call_9", text)
    log.close()

    path = sessions.path(root, "s1").with_name("s1.outputs") / "call_9.txt"
    on_disk = path.read_text()
    assert KEY not in on_disk and PLANTED not in on_disk
    assert on_disk.endswith("OPENAI_API_KEY=[redacted]\ntoken [redacted]\n")
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    again = SessionOutputs(sessions.reopen(root, "s1"))  # another process, later
    assert again.read("call_9") == on_disk


def test_read_falls_back_to_the_result_the_model_read_the_latest_of_a_repeated_id(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    sessions = store(tmp_path)
    log = sessions.create(root, "s2")
    nested = instructions_block("pkg/AGENTS.md", "Use tabs.")
    first = tool_result("0", "first <tool_result> run")
    log.append("message", first)
    second = tool_result("0", "second run\nexit code 1")
    second["message"]["content"] += f"\n\n{nested}"  # type: ignore[index]
    log.append("message", second)
    log.append("compaction", {"messages": [message_json(ToolResultMessage("0", "bash", "[output pruned]"))]})
    outputs = SessionOutputs(log)  # not flushed yet: read waits for the queued lines
    assert outputs.read("0") == "second run\nexit code 1"
    assert outputs.read("1") is None
    assert outputs.keep("0", "kept whole")
    assert outputs.read("0") == "kept whole"  # a kept file wins over the JSONL


def test_the_result_is_unwrapped_as_the_model_read_it() -> None:
    assert unwrap_tool_result(wrap_tool_result("bash", "a </tool_result> b", True)) == "a &lt;/tool_result> b"
    assert unwrap_tool_result("not wrapped") == "not wrapped"


def test_call_ids_that_cannot_name_a_file_get_a_safe_name_of_their_own() -> None:
    assert output_file_name("toolu_01A-b") == "toolu_01A-b.txt"
    odd = output_file_name("call|fc/../x")
    assert odd.startswith("call_fc____x-") and odd.endswith(".txt") and "/" not in odd
    assert output_file_name("call|fc/../x") != output_file_name("call_fc_.._x")
    assert output_file_name("") != output_file_name("_")


def test_a_full_disk_is_reported_not_raised(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    log = sessions.create(tmp_path / "ws", "s3")
    outputs = SessionOutputs(log)
    outputs.folder.parent.mkdir(parents=True)
    outputs.folder.write_text("a file where the folder should be")
    assert outputs.keep("c1", "text") is False


def test_keeping_8_mib_measure(tmp_path: Path, capsys: object) -> None:
    """Not timed: prints how long keeping the largest output takes (docs/sessions.md quotes it)."""
    log = store(tmp_path).create(tmp_path / "ws", "s4")
    text = ("0123456789 abcdefghij ABCDEFGHIJ sk- Bearer token line\n" * (FULL_OUTPUT_MAX_BYTES // 56))[
        :FULL_OUTPUT_MAX_BYTES
    ]
    started = time.perf_counter()
    assert SessionOutputs(log).keep("big", text)
    print(f"keep 8 MiB: {time.perf_counter() - started:.3f} s")
