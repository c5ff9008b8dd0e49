"""ripgrep over a tree (the workspace, or the pending texts), read as a JSON stream into bounded hits.

One search (``run_ripgrep``), in order:

1. ripgrep runs through ``processes.execute`` (killed with its group on cancel or timeout), outside the
   sandbox (``tree_search`` says why), with ``--json``, so each match comes with its line number and
   the byte offsets of every submatch, in the directory and with the ignore flags and paths of a
   ``ripgrep_scope.RipgrepScope``;
2. ``RipgrepStream`` reads that stream as it arrives. A path the caller does not ``keep`` (a secret, a
   file whose pending text is searched apart, one outside the scope) is dropped before it is counted.
   Per matching line it keeps a ``SearchHit``: the
   whole line when it has at most ``max_line_chars`` characters, else one window per match (``window``
   characters each side; matches inside a window share it), columns counted in code points. A file
   keeps its first ``MAX_HITS_PER_FILE`` hits and the search the first ``MAX_HITS`` by path, line and
   column (the rest are only counted), whatever order ripgrep's threads finish the files in,
   and a JSON line over ``MAX_JSON_LINE_BYTES`` (a matching line of many MiB) is skipped with a note;
   so memory stays bounded whatever the files hold;
3. ripgrep's own errors (the text between the JSON lines) become one line for the model; a ripgrep seen
   waiting on a FIFO named like an ignore file, which it would do forever, is stopped and the model
   reads which (``fifo_waits``).

A line ripgrep gives as bytes (not UTF-8: a legacy encoding) is decoded by ``decode_line`` (the file's
encoding). Paths are workspace-relative, POSIX. ``merged`` joins the results of two searches over
disjoint files (the disk's and the pending texts') as one search over both would have given them.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_ls.core.errors import ToolError
from agent_ls.core.file_views import SearchHit, SearchResult
from agent_ls.workspace.dependency_folders import CATALOGUE
from agent_ls.workspace.fifo_waits import WaitsOnFifo, unless_waiting_on_fifo
from agent_ls.workspace.listing import names_hidden
from agent_ls.workspace.processes import execute
from agent_ls.workspace.ripgrep_scope import RipgrepScope

SEARCH_TIMEOUT_S = 50.0
"""ripgrep gets less than the registry's 60 s, so it is stopped here and the model reads why."""
MAX_HITS_PER_FILE = 50
MAX_HITS = 2_000
MAX_JSON_LINE_BYTES = 8 * 1024 * 1024
_MAX_ERROR_BYTES = 4096
_MAX_WINDOW_SPANS = 6  # a window widened by nearby matches stays within this many windows' width
_LINE_NUMBER = re.compile(rb'"line_number":\s*(\d+)')
_MATCH_START = b'{"type":"match","data":{"path":{"text":'
# A path is {"text": ...} or, when it is not UTF-8, {"bytes": base64} (ripgrep's "arbitrary data").
_PATH_FIELD = re.compile(rb'"path":\s*\{\s*"(text|bytes)":\s*"((?:[^"\\]|\\.)*)"')

SKIPPED_DIRS = (
    ".git",
    # Tool caches (compiled bytecode, test caches) that commands recreate: never searched.
    "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis",
    *sorted(
        entry.name
        for entry in CATALOGUE
        if entry.linked and entry.name != "*" and not (entry.inside or entry.holds or entry.beside)
    ),
)  # fmt: skip
"""Directories never searched, ignored or not, unless named as the search's path: ``.git``, tool caches
and the dependency trees tools install (``dependency_folders``: ``node_modules``, ``.venv``), which the
shadow copy never held either, so grep gives what it gave when it searched the copy."""
SKIPPED_GLOBS = tuple(f"--glob=!{name}/" for name in SKIPPED_DIRS)

LineDecoder = Callable[[str, bytes], str]
"""Decodes a line ripgrep could not give as UTF-8: (path, raw bytes) to text."""
PathFilter = Callable[[str], bool]
"""Whether the hits of a workspace-relative path belong to the result."""


