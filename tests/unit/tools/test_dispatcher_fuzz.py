"""Dispatcher fuzz: random and malformed tool calls against the real registry and tools on a temp workspace.

Hypothesis generates calls the way a broken or hostile model writes them: unknown, empty, huge and
surrogate-bearing names; arguments that are not JSON, JSON that is not an object, wrong types, extra
fields, huge strings and numbers, lone surrogates, nesting 40 to 100,000 levels deep; paths with ``..``,
absolute paths inside and outside the workspace, NUL bytes, secrets, home shortcuts, Windows spellings,
very long names. The workspace is a real ``runtime.Session`` (overlay, shadow copy, shell runner, policy)
whose approver allows only a few harmless commands and denies every other "ask".

After every call:

- ``execute`` returned (no exception escaped) one result with the call's id, text that encodes as UTF-8,
  and the events ``ToolCallStarted`` ... ``ToolCallFinished`` with the same text;
- an error result names the problem with a deliberate message (unknown tool, not JSON, not an object,
  too deep, invalid fields named, refused path, policy, denial, a tool's own ``ToolError``), never the
  dispatcher's catch-all ``<tool> failed: <ExceptionType>`` that means a bug escaped a tool;
- a read or write of a path outside the workspace is an error.

After the run, no file outside the proposal changed on disk (the agent only proposes), and nothing was
logged as failing outside a tool. ``AGENT_LS_FUZZ_LONG=1`` runs the long mode (docs/reliability.md gives the
figures of the last long run); the test prints how many calls it made.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_ls.assembly import assemble_session
from agent_ls.core.events import Event, ToolCallFinished, ToolCallStarted
from agent_ls.core.messages import ToolCall
from agent_ls.core.ports import Approval, ApprovalRequest
from agent_ls.core.untrusted_json import ARGUMENT_MAX_DEPTH

LONG = os.environ.get("AGENT_LS_FUZZ_LONG") == "1"
EXAMPLES = int(os.environ.get("AGENT_LS_FUZZ_EXAMPLES", 20_000 if LONG else 250))

FILES = {
    "notes.txt": "alpha\nbeta\n",
    "src/app.py": "print('hi')\n",
    "src/é.txt": "accent\n",
    "docs/deep/guide.md": "# Guide\n",
    ".env": "API_KEY=not-a-real-key\n",
}
# Deliberate error texts: the dispatcher's own, the path rules', the policy's, the approver's, and
# every tool's ToolError (all start "Error: " in the result).
DELIBERATE = re.compile(r"\A(Error: |Blocked by policy \(|denied by user: )")
CATCH_ALL = re.compile(r"\AError: [^\n]{0,200}? failed: [A-Za-z_]*(Error|Exception|Exit|Interrupt)\b")


PATH_TOOLS = ("read_file", "write_file", "edit_file", "list_files", "grep")


SAFE_COMMANDS = ("echo hi", "ls", "cat notes.txt", "git status", "pwd", "grep -r alpha .")


class AllowOnlySafeCommands:
    """Says "once" to the few harmless commands above, so the shell runner runs too; denies the rest."""

    async def ask(self, request: ApprovalRequest) -> Approval:
        return Approval("once" if request.subject in SAFE_COMMANDS else "deny")


def path_tricks(root: Path, outside: Path) -> list[str]:
    return [
        "notes.txt", "src/app.py", "src", ".", "", "..", "../outside.txt", "src/../../outside.txt",
        "src/../notes.txt", "./notes.txt", "src//app.py", "notes.txt/", "/", "/etc/passwd",
        "/proc/self/environ", str(outside), str(root), f"{root}/notes.txt", f"{root}/../outside.txt",
        "notes.txt\x00.png", "\x00", "~", "~/.ssh/id_rsa", "$HOME/.bashrc", ".env", ".env.local",
        ".git/config", "..\\outside.txt", "C:\\Windows\\win.ini", "//etc/passwd", "NOTES.TXT",
        " notes.txt", "notes.txt ", "*", "**/*", "-rf", "--help", "src/e\u0301.txt", "notes.txt\ud83d",
        "\udc80", "a" * 300, "a/" * 2000, "x" * 5000,
    ]  # fmt: skip


def strings(tricks: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(tricks),
        st.text(max_size=60),
        st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=4),
        st.builds(lambda a, b: a + "\ud83d" + b, st.text(max_size=10), st.text(max_size=10)),
        st.integers(min_value=10_000, max_value=400_000).map(lambda n: "x" * n),
        st.sampled_from(SAFE_COMMANDS),
    )


def json_values(tricks: list[str]) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(allow_nan=False, allow_infinity=False),
        strings(tricks),
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
        max_leaves=6,
    )


def nested(levels: int, inner: str) -> str:
    return "[" * levels + inner + "]" * levels


def typed(schema: dict[str, Any], tricks: list[str]) -> st.SearchStrategy[Any]:
    """A value of the type the schema gives (often outside its bounds)."""
    kind = schema.get("type")
    if kind == "integer":
        return st.one_of(
            st.integers(min_value=-3, max_value=50), st.integers(min_value=-(10**30), max_value=10**30)
        )
    if kind == "boolean":
        return st.booleans()
    return st.one_of(
        strings(tricks),
        st.sampled_from(["alpha", "beta", "alpha\nbeta", "print", "(", "[a-", "a{99999}", "\\", ".*", "é"]),
    )


DEEP_FORMS = (3, 4)
HUGE_NUMBER_FORM = 5
NOT_OBJECTS = ("null", "[]", "1", '"text"', "true", "NaN", "1e999999")


@dataclass(frozen=True)
class Case:
    call: ToolCall
    form: int
    """How the arguments were made (``raw_arguments``): 3 and 4 nest too deep, 5 holds a huge integer."""


@st.composite
def raw_arguments(draw: st.DrawFn, schema: dict[str, Any], tricks: list[str]) -> tuple[str, int]:
    """The arguments text of one call: often the tool's fields with values of the right type, often not."""
    properties: dict[str, Any] = schema.get("properties", {})
    names = sorted(properties)
    values = json_values(tricks)
    if draw(st.booleans()):  # well typed: the required fields and some optional ones
        optional = [name for name in names if name not in schema.get("required", [])]
        fields = (
            [*schema.get("required", []), *draw(st.lists(st.sampled_from(optional), unique=True))]
            if optional
            else list(schema.get("required", []))
        )
        args: dict[str, Any] = {name: draw(typed(properties[name], tricks)) for name in fields}
    else:
        fields = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
        args = {name: draw(values) for name in fields}
        if draw(st.booleans()):
            args.update(draw(st.dictionaries(st.text(max_size=8), values, max_size=2)))
    text = json.dumps(args)  # ensure_ascii: a lone surrogate arrives as the escape "\udXXX", as from a server
    form = draw(st.integers(min_value=0, max_value=11))
    if form == 0:
        text = text[: draw(st.integers(min_value=0, max_value=max(len(text) - 1, 0)))]  # cut short
    elif form == 1:
        text = draw(st.text(max_size=80))
    elif form == 2:
        text = draw(st.sampled_from(["", "  ", "{]", *NOT_OBJECTS]))
    elif form == 3:
        levels = draw(st.sampled_from([ARGUMENT_MAX_DEPTH, 200, 5_000, 100_000]))
        key = draw(st.sampled_from(names or ["x"]))
        text = json.dumps({key: "@"}).replace('"@"', nested(levels, "1"))
    elif form == 4:
        text = nested(draw(st.sampled_from([ARGUMENT_MAX_DEPTH, 100_000])), text)
    elif form == HUGE_NUMBER_FORM:
        key = draw(st.sampled_from(names or ["x"]))
        text = f'{{"{key}": {"9" * draw(st.integers(min_value=4_400, max_value=6_000))}}}'
    return text, form


