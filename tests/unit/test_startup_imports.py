"""Start-up guards (issue 16, "Fast to start"; the timings: ``benchmarks/bench_startup.py``).

Not timed: each test starts a fresh interpreter and checks ``sys.modules`` for modules that the first
model request (``agent-ls run``) or the ``initialize`` answer (``agent-ls serve``) does not need, and
that were deferred to where they are used. A new top-level import of one of them fails here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.agent_cli import user_environment
from tests.support.model_server import FakeModelServer

NOT_FOR_THE_CLI_ITSELF = (
    "asyncio",
    "pydantic",
    "httpx",
    "pygls",
    "lsprotocol",
    "agent_ls.headless",
    "mcp",
    "httpx2",
    "acp",  # the ACP SDK, for `agent-ls acp` only
)
"""What ``import agent_ls.cli`` must not load: the key handoff may re-execute the process right after."""

NOT_FOR_A_CHAT_RUN = (
    "pygls",  # the LSP layer
    "lsprotocol",
    "agent_ls.models.anthropic",  # the other wire APIs
    "agent_ls.models.openai_responses",
    "agent_ls.models.responses_stream",
    "rich",  # httpx's command-line client (httpx._main)
    "click",
    "pygments",
    "skills_ref",  # the Agent Skills validator, for bundled skills
    "strictyaml",
    "tomlkit",  # writing an "always" rule
    "charset_normalizer",  # a file that is not UTF-8
    "agent_ls.policy.shell_parse",  # the first shell command
    "agent_ls.policy.wrapped_rules",
    "mcp",  # the MCP SDK (about 1 s to import), for a workspace with MCP servers configured
    "mcp_types",
    "httpx2",
    "opentelemetry",  # the span export (sessions/otel_spans.py), only with AGENT_LS_OTEL=1
    "acp",  # the ACP SDK (agent-client-protocol), for `agent-ls acp` only
)
"""What a whole ``agent-ls run`` on Chat Completions that calls no tool must not load."""


def _loaded(code: str, prefixes: tuple[str, ...], **env: str) -> list[str]:
    probe = (
        f"{code}\n"
        "import json, sys\n"
        f"prefixes = {prefixes!r}\n"
        "hit = lambda m: any(m == p or m.startswith(p + '.') for p in prefixes)\n"
        "print('LOADED', json.dumps(sorted(m for m in sys.modules if hit(m))))\n"
        "print('HTTPX_MAIN', 'httpx._main' in sys.modules and sys.modules['httpx._main'] is None)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=user_environment(**env), check=True
    )
    lines = dict(
        line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith(("LOADED", "HTTPX_MAIN"))
    )
    assert "LOADED" in lines, done.stderr
    return [*json.loads(lines["LOADED"]), *(["httpx._main"] if lines["HTTPX_MAIN"] == "False" else [])]


def test_importing_the_cli_loads_neither_asyncio_nor_pydantic_nor_httpx() -> None:
    loaded = _loaded("import agent_ls.cli", NOT_FOR_THE_CLI_ITSELF)

    assert loaded == ["httpx._main"]  # httpx is not imported at all, so its CLI is not blocked either


def test_a_chat_completions_run_loads_none_of_the_deferred_modules(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# demo\n")
    args = ["run", "Summarize README.md", "--model", "openai/bench", "--workspace", str(tmp_path)]
    run = f"from agent_ls.cli import main\nassert main({args!r}) == 0\n"
    with FakeModelServer([{"content": "It is a demo."}]) as server:
        loaded = _loaded(run, NOT_FOR_A_CHAT_RUN, AGENT_LS_BASE_URL=server.base_url)
        assert len(server.requests) == 1

    assert loaded == []


def test_importing_the_run_front_end_leaves_what_reads_a_reply_for_the_reply() -> None:
    assert _loaded("import agent_ls.headless", ("agent_ls.models.repair", "agent_ls.models.harmony")) == []


def test_importing_the_language_server_loads_no_other_wire_api_nor_httpx_cli() -> None:
    deferred = tuple(m for m in NOT_FOR_A_CHAT_RUN if m not in ("pygls", "lsprotocol"))

    assert _loaded("import agent_ls.lsp.server", deferred) == []
