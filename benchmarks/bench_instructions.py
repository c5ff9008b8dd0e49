"""What the AGENTS.md chain, the skills catalog and the ``skill`` tool add to the first request.

Run from the repository root with the dev install:  .venv/bin/python benchmarks/bench_instructions.py

Each scenario runs the real ``agent-ls run "Summarize README.md"`` in a subprocess against
``tests/support/model_server.py``'s FakeModelServer (as ``bench_slice.py`` does), with an empty temporary
user config dir and ``HOME`` (so nothing of this machine's own skills or global AGENTS.md leaks in), and
splits the first request body into the parts issue 6 adds, found inside the recorded request itself:

- instructions: the system message from ``agents_md.CHAIN_HEADER`` up to the catalog
  (``agents_md.render_chain``'s text);
- catalog: from ``catalog.CATALOG_INTRO`` to the end of the system message (``render_catalog``'s text);
- skill tool: the ``skill`` entry of ``tools``;
- rest, the baseline measured in the same request: the system prompt, the six default tools, the task
  message and the request options. Bundled skills cannot be hidden, so a request without the catalog
  cannot be recorded; the rest is what the request would weigh without issue 6.

Sizes are bytes of the request JSON as ``json.dumps`` writes it (the same measure as ``bench_slice.py``;
escapes such as ``\\n`` count), tokens are estimated as bytes / 4 (DESIGN.md). Every run is done twice and
the two first requests must be byte-identical (the stable prompt prefix).

Real tokenizer (optional): when ``AGENT_LS_LLAMA_PYTHON`` names an interpreter that can import
``llama_cpp`` and the Gemma 3 270M GGUF exists (``AGENT_LS_GGUF``, default
``~/.cache/agent-ls-realmodel/gemma-3-270m-q4_k_m.gguf``; docs/models.md), the system message and its parts
are also counted with that model's tokenizer (``Llama(vocab_only=True).tokenize``), and the ratio to the
bytes / 4 estimate of the same UTF-8 text is printed. Otherwise those columns say why they are missing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.model_server import FakeModelServer  # noqa: E402

from agent_ls.instructions.agent_context import bundled_skills_dir, catalog_budget_chars  # noqa: E402
from agent_ls.instructions.agents_md import CHAIN_HEADER  # noqa: E402
from agent_ls.instructions.catalog import CATALOG_INTRO  # noqa: E402
from agent_ls.instructions.skills import discover_skills, render_catalog  # noqa: E402

ENV = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
TASK = "Summarize README.md"
DEFAULT_GGUF = Path.home() / ".cache" / "agent-ls-realmodel" / "gemma-3-270m-q4_k_m.gguf"
GENERATED_SKILLS = 85
GENERATED_DESCRIPTION_CHARS = 400
# Run by the llama_cpp interpreter: a JSON list of strings on stdin, their token counts on stdout.
_TOKENIZE = """
import json, sys
from llama_cpp import Llama
model = Llama(model_path=sys.argv[1], vocab_only=True, verbose=False)
texts = json.load(sys.stdin)
print(json.dumps([len(model.tokenize(t.encode(), add_bos=False, special=False)) for t in texts]))
"""


@dataclass(frozen=True)
class Workspace:
    """What one scenario runs on: the workspace root, the file in focus, the user config dir."""

    root: Path
    focus: Path | None
    config_dir: Path


@dataclass(frozen=True)
class Scenario:
    id: str
    label: str
    build: Callable[[Path], Workspace]


def _config_dir(tmp: Path) -> Path:
    config = tmp / "config"
    config.mkdir(parents=True, exist_ok=True)
    return config


def _empty(tmp: Path) -> Workspace:
    root = tmp / "ws"
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "README.md").write_text("# demo\n\nA tiny project used by the benchmarks.\nIt prints hello.\n")
    return Workspace(root, None, _config_dir(tmp))


def _slice_project(tmp: Path) -> Workspace:
    """bench_slice.py's project (DESIGN.md's first-request fixture): README, 5-line AGENTS.md, main.py."""
    from benchmarks.bench_slice import _project

    root = _project(tmp / "ws")
    (root / ".git").mkdir()
    return Workspace(root, None, _config_dir(tmp))


def _corpus(name: str, focus: str | None) -> Callable[[Path], Workspace]:
    def build(tmp: Path) -> Workspace:
        # The corpus keeps git symlinks as small files naming their target; copy_set restores them
        # from LAYOUT.txt and adds the .git marker (one implementation for the tests and this benchmark).
        from tests.support.corpus import copy_set

        root = copy_set(name, tmp)
        path = None
        if focus is not None:
            path = root / focus
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")
        return Workspace(root, path, _config_dir(tmp))

    return build


def _description(i: int) -> str:
    """A ~400-character description in the house format (what, triggers, exclusions), distinct per i."""
    areas = ["billing", "search", "auth", "ingest", "reports", "mobile", "infra", "payments", "email"]
    verbs = ["migrate", "audit", "profile", "document", "release", "triage", "harden", "refactor"]
    area, verb = areas[i % len(areas)], verbs[i % len(verbs)]
    text = (
        f"Team procedure {i:02d}: {verb} the {area} service step by step, following the runbook kept in "
        f"this folder, with the checks, commands and sign-offs the {area} team expects before merging. "
        f"Use when asked to {verb} {area} code, its configuration or its deployment scripts, or when a "
        f"ticket mentions the {area} runbook. Not for other services, general questions or code review."
    )
    return (text + " " + "Details are in the runbook." * 4)[:GENERATED_DESCRIPTION_CHARS].rstrip()


def _many_user_skills(tmp: Path) -> Workspace:
    workspace = _empty(tmp)
    for i in range(1, GENERATED_SKILLS + 1):
        folder = workspace.config_dir / "skills" / f"team-procedure-{i:02d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {folder.name}\ndescription: {json.dumps(_description(i))}\n---\n\n# Procedure\n"
        )
    return workspace


SCENARIOS = [
    Scenario("a", "empty workspace (no AGENTS.md), 4 bundled skills", _empty),
    Scenario(
        "b", "bench_slice's project: 5-line AGENTS.md, 4 bundled skills (DESIGN.md fixture)", _slice_project
    ),
    Scenario(
        "c",
        "pydantic-ai corpus, --file pydantic_ai_slim/pydantic_ai/models/openai.py (3-file chain)",
        _corpus("pydantic__pydantic-ai", "pydantic_ai_slim/pydantic_ai/models/openai.py"),
    ),
    Scenario("d", "jint corpus: one 126 KB AGENTS.md, cut at 32 KiB", _corpus("sebastienros__jint", None)),
    Scenario(
        "e",
        f"{GENERATED_SKILLS} user skills, ~{GENERATED_DESCRIPTION_CHARS}-char descriptions",
        _many_user_skills,
    ),
]


def _first_request(workspace: Workspace) -> tuple[dict[str, Any], str]:
    """The first request body of ``agent-ls run TASK`` on ``workspace``, and the run's stderr."""
    env = {**ENV, "AGENT_LS_CONFIG_DIR": str(workspace.config_dir), "HOME": str(workspace.config_dir.parent)}
    command = [sys.executable, "-m", "agent_ls", "run", TASK, "--model", "openai/bench"]
    command += ["--workspace", str(workspace.root), "--max-turns", "1"]
    if workspace.focus is not None:
        command += ["--file", str(workspace.focus)]
    with FakeModelServer([{"content": "A summary."}]) as server:
        env["AGENT_LS_BASE_URL"] = server.base_url
        done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"agent-ls run failed ({done.returncode}): {done.stderr[-800:]}")
        request: dict[str, Any] = server.requests[0]
    return request, done.stderr


