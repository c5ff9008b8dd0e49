"""``agent-ls run /code-review``: the review's findings as ``path:line: severity: message`` lines.

The terminal shows each ``review_findings`` call's accepted findings in the transcript, and after the
answer every finding the answer does not list itself, so a problem matcher reading the output finds
them all (issue 16).
"""

from __future__ import annotations

from pathlib import Path

from tests.support import agent_cli
from tests.support.model_server import FakeModelServer


def test_the_cli_prints_every_finding_line_the_answer_lacks(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "app.py").write_text("import os\n\n\ndef f(x):\n    return eval(x)\n")
    findings = [
        {"path": "app.py", "line": 5, "severity": "error", "message": "eval of input"},
        {"path": "app.py", "line": 1, "severity": "info", "message": "os is unused"},
        {"path": "app.py", "line": 9, "severity": "hint", "message": "a line that is not there"},
    ]
    answer = "app.py:5: error: eval of input\n> `return eval(x)`"  # forgot the second finding
    steps = [
        {"tool_calls": [{"id": "c1", "name": "review_findings", "arguments": {"findings": findings}}]},
        {"content": answer},
    ]
    with FakeModelServer(steps) as server:
        env = agent_cli.user_environment(AGENT_LS_BASE_URL=server.base_url)
        args = [
            "run",
            "/code-review",
            "--model",
            "openai/test",
            "--workspace",
            str(root),
            "--file",
            str(root / "app.py"),
        ]
        done = agent_cli.run(args, cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    transcript = done.stderr
    assert (
        "  review findings: 2 in app.py\n    app.py:5: error: eval of input\n"
        "    app.py:1: info: os is unused\n" in transcript
    )
    assert transcript.rstrip().splitlines()[-4:-1] == ["", "review findings:", "app.py:1: info: os is unused"]
    (result,) = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert "#3 app.py:9: rejected: app.py has 5 lines" in result["content"]