@dataclass(frozen=True)
class SearchSpec:
    """What to search: ``pattern`` (ripgrep regex) under ``rel`` (``.`` for all), files matching ``glob``."""

    pattern: str
    rel: str
    glob: str | None


async def run_ripgrep(
    rg: str,
    spec: SearchSpec,
    *,
    scope: RipgrepScope,
    env: dict[str, str],
    workspace_root: Path,
    max_line_chars: int,
    window: int,
    decode_line: LineDecoder,
    keep: PathFilter | None = None,
    skipped: Sequence[str] = SKIPPED_GLOBS,
) -> SearchResult:
    """Search ``scope`` (module docstring); ``spec.rel`` is already in the scope's paths.

    Args:
        keep: the paths whose hits count (every path when None); called once per matching file.
        skipped: ripgrep globs of the directories never searched (``SKIPPED_GLOBS``; none for the
            pending texts, which the copy held wherever they were).

    Raises:
        ToolError: an invalid regex (the message quotes ripgrep's reason), another ripgrep failure, or
            a search over ``SEARCH_TIMEOUT_S`` seconds.
    """
    # No --sort: it would search on one thread. The stream keeps the same hits in any order (replays
    # and tests see the same output). --no-messages: unreadable files are skipped silently, so the
    # output holds matches or one error. --no-config: no RIPGREP_CONFIG_PATH file adds options.
    args = [rg, "--json", "--no-messages", "--no-config"]
    if spec.glob:
        args += ["--glob", spec.glob]
        if names_hidden(spec.glob):
            args.append("--hidden")
    # Later globs win over earlier ones: the user's glob cannot bring these back.
    args += [*skipped, "--regexp", spec.pattern, *scope.args]
    stream = RipgrepStream(
        max_line_chars=max_line_chars, window=window, decode_line=decode_line, prefix=scope.prefix, keep=keep
    )
    running = execute(
        args,
        cwd=scope.cwd,
        env=env,
        sandbox=None,  # ripgrep only reads, and what it may read is decided here (tree_search)
        workspace_root=workspace_root,
        timeout_s=SEARCH_TIMEOUT_S,
        head_chars=0,
        tail_chars=0,
        sink=stream,
        guard_orphans=False,  # ripgrep starts no children, and ends with its walk or at a closed pipe
    )
    try:
        result = await unless_waiting_on_fifo(running, args, scope.cwd)
    except WaitsOnFifo as exc:
        raise ToolError(_fifo_error([scope.prefix + path for path in exc.fifos])) from None
    found = stream.result()
    if result.timed_out:
        raise ToolError(f"search timed out after {SEARCH_TIMEOUT_S:g} s; narrow it with path or glob")
    if result.exit_code == 2 and not found.counts and stream.errors.strip():
        raise ToolError(_search_error(spec.pattern, stream.errors))
    return found


def merged(first: SearchResult, second: SearchResult) -> SearchResult:
    """One result from two searches over disjoint sets of files, as one search over both would give it:
    hits by path, line and column, at most ``MAX_HITS`` of them."""
    if not second.counts and not second.unreadable:
        return first
    if not first.counts and not first.unreadable:
        return second
    hits = sorted((*first.hits, *second.hits), key=lambda h: (h.path, h.line, h.column))[:MAX_HITS]
    counts = dict(sorted({**first.counts, **second.counts}.items()))
    return SearchResult(tuple(hits), counts, (*first.unreadable, *second.unreadable))


