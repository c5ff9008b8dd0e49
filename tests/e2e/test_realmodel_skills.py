"""Trigger check of the bundled skills against a real model (issue 6): does the model pick the right skill?

For each bundled skill (``skills/*/SKILL.md``): three natural prompts that should make the model call
``skill`` with that name, and two near misses that should not (docs/skills.md, "Test that it triggers").
Each prompt is a real ``agent-ls run PROMPT --max-turns 1`` against llama.cpp's server with Gemma 3 270M,
set up exactly as ``tests/e2e/test_realmodel.py`` does (same interpreter and GGUF variables, same
``chatml-function-calling`` server and recording proxy; ``stream = false``: this server cannot stream tool
calls).

A 270M base model does not pick skills at all (docs/skills.md has the observed matrix), and llama.cpp
samples (temperature 0.8 unless the request says otherwise; agent-ls sends none), so the trigger outcome
is *recorded*, not asserted: the module writes
the matrix (per prompt: hits of ``TRIGGER_REPEATS`` tries, and what the first turn called) to
``skill-triggers.json`` and ``skill-triggers.md`` in pytest's base temp dir, and prints the markdown at the
end (``-s``). Control prompts phrased as a call ("Call skill with name explain. Respond only with a function
call.", and the same for ``list_files`` and ``grep``) separate "the model ignores the catalog" from "the
model calls no tool but one". What is asserted is the mechanics, which must hold whatever the model says:

- every run ends with one ``■ run <status>: <reason>`` line, the exit code matching, no traceback;
- the first request carries the catalog (``<available_skills>`` naming every bundled skill) and a
  ``skill`` tool whose ``name`` enum is exactly the bundled skills;
- every ``skill`` call the model makes names one of them, and a valid call is announced as an activation
  (``instructions (skill): skill:<name>``).

Run (about 3-4 min on 2 cores: 26 runs, a few seconds each, the first up to 30 s)::

    AGENT_LS_LLAMA_PYTHON=<llama venv>/bin/python pytest -m realmodel tests/e2e/test_realmodel_skills.py -s

``AGENT_LS_TRIGGER_REPEATS`` (default 1) sets the tries per prompt.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.e2e.test_realmodel import ENDED, EXIT_BY_STATUS, MODEL, RUN_TIMEOUT_S, _gguf, _llama_python
from tests.support.llama_server import Exchange, LlamaServer, RecordingProxy

pytestmark = pytest.mark.realmodel

REPO = Path(__file__).resolve().parents[2]
BUNDLED = sorted(p.parent.name for p in (REPO / "skills").glob("*/SKILL.md"))
TRIGGER_REPEATS = int(os.environ.get("AGENT_LS_TRIGGER_REPEATS") or 1)
MAX_OUTPUT_TOKENS = 96  # enough for any tool call here; bounds a rambling text answer

CALC_PY = '''import os


def parse(text):
    """Parse "a op b" into (a, op, b)."""
    a, op, b = text.split()
    return float(a), op, float(b)


def divide(a, b):
    if b == 0:
        return None
    return a / b


def evaluate(text):
    a, op, b = parse(text)
    if op == "/":
        return divide(a, b)
    return eval(f"{a} {op} {b}")
'''

Kind = Literal["should", "near-miss", "control"]


@dataclass(frozen=True)
class Prompt:
    """One prompt. ``target``: the call that counts as a hit, ``skill:<name>`` or a tool name (controls);
    "" means ``skill:<skill>``."""

    skill: str
    kind: Kind
    text: str
    target: str = ""


PROMPTS = [
    # code-review: triggers "review or audit code"; excludes style nits and explaining.
    Prompt("code-review", "should", "Can you look over calc.py for security problems before I merge it?"),
    Prompt("code-review", "should", "Audit calc.py: is anything in it risky or likely to break?"),
    Prompt("code-review", "should", "Please review my changes in calc.py and point out bugs."),
    Prompt("code-review", "near-miss", "Explain what the evaluate function in calc.py does."),
    Prompt("code-review", "near-miss", "Reformat calc.py to use single quotes everywhere."),
    # explain: triggers "what code does or why"; excludes reviews, fixes, tests.
    Prompt("explain", "should", "What does the divide function in calc.py do?"),
    Prompt("explain", "should", "Walk me through how calc.py turns a string like '1 + 2' into a number."),
    Prompt("explain", "should", "Why does divide in calc.py return None sometimes?"),
    Prompt("explain", "near-miss", "Find the bugs in calc.py and list them by severity."),
    Prompt("explain", "near-miss", "Add pytest tests for parse in calc.py."),
    # fix-diagnostics: triggers "fix a problem or error"; excludes reviews and features.
    Prompt(
        "fix-diagnostics", "should", "ruff reports calc.py:1:8: F401 `os` imported but unused. Please fix it."
    ),
    Prompt(
        "fix-diagnostics",
        "should",
        "mypy says calc.py:13: error: Missing return type. Can you fix that error?",
    ),
    Prompt(
        "fix-diagnostics", "should", "calc.py crashes with ValueError on '1+2' (no spaces). Fix the problem."
    ),
    Prompt("fix-diagnostics", "near-miss", "Add a multiply helper function to calc.py."),
    Prompt("fix-diagnostics", "near-miss", "Is calc.py safe to ship? Just tell me, don't change anything."),
    # write-tests: triggers "add or improve tests"; excludes reviewing and explaining.
    Prompt("write-tests", "should", "Add unit tests for the divide function in calc.py."),
    Prompt("write-tests", "should", "calc.py has no tests yet; can you cover it with pytest?"),
    Prompt("write-tests", "should", "Write a test that checks dividing by zero in calc.py returns None."),
    Prompt("write-tests", "near-miss", "Run the existing tests and tell me whether they pass."),
    Prompt("write-tests", "near-miss", "Explain what a good test for calc.py would have to check."),
    # Controls: phrased as a call, as test_realmodel.py's TOOL_TASK (which this model obeys for read_file).
    # They tell "the model does not follow the catalog" from "the model calls no tool but read_file".
    *(
        Prompt(name, "control", f"Call skill with name {name}. Respond only with a function call.")
        for name in BUNDLED
    ),
    Prompt("—", "control", "Call list_files. Respond only with a function call.", "list_files"),
    Prompt("—", "control", "Call grep with pattern divide. Respond only with a function call.", "grep"),
]


@dataclass
class Row:
    """One prompt's outcome over its tries: ``picked`` is the first turn's tool calls per try."""

    skill: str
    kind: Kind
    prompt: str
    target: str
    picked: list[list[str]] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    @property
    def hits(self) -> int:
        """Tries whose first turn made the ``target`` call."""
        return sum(self.target in calls for calls in self.picked)

    def verdict(self) -> str:
        wanted = self.kind != "near-miss"
        good = self.hits == len(self.picked) if wanted else self.hits == 0
        return "ok" if good else "MISS" if wanted else "MISFIRE"


def _only_when_asked(request: pytest.FixtureRequest) -> None:
    if "realmodel" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("real-model test: run it with pytest -m realmodel")


@pytest.fixture(scope="module")
def llama(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    _only_when_asked(request)  # before anything starts a model server
    server = LlamaServer(_llama_python(), _gguf(), log_path=tmp_path_factory.mktemp("llama") / "server.log")
    with server:
        yield server


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(workspace root, user config dir with a ``[providers.llama]`` table set later per proxy)."""
    base = tmp_path_factory.mktemp("skills-ws")
    root = base / "ws"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "calc.py").write_text(CALC_PY)
    (root / "README.md").write_text("# calc\n\nA tiny calculator.\n")
    config = base / "config"
    config.mkdir()
    return root, config


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Row]]:
    rows: list[Row] = []
    yield rows
    if not rows:
        return
    out = tmp_path_factory.getbasetemp()
    (out / "skill-triggers.json").write_text(
        json.dumps({"model": MODEL, "repeats": TRIGGER_REPEATS, "rows": [_wire(r) for r in rows]}, indent=2)
    )
    markdown = _markdown(rows)
    (out / "skill-triggers.md").write_text(markdown)
    print(
        f"\n\nskill trigger matrix ({MODEL}, {TRIGGER_REPEATS} tries per prompt; {out}/skill-triggers.*):\n"
    )
    print(markdown)