def _json_bytes(value: Any) -> int:
    """Bytes of ``value`` inside the request JSON (a string without its quotes)."""
    size = len(json.dumps(value).encode())
    return size - 2 if isinstance(value, str) else size


def _split(request: dict[str, Any]) -> dict[str, str]:
    """The system message's parts: ``prompt``, ``instructions``, ``catalog`` (each "" when absent)."""
    system = request["messages"][0]
    assert system["role"] == "system", system
    text: str = system["content"]
    catalog_at = text.find(CATALOG_INTRO)
    chain_at = text.find(CHAIN_HEADER)
    end = catalog_at if catalog_at >= 0 else len(text)
    start = chain_at if chain_at >= 0 else end
    return {
        "system": text,
        "prompt": text[:start],
        "instructions": text[start:end].rstrip("\n"),
        "catalog": text[catalog_at:] if catalog_at >= 0 else "",
    }


def _skill_tool(request: dict[str, Any]) -> dict[str, Any] | None:
    return next((t for t in request.get("tools", []) if t["function"]["name"] == "skill"), None)


def _unclamped_catalog(workspace: Workspace) -> tuple[str, str]:
    """The catalog this workspace's skills would give without a budget, and with the default one."""
    skills = discover_skills(
        workspace_root=workspace.root,
        project_root=workspace.root,
        focus_dir=workspace.root,
        home=workspace.config_dir.parent,
        user_config_dir=workspace.config_dir,
        bundled_dir=bundled_skills_dir(),
    ).model_invocable()
    return render_catalog(skills, 10**9), render_catalog(skills, catalog_budget_chars(None))


