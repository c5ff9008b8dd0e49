""" "Always allow": the user's approval written as allow rules into the user config file.

``append_allow_rules`` adds rule strings to ``permissions.allow`` of ``<user config dir>/agent-ls/
agent-ls.toml`` (``config.user_config_file``), creating the file, the table or the array when
missing, and leaving everything else in the file as the user wrote it. Rules already present are not
added twice. The file is replaced atomically (a temporary file in the same directory, then
``os.replace``), so a crash never leaves half a config.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path


def append_allow_rules(user_file: Path, rules: Sequence[str]) -> None:
    """Add ``rules`` (our written form: ``bash: make lint``) to ``permissions.allow`` in ``user_file``.

    Raises:
        OSError: the file or its directory cannot be read or written.
        ValueError: the file is not valid TOML (``tomlkit.exceptions.ParseError``), or its
            ``permissions`` / ``permissions.allow`` is not a table / an array; the file is left as it is.
    """
    # tomlkit edits TOML in place, keeping comments, blank lines, key order and quoting; tomllib only reads,
    # and dumping a parsed dict would drop the user's comments. Imported here: only "always" writes a rule.
    import tomlkit
    from tomlkit.items import Array, Table

    try:
        text = user_file.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        text = ""
    document = tomlkit.parse(text)
    permissions = document.get("permissions")
    if permissions is None:
        permissions = tomlkit.table()
        document["permissions"] = permissions
    if not isinstance(permissions, Table):
        raise ValueError(f"permissions in {user_file} is not a table")
    allow = permissions.get("allow")
    if allow is None:
        allow = tomlkit.array()
        permissions["allow"] = allow
    if not isinstance(allow, Array):
        raise ValueError(f"permissions.allow in {user_file} is not an array")
    for rule in rules:
        if rule not in allow:
            allow.append(rule)
    _write_atomically(user_file, tomlkit.dumps(document))


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