def _wire(row: Row) -> dict[str, Any]:
    return {**asdict(row), "hits": row.hits, "tries": len(row.picked), "verdict": row.verdict()}


def _markdown(rows: list[Row]) -> str:
    lines = ["| skill | kind | prompt | hits | first turn called | verdict |", "|---|---|---|---|---|---|"]
    for row in rows:
        called = "; ".join(", ".join(calls) or "(nothing)" for calls in row.picked)
        prompt = row.prompt.replace("|", "\\|")
        hits = f"{row.hits}/{len(row.picked)}"
        lines.append(f"| {row.skill} | {row.kind} | {prompt} | {hits} | {called} | {row.verdict()} |")

    def count(kind: Kind) -> tuple[int, int]:
        chosen = [r for r in rows if r.kind == kind]
        return sum(r.hits for r in chosen), sum(len(r.picked) for r in chosen)

    seconds = [s for r in rows for s in r.seconds]
    lines += [
        "",
        "Should-trigger tries that called the right skill: {} of {}. ".format(*count("should"))
        + "Near-miss tries that called the skill they should not: {} of {}. ".format(*count("near-miss"))
        + "Controls that made the call asked for: {} of {}.".format(*count("control")),
        f"Model request time per try: median {statistics.median(seconds):.1f} s, max {max(seconds):.1f} s."
        if seconds
        else "",
    ]
    return "\n".join(lines) + "\n"


