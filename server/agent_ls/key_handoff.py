"""API keys kept out of this process's environment block, where other processes of the user read them.

``/proc/<pid>/environ`` (Linux) and ``ps eww`` (macOS, the BSDs) show the environment a process
*started* with to every process of the same user; deleting a variable afterwards changes nothing
there. A command the agent runs without a sandbox (a ``conftest.py`` it wrote, run by ``pytest``)
could walk up its parents and read the server's key. So ``agent-ls serve`` and ``agent-ls run`` never
keep a key in that block. At their start (``cli.main``, before any other import), in this order:

1. ``receive``: when ``AGENT_LS_KEYS_FD=N`` is set, read a JSON object ``{name: value}`` from file
   descriptor N (a pipe), close it and drop the variable. An editor extension can hand its key over
   this way from the start (the VS Code extension does), so the key is never in any environment.
2. ``hand_over``: otherwise, when the environment holds variables named like secrets (``SECRET_WORDS``
   in the name, such as ``AGENT_LS_API_KEY`` or ``OPENAI_API_KEY``) or named by a provider's
   ``api_key_env`` in the user config, write them to a new pipe and execute this same command again
   (``os.execve``: the same process id, a new environment block) without them and with
   ``AGENT_LS_KEYS_FD`` naming the pipe; step 1 then reads them.
3. ``forbid_inspection``: on Linux, mark the process non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``), so
   processes of the same user (not root) can no longer read its memory (``/proc/<pid>/mem``, ptrace)
   or its ``environ`` at all.

The keys then live only in this process's memory, answered by ``settings.EnvSnapshot``; the
environment the process shows, and that every child inherits, has none. Not on Windows, where there
is no ``/proc`` and ``execve`` starts a new process. Stdlib only: this runs before anything is imported.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from collections.abc import Mapping

KEYS_FD_ENV = "AGENT_LS_KEYS_FD"
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
"""A variable whose upper-cased name holds one of these is handed over (``OPENAI_API_KEY``,
``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY``)."""
MAX_HANDOFF_BYTES = 60_000
"""What one pipe holds without a reader on every platform (Linux: 64 KiB); more is not handed over."""

_received: dict[str, str] = {}


def received() -> Mapping[str, str]:
    """The variables handed over at start (name → value); empty when there were none."""
    return _received


def secret_names(environ: Mapping[str, str], configured: set[str]) -> list[str]:
    """The names in ``environ`` to keep out of the environment block: named like a secret
    (``SECRET_WORDS``) or in ``configured`` (the ``api_key_env`` names of the user config)."""
    return [
        name
        for name, value in environ.items()
        if value
        and name != KEYS_FD_ENV
        and (name in configured or any(word in name.upper() for word in SECRET_WORDS))
    ]


def configured_key_names(environ: Mapping[str, str]) -> set[str]:
    """The ``api_key_env`` names of the user config's providers (``agent_ls.config`` finds the same file);
    empty when it cannot be read. Only the user config: a workspace may name key variables only when
    trusted, and then its names are read later, from the environment this module leaves."""
    directory = environ.get("AGENT_LS_CONFIG_DIR")
    if directory:
        path = os.path.join(os.path.expanduser(directory), "agent-ls.toml")
    else:
        import platformdirs  # the same place as config.user_config_file

        path = os.path.join(platformdirs.user_config_dir(), "agent-ls", "agent-ls.toml")
    try:
        with open(path, "rb") as file:
            providers = tomllib.load(file).get("providers")
    except (OSError, ValueError, RecursionError):
        return set()
    if not isinstance(providers, dict):
        return set()
    names = (table.get("api_key_env") for table in providers.values() if isinstance(table, dict))
    return {name for name in names if isinstance(name, str)}


def receive() -> bool:
    """Step 1: read the keys from ``AGENT_LS_KEYS_FD`` into ``received()``; True when it was set.

    A descriptor that cannot be read or does not hold a JSON object of strings is reported on stderr
    and ignored (the run then finds no key and says which variable to set).
    """
    fd_text = os.environ.pop(KEYS_FD_ENV, None)
    if fd_text is None:
        return False
    try:
        with os.fdopen(int(fd_text), "rb") as pipe:
            data = json.loads(pipe.read(MAX_HANDOFF_BYTES * 2))
    except (OSError, ValueError) as exc:
        print(
            f"agent-ls: the keys handed over on {KEYS_FD_ENV}={fd_text} cannot be read: {exc}",
            file=sys.stderr,
        )
        return True
    if isinstance(data, dict):
        _received.update({str(k): v for k, v in data.items() if isinstance(v, str)})
    return True


def hand_over(environ: Mapping[str, str] | None = None) -> None:
    """Step 2: re-execute this command without the secret variables, handing them (and any keys
    ``receive`` got) over a pipe.

    Returns only when there is nothing to hand over, on Windows, or when the values are too large for
    one pipe (``MAX_HANDOFF_BYTES``; then they stay, with a warning on stderr). Otherwise does not
    return: ``os.execve`` replaces this process.
    """
    environ = os.environ if environ is None else environ
    if sys.platform == "win32":
        return
    names = secret_names(environ, configured_key_names(environ))
    if not names:
        return
    payload = json.dumps({**_received, **{name: environ[name] for name in names}}).encode()
    if len(payload) > MAX_HANDOFF_BYTES:
        print(
            f"agent-ls: the secret variables ({', '.join(names)}) are too large to hand over; they stay in "
            "this process's environment",
            file=sys.stderr,
        )
        return
    read_end, write_end = os.pipe()
    os.write(write_end, payload)
    os.close(write_end)
    os.set_inheritable(read_end, True)
    clean = {name: value for name, value in environ.items() if name not in names}
    clean[KEYS_FD_ENV] = str(read_end)
    sys.stdout.flush()
    sys.stderr.flush()
    argv = list(sys.orig_argv)
    os.execve(sys.executable, [sys.executable, *argv[1:]], clean)


def forbid_inspection() -> None:
    """Step 3: on Linux, ``prctl(PR_SET_DUMPABLE, 0)``; nothing elsewhere or when it fails."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_dumpable = 4
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_dumpable, 0, 0, 0, 0)
    except (OSError, AttributeError):
        return


def protect_keys() -> None:
    """Steps 1 to 3 (module docstring), for ``agent-ls serve`` and ``agent-ls run``."""
    receive()
    hand_over()
    if _received:
        forbid_inspection()
