"""skill: the model loads a skill's instructions by name (progressive disclosure, level 2).

``name`` is a JSON-Schema enum of the model-invocable skills, so a ``disable-model-invocation`` skill never
appears in a request. The result is a one-line note marked as data; the skill's body, base directory and
file list follow it as a trusted ``<instructions source="skill:NAME">`` block (``ToolOutput.instructions``).
A second call for an active skill returns a short note instead of the body again. Files under the skill are
read on demand with read_file. Shape follows Gemini CLI ``activate_skill`` and OpenCode ``tool/skill.ts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model

from agent_ls.core.errors import ToolError
from agent_ls.instructions.activation import SkillActivations
from agent_ls.tools.base import Tool, ToolContext, ToolOutput

NAME = "skill"
DESCRIPTION = "Load a skill's instructions and list its files."  # the catalog says when (budget)


def skill_tool(activations: SkillActivations, names: Sequence[str]) -> Tool[Any]:
    """The ``skill`` tool for ``names`` (the model-invocable skills, non-empty), activating through
    ``activations``."""
    if not names:
        raise ValueError("the skill tool needs at least one skill")
    choice: Any = Literal.__getitem__(tuple(names))
    args: type[BaseModel] = create_model(
        "Args",
        __config__=ConfigDict(extra="forbid"),
        name=(choice, ...),
    )

    async def run(arguments: BaseModel, ctx: ToolContext) -> ToolOutput:
        name = str(getattr(arguments, "name"))  # noqa: B009 (a dynamic model)
        try:
            activation = activations.activate(name)
        except KeyError:
            raise ToolError(f"no skill named {name!r}; choose one of: {', '.join(names)}") from None
        except OSError as exc:
            raise ToolError(f"skill {name}: its SKILL.md cannot be read ({exc.strerror or exc})") from None
        if activation is None:
            return ToolOutput(f"Skill {name} is already loaded earlier in this conversation; follow it.")
        return ToolOutput(
            f"Loaded skill {name}; its instructions follow.",
            instructions=activation.text,
            instruction_sources=(f"skill:{name}",),
        )

    return Tool(name=NAME, description=DESCRIPTION, args=args, run=run, mutates=False, permission="skill")
