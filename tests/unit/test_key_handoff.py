"""The API keys leave this process's environment block at start (``key_handoff``), yet stay usable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_ls.key_handoff import KEYS_FD_ENV, configured_key_names, secret_names

# This test process's own environment without anything the handoff would move (the suite's secrets
# sweep plants credentials in it).
BASE_ENV = {k: v for k, v in os.environ.items() if k not in secret_names(os.environ, set())}

# Runs the start-up steps, then reports what /proc shows of this process and what it holds in memory.
PROBE = """
import json, os, sys
from agent_ls.key_handoff import protect_keys, received
from agent_ls.settings import EnvSnapshot
protect_keys()
block = open("/proc/self/environ", "rb").read().split(b"\\0")
env = EnvSnapshot.from_environ()
print(json.dumps({
    "pid": os.getpid(),
    "block": sorted(kv.split(b"=", 1)[0].decode() for kv in block if kv),
    "received": sorted(received()),
    "answers": {n: env.get(n) for n in ("AGENT_LS_API_KEY", "GITHUB_TOKEN", "LOCAL_LLM", "PLAIN")},
}))
"""


def test_names_like_secrets_and_configured_key_variables_are_chosen() -> None:
    environ = {
        "OPENAI_API_KEY": "a",
        "GITHUB_TOKEN": "b",
        "DB_PASSWORD": "c",
        "PATH": "/bin",
        "EMPTY_KEY": "",
    }
    environ |= {"LOCAL_LLM": "d", KEYS_FD_ENV: "3", "aws_secret_access_key": "e"}
    assert sorted(secret_names(environ, {"LOCAL_LLM"})) == [
        "DB_PASSWORD", "GITHUB_TOKEN", "LOCAL_LLM", "OPENAI_API_KEY", "aws_secret_access_key",
    ]  # fmt: skip


def test_key_variables_named_in_the_user_config_are_found(tmp_path: Path) -> None:
    (tmp_path / "agent-ls.toml").write_text(
        '[providers.a]\napi_key_env = "LOCAL_LLM"\n[providers.b]\nbase_url = "x"\n'
        "[providers.c]\napi_key_env = 3\n"
    )
    assert configured_key_names({"AGENT_LS_CONFIG_DIR": str(tmp_path)}) == {"LOCAL_LLM"}
    (tmp_path / "agent-ls.toml").write_text("not toml [")
    assert configured_key_names({"AGENT_LS_CONFIG_DIR": str(tmp_path)}) == set()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_start_up_moves_the_keys_out_of_the_block_and_keeps_them_answerable(tmp_path: Path) -> None:
    (tmp_path / "agent-ls.toml").write_text('[providers.local]\napi_key_env = "LOCAL_LLM"\n')
    env = dict(BASE_ENV)
    env |= {"AGENT_LS_CONFIG_DIR": str(tmp_path), "AGENT_LS_API_KEY": "sk-1", "GITHUB_TOKEN": "gh-2"}
    env |= {"LOCAL_LLM": "l-3", "PLAIN": "p"}
    child = subprocess.Popen([sys.executable, "-c", PROBE], env=env, stdout=subprocess.PIPE, text=True)
    out, _ = child.communicate(timeout=60)
    report = json.loads(out)
    assert report["pid"] == child.pid  # re-executed in place, not a new process
    assert not {"AGENT_LS_API_KEY", "GITHUB_TOKEN", "LOCAL_LLM"} & set(report["block"])
    assert "PLAIN" in report["block"]
    assert report["received"] == ["AGENT_LS_API_KEY", "GITHUB_TOKEN", "LOCAL_LLM"]
    assert report["answers"] == {
        "AGENT_LS_API_KEY": "sk-1",
        "GITHUB_TOKEN": "gh-2",
        "LOCAL_LLM": "l-3",
        "PLAIN": "p",
    }


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_an_editor_can_hand_the_key_over_a_pipe_so_it_is_never_in_any_environment(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, json.dumps({"AGENT_LS_API_KEY": "sk-pipe"}).encode())
    os.close(write_end)
    env = dict(BASE_ENV)
    env |= {KEYS_FD_ENV: str(read_end), "AGENT_LS_CONFIG_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=env,
        pass_fds=(read_end,),
        capture_output=True,
        text=True,
        timeout=60,
    )
    os.close(read_end)
    report = json.loads(done.stdout)
    assert report["received"] == ["AGENT_LS_API_KEY"]
    assert report["answers"]["AGENT_LS_API_KEY"] == "sk-pipe"
    assert "AGENT_LS_API_KEY" not in report["block"]
