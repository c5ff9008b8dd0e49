"""The names the model sees for MCP tools (``mcp_client.naming``): ``mcp__<server>__<tool>``, sanitised to
the providers' ``[A-Za-z0-9_-]``, at most 64 characters, cut with a hash suffix when longer or taken; the
rule name is never cut."""

from __future__ import annotations

import hashlib
import re

from agent_ls.mcp_client.naming import MAX_NAME, full_name, qualified_name, server_prefix

PROVIDER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def suffix(server: str, tool: str) -> str:
    return "_" + hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:8]


def test_a_plain_name_is_kept() -> None:
    assert qualified_name("time", "get_current_time") == "mcp__time__get_current_time"
    assert server_prefix("time") == "mcp__time"


def test_characters_outside_the_provider_pattern_become_underscores() -> None:
    assert qualified_name("my.server", "files/read-all é") == "mcp__my_server__files_read-all__"
    assert server_prefix("my.server") == "mcp__my_server"
    assert full_name("my.server", "a b") == "mcp__my_server__a_b"


def test_a_long_name_is_cut_to_64_with_a_hash_and_the_rule_name_is_not() -> None:
    tool = "t" * 80
    name = qualified_name("github", tool)
    assert len(name) == MAX_NAME
    assert name == f"mcp__github__{tool}"[: MAX_NAME - 9] + suffix("github", tool)
    assert PROVIDER_NAME.fullmatch(name)
    assert full_name("github", tool) == f"mcp__github__{tool}"  # rules match the whole name
    assert full_name("github", tool).startswith(server_prefix("github") + "__")


def test_exactly_64_characters_is_not_cut() -> None:
    tool = "x" * (MAX_NAME - len("mcp__srv__"))
    assert qualified_name("srv", tool) == f"mcp__srv__{tool}"


def test_two_long_names_with_the_same_start_stay_apart() -> None:
    first, second = "a" * 70 + "_one", "a" * 70 + "_two"
    assert qualified_name("s", first) != qualified_name("s", second)


def test_a_name_already_taken_gets_the_hash() -> None:
    """Two servers whose names sanitise alike ("a.b" and "a_b") offer the same tool."""
    first = qualified_name("a.b", "run")
    assert first == "mcp__a_b__run"
    second = qualified_name("a_b", "run", taken={first})
    assert second == "mcp__a_b__run" + suffix("a_b", "run")
    assert second != first and len(second) <= MAX_NAME
    assert full_name("a_b", "run") == full_name("a.b", "run")  # the same rule covers both, as written