@st.composite
def cases(draw: st.DrawFn, specs: dict[str, dict[str, Any]], tricks: list[str]) -> Case:
    names = st.one_of(
        st.sampled_from(sorted(specs)),
        st.sampled_from(sorted(specs)),
        st.sampled_from(sorted(specs)),
        st.text(max_size=30),
        st.sampled_from(["", " read_file", "READ_FILE", "read_file\x00", "read\ud83dfile", "x" * 20_000]),
    )
    name = draw(names)
    fallback = {"properties": {"path": {"type": "string"}, "command": {"type": "string"}}}
    arguments, form = draw(raw_arguments(specs.get(name, fallback), tricks))
    call_id = draw(st.one_of(st.text(max_size=20), st.just(""), st.just("id\ud83d")))
    return Case(ToolCall(call_id=call_id, name=name, arguments=arguments), form)


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def outside_the_workspace(root: Path, raw: str) -> bool:
    """True when ``raw`` plainly names a place outside ``root`` (after ``..`` and absolute paths)."""
    if "\x00" in raw or raw.startswith("~"):
        return False  # refused for other reasons, or a name inside the workspace
    joined = posixpath.normpath(posixpath.join(str(root), raw))
    return joined != str(root) and not joined.startswith(f"{root}/")


def test_random_and_malformed_tool_calls_never_escape_and_always_say_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "ws"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours\n", encoding="utf-8")
    disk_before = tree_digest(tmp_path)
    session = assemble_session(
        root=root, approver=AllowOnlySafeCommands(), environ={"PATH": os.environ.get("PATH", "")}
    )
    registry = session.registry
    specs = {spec.name: spec.parameters for spec in registry.specs()}
    tricks = path_tricks(session.root, outside)
    loop = asyncio.new_event_loop()
    made = 0

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )
    @given(case=cases(specs, tricks))
    def one_call(case: Case) -> None:
        nonlocal made
        made += 1
        call = case.call
        events: list[Event] = []
        result = loop.run_until_complete(registry.execute(call, events.append))
        started, finished = events[0], [e for e in events if isinstance(e, ToolCallFinished)]
        assert isinstance(started, ToolCallStarted) and len(finished) == 1
        output = finished[0].output
        assert result.call_id == started.call_id == finished[0].call_id
        assert result.is_error == finished[0].is_error
        result.content.encode("utf-8")  # well-formed: never a lone surrogate
        known = call.name in specs and "\x00" not in call.name
        if not known:
            assert result.is_error and output.startswith("Error: no tool named"), output
        elif case.form in DEEP_FORMS:
            assert f"nest arrays or objects more than {ARGUMENT_MAX_DEPTH} levels deep" in output, output
        elif case.form == HUGE_NUMBER_FORM:
            assert "are not valid JSON (Exceeds the limit" in output, output
        elif call.arguments in NOT_OBJECTS:
            assert f"Error: the arguments of {call.name} must be a JSON object" in output, output
        elif output.startswith("Error: invalid arguments for"):
            assert re.search(r"^- \S", output, re.MULTILINE) and "Expected: " in output, output
        if result.is_error:
            assert DELIBERATE.match(output) and len(output) > 20, output
            assert not CATCH_ALL.match(output), output
        if not result.is_error and call.name in (
            "read_file",
            "write_file",
            "edit_file",
            "list_files",
            "grep",
        ):
            try:
                path = json.loads(call.arguments).get("path")
            except (ValueError, AttributeError, RecursionError):
                path = None
            assert not (isinstance(path, str) and outside_the_workspace(session.root, path)), (call, output)

    with caplog.at_level(logging.WARNING, logger="agent_ls.tools.registry"):
        try:
            one_call()
        finally:
            loop.close()
            session.close()
    print(f"\ndispatcher fuzz: {made} calls ({'long' if LONG else 'CI'} mode)")
    assert not [r for r in caplog.records if "failed outside the tool" in r.getMessage()]
    changed = {path for path, digest in tree_digest(tmp_path).items() if disk_before.get(path) != digest}
    assert changed == set(), changed
