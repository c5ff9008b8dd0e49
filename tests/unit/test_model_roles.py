"""Model routing (issue 17): ``[models]`` in agent-ls.toml (config/), its aliases, and the model each role
resolves to (models/roles.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.config import ConfigDiagnostic, load_config
from agent_ls.config.schema import ModelsConfig
from agent_ls.core.errors import ConfigError
from agent_ls.models.resolution import resolve_model
from agent_ls.models.roles import resolve_role
from agent_ls.readiness import readiness
from agent_ls.settings import EditorSettings, EnvSnapshot


def _dirs(tmp_path: Path, user: str, ws: str | None = None) -> tuple[EnvSnapshot, Path, Path]:
    directory = tmp_path / "user-config"
    directory.mkdir(exist_ok=True)
    (directory / "agent-ls.toml").write_text(user)
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    if ws is not None:
        (root / "agent-ls.toml").write_text(ws)
    return EnvSnapshot({"AGENT_LS_CONFIG_DIR": str(directory)}), directory / "agent-ls.toml", root


def test_models_table_names_a_model_per_role(tmp_path: Path) -> None:
    env, user_file, root = _dirs(
        tmp_path,
        '[models]\nmain = "openai/gpt-4.1"\ncompaction = "openai/gpt-4.1-mini"\nsubagent = "ollama/qwen"\n',
    )
    loaded = load_config(env, root)
    assert loaded.diagnostics == ()
    assert (loaded.model, loaded.model_source) == ("openai/gpt-4.1", user_file)
    assert loaded.models == ModelsConfig(compaction="openai/gpt-4.1-mini", subagent="ollama/qwen")
    assert loaded.compaction.model == "openai/gpt-4.1-mini"  # what [compaction] model read before


def test_model_and_compaction_model_are_aliases_and_the_workspace_wins_role_by_role(tmp_path: Path) -> None:
    env, _, root = _dirs(
        tmp_path,
        'model = "openai/a"\n[compaction]\nmodel = "openai/b"\nthreshold = 0.5\n'
        '[models]\nsubagent = "openai/c"\n',
        '[models]\nmain = "openai/ws-main"\ncompaction = "openai/ws-summary"\n',
    )
    loaded = load_config(env, root)
    assert loaded.diagnostics == ()
    assert (loaded.model, loaded.model_source) == ("openai/ws-main", root.resolve() / "agent-ls.toml")
    assert loaded.models == ModelsConfig(compaction="openai/ws-summary", subagent="openai/c")
    assert (loaded.compaction.threshold, loaded.compaction.model) == (0.5, "openai/ws-summary")


def test_one_file_with_both_spellings_of_a_role_keeps_the_models_table_and_says_so(tmp_path: Path) -> None:
    text = 'model = "openai/old"\n[compaction]\nmodel = "openai/old-summary"\n[models]\nmain = "openai/new"\n'
    env, _, root = _dirs(tmp_path, text + 'compaction = "openai/new-summary"\n')
    loaded = load_config(env, root)
    assert (loaded.model, loaded.models.compaction) == ("openai/new", "openai/new-summary")
    assert [(d.line, d.severity, d.message) for d in loaded.diagnostics] == [
        (
            0,
            "warning",
            "model is ignored: models.main in the same file names the main model "
            "(model is its older spelling)",
        ),
        (
            2,
            "warning",
            "compaction.model is ignored: models.compaction in the same file names the compaction model "
            "(compaction.model is its older spelling)",
        ),
    ]


@pytest.mark.parametrize(
    ("role", "why"),
    [
        ("summary", ""),
        ("commit", " (agent-ls writes no commit messages, and session titles need no model call)"),
        ("title", " (agent-ls writes no commit messages, and session titles need no model call)"),
    ],
)
def test_an_unknown_role_is_an_error_naming_the_key(tmp_path: Path, role: str, why: str) -> None:
    env, user_file, root = _dirs(tmp_path, f'[models]\nsubagent = "openai/s"\n{role} = "openai/x"\n')
    loaded = load_config(env, root)
    assert loaded.models == ModelsConfig(subagent="openai/s")
    message = f"unknown model role models.{role} is ignored: the roles are main, compaction, subagent{why}"
    assert loaded.diagnostics == (ConfigDiagnostic(user_file, 2, 0, len(role), "error", message),)


def test_an_untrusted_workspace_cannot_make_a_replay_script_any_roles_model(tmp_path: Path) -> None:
    env, _, root = _dirs(
        tmp_path,
        '[models]\nsubagent = "openai/mine"\n',
        '[models]\nsubagent = "replay:evil.json"\ncompaction = "replay:evil.json"\n'
        '[compaction]\nmodel = "replay:evil.json"\n',
    )
    loaded = load_config(env, root)
    assert loaded.models == ModelsConfig(subagent="openai/mine")
    ignored = [d.message.split(" is ignored")[0] for d in loaded.diagnostics]
    assert ignored == [
        'models.subagent = "replay:..."',
        'models.compaction = "replay:..."',
        'compaction.model = "replay:..."',
    ]


def test_a_role_without_a_model_uses_the_main_one(tmp_path: Path) -> None:
    env, _, root = _dirs(tmp_path, 'model = "openai/main"\n')
    env = EnvSnapshot({"AGENT_LS_CONFIG_DIR": str(tmp_path / "user-config"), "OPENAI_API_KEY": "k"})
    config = load_config(env, root)
    main = resolve_model(None, EditorSettings(), env, config)
    assert resolve_role("compaction", main, EditorSettings(), env, config) is None
    assert resolve_role("subagent", main, EditorSettings(), env, config) is None


def test_the_main_endpoints_overrides_reach_a_role_of_the_same_provider_only(tmp_path: Path) -> None:
    """agentLs.baseUrl and AGENT_LS_API_KEY are the main model's endpoint: a role's model of another
    provider goes to that provider with its own key, never with the main one's."""
    directory = tmp_path / "user-config"
    directory.mkdir()
    (directory / "agent-ls.toml").write_text(
        '[models]\ncompaction = "openai/cheap"\nsubagent = "anthropic/claude-haiku-4-5"\n'
    )
    values = {
        "AGENT_LS_CONFIG_DIR": str(directory),
        "AGENT_LS_API_KEY": "main-key",
        "ANTHROPIC_API_KEY": "anthropic-key",
    }
    env = EnvSnapshot(values)
    config = load_config(env, None)
    editor = EditorSettings(model="openai/main", baseUrl="http://127.0.0.1:9/v1")
    main = resolve_model(None, editor, env, config)

    summary = resolve_role("compaction", main, editor, env, config)
    sub = resolve_role("subagent", main, editor, env, config)

    assert summary is not None and sub is not None
    assert (summary.model, summary.base_url, summary.api_key) == (
        "cheap",
        "http://127.0.0.1:9/v1",
        "main-key",
    )
    assert (sub.model, sub.base_url, sub.api_key) == (
        "claude-haiku-4-5",
        "https://api.anthropic.com/v1",
        "anthropic-key",
    )
    # Without its own key the other provider's role is refused before the run, naming where it was set.
    env = EnvSnapshot({k: v for k, v in values.items() if k != "ANTHROPIC_API_KEY"})
    with pytest.raises(ConfigError) as raised:
        resolve_role("subagent", main, editor, env, config)
    assert str(raised.value) == (
        "models.subagent in agent-ls.toml: no API key for anthropic/claude-haiku-4-5: set ANTHROPIC_API_KEY "
        "in the environment of agent-ls"
    )


