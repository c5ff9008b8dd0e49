"""Settings: editor settings parsed once and merged (invalid values dropped with a message); EnvSnapshot."""

from __future__ import annotations

from agent_ls.settings import EditorSettings, EnvSnapshot, PermissionSettings


def test_initialization_options_in_either_form() -> None:
    inner = {"model": "ollama/x", "baseUrl": "http://h/v1", "maxTurns": 3}
    for raw in (inner, {"agentLs": inner}):
        settings, problems = EditorSettings.from_client(raw)
        assert problems == []
        assert (settings.model, settings.base_url, settings.max_turns) == ("ollama/x", "http://h/v1", 3)


def test_empty_or_missing_values_never_override_the_current_ones() -> None:
    current, _ = EditorSettings.from_client({"model": "ollama/x", "permissions": {"headless": "allow"}})
    for raw in ({}, {"agentLs": {}}, None, {"model": "", "baseUrl": None, "permissions": {}}):
        assert EditorSettings.from_client(raw, base=current) == (current, [])


def test_sent_values_override_and_nested_objects_merge() -> None:
    current, _ = EditorSettings.from_client({"model": "ollama/x", "maxTurns": 4})
    settings, _ = EditorSettings.from_client(
        {"model": "openai/y", "permissions": {"headless": "allow"}}, current
    )
    assert (settings.model, settings.max_turns) == ("openai/y", 4)
    assert settings.permissions == PermissionSettings(headless="allow")


def test_an_invalid_value_is_dropped_with_a_problem_and_the_old_one_kept() -> None:
    current, _ = EditorSettings.from_client({"maxTurns": 4})
    settings, problems = EditorSettings.from_client({"maxTurns": 0, "model": "ollama/x"}, current)
    assert (settings.max_turns, settings.model) == (4, "ollama/x")
    assert problems == ["agentLs.maxTurns: Input should be greater than or equal to 1"]


def test_the_env_snapshot_answers_any_variable_but_never_shows_a_value() -> None:
    source = {"LOCAL_API_KEY": "sk-local-secret", "AGENT_LS_MODEL": "ollama/x", "EMPTY": ""}
    snapshot = EnvSnapshot.from_environ(source)
    source["AGENT_LS_MODEL"] = "changed later"

    assert (snapshot.get("LOCAL_API_KEY"), snapshot.get("AGENT_LS_MODEL")) == ("sk-local-secret", "ollama/x")
    assert (snapshot.get("EMPTY"), snapshot.get("UNSET")) == (None, None)
    assert repr(snapshot) == str(snapshot) == "EnvSnapshot(<3 variables, values hidden>)"
