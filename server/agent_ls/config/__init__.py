"""The configuration files: the user's ``agent-ls.toml`` and a workspace's, merged, with diagnostics.

Callers import from here; the modules, from the bottom up:

- ``key_locator.py``: where each key of a TOML text is, so that a diagnostic points at its key;
- ``schema.py``: the pydantic tables of one file (the file format, sketched in its docstring);
- ``file_checks.py``: one file read and checked on its own (secrets, the trust rule, unknown keys);
- ``loading.py``: ``load_config``, which finds both files, checks each, and merges them (the steps in
  its docstring), and its result ``LoadedConfig``;
- ``path_policy.py``: the workspace's ``PathPolicy`` with the configured secrets (``path_policy_for``).

docs/configuration.md documents every key for users.
"""

from __future__ import annotations

from agent_ls.config.file_checks import ConfigDiagnostic
from agent_ls.config.loading import (
    BUILTIN_PROVIDER_NAMES,
    CONFIG_DIR_ENV,
    CONFIG_FILE_NAME,
    LoadedConfig,
    load_config,
    user_config_file,
)
from agent_ls.config.path_policy import path_policy_for
from agent_ls.config.schema import (
    ConfigFile,
    InstructionsConfig,
    PricesConfig,
    ProviderConfig,
    RetryConfig,
    SkillsConfig,
    WireApi,
)

__all__ = [
    "BUILTIN_PROVIDER_NAMES",
    "CONFIG_DIR_ENV",
    "CONFIG_FILE_NAME",
    "ConfigDiagnostic",
    "ConfigFile",
    "InstructionsConfig",
    "LoadedConfig",
    "PricesConfig",
    "ProviderConfig",
    "RetryConfig",
    "SkillsConfig",
    "WireApi",
    "load_config",
    "path_policy_for",
    "user_config_file",
]
