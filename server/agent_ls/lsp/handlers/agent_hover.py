"""``textDocument/hover`` on agent files: what a ``SKILL.md`` or an AGENTS.md-family file costs the model.

- ``SKILL.md`` (anywhere in the file): the catalog entry's tokens (in every request when the model may
  invoke the skill), the body's tokens on activation, its source and whether the model may invoke it,
  as the last lint loaded it (``ServerState.linted_skills``).
- ``AGENTS.md``, ``AGENTS.override.md``, a fallback (``CLAUDE.md``): its tokens in each request whose file
  in focus is in its scope (kept bytes; truncated N of M bytes if so), its scope, and the files it
  governs (a count and up to ``EXAMPLES`` of them, from a bounded ``rg --files`` of its folder). The
  chain is loaded with the file's folder in focus, as the lint does.

Tokens are estimated as bytes / 4 (and the hover says so). Disk work runs in a worker thread.
The editor renders the hover as markdown and it holds workspace names (a file named
``x`![a](https://host/p.png)`.md`` closes its code span), so it goes out defanged
(``core.markdown_defang``): no name can make the hover load an image.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from lsprotocol import types as t

from agent_ls.config import load_config, path_policy_for, user_config_file
from agent_ls.core.markdown_defang import defang_markdown
from agent_ls.instructions.activation import MAX_READ_BYTES
from agent_ls.instructions.agent_context import instruction_settings
from agent_ls.instructions.agents_md import InstructionChain, InstructionSettings, load_chain
from agent_ls.instructions.catalog import render_catalog
from agent_ls.instructions.skills import Skill, load_body
from agent_ls.instructions.workspace_lint import (
    NOT_DISCOVERED,
    SKILL_NAME,
    chain_dir,
    list_files,
    not_loaded_reason,
)
from agent_ls.lsp.file_uris import to_fs_path
from agent_ls.lsp.state import AgentLanguageServer
from agent_ls.settings import EnvSnapshot

BYTES_PER_TOKEN = 4
EXAMPLES = 10
MAX_GOVERNED_LISTED = 2000
GOVERNED_TIMEOUT_S = 3.0
CATALOG_MEASURE_CHARS = 10**9
"""A budget no catalog reaches: the entry is measured as it is before any shortening to fit a budget."""
ESTIMATE_NOTE = "_Tokens are estimates: bytes / 4._"


def tokens(size_bytes: int) -> int:
    """The estimated token count of ``size_bytes`` bytes of text (bytes / 4, rounded up)."""
    return -(-size_bytes // BYTES_PER_TOKEN)


async def hover(ls: AgentLanguageServer, params: t.HoverParams) -> t.Hover | None:
    """The cost of the agent file under the cursor, or None for any other document."""
    uri = params.text_document.uri
    fs = to_fs_path(uri) if uri.startswith("file:") else None
    if fs is None:
        return None
    path = Path(fs)
    roots = sorted(ls.state.roots, key=lambda r: len(r.parts), reverse=True)
    root = next((r for r in roots if path.is_relative_to(r)), None)
    if root is None:
        return None
    text: str | None
    names = InstructionSettings(fallback_filenames=ls.state.instructions_watcher.fallback_filenames)
    if path.name == SKILL_NAME:
        text = await asyncio.to_thread(skill_hover, ls.state.linted_skills.get(path))
    elif chain_dir(path, names) is not None:  # any other file is answered without touching the disk
        text = await asyncio.to_thread(_instruction_hover, root, path)
    else:
        return None
    if text is None:
        return None
    return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=defang_markdown(text).text))


def skill_hover(skill: Skill | None) -> str:
    """The hover of a ``SKILL.md``: its costs, source and invocability (blocking: reads the body)."""
    if skill is None:
        return f"**Skill** — {NOT_DISCOVERED} (or the lint has not run yet)."
    try:  # bounded: a huge SKILL.md is not read whole to count it (its activation is capped anyway)
        body_bytes: int | None = len(load_body(skill, MAX_READ_BYTES).encode("utf-8"))
    except (OSError, UnicodeDecodeError):
        body_bytes = None
    invocable = (
        "the model may invoke it (it is in the catalog)"
        if skill.model_invocable
        else "only explicit `/" + skill.name + "` invokes it (`disable-model-invocation: true`)"
    )
    entry_tokens = tokens(catalog_entry_bytes(skill))
    catalog = (
        f"~{entry_tokens} tokens in every request (catalog entry: name and description)"
        if skill.model_invocable
        else "none: not in the catalog"
    )
    body = (
        f"~{tokens(body_bytes)} tokens ({body_bytes} bytes of body) when activated"
        if body_bytes is not None
        else "unknown: the file cannot be read now"
    )
    lines = [
        f"**Skill `{skill.name}`** · {skill.source} skill · {invocable}",
        "",
        f"- Catalog: {catalog}",
        f"- Activation: {body}",
        f"- Description: {len(skill.description)} characters",
        "",
        ESTIMATE_NOTE,
    ]
    return "\n".join(lines)


def catalog_entry_bytes(skill: Skill) -> int:
    """The bytes ``skill`` adds to the catalog (``catalog.render_catalog``, its description cut as there):
    the catalog with it and a second skill, minus the catalog with the second skill alone."""
    other = replace(skill, name=skill.name + "-other", model_invocable=True)
    both = render_catalog([skill, other], CATALOG_MEASURE_CHARS)
    return len(both.encode("utf-8")) - len(render_catalog([other], CATALOG_MEASURE_CHARS).encode("utf-8"))


def _instruction_hover(root: Path, path: Path) -> str | None:
    env = EnvSnapshot.from_environ()
    config = load_config(env, root)
    settings = instruction_settings(config.instructions)
    directory = chain_dir(path, settings)
    if directory is None:
        return None
    global_dir = (config.user_file or user_config_file(env)).parent
    is_secret = path_policy_for(root, config).is_secret
    chain = load_chain(
        workspace_root=root, focus=directory, global_dir=global_dir, settings=settings, is_secret=is_secret
    )
    return instruction_hover(chain, path, directory)


def instruction_hover(chain: InstructionChain, path: Path, directory: Path) -> str:
    """The hover of an instruction file ``path`` of folder ``directory``, given the chain focused there.

    Blocking: lists the governed files (bounded ``rg --files``).
    """
    loaded = next((f for f in chain.files if f.path == path), None)
    label = path.relative_to(chain.workspace_root).as_posix()
    if loaded is None:
        return f"**Instructions `{label}`** · not loaded: {not_loaded_reason(chain, path)}."
    scope_dir = directory.relative_to(chain.workspace_root).as_posix()
    where = (
        "every request in this workspace"
        if scope_dir == "."
        else f"each request about a file under `{scope_dir}/`"
    )
    cost = f"~{tokens(loaded.kept_bytes)} tokens ({loaded.kept_bytes} bytes) in {where}"
    if loaded.truncated:
        cost += f"; truncated: {loaded.kept_bytes} of {loaded.size_bytes} bytes kept"
    listing = list_files(directory, max_files=MAX_GOVERNED_LISTED, timeout_s=GOVERNED_TIMEOUT_S)
    count = f"{len(listing.files)}" if listing.complete else f"at least {len(listing.files)}"
    examples = [f"  - `{p.relative_to(chain.workspace_root).as_posix()}`" for p in listing.files[:EXAMPLES]]
    more = len(listing.files) - len(examples)
    lines = [
        f"**Instructions `{label}`** · scope `{loaded.scope}`",
        "",
        f"- Cost: {cost}",
        f"- Governs {count} files (not ignored by Git), e.g.:",
        *examples,
        *([f"  - … and {more} more" if listing.complete else f"  - … and {more}+ more"] if more > 0 else []),
    ]
    resolved = sum(1 for record in loaded.imports if record.status == "resolved")
    if loaded.imports:
        lines.append(f"- Imports: {resolved} inlined, {len(loaded.imports) - resolved} not")
    lines += ["", ESTIMATE_NOTE]
    return "\n".join(lines)