def _calls(exchange: Exchange) -> list[tuple[str, dict[str, Any] | str]]:
    """(name, parsed arguments or the raw text) of each tool call in the response."""
    body = exchange.response_json()
    assert body is not None, f"not a JSON response: {exchange.response_text[:500]!r}"
    calls = body["choices"][0]["message"].get("tool_calls") or []
    found: list[tuple[str, dict[str, Any] | str]] = []
    for call in calls:
        raw = call["function"]["arguments"]
        try:
            arguments = json.loads(raw)
        except ValueError:
            arguments = raw
        found.append((call["function"]["name"], arguments))
    return found


def _label(name: str, arguments: dict[str, Any] | str) -> str:
    if name == "skill" and isinstance(arguments, dict):
        return f"skill:{arguments.get('name')}"
    return name


def _run(root: Path, config: Path, proxy: RecordingProxy, task: str) -> subprocess.CompletedProcess[str]:
    (config / "agent-ls.toml").write_text(
        "[providers.llama]\n"
        'wire_api = "openai-chat"\n'
        f'base_url = "{proxy.base_url}"\n'
        "stream = false\n"
        f"max_output_tokens = {MAX_OUTPUT_TOKENS}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
    env.update(AGENT_LS_CONFIG_DIR=str(config), HOME=str(config.parent))  # no skills of this machine's user
    options = ["--workspace", str(root), "--max-turns", "1"]
    return subprocess.run(
        [sys.executable, "-m", "agent_ls", "run", task, "--model", MODEL, *options],
        env=env,
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


@pytest.mark.parametrize(
    "prompt", PROMPTS, ids=[f"{p.target or p.skill}-{p.kind}-{i}" for i, p in enumerate(PROMPTS)]
)
def test_skill_trigger(
    prompt: Prompt, llama: LlamaServer, workspace: tuple[Path, Path], matrix: list[Row]
) -> None:
    assert BUNDLED == ["code-review", "explain", "fix-diagnostics", "write-tests"]
    root, config = workspace
    row = Row(prompt.skill, prompt.kind, prompt.text, prompt.target or f"skill:{prompt.skill}")
    matrix.append(row)
    for _ in range(TRIGGER_REPEATS):
        with RecordingProxy(llama.base_url) as proxy:
            done = _run(root, config, proxy, prompt.text)
            exchanges = proxy.chat_exchanges()

        assert "Traceback" not in done.stderr, done.stderr
        ended = ENDED.findall(done.stderr)
        assert len(ended) == 1, f"expected one '■ run <status>: <reason>' line:\n{done.stderr}"
        assert done.returncode == EXIT_BY_STATUS[ended[0][0]], done.stderr
        assert len(exchanges) == 1 and exchanges[0].status == 200, done.stderr

        request = exchanges[0].request
        system = request["messages"][0]["content"]
        assert "<available_skills>" in system
        assert all(f"- {name}: " in system for name in BUNDLED), system
        tools = {tool["function"]["name"]: tool["function"] for tool in request["tools"]}
        assert tools["skill"]["parameters"]["properties"]["name"]["enum"] == BUNDLED

        calls = _calls(exchanges[0])
        for name, arguments in calls:
            if name != "skill":
                continue
            assert isinstance(arguments, dict) and arguments.get("name") in BUNDLED, arguments
            assert re.search(rf"instructions \(skill\): skill:{arguments['name']}\b", done.stderr), (
                done.stderr
            )
        row.picked.append([_label(name, arguments) for name, arguments in calls])
        row.seconds.append(round(exchanges[0].elapsed_s, 1))
