"""The parts of the first request of the benchmark task, as ``agent.context`` counts them.

Run from the repository root with the dev install:  .venv/bin/python benchmarks/bench_context.py

The benchmark task of issue 15: "Summarize README.md" in a workspace with a 5-line AGENTS.md and the
bundled skills, an empty user config dir and ``HOME`` (nothing of this machine leaks in). Two measures of
the same first request:
1. the real ``agent-ls run`` against ``tests/support/model_server.py``'s FakeModelServer: the recorded
   body's size (``json.dumps`` of it, as the client serialized it);
2. in process, the session ``assembly.assemble_session`` builds, with the system message and the task
   message in its history: ``Session.context_report`` (``context_report.measure`` on the body the model
   client builds), printed part by part.
The two totals must agree (the parts are measured on the body the client sends).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.model_server import FakeModelServer  # noqa: E402

TASK = "Summarize README.md"
AGENTS_MD = (
    "# Project rules\n\n- Python 3.11, 4-space indents.\n- Run `pytest -q` before answering.\n"
    "- No new dependencies.\n"
)
README = "# Sample\n\nA small statistics package: mean and spread of a list of numbers.\n"


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="agent-ls-bench-context-") as temp:
        base = Path(temp)
        root, config, home = base / "ws", base / "config", base / "home"
        for folder in (root, config, home):
            folder.mkdir()
        (root / "README.md").write_text(README)
        (root / "AGENTS.md").write_text(AGENTS_MD)
        with FakeModelServer([{"content": "A statistics package."}]) as server:
            env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
            env |= {
                "AGENT_LS_CONFIG_DIR": str(config),
                "HOME": str(home),
                "AGENT_LS_API_KEY": "sk-bench",
                "AGENT_LS_BASE_URL": server.base_url,
            }
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "agent_ls",
                    "run",
                    TASK,
                    "--model",
                    "openai/test-model",
                    "--workspace",
                    str(root),
                ],
                env=env,
                capture_output=True,
                check=True,
                stdin=subprocess.DEVNULL,
            )
            sent = len(json.dumps(server.requests[0], ensure_ascii=False).encode())
            os.environ.update(env)
            report = _in_process(root)
    print(f"recorded first request: {sent:,} bytes (~{sent // 4:,} tokens)")
    print(report.text())
    drift = abs(report.request_bytes - sent) / sent * 100
    print(
        f"agent.context total vs the recorded body: {report.request_bytes:,} vs {sent:,} bytes ({drift:.2f}%)"
    )


def _in_process(root: Path):  # type: ignore[no-untyped-def]
    from agent_ls.assembly import assemble_session
    from agent_ls.config import load_config
    from agent_ls.core.context import Focus, task_message
    from agent_ls.core.messages import UserMessage
    from agent_ls.core.ports import DENIED, Approval, ApprovalRequest
    from agent_ls.settings import EnvSnapshot, process_environ

    class Deny:
        async def ask(self, request: ApprovalRequest) -> Approval:
            return DENIED

    env = EnvSnapshot.from_environ()
    session = assemble_session(
        root=root.resolve(),
        approver=Deny(),
        environ=process_environ(),
        config=load_config(env, root.resolve()),
        env=env,
        model="openai/test-model",
    )
    try:
        session.history += [session.system_message(), UserMessage(task_message(TASK, Focus()))]
        return session.context_report(session.open_model())
    finally:
        session.close()


if __name__ == "__main__":
    main()