class RipgrepStream:
    """Reads ripgrep's ``--json`` output chunk by chunk (an ``OutputSink``); see the module docstring.

    Args:
        prefix: prepended to ripgrep's paths (``ripgrep_scope.RipgrepScope.prefix``).
        keep: the paths whose hits count (after the prefix); every path when None.
    """

    def __init__(
        self,
        *,
        max_line_chars: int,
        window: int,
        decode_line: LineDecoder,
        prefix: str = "",
        keep: PathFilter | None = None,
    ) -> None:
        self._max_line_chars = max_line_chars
        self._window = window
        self._decode_line = decode_line
        self._prefix = prefix
        self._keep = keep
        self._kept_paths: dict[str, bool] = {}
        self._buffer = bytearray()
        self._skipping = False
        self._hits: list[SearchHit] = []
        self._kept: dict[str, int] = {}
        self._last: tuple[str, int, int] | None = None  # hits past this one are only counted
        self._quick_raw = b""  # the last path read by _only_counted, as JSON gives it, and as text
        self._quick_path = ""
        self._counts: dict[str, int] = {}
        self._unreadable: list[str] = []
        self._errors = bytearray()
        self._long_path: str | None = None

    @property
    def errors(self) -> str:
        """What ripgrep printed that is not JSON (its error messages), at most a few KiB."""
        return self._errors.decode("utf-8", "replace")

    def feed(self, chunk: bytes) -> None:
        pieces = chunk.split(b"\n")  # one C call: the lines of a busy search come by the hundred thousand
        last = len(pieces) - 1
        for index, piece in enumerate(pieces):
            complete = index < last
            if not self._skipping:
                if complete and not self._buffer and len(piece) <= MAX_JSON_LINE_BYTES:
                    self._line(piece)
                    continue
                self._buffer += piece
                if len(self._buffer) > MAX_JSON_LINE_BYTES:
                    self._too_long()
            if not complete:
                return
            if self._skipping:
                self._skipping = False
                self._skipped_end(piece[-4096:])
            else:
                self._line(bytes(self._buffer))
            self._buffer.clear()

    def result(self) -> SearchResult:
        """The hits kept (by path, line, column) and the counts, once the stream ended."""
        if self._buffer:
            self._line(bytes(self._buffer))
            self._buffer.clear()
        self._compact()
        return SearchResult(
            tuple(self._hits), dict(sorted(self._counts.items())), tuple(sorted(self._unreadable))
        )

    # -- internals -------------------------------------------------------------------------------

    def _too_long(self) -> None:
        found = _PATH_FIELD.search(self._buffer[:8192])
        path = _long_line_path(found.group(1), found.group(2)) if found else None
        self._long_path = None if path is None else self._prefix + path.removeprefix("./")
        self._buffer.clear()
        self._skipping = True

    def _skipped_end(self, tail: bytes) -> None:
        # A path that cannot be read is dropped like one the caller does not keep: counting it would
        # tell whether the pattern matched a secret's line.
        path = self._long_path
        if path is None or not self._wanted(path):
            return
        numbers = _LINE_NUMBER.findall(tail)
        where = f"{path}:{int(numbers[-1])}" if numbers else path
        self._counts[path] = self._counts.get(path, 0) + 1
        self._unreadable.append(
            f"{where}: a matching line over {MAX_JSON_LINE_BYTES // (1024 * 1024)} MiB; "
            "read it in pieces with read_file (column)"
        )

    def _line(self, raw: bytes) -> None:
        if not raw.startswith(b"{"):
            if len(self._errors) < _MAX_ERROR_BYTES:
                self._errors += raw[: _MAX_ERROR_BYTES - len(self._errors)] + b"\n"
            return
        if raw.startswith(b'{"type":"') and not raw.startswith(b'{"type":"match"'):
            return  # begin, end, context and summary messages (ripgrep's compact JSON) carry nothing kept
        if self._only_counted(raw):
            return
        try:
            message = json.loads(raw)
        except ValueError:
            return
        if not isinstance(message, dict) or message.get("type") != "match":
            return
        data = message.get("data")
        if isinstance(data, dict):
            self._match(data)

    def _only_counted(self, raw: bytes) -> bool:
        """Count a short match line of a file none of whose hits can be kept any more without parsing it.

        A grep for a common word yields hundreds of thousands of lines; parsing each would cost many
        times what ripgrep spends finding them. A JSON line no longer than ``max_line_chars`` holds a
        line of at most that many characters (escaping only lengthens it): one hit. False when the
        line must be parsed.
        """
        if len(raw) > self._max_line_chars or not raw.startswith(_MATCH_START):
            return False
        start = len(_MATCH_START) + 1  # past the path's opening quote
        end = raw.find(b'"', start)
        escaped = raw[start:end]
        if end < 0 or b"\\" in escaped:
            return False  # an escaped character: the full parse reads it
        if escaped != self._quick_raw:  # a file's lines come together: one decode per file
            self._quick_raw = escaped
            self._quick_path = self._prefix + escaped.decode("utf-8", "surrogateescape").removeprefix("./")
        path = self._quick_path
        if not self._wanted(path):
            return True
        beyond = self._last is not None and path > self._last[0]
        if not beyond and self._kept.get(path, 0) < MAX_HITS_PER_FILE:
            return False
        self._counts[path] = self._counts.get(path, 0) + 1
        return True

    def _match(self, data: dict[str, Any]) -> None:
        path = _json_text(data.get("path"), lambda raw: raw.decode("utf-8", "surrogateescape"))
        if path is None:
            return
        path = self._prefix + path.removeprefix("./")
        if not self._wanted(path):
            return
        line_number = data.get("line_number")
        lines = data.get("lines")
        if not isinstance(line_number, int) or not isinstance(lines, dict):
            return
        raw = _line_bytes(lines)
        if raw is None:
            return
        if "text" in lines:
            text = raw.decode("utf-8", "replace")

            def decode(piece: bytes) -> str:
                return piece.decode("utf-8", "replace")
        else:
            text = self._decode_line(path, raw)

            def decode(piece: bytes) -> str:
                return self._decode_line(path, piece)

        raw_submatches = data.get("submatches")
        submatches = raw_submatches if isinstance(raw_submatches, list) else []
        valid = [s for s in submatches if isinstance(s, dict) and isinstance(s.get("start"), int)]
        starts = sorted(s["start"] for s in valid)
        ends = {s["start"]: s.get("end") for s in valid}
        for hit in self._hits_of(path, line_number, raw, text, starts, ends, decode):
            self._counts[path] = self._counts.get(path, 0) + 1
            if self._kept.get(path, 0) < MAX_HITS_PER_FILE:
                self._kept[path] = self._kept.get(path, 0) + 1
                self._offer(hit)

    def _offer(self, hit: SearchHit) -> None:
        """Keep ``hit`` if it may be among the first ``MAX_HITS`` (by path, line, column) of the search.

        ripgrep gives a file's hits together and in line order, but the files in any order. Up to twice
        ``MAX_HITS`` are held; then only the first ``MAX_HITS`` stay, and a later hit past the last one
        kept cannot enter any more."""
        key = (hit.path, hit.line, hit.column)
        if self._last is not None and key >= self._last:
            return
        self._hits.append(hit)
        if len(self._hits) >= 2 * MAX_HITS:
            self._compact()

    def _compact(self) -> None:
        self._hits.sort(key=lambda h: (h.path, h.line, h.column))
        if len(self._hits) >= MAX_HITS:
            del self._hits[MAX_HITS:]
            last = self._hits[-1]
            self._last = (last.path, last.line, last.column)

    def _wanted(self, path: str) -> bool:
        if self._keep is None:
            return True
        known = self._kept_paths.get(path)
        if known is None:
            known = self._kept_paths[path] = self._keep(path)
        return known

    def _hits_of(
        self,
        path: str,
        number: int,
        raw: bytes,
        text: str,
        starts: Sequence[int],
        ends: dict[int, Any],
        decode: Callable[[bytes], str],
    ) -> list[SearchHit]:
        line = _without_ending(text)
        columns = _char_columns(raw, starts, decode, len(line))
        if len(line) <= self._max_line_chars:
            first = columns[0] if columns else 0
            return [SearchHit(path, number, first + 1, line, 1, len(line))]
        windows: list[list[int]] = []  # [match column, lo, hi], 0-based code points
        for start_byte, column in zip(starts, columns, strict=True):
            end_byte = ends.get(start_byte)
            match_chars = 1
            if isinstance(end_byte, int) and end_byte > start_byte:
                match_chars = len(decode(raw[start_byte:end_byte]))
            hi = min(len(line), column + min(match_chars, self._window * 2) + self._window)
            widest = _MAX_WINDOW_SPANS * self._window
            if windows and column < windows[-1][2] and hi - windows[-1][1] <= widest:
                windows[-1][2] = max(windows[-1][2], hi)  # a match inside the window widens it
            else:
                lo = max(0, column - self._window, windows[-1][2] if windows else 0)
                windows.append([column, lo, hi])
        return [SearchHit(path, number, col + 1, line[lo:hi], lo + 1, len(line)) for col, lo, hi in windows]


