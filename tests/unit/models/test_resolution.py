"""models/resolution.py: model strings, each row of the resolution table and its precedence, open_model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_ls.core.errors import ConfigError
from agent_ls.core.messages import AssistantMessage, UserMessage
from agent_ls.models.openai_chat import OpenAIChatClient
from agent_ls.models.replay import ReplayModel
from agent_ls.models.resolution import (
    NO_MODEL,
    VALID_FORMS,
    ModelChoice,
    open_model,
    parse_model_string,
    resolve_model,
)
from agent_ls.settings import EditorSettings, EnvSnapshot
from tests.support.model_server import FakeModelServer

NO_EDITOR = EditorSettings()


def env(**values: str) -> EnvSnapshot:
    return EnvSnapshot.from_environ(values)


@pytest.mark.parametrize(
    ("model_string", "expected"),
    [
        ("ollama/qwen2.5-coder:7b", ("ollama", "qwen2.5-coder:7b")),
        ("openrouter/anthropic/claude-sonnet-4", ("openrouter", "anthropic/claude-sonnet-4")),
        ("openai/gpt-4.1", ("openai", "gpt-4.1")),
        ("replay:demo/script.json", ("replay", "demo/script.json")),
        ("replay:/abs/a:b.json", ("replay", "/abs/a:b.json")),
        ("  openai/gpt-4.1 ", ("openai", "gpt-4.1")),
    ],
)
def test_model_strings_split_at_the_first_slash(model_string: str, expected: tuple[str, str]) -> None:
    assert parse_model_string(model_string) == expected


@pytest.mark.parametrize(
    ("model_string", "message"),
    [
        ("gpt-4.1", f"invalid model string 'gpt-4.1': {VALID_FORMS}"),
        ("openai/", f"invalid model string 'openai/': {VALID_FORMS}"),
        ("/gpt-4.1", f"invalid model string '/gpt-4.1': {VALID_FORMS}"),
        ("replay:", f"invalid model string 'replay:': empty replay path; {VALID_FORMS}"),
        (
            "anthropic/claude-sonnet-4",
            f"unknown provider 'anthropic' in model string 'anthropic/claude-sonnet-4': {VALID_FORMS}",
        ),
        ("Ollama/qwen", f"unknown provider 'Ollama' in model string 'Ollama/qwen': {VALID_FORMS}"),
    ],
)
def test_invalid_model_strings_list_the_valid_forms(model_string: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_model_string(model_string)

    assert str(caught.value) == message
    assert VALID_FORMS == (
        "use <provider>/<model> with provider openai, ollama or openrouter (e.g. ollama/qwen2.5-coder:7b), "
        "or replay:<path>"
    )


@pytest.mark.parametrize(
    ("model_arg", "editor_model", "env_model", "chosen"),
    [
        ("openai/from-arg", "openai/from-editor", "openai/from-env", "openai/from-arg"),
        (None, "openai/from-editor", "openai/from-env", "openai/from-editor"),
        ("", "openai/from-editor", "openai/from-env", "openai/from-editor"),
        ("  ", None, "openai/from-env", "openai/from-env"),
        (None, "", "openai/from-env", "openai/from-env"),
        (None, None, "openai/from-env", "openai/from-env"),
    ],
)
def test_model_precedence(
    model_arg: str | None, editor_model: str | None, env_model: str, chosen: str
) -> None:
    editor = EditorSettings(model=editor_model)

    choice = resolve_model(model_arg, editor, env(AGENT_LS_MODEL=env_model))

    assert choice.model_string == chosen


def test_no_model_anywhere_names_every_place() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_model(None, NO_EDITOR, env(OPENAI_API_KEY="sk-x"))

    assert (
        str(caught.value)
        == NO_MODEL
        == (
            "no model configured: pass --model, set the agentLs.model editor setting, "
            "or set AGENT_LS_MODEL (e.g. ollama/qwen2.5-coder:7b)"
        )
    )


def test_an_invalid_model_string_says_where_it_came_from() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_model(None, NO_EDITOR, env(AGENT_LS_MODEL="gpt-4.1"))

    assert str(caught.value) == f"AGENT_LS_MODEL: invalid model string 'gpt-4.1': {VALID_FORMS}"


@pytest.mark.parametrize(
    ("model", "editor_url", "variables", "base_url"),
    [
        ("openai/gpt-4.1", None, {}, "https://api.openai.com/v1"),
        ("ollama/qwen2.5-coder:7b", None, {}, "http://localhost:11434/v1"),
        ("openrouter/anthropic/claude-sonnet-4", None, {}, "https://openrouter.ai/api/v1"),
        ("openai/gpt-4.1", None, {"OPENAI_BASE_URL": "http://proxy.test/v1"}, "http://proxy.test/v1"),
        ("ollama/qwen", None, {"OPENAI_BASE_URL": "http://proxy.test/v1"}, "http://localhost:11434/v1"),
        ("openrouter/x/y", None, {"OPENAI_BASE_URL": "http://proxy.test/v1"}, "https://openrouter.ai/api/v1"),
        (
            "openai/gpt-4.1",
            None,
            {"AGENT_LS_BASE_URL": "http://agent.test/v1", "OPENAI_BASE_URL": "http://proxy.test/v1"},
            "http://agent.test/v1",
        ),
        ("ollama/qwen", None, {"AGENT_LS_BASE_URL": "http://gpu-box:11434/v1"}, "http://gpu-box:11434/v1"),
        (
            "openai/gpt-4.1",
            "http://editor.test/v1",
            {"AGENT_LS_BASE_URL": "http://agent.test/v1", "OPENAI_BASE_URL": "http://proxy.test/v1"},
            "http://editor.test/v1",
        ),
        ("openai/gpt-4.1", "", {"AGENT_LS_BASE_URL": "http://agent.test/v1"}, "http://agent.test/v1"),
    ],
)
def test_base_url_precedence(
    model: str, editor_url: str | None, variables: dict[str, str], base_url: str
) -> None:
    choice = resolve_model(model, EditorSettings(baseUrl=editor_url), env(**variables))

    assert choice.base_url == base_url


def test_a_base_url_that_is_not_http_is_refused_with_its_source() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_model("ollama/qwen", NO_EDITOR, env(AGENT_LS_BASE_URL="localhost:11434/v1"))

    assert str(caught.value) == (
        "base URL 'localhost:11434/v1' (from AGENT_LS_BASE_URL) must start with http:// or https://"
    )


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "http://user:sk-in-url@127.0.0.1:9/v1",
            "base URL from AGENT_LS_BASE_URL contains credentials; "
            "remove them and set AGENT_LS_API_KEY instead",
        ),
        (
            "http://127.0.0.1:9/v1?key=K",
            "base URL 'http://127.0.0.1:9/v1?key=K' (from AGENT_LS_BASE_URL) "
            "must not have a query string or fragment",
        ),
        ("http:///v1", "base URL 'http:///v1' (from AGENT_LS_BASE_URL) must start with http:// or https://"),
    ],
)
def test_base_urls_with_credentials_or_a_query_are_refused(url: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_model("openai/x", NO_EDITOR, env(AGENT_LS_BASE_URL=url))
    assert str(caught.value) == message
    assert "sk-in-url" not in str(caught.value)


@pytest.mark.parametrize(
    ("model", "variables", "api_key"),
    [
        ("openai/gpt-4.1", {"OPENAI_API_KEY": "sk-openai"}, "sk-openai"),
        ("openai/gpt-4.1", {"OPENAI_API_KEY": "sk-openai", "AGENT_LS_API_KEY": "sk-agent"}, "sk-agent"),
        ("openai/gpt-4.1", {"OPENROUTER_API_KEY": "sk-or"}, None),
        ("openrouter/x/y", {"OPENROUTER_API_KEY": "sk-or", "OPENAI_API_KEY": "sk-openai"}, "sk-or"),
        ("openrouter/x/y", {"OPENROUTER_API_KEY": "sk-or", "AGENT_LS_API_KEY": "sk-agent"}, "sk-agent"),
        ("ollama/qwen", {"OPENAI_API_KEY": "sk-openai", "OPENROUTER_API_KEY": "sk-or"}, None),
        ("ollama/qwen", {"AGENT_LS_API_KEY": "sk-agent"}, "sk-agent"),
        ("replay:s.json", {"AGENT_LS_API_KEY": "sk-agent"}, None),
    ],
)
def test_api_key_precedence(model: str, variables: dict[str, str], api_key: str | None) -> None:
    assert resolve_model(model, NO_EDITOR, env(**variables)).api_key == api_key


def test_a_whole_choice_and_its_repr_without_the_key() -> None:
    choice = resolve_model(
        None,
        EditorSettings(model="openrouter/anthropic/claude-sonnet-4"),
        env(OPENROUTER_API_KEY="sk-or-secret", AGENT_LS_MODEL="ollama/qwen"),
    )

    assert choice == ModelChoice(
        model_string="openrouter/anthropic/claude-sonnet-4",
        provider="openrouter",
        model="anthropic/claude-sonnet-4",
        base_url="https://openrouter.ai/api/v1",
        api_key="sk-or-secret",
    )
    assert "sk-or-secret" not in repr(choice)
    assert repr(choice) == (
        "ModelChoice(model_string='openrouter/anthropic/claude-sonnet-4', provider='openrouter', "
        "model='anthropic/claude-sonnet-4', base_url='https://openrouter.ai/api/v1')"
    )


def test_a_replay_choice_has_no_url_and_no_key() -> None:
    choice = resolve_model("replay:demo.json", EditorSettings(baseUrl="http://x.test/v1"), env())

    assert choice == ModelChoice("replay:demo.json", "replay", "demo.json", base_url=None, api_key=None)


async def test_open_model_builds_a_chat_client_that_sends_the_model_and_key() -> None:
    with FakeModelServer([{"content": "hi"}]) as server:
        choice = resolve_model(
            "ollama/qwen2.5-coder:7b",
            EditorSettings(baseUrl=server.base_url),
            env(AGENT_LS_API_KEY="sk-local"),
        )
        client = open_model(choice, timeout_s=5)
        try:
            response = await client.complete([UserMessage("hello")], [])
        finally:
            await client.aclose()

    assert isinstance(client, OpenAIChatClient)
    assert client.model_name == "ollama/qwen2.5-coder:7b"
    assert response.message == AssistantMessage("hi")
    assert server.requests == [
        {"model": "qwen2.5-coder:7b", "messages": [{"role": "user", "content": "hello"}]}
    ]
    assert server.request_headers[0]["authorization"] == "Bearer sk-local"


async def test_open_model_reads_a_replay_path_relative_to_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "demo.json").write_text(json.dumps([{"content": "replayed"}]))
    monkeypatch.chdir(tmp_path)

    model = open_model(resolve_model("replay:scripts/demo.json", NO_EDITOR, env()))
    response = await model.complete([UserMessage("hi")], [])

    assert isinstance(model, ReplayModel)
    assert (model.model_name, response.message) == ("replay:scripts/demo.json", AssistantMessage("replayed"))


def test_open_model_with_a_missing_replay_file_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"

    with pytest.raises(ConfigError) as caught:
        open_model(resolve_model(f"replay:{missing}", NO_EDITOR, env()))

    assert str(caught.value) == f"replay script {missing} cannot be read: No such file or directory"
