"""The environment of the agent's child processes (shell commands, ripgrep): an allowlist, never a key.

``child_environment`` builds it from the server's environment; ``ShellRunner`` (``shell_runner.py``)
and ``Overlay``'s search (``overlay.py``) both use it, and ``agent-ls doctor`` shows what it keeps.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

# Environment variables a command inherits (when set), besides every LC_* variable.
ENV_ALLOWLIST = (
    "PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "USER", "LOGNAME", "SHELL", "TZ",
)  # fmt: skip
# Where toolchains installed in the home keep their roots. With HOME on a scratch directory (no
# sandbox), rustup's proxies, pyenv's shims and nvm would not find them; set to the real ones.
TOOLCHAIN_HOMES = {
    "RUSTUP_HOME": ".rustup",
    "CARGO_HOME": ".cargo",
    "PYENV_ROOT": ".pyenv",
    "NVM_DIR": ".nvm",
}
ENV_FIXED = {
    "PYTHONDONTWRITEBYTECODE": "1",
    # Git settings at command-line precedence (git-config(1) GIT_CONFIG_COUNT), over any repository's
    # own config: a repository the agent wrote (a bare "sub/HEAD" + "sub/config") is not discovered
    # implicitly, and no config file can make git run a program through fsmonitor or hooks.
    "GIT_CONFIG_COUNT": "3",
    "GIT_CONFIG_KEY_0": "safe.bareRepository",
    "GIT_CONFIG_VALUE_0": "explicit",
    "GIT_CONFIG_KEY_1": "core.fsmonitor",
    "GIT_CONFIG_VALUE_1": "false",
    "GIT_CONFIG_KEY_2": "core.hooksPath",
    "GIT_CONFIG_VALUE_2": "/dev/null",
}
_ENV_FORBIDDEN_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")
_ENV_FORBIDDEN_PREFIXES = ("AGENT_LS_", "AWS_")


def child_environment(
    environ: Mapping[str, str], *, venv: Path | None = None, key_names: Sequence[str] = ()
) -> dict[str, str]:
    """The environment of a shell command, built from ``environ`` (the caller passes ``os.environ``).

    Only ``ENV_ALLOWLIST`` names, ``LC_*`` names and ``TOOLCHAIN_HOMES`` names are kept, plus
    ``ENV_FIXED``; never a name containing KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL, starting with
    ``AGENT_LS_`` or ``AWS_``, or in ``key_names`` (the configured ``api_key_env`` names); ``ENV_FIXED``
    (ours) is set last. The
    directory of our interpreter is put first on ``PATH`` so the venv's ``pytest`` and ``rg`` are
    found, and ``venv/bin`` before it when a venv is configured (with ``VIRTUAL_ENV``). ``HOME`` is
    kept as given; ``ShellRunner`` points it at a scratch directory.
    """
    kept = {
        name: value
        for name, value in environ.items()
        if name in ENV_ALLOWLIST or name.startswith("LC_") or name in TOOLCHAIN_HOMES
    }
    search_path = [str(Path(sys.executable).parent), environ.get("PATH", os.defpath)]
    if venv is not None:
        search_path.insert(0, str(venv / "bin"))
        kept["VIRTUAL_ENV"] = str(venv)
    kept["PATH"] = os.pathsep.join(search_path)
    forbidden = {name.upper() for name in key_names}
    # ENV_FIXED last: ours, never from the parent (GIT_CONFIG_KEY_n would fail the KEY filter).
    return {name: value for name, value in kept.items() if not _forbidden(name, forbidden)} | ENV_FIXED


def _forbidden(name: str, key_names: set[str]) -> bool:
    upper = name.upper()
    return (
        upper in key_names
        or upper.startswith(_ENV_FORBIDDEN_PREFIXES)
        or any(word in upper for word in _ENV_FORBIDDEN_WORDS)
    )
