"""The ``PathPolicy`` of a workspace from its config files: one construction for a session (the tools,
the shell's paths, the shadow copy, the instruction loaders: ``assembly.assemble_session``), ``agent-ls
policy check`` (``assembly.build_policy``), and the lint and hover of agent files (which skip secret
files the same way)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_ls.config.loading import LoadedConfig
from agent_ls.workspace.paths import PathPolicy


def path_policy_for(root: Path, config: LoadedConfig, readable_dirs: Sequence[Path] = ()) -> PathPolicy:
    """The path policy of ``root``: the built-in secrets plus the configured ones and exemptions, and
    agent-ls's own config directory (secret, unless the user opened it as the workspace).

    Args:
        root: the workspace root.
        config: the loaded config files.
        readable_dirs: folders outside the workspace whose files may be read, never written (the folders
            of user and bundled skills); secret files in them stay refused.
    """
    permissions = config.permissions
    config_dir = config.user_file.parent if config.user_file is not None else None
    if config_dir is not None and root.resolve().is_relative_to(config_dir.resolve()):
        config_dir = None
    return PathPolicy(
        root,
        extra_dirs=readable_dirs,
        secret_patterns=permissions.secret_files,  # added to the built-in list, which always applies
        not_secret=permissions.not_secret_files,
        config_dir=config_dir,
    )
