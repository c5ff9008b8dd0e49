"""The tool registry: the one dispatcher between the model's tool calls and the tools.

``execute`` does, once per call and in this order:

1. emit ``ToolCallStarted``;
2. look the tool up (an unknown name gets the list of real ones);
3. parse the JSON arguments (``""`` means ``{}``; nested more than ``ARGUMENT_MAX_DEPTH`` levels is an
   error) and validate them with the tool's pydantic model (the error lists each bad field and the
   expected fields); an MCP tool's arguments are also checked against its input schema
   (``ExternalTool.check``);
4. check the permission (an MCP tool: ``PermissionPolicy.check_tool`` on its rule name, the arguments
   shown in the question): for ``read``/``edit`` tools the workspace resolves the path first (a refused
   path, ``PathRefused``, is a "deny" and an error result), then the policy decides; "ask" asks the
   ``Approver``; a "session" reply is remembered by the policy, an "always" written to the user config
   (a failure to write is logged, and the call still runs once); a "deny" reply's feedback goes back
   to the model in the result; ``VerdictGiven`` carries the final verdict and the deciding rule;
5. run the tool under ``tool_timeout_s`` (unless it bounds its own work: ``Tool.own_timeout``);
6. redact secrets from the whole text (``redact``: known key values and key-shaped strings) before
   anything cuts, shows, keeps or sends it; truncate the text centrally (head and tail, with a note of
   what was omitted); when the session keeps
   outputs (``keep_outputs``) and text was lost (the tool's own cut, ``ToolOutput.full_text``, or this
   one), keep the whole text under the call's id (in a worker thread), end the result with the line
   that says how to read it (``read_output.kept_note``) and load ``read_output`` (its schema is sent from
   the next request on);
7. turn failures into error results: ``ToolError`` with its message, an ``OSError`` (the file system
   refusing a path the model chose: too long, a loop, not a folder) as what the file system said, a NUL
   character the OS refused in a path, command or pattern as ``NUL_REFUSAL``, any other exception as
   ``Error: <tool> failed: <Type>: <message>`` (never a traceback);
8. emit ``ToolCallFinished`` with the exact text the model reads, then ``ProposalChanged`` when the
   tool reported a change of the proposal;
9. place trusted instructions after the data-marked result, never inside it: a skill's body (the
   ``skill`` tool) and, after a successful read, list or edit inside a folder with a nested AGENTS.md
   not yet attached this session, that file (``ToolContext.instructions``); emit ``InstructionsLoaded``.

Every call yields exactly one ``ToolResultMessage`` with the call's ``call_id``; only
``asyncio.CancelledError`` escapes. Text is made well-formed on the way in and out
(``core.untrusted_json.well_formed``: a lone surrogate becomes U+FFFD): the call's name, id and decoded
arguments before anything sees them, the result before it is emitted, so no tool, event, diff or file
write meets a string that cannot be encoded. Behaviour follows the seed harness's ``execute()``
(coding_harness/tools.py) and codex ``core/src/tools/registry.rs``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel, ValidationError

from agent_ls.core.context import wrap_tool_result
from agent_ls.core.errors import ToolError
from agent_ls.core.events import (
    EventSink,
    InstructionsLoaded,
    ProposalChanged,
    ToolCallFinished,
    ToolCallStarted,
    VerdictGiven,
)
from agent_ls.core.messages import ToolCall, ToolResultMessage, ToolSpec
from agent_ls.core.ports import ApprovalRequest, Approver, CommandResult
from agent_ls.core.untrusted_json import ARGUMENT_MAX_DEPTH, JSONTooDeep, loads, well_formed
from agent_ls.policy.engine import PLAN_RULE, PermissionPolicy
from agent_ls.tools import read_output
from agent_ls.tools.base import OutputKeeper, Tool, ToolContext, ToolOutput
from agent_ls.tools.load_tools import load_tools_tool
from agent_ls.workspace.processes import omission_note

log = logging.getLogger(__name__)

PATH_REFUSED_RULE = "workspace: path refused"
SKILL_RULE = "skill: loading a skill's instructions is read-only"
SESSION_RULE = "session: acts on the session's own state"
RETRY_ADVICE = (
    "Do not retry it or a variant of it; suggest an alternative, or ask the user to run it themselves."
)
"""What a policy refusal tells the model after the rule and the subject."""
USER_CHECK_RULE = "check: the user's own acceptance check"
"""The rule of an "ask" verdict allowed without asking: the user gave the check themselves (``--check``)."""
CHECK_PURPOSE = "acceptance check"
"""``ApprovalRequest.purpose`` of a check the harness runs (``run_command``)."""
PLAN_RETRY_ADVICE = (
    "A read-only variant (a relative path, no redirect) may run; do not edit before the plan is approved."
)
"""What a plan-mode refusal of a command tells the model after its reason (issue 17 trial, finding 5)."""
NUL_REFUSAL = "an argument holds a NUL character (\\0), which no path, pattern or command can hold; remove it"


@dataclass(frozen=True)
class _Result:
    text: str
    is_error: bool = False
    proposal_changed: bool = False
    instructions: str = ""
    instruction_sources: tuple[str, ...] = ()
    full_text: str | None = None


class ToolRegistry:
    """Runs tool calls for one session; implements the core ``ToolExecutor`` port.

    Args:
        tools: the tools, in the order ``specs()`` shows them to the model; names must be unique.
        policy: decides allow/ask/deny and keeps the session's approvals.
        approver: asked when the policy says "ask".
        ctx: what the tools act on.
        tool_timeout_s: seconds a tool call may take before it is stopped.
        max_output_chars: the longest text the model reads from one call, in characters (the
            omission note comes on top).
        redact: replaces secrets in a result's text (``sessions.redaction.Redactor.text``), applied
            to the whole text before it is cut; identity when None.
    """

    def __init__(
        self,
        tools: Sequence[Tool[Any]],
        policy: PermissionPolicy,
        approver: Approver,
        ctx: ToolContext,
        *,
        tool_timeout_s: float = 60.0,
        max_output_chars: int = 30_000,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self._base = tuple(tools)
        self._tools: dict[str, Tool[Any]] = {}
        self._specs: tuple[ToolSpec, ...] = ()
        self._extra: tuple[Tool[Any], ...] = ()
        self._deferred: tuple[Tool[Any], ...] = ()
        self._loaded: list[str] = []
        self.set_extra_tools(())
        self._policy = policy
        self._approver = approver
        self._ctx = ctx
        self._tool_timeout_s = tool_timeout_s
        self._max_output_chars = max_output_chars
        self._keeper: OutputKeeper | None = None
        self._redact = redact or (lambda text: text)

    def keep_outputs(self, keeper: OutputKeeper | None) -> None:
        """Keep the whole text of every result the model reads cut, in ``keeper`` (the session's store,
        opened after assembly); None: cut text is lost (a subagent's registry, a session without a store)."""
        self._keeper = keeper

    def specs(self) -> Sequence[ToolSpec]:
        """The tools as the model sees them: the constructor's, in order, then the extra ones."""
        return self._specs

    def set_extra_tools(
        self, tools: Sequence[Tool[Any]], deferred: Sequence[Tool[Any]] | None = None
    ) -> None:
        """Replace the tools added after construction (the ``skill`` tool, whose ``name`` enum follows the
        skills found; it changes when a SKILL.md does) and, when given, the deferred ones.

        Deferred tools (``todo_write``, memory, ``task``) are callable but their schemas are sent only once
        loaded (``load``, the ``load_tools`` tool); until then ``load_tools`` is sent in their place. The
        order the model sees: the constructor's tools, ``tools``, ``load_tools`` while some are deferred,
        then the loaded ones in the order they were loaded. Tools loaded stay loaded across calls.
        Raises ``ValueError`` on a duplicate name.
        """
        if deferred is not None:
            self._deferred = tuple(deferred)
        self._extra = tuple(tools)
        self._rebuild()

    def load(self, names: Sequence[str]) -> list[str]:
        """Make the deferred tools ``names`` (unknown names are ignored) part of the specs; returns those
        newly loaded, in order."""
        deferred = {tool.name for tool in self._deferred}
        new = [name for name in dict.fromkeys(names) if name in deferred and name not in self._loaded]
        if new:
            self._loaded.extend(new)
            self._rebuild()
        return new

    def _rebuild(self) -> None:
        loaded = {tool.name: tool for tool in self._deferred}
        shown = [loaded[name] for name in self._loaded if name in loaded]
        waiting = [tool for tool in self._deferred if tool.name not in self._loaded]
        listed = any(tool.listed for tool in waiting)  # a skill loads the others: no load_tools for them
        loader = [load_tools_tool(waiting, self.load)] if listed else []
        every = (*self._base, *self._extra, *loader, *shown)
        by_name = {tool.name: tool for tool in (*every, *waiting)}
        if len(by_name) != len(every) + len(waiting):
            raise ValueError("tool names must be unique")
        self._tools = by_name
        self._specs = tuple(tool.spec() for tool in every)

    async def execute(self, call: ToolCall, emit: EventSink) -> ToolResultMessage:
        """Run one tool call; never raises except ``asyncio.CancelledError`` (see the module docstring)."""
        call = ToolCall(well_formed(call.call_id), well_formed(call.name), well_formed(call.arguments))
        emit(ToolCallStarted(call_id=call.call_id, name=call.name, arguments=call.arguments))
        try:
            result = await self._dispatch(call, emit)
        except Exception as exc:  # a broken port contract; the session must survive it
            log.exception("tool call %s (%s) failed outside the tool", call.call_id, call.name)
            result = _Result(f"Error: {call.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        result = replace(  # redacted whole, then cut: a key across a cut loses its recognisable start
            result,
            text=self._redact(result.text),
            full_text=None if result.full_text is None else self._redact(result.full_text),
        )
        content = well_formed(truncate_middle(result.text, self._max_output_chars))
        if self._keeper is not None and call.name != read_output.NAME:
            content = await self._keep_whole(call.call_id, result, content, self._keeper)
        emit(ToolCallFinished(call_id=call.call_id, name=call.name, is_error=result.is_error, output=content))
        if result.proposal_changed:
            paths = tuple(sorted(change.path for change in self._ctx.workspace.proposal()))
            emit(ProposalChanged(paths=paths))
        wrapped = wrap_tool_result(call.name, content, result.is_error)  # the model reads data, marked
        if result.instructions:  # trusted instructions go next to the data, never inside it
            wrapped = f"{wrapped}\n\n{result.instructions}"
            skill = self._tools[call.name].permission == "skill"
            emit(InstructionsLoaded("skill" if skill else "nested", result.instruction_sources))
        return ToolResultMessage(
            call_id=call.call_id, name=call.name, content=wrapped, is_error=result.is_error
        )

    async def run_command(
        self, command: str, call_id: str, emit: EventSink, *, approved_by_user: bool = False
    ) -> CommandResult | str:
        """Run ``command`` as a ``bash`` call the harness makes itself (an acceptance check,
        ``tools.acceptance``), not the model: the same permission check (verdict, question to the approver
        with ``purpose`` ``acceptance check``, ``VerdictGiven`` under ``call_id``), then the session's runner
        with ``command_timeout_s`` seconds. ``approved_by_user``: the user gave this command themselves
        (``--check``), so an "ask" verdict is allowed under ``USER_CHECK_RULE`` without asking; a "deny"
        still refuses it.

        Returns:
            The refusal text (the same the model would read) when it may not run, else the
            ``CommandResult``; ``ProposalChanged`` is emitted when the command changed the proposal. Never
            raises except ``asyncio.CancelledError``.
        """
        tool = self._tools.get("bash")
        if tool is None:
            return "this session runs no shell commands (no bash tool)"
        args = tool.args(command=command)
        refusal, _ = await self._check_permission(
            tool, args, call_id, emit, purpose=CHECK_PURPOSE, approved_by_user=approved_by_user
        )
        if refusal is not None:
            return refusal
        result = await self._ctx.runner.run(command, self._ctx.command_timeout_s)
        if result.changed_paths:
            emit(
                ProposalChanged(paths=tuple(sorted(change.path for change in self._ctx.workspace.proposal())))
            )
        return result

    async def _keep_whole(self, call_id: str, result: _Result, shown: str, keeper: OutputKeeper) -> str:
        """``shown`` ending with ``read_output.kept_note`` once the whole text is kept; ``shown`` as it is
        when nothing was cut or the keeper could not keep it."""
        whole = result.full_text
        if whole is None and len(result.text) > self._max_output_chars:
            whole = result.text
        if whole is None:
            return shown
        whole = well_formed(whole)
        if not await asyncio.to_thread(keeper.keep, call_id, whole):
            return shown
        self.load([read_output.NAME])  # the note names it: its schema goes with the next request
        return f"{shown}\n{read_output.kept_note(call_id, whole, shown)}"

    async def _dispatch(self, call: ToolCall, emit: EventSink) -> _Result:
        tool = self._tools.get(call.name)
        if tool is None:
            names = ", ".join(sorted(self._tools))
            return _Result(f"Error: no tool named '{call.name}'. Available tools: {names}.", is_error=True)
        args = _parse_arguments(tool, call.arguments)
        if isinstance(args, str):
            return _Result(args, is_error=True)
        refusal, rel = await self._check_permission(tool, args, call.call_id, emit)
        if refusal is not None:
            return _Result(refusal, is_error=True)
        if tool.name not in self._loaded and tool in self._deferred:
            self.load([tool.name])  # called by name before load_tools: its schema is sent from now on
        result = await self._run(tool, args, call.call_id, emit)
        if rel is not None and not result.is_error:
            result = self._attach_instructions(result, rel)
        return result

    def _attach_instructions(self, result: _Result, rel: str) -> _Result:
        """``result`` with the nested instruction files that govern ``rel`` (first touch only)."""
        attacher = self._ctx.instructions
        if attacher is None or rel.startswith("/"):  # outside the first root: no chain of its own
            return result
        text, sources = attacher.on_touch(rel, is_dir=self._ctx.workspace.is_dir(rel))
        if not text:
            return result
        joined = f"{result.instructions}\n\n{text}" if result.instructions else text
        return replace(
            result, instructions=joined, instruction_sources=(*result.instruction_sources, *sources)
        )

    async def _check_permission(
        self,
        tool: Tool[Any],
        args: BaseModel,
        call_id: str,
        emit: EventSink,
        *,
        purpose: str = "",
        approved_by_user: bool = False,
    ) -> tuple[str | None, str | None]:
        """Decide, ask if needed, emit ``VerdictGiven``.

        Returns the refusal the model reads (or None), and for ``read``/``edit`` tools the resolved
        workspace path (or None).
        """
        subject = tool.subject(args)
        rel: str | None = None
        if tool.permission in ("skill", "session"):
            rule = SKILL_RULE if tool.permission == "skill" else SESSION_RULE
            emit(VerdictGiven(call_id, tool.name, "allow", rule, subject))
            return None, None
        if tool.permission == "bash":
            decision = self._policy.check_command(subject)
        elif tool.external is not None:  # an MCP tool: its rules, and the arguments in the question
            external = tool.external
            decision = self._policy.check_tool(
                external.rule_name,
                read_only=external.read_only,
                destructive=external.destructive,
                definition=external.definition,
            )
            decision = replace(decision, subject=f"{tool.name} {_shown_arguments(args)}")
        else:
            try:
                rel = self._ctx.workspace.resolve(subject)
            except (ToolError, OSError) as exc:  # PathRefused, a NUL byte, a name too long to look up
                emit(VerdictGiven(call_id, tool.name, "deny", PATH_REFUSED_RULE, subject))
                refused = file_system_refusal(exc) if isinstance(exc, OSError) else str(exc)
                return f"Error: {refused}", None
            decision = self._policy.check_path(rel, write=tool.permission == "edit")
        if decision.verdict == "deny":
            emit(VerdictGiven(call_id, tool.name, "deny", decision.rule, decision.subject))
            if decision.rule == PLAN_RULE and tool.permission == "bash":
                text = f"Blocked by policy ({decision.reason}): {decision.subject}. {PLAN_RETRY_ADVICE}"
                return text, None
            return f"Blocked by policy ({decision.rule}): {decision.subject}. {RETRY_ADVICE}", None
        if decision.verdict == "allow":
            emit(VerdictGiven(call_id, tool.name, "allow", decision.rule, decision.subject))
            return None, rel
        if approved_by_user:
            emit(VerdictGiven(call_id, tool.name, "allow", USER_CHECK_RULE, decision.subject))
            return None, rel
        request = ApprovalRequest(
            tool.name,
            decision.subject,
            decision.reason or decision.rule,
            rule=decision.rule,
            always=tuple(rule.text for rule in decision.always),
            no_always=decision.no_always,
            purpose=purpose,
        )
        approval = await self._approver.ask(request)
        reply = approval.reply
        if reply == "always" and not decision.always:
            reply = "once"  # the approver offered what the request did not (a broken contract)
        unasked = approval.unasked
        if reply == "deny":
            emit(VerdictGiven(call_id, tool.name, "deny", decision.rule, decision.subject, reply, unasked))
            if unasked:
                why = f"({decision.reason or decision.rule}); nobody could be asked ({unasked})"
                return f"denied: {decision.subject} was not run {why}.", None
            feedback = (approval.feedback or "").strip()
            said = f" The user said: {feedback}" if feedback else ""
            return f"denied by user: {decision.subject} was not run.{said}", None
        if reply == "session":
            self._policy.allow_for_session(decision)
        elif reply == "always":
            problem = self._policy.allow_always(decision)
            if problem is not None:
                log.warning("'Always allow' for %s: %s; allowed for this session", decision.subject, problem)
        emit(VerdictGiven(call_id, tool.name, "allow", decision.rule, decision.subject, reply, unasked))
        return None, rel

    async def _run(self, tool: Tool[Any], args: BaseModel, call_id: str, emit: EventSink) -> _Result:
        try:
            limit = None if tool.own_timeout else self._tool_timeout_s
            async with asyncio.timeout(limit) as deadline:
                ctx = replace(self._ctx, read_denied=self._policy.read_denied(), emit=emit, call_id=call_id)
                output: ToolOutput = await tool.run(args, ctx)
        except ToolError as exc:
            return _Result(f"Error: {exc}", is_error=True)
        except TimeoutError as exc:
            if not deadline.expired():
                return _Result(f"Error: {tool.name} failed: {type(exc).__name__}: {exc}", is_error=True)
            return _Result(
                f"Error: {tool.name} timed out after {self._tool_timeout_s:g} s and was stopped.",
                is_error=True,
            )
        except OSError as exc:  # the file system refused a path the model chose: the model can fix it
            return _Result(f"Error: {tool.name}: {file_system_refusal(exc)}", is_error=True)
        except ValueError as exc:
            if "null byte" not in str(exc):
                log.debug("tool %s raised", tool.name, exc_info=True)
                return _Result(f"Error: {tool.name} failed: {type(exc).__name__}: {exc}", is_error=True)
            # The OS refused a NUL character in a path, a command line or a pattern (Python raises
            # "embedded null byte"): no file name, argument or environment value can hold one.
            return _Result(f"Error: {tool.name}: {NUL_REFUSAL}", is_error=True)
        except Exception as exc:
            log.debug("tool %s raised", tool.name, exc_info=True)
            return _Result(f"Error: {tool.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        return _Result(
            output.text,
            output.is_error,
            output.proposal_changed,
            output.instructions,
            output.instruction_sources,
            output.full_text,
        )


def _parse_arguments(tool: Tool[Any], raw: str) -> BaseModel | str:
    """The validated arguments, or the error text the model reads."""
    if not raw.strip():
        data: Any = {}
    else:
        try:
            data = loads(raw, max_depth=ARGUMENT_MAX_DEPTH)
        except JSONTooDeep:
            return (
                f"Error: the arguments of {tool.name} nest arrays or objects more than {ARGUMENT_MAX_DEPTH} "
                f"levels deep. Send one flat JSON object matching the tool's schema: {_signature(tool)}."
            )
        except ValueError as exc:
            return (
                f"Error: the arguments of {tool.name} are not valid JSON ({exc}). "
                "Send one JSON object matching the tool's schema."
            )
    if not isinstance(data, dict):
        return (
            f"Error: the arguments of {tool.name} must be a JSON object, not {_json_type(data)}. "
            "Send one JSON object matching the tool's schema."
        )
    check = tool.external.check if tool.external is not None else None
    problem = check(data) if check is not None else None
    if problem is not None:
        return (
            f"Error: invalid arguments for {tool.name}: {problem}\n"
            f"Expected: {_signature(tool)}. Fix these fields and call {tool.name} again."
        )
    try:
        args: BaseModel = tool.args.model_validate(data)
    except ValidationError as exc:
        problems = "\n".join(
            f"- {'.'.join(_field(part) for part in error['loc']) or '(arguments)'}: {error['msg']}"
            for error in exc.errors()
        )
        return (
            f"Error: invalid arguments for {tool.name}:\n{problems}\n"
            f"Expected: {_signature(tool)}. Fix these fields and call {tool.name} again."
        )
    return args


def _shown_arguments(args: BaseModel) -> str:
    """An MCP call's arguments as the question shows them: compact JSON, cut to 500 characters."""
    text = json.dumps(args.model_dump(), ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= 500 else f"{text[:499]}…"


def file_system_refusal(exc: OSError) -> str:
    """What the file system said about a path, for the model: ``the file system refused 'a…': File name
    too long`` (the name cut to 120 characters)."""
    name = exc.filename if isinstance(exc.filename, str) else ""
    shown = name if len(name) <= 120 else f"{name[:119]}…"
    where = f" {shown!r}" if shown else ""
    return f"the file system refused{where}: {exc.strerror or exc}"


_PLAIN_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


def _field(part: str | int) -> str:
    """One step of a field's location as the model reads it: a plain name as it is, an index as a
    number, any other key (empty, spaces, control characters, 5,000 characters) as a JSON string cut to
    80 characters, so that the line always shows which key is meant."""
    if isinstance(part, int) or _PLAIN_FIELD.fullmatch(part):
        return str(part)
    return json.dumps(part if len(part) <= 80 else f"{part[:79]}…", ensure_ascii=False)


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null"


def _signature(tool: Tool[Any]) -> str:
    """``read_file(path: string, offset?: integer = 1, limit?: integer = 2000)``, from the model's schema."""
    schema = tool.spec().parameters
    required = set(schema.get("required", ()))
    fields = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type") or "|".join(
            str(branch.get("type", "any")) for branch in prop.get("anyOf", ())
        )
        text = f"{name}: {kind or 'any'}" if name in required else f"{name}?: {kind or 'any'}"
        if "default" in prop:
            text += f" = {json.dumps(prop['default'])}"
        fields.append(text)
    return f"{tool.name}({', '.join(fields)})"


def truncate_middle(text: str, max_chars: int) -> str:
    """Keep the head and the tail of ``text`` (``max_chars`` characters in all) with a note between them.

    The note is ``omission_note``'s, on its own line: characters omitted and the 1-indexed lines they
    fall in, e.g. ``[... 12,345 characters omitted: lines 201–5,200 of 5,400 ...]``, so the model can ask
    for those lines again (read_file's ``offset``). Text within the limit is returned unchanged.
    """
    if len(text) <= max_chars:
        return text
    head = max_chars // 2
    tail = max_chars - head
    end = len(text) - tail
    first = text.count("\n", 0, head) + 1
    last = text.count("\n", 0, end - 1) + 1
    total = text.count("\n") + (0 if text.endswith("\n") else 1)
    note = omission_note(end - head, first, last, total)
    return f"{text[:head]}\n{note}\n{text[end:]}"