def _chain_line(stderr: str) -> str:
    return next((line.strip() for line in stderr.splitlines() if "instructions (chain):" in line), "")


def _real_counter() -> tuple[Callable[[list[str]], list[int]] | None, str]:
    """A token counter with Gemma 3 270M's tokenizer, or None and why it is unavailable."""
    python = os.environ.get("AGENT_LS_LLAMA_PYTHON")
    gguf = Path(os.environ.get("AGENT_LS_GGUF") or DEFAULT_GGUF).expanduser()
    if not python or not Path(python).exists():
        return None, "AGENT_LS_LLAMA_PYTHON is not set to an existing interpreter"
    if not gguf.is_file():
        return None, f"no model file at {gguf}"

    def count(texts: list[str]) -> list[int]:
        done = subprocess.run(
            [python, "-c", _TOKENIZE, str(gguf)], input=json.dumps(texts), capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"tokenizing with {python} failed: {done.stderr[-800:]}")
        counts: list[int] = json.loads(done.stdout.strip().splitlines()[-1])
        return counts

    return count, f"Gemma 3 270M tokenizer ({gguf.name})"


def measure(scenario: Scenario, tmp: Path, count: Callable[[list[str]], list[int]] | None) -> dict[str, Any]:
    workspace = scenario.build(tmp / scenario.id)
    request, stderr = _first_request(workspace)
    again, _ = _first_request(workspace)
    if json.dumps(again) != json.dumps(request):
        raise SystemExit(f"scenario {scenario.id}: two runs gave different first requests")
    parts = _split(request)
    tool = _skill_tool(request)
    total = _json_bytes(request)
    sizes = {
        "instructions": _json_bytes(parts["instructions"]) if parts["instructions"] else 0,
        "catalog": _json_bytes(parts["catalog"]) if parts["catalog"] else 0,
        "skill_tool": _json_bytes(tool) if tool else 0,
    }
    rest = total - sum(sizes.values())
    unclamped, clamped = _unclamped_catalog(workspace)
    if clamped != parts["catalog"]:
        raise SystemExit(f"scenario {scenario.id}: the request's catalog is not render_catalog's text")
    result: dict[str, Any] = {
        "scenario": scenario.id,
        "label": scenario.label,
        "chain": _chain_line(stderr),
        "total_est_tokens": round(total / 4),
        **{f"{k}_est_tokens": round(v / 4) for k, v in sizes.items()},
        "rest_est_tokens": round(rest / 4),
        "total_over_rest": round(total / rest, 2),
        "catalog_chars": len(parts["catalog"]),
        "catalog_budget_chars": catalog_budget_chars(None),
        "catalog_unclamped_chars": len(unclamped),
        "catalog_unclamped_est_tokens": round(len(unclamped.encode()) / 4),
        "skill_enum_names": len(tool["function"]["parameters"]["properties"]["name"]["enum"]) if tool else 0,
    }
    if count is not None:
        texts = [parts["system"], parts["instructions"], parts["catalog"], json.dumps(tool) if tool else ""]
        tokens = count(texts)
        for key, text, n in zip(
            ("system", "instructions", "catalog", "skill_tool"), texts, tokens, strict=True
        ):
            estimate = len(text.encode()) / 4
            result[f"{key}_real_tokens"] = n
            result[f"{key}_real_over_est"] = round(n / estimate, 2) if estimate else None
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scenario", action="append", choices=[s.id for s in SCENARIOS])
    args = parser.parse_args()
    count, counter = _real_counter()
    chosen = [s for s in SCENARIOS if not args.scenario or s.id in args.scenario]
    with tempfile.TemporaryDirectory() as name:
        results = [measure(s, Path(name), count) for s in chosen]
    print(
        json.dumps(
            {"real_tokenizer": counter if count else f"skipped: {counter}", "scenarios": results}, indent=2
        )
    )


if __name__ == "__main__":
    main()