def _char_columns(
    raw: bytes, starts: Sequence[int], decode: Callable[[bytes], str], length: int
) -> list[int]:
    """The 0-based code-point columns of the byte offsets ``starts`` (ascending) in the line, decoding
    only the bytes between one offset and the next."""
    columns: list[int] = []
    byte_pos = char_pos = 0
    for start in starts:
        char_pos += len(decode(raw[byte_pos:start]))
        byte_pos = start
        columns.append(min(char_pos, length))
    return columns


def _without_ending(text: str) -> str:
    if text.endswith("\n"):
        text = text[:-1]
    return text.removesuffix("\r")


def _line_bytes(lines: dict[str, Any]) -> bytes | None:
    if isinstance(lines.get("text"), str):
        return str(lines["text"]).encode("utf-8", "surrogateescape")
    if isinstance(lines.get("bytes"), str):
        try:
            return base64.b64decode(lines["bytes"])
        except ValueError:
            return None
    return None


def _json_text(value: Any, decode: Callable[[bytes], str]) -> str | None:
    """A ripgrep "arbitrary data" object: ``{"text": ...}`` or ``{"bytes": base64}``."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("text"), str):
        return str(value["text"])
    if isinstance(value.get("bytes"), str):
        try:
            return decode(base64.b64decode(value["bytes"]))
        except ValueError:
            return None
    return None


def _long_line_path(kind: bytes, value: bytes) -> str | None:
    """The path of a match line too long to parse, from its JSON field (``kind`` ``text`` or ``bytes``,
    ``value`` as escaped in the JSON), decoded as ``_match`` decodes it; None when it cannot be read."""
    if kind == b"text":
        return _json_string(value)
    try:
        return base64.b64decode(value, validate=True).decode("utf-8", "surrogateescape")
    except ValueError:
        return None


def _json_string(escaped: bytes) -> str:
    try:
        value = json.loads(b'"' + escaped + b'"')
    except ValueError:
        return escaped.decode("utf-8", "replace")
    return str(value)


def _fifo_error(fifos: Sequence[str]) -> str:
    """The model's line when ripgrep was stopped waiting on a FIFO (``fifo_waits``)."""
    named = ", ".join(fifos[:5]) if fifos else "a .gitignore, .ignore or .rgignore"
    return (
        f"search stopped: {named} is a FIFO (named pipe), and ripgrep would wait forever to read its "
        "ignore rules; search a path without it, or ask the user to remove it"
    )


def _search_error(pattern: str, output: str) -> str:
    """One line for the model from ripgrep's error output (exit code 2, nothing found)."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    if any("regex parse error" in line for line in lines):
        reason = next((line for line in reversed(lines) if line.startswith("error:")), "invalid syntax")
        return (
            f"invalid regex {pattern!r}: {reason.removeprefix('error:').strip()}; "
            "fix the pattern or escape special characters with a backslash"
        )
    return f"search failed: {lines[0].removeprefix('rg: ') if lines else 'ripgrep exited with code 2'}"
