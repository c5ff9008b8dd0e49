"""``agent-ls doctor``: whether this machine and workspace are ready, one line per concern.

Checks, in this order, each ``ok``, ``warning`` or ``error``:

1. sandbox: bubblewrap found and probed (``workspace.sandbox.sandbox_status``), then one real sandboxed
   ``true`` with the mounts a command of this workspace gets; without it commands run unisolated
   (a warning: they still run, in the shadow copy, with a scrubbed environment);
2. ripgrep: the ``rg`` the grep tool runs (the one beside our interpreter, else PATH) and its version;
3. model: resolved like a run resolves it (``config.load_config``, ``models.resolution.resolve_model``),
   then ``GET {base_url}/models`` with the run's credentials and a short timeout: reachable,
   unreachable, or refusing the key. The key is sent, never printed. No model configured is a warning;
4. config: the files read, their diagnostics, and whether the workspace is trusted;
5. mcp, when an MCP file exists (the user's ``mcp.json``, the workspace's ``.mcp.json``): the servers
   that may start without a question are started, reported (``mcp_client.status``: the ``MCP servers``
   lines) and stopped; a workspace server that would need approval is reported, never started. A
   server that failed, or a file or entry that could not be read, is an error; one that needs approval
   (or was denied) a warning; disabled ones are fine.

Output is human-readable (``✓`` ok, ``!`` warning, ``✗`` error, details indented), or one JSON object
with ``--json`` (``checks``, plus ``mcp``: ``agent.mcpStatus``'s result, ``{"servers": [], "problems":
[]}`` when no MCP file exists). The exit code is 0 when no check is an error, 1 otherwise (2 for a usage
error).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

# httpx is the HTTP client of the model layer already; the check uses it so that proxies, TLS and
# timeouts behave as in a run.
import httpx

from agent_ls.config import LoadedConfig, load_config
from agent_ls.core.errors import ConfigError
from agent_ls.core.untrusted_json import loads_bounded
from agent_ls.models.anthropic import ANTHROPIC_VERSION
from agent_ls.models.resolution import NO_MODEL, ModelChoice, resolve_model
from agent_ls.settings import EditorSettings, EnvSnapshot, process_environ
from agent_ls.workspace.child_env import child_environment
from agent_ls.workspace.layers import layers_status
from agent_ls.workspace.overlay import find_ripgrep
from agent_ls.workspace.sandbox import sandbox_status, unsandboxed_reason

if TYPE_CHECKING:
    from agent_ls.mcp_client.hub import McpHub

Status = Literal["ok", "warning", "error"]
SYMBOLS: dict[Status, str] = {"ok": "✓", "warning": "!", "error": "✗"}
MODEL_TIMEOUT_S = 5.0
"""Seconds the model server has to answer ``GET /models``."""
_TOOL_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Check:
    """One concern's outcome.

    Attributes:
        name: ``sandbox``, ``ripgrep``, ``model``, ``config`` or ``mcp``.
        status: ``ok``, ``warning`` (works, degraded or unchecked) or ``error`` (broken).
        summary: one line.
        details: further lines (files read, diagnostics), in order.
    """

    name: str
    status: Status
    summary: str
    details: tuple[str, ...] = ()


def main(argv: Sequence[str]) -> int:
    """``agent-ls doctor [--workspace DIR] [--model MODEL] [--json]``; returns the exit code (2 for a
    workspace that is not a directory)."""
    parser = argparse.ArgumentParser(
        prog="agent-ls doctor",
        description="Check the sandbox, ripgrep, the model, the config and the MCP servers.",
    )
    parser.add_argument("--workspace", type=Path, default=Path.cwd(), help="workspace root (default: cwd)")
    parser.add_argument("--model", help="model string to check instead of the configured one")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(list(argv))
    workspace = args.workspace.expanduser().resolve()
    if not workspace.is_dir():
        print(f"agent-ls doctor: workspace {args.workspace} is not a directory", file=sys.stderr)
        return 2
    env = EnvSnapshot.from_environ()
    config = load_config(env, workspace)
    checks = [
        check_sandbox(workspace, config),
        check_ripgrep(),
        check_model(args.model, env, config),
        check_config(config, workspace),
    ]
    mcp, mcp_report = check_mcp(workspace, config, env)
    if mcp is not None:
        checks.append(mcp)
    if args.json:
        payload = {
            "ok": all(c.status != "error" for c in checks),
            "workspace": str(workspace),
            "checks": [asdict(c) for c in checks],
            "mcp": mcp_report,
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        if hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(errors="replace")  # a terminal that cannot show ✓ gets "?"
        print(f"agent-ls doctor: workspace {workspace}")
        for check in checks:
            print(f"{SYMBOLS[check.status]} {check.name}: {check.summary}")
            for line in check.details:
                print(f"    {line}")
    return 1 if any(c.status == "error" for c in checks) else 0


def check_sandbox(workspace: Path, config: LoadedConfig) -> Check:
    """Bubblewrap found and able to run a command with this workspace's mounts, and not switched off.

    Without it the summary says plainly that commands are unsandboxed and what follows
    (``workspace.sandbox.unsandboxed_reason``)."""
    unsandboxed = unsandboxed_reason(config.permissions.sandbox_enabled)
    if unsandboxed:
        return Check(
            "sandbox",
            "warning",
            f"commands are UNSANDBOXED ({unsandboxed})",
            (
                "a command runs with your rights: it can read your files and other processes' environments,",
                "write outside the workspace and use the network; install bubblewrap (apt-get install "
                "bubblewrap) or remove [sandbox] enabled = false",
            ),
        )
    status = sandbox_status()
    assert status.sandbox is not None  # unsandboxed_reason found it
    environ = child_environment(process_environ())
    with tempfile.TemporaryDirectory(prefix="agent-ls-doctor-") as shadow:
        argv = status.sandbox.wrap(["true"], shadow=Path(shadow), workspace_root=workspace, environ=environ)
        try:
            done = subprocess.run(
                argv,
                env=environ,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=_TOOL_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return Check("sandbox", "error", f"{status.detail} found, but a sandboxed command failed: {exc}")
    if done.returncode != 0:
        problem = done.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit {done.returncode}"]
        return Check(
            "sandbox", "error", f"{status.detail} found, but a sandboxed command failed: {problem[0]}"
        )
    layers = layers_status(status.sandbox.bwrap)
    view = (
        "commands run in an overlay view of the workspace (nothing copied)"
        if layers.unshare is not None
        else f"commands run in a copy of the workspace (no overlay views: {layers.detail})"
    )
    return Check("sandbox", "ok", f"{status.detail}: no network, only the shadow copy writable; {view}")


def check_ripgrep() -> Check:
    """The ``rg`` the grep tool runs, and its version."""
    rg = find_ripgrep()
    if rg is None:
        return Check(
            "ripgrep", "error", "ripgrep (rg) not found: the grep tool cannot search; pip install ripgrep"
        )
    try:
        done = subprocess.run([rg, "--version"], capture_output=True, timeout=_TOOL_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return Check("ripgrep", "error", f"{rg} does not run: {exc}")
    version = done.stdout.decode("utf-8", "replace").strip().splitlines()
    if done.returncode != 0 or not version:
        return Check("ripgrep", "error", f"{rg} --version failed (exit {done.returncode})")
    return Check("ripgrep", "ok", f"{version[0]} at {rg}")


def check_model(model_arg: str | None, env: EnvSnapshot, config: LoadedConfig) -> Check:
    """The model a run would use, and whether its server answers ``GET /models``."""
    try:
        choice = resolve_model(model_arg, EditorSettings(), env, config)
    except ConfigError as exc:
        if str(exc) == NO_MODEL:
            return Check("model", "warning", "no model configured; reachability not checked", (NO_MODEL,))
        return Check("model", "error", str(exc))
    if choice.wire_api == "replay":
        if Path(choice.model).is_file():
            return Check("model", "ok", f"{choice.model_string}: a replay script (no server to reach)")
        return Check("model", "error", f"{choice.model_string}: the replay script does not exist")
    if choice.key_required and choice.api_key is None:  # what a run would say before any request
        hint = f"set {choice.key_env} (or AGENT_LS_API_KEY)"
        return Check("model", "error", f"{choice.model_string}: no API key; {hint}; reachability not checked")
    return _probe_model(choice)


def _probe_model(choice: ModelChoice) -> Check:
    assert choice.base_url is not None, "resolve_model sets a base URL for every wire API"
    url = f"{choice.base_url.rstrip('/')}/models"
    name = choice.model_string
    try:
        response = httpx.get(url, headers=_auth_headers(choice), timeout=MODEL_TIMEOUT_S)
    except httpx.TimeoutException:
        return Check("model", "error", f"{name}: {url} did not answer within {MODEL_TIMEOUT_S:g} s")
    except httpx.HTTPError as exc:
        return Check("model", "error", f"{name}: {url} is unreachable ({type(exc).__name__}: {exc})")
    code = response.status_code
    if code in (401, 403):
        if choice.api_key is None:
            hint = f"set {choice.key_env or 'AGENT_LS_API_KEY'}"
            return Check("model", "error", f"{name}: {url} needs a key (HTTP {code}); {hint}")
        return Check("model", "error", f"{name}: {url} refused the key from {choice.key_env} (HTTP {code})")
    if code in (404, 405):
        return Check(
            "model",
            "warning",
            f"{name}: {url} is reachable but has no model list (HTTP {code}); check the base URL",
        )
    if code >= 300:
        return Check("model", "error", f"{name}: {url} answered HTTP {code}")
    listed = _model_ids(response)
    if listed and choice.model not in listed:
        return Check(
            "model", "warning", f"{name}: {url} is reachable, but does not list model {choice.model!r}"
        )
    return Check("model", "ok", f"{name}: {url} is reachable (HTTP {code})")


def _auth_headers(choice: ModelChoice) -> dict[str, str]:
    """The credentials a run sends (``models.base`` and ``models.anthropic``): never printed."""
    if choice.wire_api == "anthropic":
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if choice.api_key:
            headers["x-api-key"] = choice.api_key
        return headers
    return {"Authorization": f"Bearer {choice.api_key}"} if choice.api_key else {}


def _model_ids(response: httpx.Response) -> set[str]:
    """The ``id`` of each entry of ``data`` in an OpenAI- or Anthropic-style model list; empty otherwise."""
    try:
        data = loads_bounded(response.content).get("data")  # a hostile body cannot raise RecursionError
    except (ValueError, AttributeError):
        return set()
    if not isinstance(data, list):
        return set()
    return {item["id"] for item in data if isinstance(item, dict) and isinstance(item.get("id"), str)}


def check_config(config: LoadedConfig, workspace: Path) -> Check:
    """The config files read, their diagnostics, and the workspace's trust."""
    details = [
        *(_file_line("user config", config.user_file), _file_line("workspace config", config.workspace_file)),
        f"workspace {'trusted' if config.workspace_trusted else 'not trusted'}: {workspace}",
        *(str(d) for d in config.diagnostics),
    ]
    severities = {d.severity for d in config.diagnostics}
    status: Status = "error" if "error" in severities else "warning" if severities else "ok"
    count = len(config.diagnostics)
    summary = "no problems" if not count else f"{count} problem{'s' if count > 1 else ''}"
    return Check("config", status, summary, tuple(details))


