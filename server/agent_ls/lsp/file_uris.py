"""File URIs as paths, for every handler of the language server: the one place ``lsp/`` converts them.

``to_fs_path`` is pygls' (``pygls.uris.to_fs_path``: RFC 8089 ``file:`` URIs, percent-decoded), except
that a URI naming no usable path gives None rather than a string every file call would then refuse
with a ``ValueError``: a path holding NUL (``file:///a%00b``; no file system allows it), or one pygls
cannot parse. Handlers already treat None as "not a file" (an ``untitled:`` buffer).

``unusable_file_uri`` finds such a URI anywhere in a command's argument, so that ``agent.*`` commands
answer InvalidParams (-32602) naming the field (``command_args.parse_params``), not an internal error.
"""

from __future__ import annotations

from pygls.uris import to_fs_path as _pygls_to_fs_path

MAX_DEPTH = 8
"""How deep ``unusable_file_uri`` looks into an argument (ours nest two levels)."""


def to_fs_path(uri: str) -> str | None:
    """The file system path of the file URI ``uri``; None when it is not a file URI or names no usable
    path (module docstring)."""
    try:
        fs = _pygls_to_fs_path(uri)
    except (ValueError, TypeError, IndexError):
        return None
    if fs is None or "\x00" in fs:
        return None
    return fs


def unusable_file_uri(value: object, where: str = "", depth: int = 0) -> str | None:
    """``<field>: <why>`` for the first ``file:`` URI in ``value`` (a decoded JSON value: strings in
    objects and arrays, fields dotted, items by index) that names no usable path; None when there is none."""
    if isinstance(value, str):
        if value[:5].lower() == "file:" and to_fs_path(value) is None:
            field = where or "argument"
            why = "a NUL character, %00, cannot be in a path"
            return f"{field}: {value[:80]!r} is not a usable file URI ({why})"
        return None
    if depth >= MAX_DEPTH:
        return None
    if isinstance(value, dict):
        items = [(f"{where}.{key}" if where else str(key), item) for key, item in value.items()]
    elif isinstance(value, list):
        items = [(f"{where}.{index}" if where else str(index), item) for index, item in enumerate(value)]
    else:
        return None
    for field, item in items:
        if (problem := unusable_file_uri(item, field, depth + 1)) is not None:
            return problem
    return None
