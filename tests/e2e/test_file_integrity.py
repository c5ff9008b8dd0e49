"""Real files through ``agent-ls run``: mixed line endings, a user's save between read and write, legacy
encodings, minified one-line bundles and a 2 GiB file (issue 12, items 1, 2, 4, 5 and 9).

Each test runs the real CLI in a subprocess with a replay script or the fake model server (whose
recorded requests show exactly what the model read), then looks at the bytes on disk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.support.model_server import FakeModelServer

LATIN1 = "# café crème\nprint('naïve')\n".encode("latin-1")


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
    env["AGENT_LS_CONFIG_DIR"] = os.environ["AGENT_LS_CONFIG_DIR"]  # empty: no user config leaks in
    env.update(extra or {})
    return env


def _run(
    tmp_path: Path, root: Path, steps: list[dict[str, Any]], *args: str, server: FakeModelServer | None = None
) -> subprocess.CompletedProcess[str]:
    """``agent-ls run`` with ``steps`` (a replay script, or the fake server's when ``server`` is given)."""
    if server is None:
        script = tmp_path / "script.json"
        script.write_text(json.dumps(steps))
        model, extra = f"replay:{script}", {}
    else:
        server.steps.extend(steps)
        model, extra = "openai/test-model", {"AGENT_LS_API_KEY": "k", "AGENT_LS_BASE_URL": server.base_url}
    argv = [sys.executable, "-m", "agent_ls", "run", "task", "--model", model, "--workspace", str(root)]
    return subprocess.run(
        [*argv, "--yes", *args],
        cwd=tmp_path,
        env=_env(extra),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _workspace(tmp_path: Path, files: dict[str, bytes]) -> Path:
    root = tmp_path / "ws"
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _tool_results(server: FakeModelServer) -> list[str]:
    return [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]


# -- 1. two views of one file ------------------------------------------------------------------------


def test_edits_copied_from_read_file_match_a_mixed_eol_file_and_keep_every_ending(tmp_path: Path) -> None:
    root = _workspace(
        tmp_path, {"notes.txt": b"alpha\r\nbeta\r\ngamma\ndelta\r\n", "w.txt": b"a\r\nb\nc\r\n"}
    )
    steps = [
        _call("read_file", path="notes.txt"),
        _call("edit_file", path="notes.txt", old_string="alpha\nbeta", new_string="ALPHA\nBETA"),
        _call("edit_file", path="notes.txt", old_string="gamma\ndelta", new_string="GAMMA\ndelta\nepsilon"),
        _call("write_file", path="w.txt", content="a\nB\nc\nd\n"),
        {"content": "done"},
    ]
    result = _run(tmp_path, root, steps, "--apply")
    assert result.returncode == 0, result.stderr
    assert "not found" not in result.stderr
    assert (root / "notes.txt").read_bytes() == b"ALPHA\r\nBETA\r\nGAMMA\ndelta\r\nepsilon\r\n"
    assert (root / "w.txt").read_bytes() == b"a\r\nB\nc\r\nd\r\n"


# -- 2. a write built on a stale read ----------------------------------------------------------------


def _run_while_the_user_saves(
    tmp_path: Path, root: Path, steps: list[dict[str, Any]], after: str, saved: bytes
) -> tuple[int, str]:
    """Run with ``--apply``; when the transcript shows ``after``, the user saves ``saved`` to config.py."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    argv = [sys.executable, "-m", "agent_ls", "run", "task", "--model", f"replay:{script}"]
    process = subprocess.Popen(
        [*argv, "--workspace", str(root), "--yes", "--apply"],
        cwd=tmp_path,
        env=_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    for line in process.stderr:
        lines.append(line)
        if after in line:
            (root / "config.py").write_bytes(saved)
            break
        assert time.monotonic() < deadline, "".join(lines)
    _, rest = process.communicate(timeout=60)
    return process.returncode, "".join(lines) + (rest or "")


USER_SAVE = b'DEBUG = False\nPORT = 9090  # user change\nLOG_LEVEL = "info"\n'


def test_a_write_built_on_a_read_the_user_outdated_is_refused(tmp_path: Path) -> None:
    root = _workspace(tmp_path, {"config.py": b"DEBUG = False\nPORT = 8080\n"})
    steps = [
        _call("read_file", path="config.py"),
        {
            "delay_s": 2,
            **_call("write_file", path="config.py", content="DEBUG = False\nPORT = 8080\nX = 1\n"),
        },
        {"delay_s": 0.1, **_call("edit_file", path="config.py", old_string="DEBUG", new_string="DBG")},
        {"content": "done"},
    ]
    code, stderr = _run_while_the_user_saves(tmp_path, root, steps, "✓ read_file", USER_SAVE)
    assert code == 0, stderr
    assert stderr.count("config.py changed since you read it; read it again") == 2, stderr
    assert (root / "config.py").read_bytes() == USER_SAVE


def test_apply_checks_against_the_version_the_agent_read(tmp_path: Path) -> None:
    root = _workspace(tmp_path, {"config.py": b"DEBUG = False\nPORT = 8080\n"})
    steps = [
        _call("read_file", path="config.py"),
        _call("edit_file", path="config.py", old_string="8080", new_string="8081"),
        {"delay_s": 2, "content": "done"},
    ]
    code, stderr = _run_while_the_user_saves(tmp_path, root, steps, "✓ edit_file", USER_SAVE)
    assert code == 1, stderr
    assert "config.py changed on disk since the agent read it" in stderr
    assert (root / "config.py").read_bytes() == USER_SAVE


# -- 4. legacy encodings -----------------------------------------------------------------------------


def test_a_latin1_file_is_read_edited_and_applied_in_latin1(tmp_path: Path) -> None:
    root = _workspace(tmp_path, {"legacy.py": LATIN1})
    steps = [
        _call("read_file", path="legacy.py"),
        _call("edit_file", path="legacy.py", old_string="café crème", new_string="thé glacé"),
        {"content": "done"},
    ]
    with FakeModelServer([]) as server:
        result = _run(tmp_path, root, steps, "--apply", server=server)
        assert result.returncode == 0, result.stderr
        read, edited = _tool_results(server)
    assert "     1\t# café crème\n     2\tprint('naïve')\n[file encoding: cp1252; edits keep it]" in read
    assert "Edited legacy.py" in edited
    assert "-# café crème\n+# thé glacé\n" in result.stdout
    assert (root / "legacy.py").read_bytes() == "# thé glacé\nprint('naïve')\n".encode("latin-1")


def test_a_command_editing_a_legacy_file_comes_back_in_its_encoding(tmp_path: Path) -> None:
    root = _workspace(tmp_path, {"legacy.py": LATIN1})
    steps = [_call("bash", command="sed -i 's/print/echo/' legacy.py"), {"content": "done"}]
    result = _run(tmp_path, root, steps, "--apply")
    assert result.returncode == 0, result.stderr
    assert (root / "legacy.py").read_bytes() == "# café crème\necho('naïve')\n".encode("latin-1")


def test_a_change_a_command_cannot_bring_back_is_named_at_the_end_of_the_run(tmp_path: Path) -> None:
    root = _workspace(tmp_path, {"a.txt": b"text\n", "b.txt": b"kept\n"})
    remove = "python3 -c 'import os; os.remove(\"b.txt\")'"
    steps = [_call("bash", command=f"printf '\\377\\000\\001' > a.txt; {remove}"), {"content": "done"}]
    result = _run(tmp_path, root, steps)
    assert result.returncode == 0, result.stderr
    assert (
        "■ run done: the model answered; 2 changes made by commands not in the proposal: "
        "a.txt (binary, or not text), b.txt (deleted; a proposal cannot delete files)"
    ) in result.stderr
    assert result.stdout == ""


# -- 5. long lines -----------------------------------------------------------------------------------


def _bundle() -> bytes:
    parts = [f"function f{i}(x){{return x+{i}}}" for i in range(20_000)]
    parts.insert(10_000, "function needle(x){return 42}")
    return ("var a=" + ";var b=".join(parts) + ";\n").encode()


def test_grep_shows_a_window_around_a_match_deep_in_a_long_line_and_other_files_too(
    tmp_path: Path,
) -> None:
    bundle = _bundle()
    column = bundle.index(b"needle") + 1
    root = _workspace(tmp_path, {"dist/app.min.js": bundle, "src/real.py": b"def needle():\n    return 42\n"})
    steps = [
        _call("grep", pattern="needle"),
        _call("read_file", path="dist/app.min.js", column=column, limit=1),
        {"content": "done"},
    ]
    with FakeModelServer([]) as server:
        result = _run(tmp_path, root, steps, server=server)
        assert result.returncode == 0, result.stderr
        grep, read = _tool_results(server)
    grep_lines = grep.split("\n")
    assert grep_lines[1].startswith(f"dist/app.min.js:1:{column}:…")
    assert "function needle(x){return 42}" in grep_lines[1] and len(grep_lines[1]) < 400
    assert grep_lines[2] == "src/real.py:1:5:def needle():"
    assert "     1\tneedle(x){return 42};var b=function f10000" in read
    assert f"[columns {column:,}-{column + 1999:,} of {len(bundle) - 1:,}; more with offset=1" in read


# -- 9. bounded memory -------------------------------------------------------------------------------


def test_read_file_limit_1_on_a_2_gib_file_reads_a_chunk_not_the_file(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    with (root / "big.log").open("wb") as handle:  # sparse: 2 GiB of NULs after a first line
        handle.write(b"first line\n")
        handle.truncate(2 * 1024**3)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([_call("read_file", path="big.log", limit=1), {"content": "done"}]))
    argv = [
        sys.executable,
        "-m",
        "agent_ls",
        "run",
        "t",
        "--model",
        f"replay:{script}",
        "--workspace",
        str(root),
    ]
    # A wrapper process, so the peak RSS measured is agent-ls's alone.
    measure = (
        "import resource, subprocess, sys; "
        "done = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, capture_output=True, text=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024); print(done.stderr)"
    )
    wrapped = subprocess.run(
        [sys.executable, "-c", measure, *argv],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    peak_mb, _, stderr = wrapped.stdout.partition("\n")
    assert "✓ read_file: 1\tfirst line" in stderr, stderr
    assert int(peak_mb) < 200, f"peak RSS {peak_mb} MB"
