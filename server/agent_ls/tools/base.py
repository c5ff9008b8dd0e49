"""What a tool is: its model-facing name, description and argument schema, and the function that runs it.

Each tool lives in one module of this package (``read_file.py``, ``bash.py``, ...) that ends with
``TOOL = Tool(...)``. The registry (``registry.py``) does lookup, validation, permission checks,
timeouts, truncation and error handling for every tool, so a tool's ``run`` only does its work and
raises ``ToolError`` (with a message for the model) when it cannot.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel

from agent_ls.core.events import EventSink
from agent_ls.core.messages import ToolSpec
from agent_ls.core.ports import CommandRunner, Workspace

Permission = Literal["read", "edit", "bash", "skill", "session", "mcp"]

SUBJECT_FIELDS: dict[Permission, str] = {
    "read": "path",
    "edit": "path",
    "bash": "command",
    "skill": "name",
    "session": "",
    "mcp": "",
}
"""The argument the permission check judges, per permission kind. ``skill`` (loading a skill's
instructions) is read-only and always allowed; the verdict is still reported. ``session`` tools act only on
the session's own state (the todo list, the workspace's memory notes, loading deferred tools, a subagent
whose every call is checked on its own): always allowed, the verdict reported with the tool's name as
subject. ``mcp`` tools (an MCP server's, ``mcp_client``) are judged by the ``mcp__<server>[__<tool>]`` rules
on ``ExternalTool.rule_name``; the question shows the arguments."""


@dataclass(frozen=True)
class ExternalTool:
    """What the registry needs to know of a tool another program runs (an MCP server's).

    Attributes:
        rule_name: the name permission rules match (``mcp__<server>__<tool>``, never cut).
        definition: a digest of the tool's definition as the server listed it: an "Allow for this session"
            holds for this definition only, so a tool a ``listChanged`` added or changed asks again.
        read_only, destructive: the server's ``readOnlyHint`` / ``destructiveHint`` (None: unset); they
            word the question and withhold "Always allow" from a destructive tool, and never allow anything.
        check: validates the arguments against the tool's input schema; returns a problem line or None.
    """

    rule_name: str
    definition: str = ""
    read_only: bool | None = None
    destructive: bool | None = None
    check: Callable[[dict[str, Any]], str | None] | None = None


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returns.

    Attributes:
        text: what the model reads (the registry truncates it centrally and marks it as data).
        is_error: the call failed in a way the model should notice.
        proposal_changed: the call changed the pending edits; the registry then emits ``ProposalChanged``.
        instructions: trusted instruction blocks (a skill's body) placed after the data-marked result,
            never inside it, and not truncated by the registry; "" for none.
        instruction_sources: their labels (``skill:code-review``), for the ``InstructionsLoaded`` event.
        full_text: the whole of what ``text`` shows cut (a command's uncut output, its lines numbered as
            ``text``'s omission note numbers them), which the registry keeps for ``read_output``; None
            when ``text`` is whole.
    """

    text: str
    is_error: bool = False
    proposal_changed: bool = False
    instructions: str = ""
    instruction_sources: tuple[str, ...] = ()
    full_text: str | None = None


class OutputKeeper(Protocol):
    """Keeps the whole text of tool results the model saw cut, so it can be read again (``read_output``).

    Contract: ``keep`` stores ``text`` under ``call_id`` (a later call with the same id replaces it: ids
    may repeat) and returns False when it could not (a full disk); ``read`` returns the text kept for
    ``call_id``, or else the result the model read for that call (also one compaction pruned since, also
    one of an earlier process), or None for an id the session never had. Both block on the disk (callers
    run them in a worker thread) and never raise. What they keep and return has secrets redacted.
    """

    def keep(self, call_id: str, text: str) -> bool: ...

    def read(self, call_id: str) -> str | None: ...


class InstructionAttacher(Protocol):
    """Nested instruction files (AGENTS.md below the starting folder), attached on first touch.

    Contract: ``on_touch`` returns the instruction blocks for the files that govern ``rel`` and were not
    attached before in this session ("" when none), and their labels; each file comes once per session.
    It never raises for file contents (unreadable files are skipped).
    """

    def on_touch(self, rel: str, *, is_dir: bool) -> tuple[str, tuple[str, ...]]: ...


@dataclass(frozen=True)
class ToolContext:
    """What tools act on, for one session.

    Attributes:
        workspace: the agent's view of the files (pending edits over buffers over disk).
        runner: runs shell commands in the session's shadow copy.
        command_timeout_s: seconds a shell command may run; kept below the registry's ``tool_timeout_s``
            so the runner stops the command and reports its output before the registry gives up.
        instructions: attaches nested AGENTS.md files to the results of calls that read, list or edit
            inside their folder; None: no nested loading.
        read_denied: whether the permission policy denies reading a workspace-relative path
            (``PermissionPolicy.read_denied``); grep and list_files leave such paths out. Set by the
            registry for each call; None: nothing is denied.
        emit: the run's event sink, set by the registry for each call (``todo_write`` emits
            ``TodosChanged``, ``task`` its subagent's events); None outside a call.
        call_id: the id of the call being run, set by the registry; "" outside a call.
    """

    workspace: Workspace
    runner: CommandRunner
    command_timeout_s: float = 50.0
    instructions: InstructionAttacher | None = None
    read_denied: Callable[[str], bool] | None = None
    emit: EventSink | None = None
    call_id: str = ""


ArgsT = TypeVar("ArgsT", bound=BaseModel)


@dataclass(frozen=True)
class Tool(Generic[ArgsT]):
    """One tool.

    Attributes:
        name: the name the model calls (``read_file``).
        description: the model-facing text; short and exact (it is sent with every request).
        args: the pydantic model of the arguments; its JSON Schema is what the model sees.
        run: does the work; raises ``ToolError`` with a message for the model when it cannot.
        mutates: the call may change the proposal (when in doubt, True).
        own_timeout: the tool bounds its own work, so the registry's ``tool_timeout_s`` does not apply
            (``bash``: the command has ``command_timeout_s``; making the shadow copy first may take
            longer than that on a large repository, and must not eat into the command's time).
        permission: which policy check runs before the call. ``read`` and ``edit`` judge the ``path``
            argument, ``bash`` the ``command`` argument; ``args`` must have that field.
        brief: a few words saying what the tool is for, shown by ``load_tools`` while the tool is deferred
            (its schema not sent yet); "" for tools always sent.
        listed: a deferred tool ``load_tools`` names in its description; False for one only a skill uses
            (``review_findings``): it is loaded when a skill naming it in ``allowed-tools`` is activated,
            or by a call, and costs no token before.
        schema: the JSON Schema the model is shown, when it is not ``args``'s (an MCP tool's
            ``inputSchema``; ``args`` then accepts any object and ``external.check`` validates it).
        external: for a tool another program runs (``permission`` ``mcp``), what the policy judges.
    """

    name: str
    description: str
    args: type[ArgsT]
    run: Callable[[ArgsT, ToolContext], Awaitable[ToolOutput]]
    mutates: bool
    permission: Permission
    own_timeout: bool = False
    brief: str = ""
    listed: bool = True
    schema: dict[str, Any] | None = None
    external: ExternalTool | None = None

    def __post_init__(self) -> None:
        field = SUBJECT_FIELDS[self.permission]
        if field and field not in self.args.model_fields:
            raise TypeError(f"tool {self.name}: permission {self.permission!r} needs an argument {field!r}")

    def subject(self, args: BaseModel) -> str:
        """The argument the permission check judges: the model-given path or the command (the tool's
        name for a ``session`` tool)."""
        field = SUBJECT_FIELDS[self.permission]
        return str(getattr(args, field)) if field else self.name

    def spec(self) -> ToolSpec:
        """What the model is shown: name, description and the cleaned JSON Schema of ``args`` (or
        ``schema``)."""
        return ToolSpec(self.name, self.description, self.schema or model_schema(self.args))


def model_schema(args: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of ``args`` as the model should see it.

    ``title`` and ``additionalProperties`` are dropped (they cost tokens on every request; validation
    still rejects unknown fields and the error names them), and an optional field (``X | None = None``)
    is shown as plain ``X`` without its null default. Descriptions, types, ``required``, defaults and
    constraints (``minimum``, ``minLength``) are kept.
    """
    cleaned = _clean(args.model_json_schema())
    assert isinstance(cleaned, dict)
    return cleaned


def _clean(node: Any) -> Any:
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _clean(prop) for name, prop in value.items()}
        elif not (key == "title" and isinstance(value, str)) and key != "additionalProperties":
            out[key] = _clean(value)
    branches = out.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        if "default" in out and out["default"] is None:
            del out["anyOf"], out["default"]
            (kept,) = [branch for branch in branches if branch != {"type": "null"}]
            out = {**kept, **out}
    return out
