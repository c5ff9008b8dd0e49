"""The scripted model of the editor's-problems end-to-end run (``AGENT_LS_E2E_MODEL=problems_model_server.py
clients/vscode/test/e2e.sh run``, with ``AGENT_LS_E2E_DRIVER=problems_driver.mjs``; issue 17).

The model calls ``problems`` for the workspace, then for ``broken.json``; it edits ``broken.json`` (fixing the
doubled comma, writing a value without quotes) and calls ``problems`` on it again, which the extension
answers by checking the proposed text (``agent/problemsOfText``); it answers, is told the new error, and
answers again. Same interface as ``model_server.py``: ``--port-file P --requests R``; every request body is
rewritten to ``R``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO))

from tests.support.model_server import FakeModelServer  # noqa: E402

ANSWER = "broken.json had a JSON syntax error on line 2."
EDIT = {"path": "broken.json", "old_string": '"name": "sample",,', "new_string": '"name": sample,'}
STEPS = [
    {"tool_calls": [{"id": "call_all", "name": "problems", "arguments": {"path": "."}}]},
    {"tool_calls": [{"id": "call_file", "name": "problems", "arguments": {"path": "broken.json"}}]},
    {"tool_calls": [{"id": "call_edit", "name": "edit_file", "arguments": EDIT}]},
    {"tool_calls": [{"id": "call_after", "name": "problems", "arguments": {"path": "broken.json"}}]},
    {"content": "Fixed."},
    {"content": ANSWER},
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port-file", type=Path, required=True)
    parser.add_argument("--requests", type=Path, required=True)
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    def dump(requests: list[object]) -> None:
        tmp = args.requests.with_suffix(".tmp")
        tmp.write_text(json.dumps(requests, indent=1))
        os.replace(tmp, args.requests)

    with FakeModelServer(STEPS) as server:
        dump([])
        port = server.base_url.split(":")[-1].split("/")[0]
        tmp = args.port_file.with_suffix(".tmp")
        tmp.write_text(port)
        os.replace(tmp, args.port_file)
        print(f"scripted model server on {server.base_url}, {len(STEPS)} steps", flush=True)
        seen = 0
        while not stop.is_set():
            server.wait_for_requests(seen + 1, timeout_s=0.2)
            if len(server.requests) != seen:
                seen = len(server.requests)
                dump(list(server.requests))
        dump(list(server.requests))
    return 0


if __name__ == "__main__":
    sys.exit(main())