def check_mcp(workspace: Path, config: LoadedConfig, env: EnvSnapshot) -> tuple[Check | None, dict[str, Any]]:
    """The MCP servers of ``workspace`` (module docstring, 5), and ``agent.mcpStatus``'s result for
    ``--json`` (``{"servers": [...], "problems": [...]}``). No check (None) when no MCP file exists.

    Starts the servers that may start without a question (``mcp_client.status.check``; each within
    ``[mcp] startup_timeout_s``, all at once) and stops them before returning. The MCP SDK is imported
    only when a server is configured (start-up time)."""
    from agent_ls.mcp_client.config import load_servers  # reads two small files, imports no SDK

    user_dir = config.user_file.parent if config.user_file is not None else None
    found = load_servers(workspace, user_dir)
    if not found.files and not found.problems:  # the common case: no MCP at all, nothing more imported
        return None, {"servers": [], "problems": []}
    from agent_ls.assembly import mcp_hub_for

    hub = mcp_hub_for(workspace, config, env, process_environ())
    if hub is None:
        files = ", ".join(str(path) for path in found.files)
        summary = f"no servers in {files}" if files else "no server could be read"
        lines = [f"problem: {problem}" for problem in found.problems]  # status.text_lines' wording
        return _mcp_check([], found.problems, summary, lines)
    servers = asyncio.run(_mcp_servers(hub))
    from agent_ls.mcp_client.status import text_lines

    states = ", ".join(f"{count} {state}" for state, count in Counter(s["state"] for s in servers).items())
    summary = f"{len(servers)} server{'s' if len(servers) > 1 else ''}: {states}"
    lines = [line.removeprefix("  ") for line in text_lines(servers, hub.servers.problems)]
    return _mcp_check(servers, hub.servers.problems, summary, lines)


async def _mcp_servers(hub: McpHub) -> list[dict[str, Any]]:
    from agent_ls.mcp_client.status import check  # the SDK: only with servers configured

    try:
        return await check(hub)
    finally:
        await hub.aclose()


def _mcp_check(
    servers: list[dict[str, Any]], problems: Sequence[str], summary: str, lines: Sequence[str]
) -> tuple[Check, dict[str, Any]]:
    """The ``mcp`` check (``lines`` unindented: doctor indents details): an error for a failed server or
    an unreadable file or entry (what the user configured does not work, as for the model and the
    config), a warning for one that waits for an approval or was denied."""
    states = {server["state"] for server in servers}
    status: Status = "ok"
    if "failed" in states or problems:
        status = "error"
    elif states & {"needs approval", "denied", "not started"}:
        status = "warning"
    if problems:
        summary += f"; {len(problems)} problem{'s' if len(problems) > 1 else ''}"
    return Check("mcp", status, summary, tuple(lines)), {"servers": servers, "problems": list(problems)}


def _file_line(label: str, path: Path | None) -> str:
    if path is None:
        return f"{label}: none"
    return f"{label}: {path} ({'read' if path.is_file() else 'not found'})"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