def test_the_editors_role_setting_wins_and_a_bad_string_names_its_source(tmp_path: Path) -> None:
    env, _, root = _dirs(tmp_path, '[models]\nsubagent = "openai/from-config"\n')
    env = EnvSnapshot({"AGENT_LS_CONFIG_DIR": str(tmp_path / "user-config"), "OPENAI_API_KEY": "k"})
    config = load_config(env, root)
    editor, _ = EditorSettings.from_client(
        {"model": "openai/main", "models": {"subagent": "openai/from-editor"}}
    )
    main = resolve_model(None, editor, env, config)
    chosen = resolve_role("subagent", main, editor, env, config)
    assert chosen is not None and chosen.model == "from-editor"

    editor, _ = EditorSettings.from_client({"model": "openai/main", "models": {"compaction": "gpt-4o"}})
    with pytest.raises(ConfigError) as raised:
        resolve_role("compaction", main, editor, env, config)
    assert str(raised.value).startswith("agentLs.models.compaction: invalid model string 'gpt-4o': use ")


def test_status_reports_a_roles_model_that_a_run_would_refuse(tmp_path: Path) -> None:
    env, _, root = _dirs(tmp_path, 'model = "openai/main"\n[models]\nsubagent = "nowhere/x"\n')
    env = EnvSnapshot({"AGENT_LS_CONFIG_DIR": str(tmp_path / "user-config"), "OPENAI_API_KEY": "k"})
    found = readiness(EditorSettings(), env, load_config(env, root))
    assert (found.model, found.model_state) == ("openai/main", "invalid")
    assert found.model_detail.startswith("models.subagent in agent-ls.toml: unknown provider 'nowhere'")
