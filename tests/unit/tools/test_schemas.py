"""What the model sees of every tool, pinned: name, description and JSON Schema.

A change here is a change of the model-facing API: review the diff of ``snapshots/tool_specs.json``.
To accept a deliberate change, run with ``UPDATE_SNAPSHOTS=1``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

from agent_ls.tools import default_tools

SNAPSHOT = Path(__file__).parent / "snapshots" / "tool_specs.json"


def test_tool_specs_match_the_snapshot() -> None:
    specs = [asdict(tool.spec()) for tool in default_tools()]
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(json.dumps(specs, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert specs == json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_schemas_carry_no_titles_and_describe_every_field() -> None:
    for tool in default_tools():
        parameters = tool.spec().parameters
        assert "title" not in json.dumps(parameters), tool.name
        for name, prop in parameters["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name}"
