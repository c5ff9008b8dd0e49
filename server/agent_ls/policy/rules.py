"""Permission rules: what a rule is, how users write one, and how one matches.

A ``Rule`` is (key, pattern, verdict, source):

- key ``bash``: the pattern is a glob (``fnmatch``: ``*`` matches anything, spaces and ``/``
  included) matched against one whole normalized simple command (``SimpleCommand.normalized``:
  ``/bin/rm -rf x`` is ``rm -rf x``, ``timeout 5 git push`` is ``git push``; word boundaries below);
- keys ``read`` and ``edit``: the pattern is a gitignore-style pattern (``docs/**``, ``*.key``,
  ``/build``) matched against a workspace-relative POSIX path; ``read`` judges read_file, grep,
  list_files and paths named by shell commands, ``edit`` judges write_file, edit_file and shell output
  redirections;
- key ``mcp__<server>__<tool>`` (or ``mcp__<server>`` for all of a server's tools): no pattern.

Written forms (``parse_rule``), ours then Claude Code's (its settings.json ``permissions`` syntax):

- ``bash: git status*`` / ``Bash(git status*)``: a glob on the normalized command;
- ``bash: npm run test *`` / ``Bash(npm run test:*)``: ``:*`` at the end is a prefix match on a word
  boundary; ``Bash`` alone is ``bash: *``;
- ``read: /.env`` / ``Read(./.env)``: ``./`` anchors at the workspace root (Claude Code: the working
  directory, which is the root here); ``Read`` alone is ``read: **``;
- ``edit: src/**`` / ``Edit(src/**)``, ``Write(...)``, ``MultiEdit(...)``, ``NotebookEdit(...)``;
  ``write:`` is read as ``edit:``;
- ``mcp__srv__tool`` (one MCP tool), ``mcp__srv`` (all of a server's tools), in both forms.

Precedence (``judge``): among ALL the rules that match, from every source and in any order, deny >
ask > allow. No match is "ask" under ``FALLBACK_RULE``, which is not a rule: it is the only "ask"
that an "Always allow" approval may lift. This replaces the seed harness's "last matching rule wins",
which made exceptions depend on file order; Claude Code and Codex execpolicy also let the strictest
rule win.

Deny and ask rules also match the case-folded subject (``RM -rf x``, ``.GIT/hooks/x``): on a
case-insensitive file system those name the same program or file. File deny and ask rules also match
the path as Windows reads it (``secrets./x`` and ``secrets::$DATA`` are ``secrets/x`` there:
``workspace.windows_names``). Allow rules match exactly, so these readings can only make a verdict
stricter.

Word boundaries: joining argv by spaces makes ``find . -name "*.tmp -delete"`` read like ``find .
-name *.tmp -delete``. So a ``bash`` allow rule is matched against the command's quoted form
(``quoted_command``: a word holding a blank, a quote, a backslash or one of ``;&|<>()`` is quoted,
``find . -name '*.tmp -delete'``), which is the normalized form for every other command; deny and
ask rules are matched against both forms. The exact rules an "Always allow" writes
(``exact_bash_pattern``) are built from the quoted form, so they match that one argv only.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

# pathspec implements Git's wildmatch rules (a pattern without "/" matches in any directory, "**"
# spans directories, a leading "/" anchors), which fnmatch and PurePath.match do not.
import pathspec

from agent_ls.core.events import Verdict
from agent_ls.workspace.windows_names import may_read_differently, windows_reading

STRICTNESS: dict[Verdict, int] = {"allow": 0, "ask": 1, "deny": 2}
"""Order of verdicts; the highest wins when several apply."""

FALLBACK_RULE = "fallback: no rule matches"
BUILT_IN = "built-in"
FILE_KEYS = ("read", "edit")

# Our form: "bash: git status*". Claude Code's: "Bash(npm run test:*)", "Read", "mcp__srv__tool".
_OURS = re.compile(r"(?i)(bash|read|edit|write)\s*:(.*)", re.DOTALL)
_CLAUDE = re.compile(r"([A-Za-z]+)(?:\((.*)\))?", re.DOTALL)
_MCP = re.compile(r"mcp__[A-Za-z0-9_-]+?(?:__[A-Za-z0-9_.-]+)?")
_CLAUDE_TOOLS = {
    "Bash": "bash",
    "Read": "read",
    "Edit": "edit",
    "Write": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
}


class RuleSyntaxError(ValueError):
    """A rule string that cannot be read; the message says how to write it (for a config diagnostic)."""


@dataclass(frozen=True)
class Rule:
    """One permission rule.

    Attributes:
        key: ``bash``, ``read``, ``edit`` or ``mcp__<server>[__<tool>]``.
        pattern: a glob on a normalized command (``bash``), a gitignore-style pattern on a
            workspace-relative path (``read``, ``edit``), ``*`` for MCP keys.
        verdict: what a match means.
        source: where the rule comes from, for messages: ``built-in``, ``user config``,
            ``workspace agent-ls.toml``, ``editor settings``.
    """

    key: str
    pattern: str
    verdict: Verdict
    source: str = BUILT_IN

    @property
    def label(self) -> str:
        """How events and messages name the rule: ``bash: curl * (workspace agent-ls.toml)``."""
        written = self.key if self.key.startswith("mcp__") else f"{self.key}: {self.pattern}"
        return f"{written} ({self.source})"

    @property
    def text(self) -> str:
        """The rule in our written form, without source or verdict: ``bash: curl *``."""
        return self.key if self.key.startswith("mcp__") else f"{self.key}: {self.pattern}"

    def matches(self, subject: str, quoted: str | None = None) -> bool:
        """True when the rule applies to ``subject`` (a normalized command, a relative path, a tool name).

        Args:
            subject: what is judged.
            quoted: for ``bash``, the command's quoted form (``quoted_command``); an allow rule is
                matched against it instead of ``subject``, a deny or ask rule against both.

        A ``bash`` glob also matches the subject plus a space, so ``rm *`` catches a bare ``rm``.
        Deny and ask rules also match the case-folded subject (module docstring). An allow glob whose
        trailing ``*`` is glued to a word allows that word only as a whole (``ls*`` allows ``ls`` and
        ``ls -la``, not ``lsof``; ``git diff*`` not ``git diffall``, an alias): corpus sh86's hazard,
        closed in the safe direction only.
        """
        forms = [subject] if quoted is None else [quoted] if self.verdict == "allow" else [subject, quoted]
        pairs = [(form, self.pattern) for form in forms]
        if self.verdict != "allow":
            pairs += [(form.casefold(), self.pattern.casefold()) for form in forms]
        if self.key == "bash":
            if self.verdict == "allow":
                pairs = [(s, p) for s, pattern in pairs for p in _word_bounded(pattern)]
            return any(fnmatchcase(s, p) or fnmatchcase(s + " ", p) for s, p in pairs)
        if self.key in FILE_KEYS:
            if self.verdict != "allow":
                pairs += [(windows_reading(s), p) for s, p in pairs if may_read_differently(s)]
            return self.pattern == "**" or any(_spec(p).match_file(s) for s, p in pairs)
        if self.key.count("__") == 1:  # mcp__<server>: every tool of that server
            return subject == self.key or subject.startswith(self.key + "__")
        return subject == self.key  # mcp__<server>__<tool>: that tool, not a "<tool>__x" of the server


def _word_bounded(pattern: str) -> tuple[str, ...]:
    """``pattern`` as allow globs that end on a word boundary: ``ls*`` -> (``ls``, ``ls *``)."""
    if pattern.endswith("*") and len(pattern) > 1 and pattern[-2] not in " *":
        stem = pattern[:-1]
        return (stem, f"{stem} *")
    return (pattern,)


@functools.lru_cache(maxsize=1024)
def _spec(pattern: str) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines([pattern])


def parse_rule(text: str, verdict: Verdict, source: str) -> Rule:
    """Read one rule string in our form or Claude Code's (module docstring).

    Args:
        text: ``bash: git status*``, ``Bash(npm run test:*)``, ``Read(./.env)``, ``mcp__srv__tool``...
        verdict: the list it came from (``allow``, ``ask`` or ``deny``).
        source: where it came from, for messages.

    Raises:
        RuleSyntaxError: the text is not a rule; the message shows the accepted forms.
    """
    written = text.strip()
    if _MCP.fullmatch(written):
        return Rule(written, "*", verdict, source)
    ours = _OURS.fullmatch(written)
    if ours is not None:
        key = ours[1].lower().replace("write", "edit")
        return Rule(key, _pattern(key, ours[2].strip(), written), verdict, source)
    claude = _CLAUDE.fullmatch(written)
    if claude is not None and claude[1] in _CLAUDE_TOOLS:
        key = _CLAUDE_TOOLS[claude[1]]
        if claude[2] is None:
            return Rule(key, "*" if key == "bash" else "**", verdict, source)
        spec = claude[2].strip()
        if key == "bash" and spec.endswith(":*"):
            spec = spec[:-2].rstrip() + " *"  # legacy prefix form: "npm run test" and "npm run test ..."
        return Rule(key, _pattern(key, spec, written), verdict, source)
    known = ", ".join(_CLAUDE_TOOLS)
    raise RuleSyntaxError(
        f"{written!r} is not a rule: write 'bash: <glob>', 'read: <path pattern>', 'edit: <path pattern>', "
        f"'mcp__<server>__<tool>', or Claude Code's Tool(specifier) with Tool one of {known}"
    )


def _pattern(key: str, pattern: str, written: str) -> str:
    """The stored pattern for ``key``; raises ``RuleSyntaxError`` for one that can never work."""
    if not pattern:
        raise RuleSyntaxError(f"{written!r} has an empty pattern; use '*' (bash) or '**' (files) for all")
    if key == "bash":
        return pattern
    if pattern.startswith(("~", "//")):
        raise RuleSyntaxError(
            f"{written!r} names a path outside the workspace: file rules match workspace-relative paths, "
            "and paths outside the workspace are refused whatever the rules say"
        )
    if pattern.startswith("!"):
        raise RuleSyntaxError(
            f"{written!r}: a rule cannot negate ('!'); deny > ask > allow whatever the order, so write the "
            "rule that should win instead"
        )
    if pattern.startswith("./"):
        pattern = "/" + pattern[2:]  # Claude Code: relative to the working directory, the workspace root
    try:
        _spec(pattern)
    except (ValueError, TypeError) as exc:  # pathspec's GitWildMatchPatternError is a ValueError
        raise RuleSyntaxError(f"{written!r} is not a valid path pattern: {exc}") from None
    return pattern


def parse_rules(lists: Iterable[tuple[Verdict, Sequence[str]]], source: str) -> tuple[list[Rule], list[str]]:
    """Rules from ``(verdict, strings)`` lists; the strings that are not rules are reported, not raised.

    Returns:
        The rules, in the order given, and one message per string that was skipped.
    """
    rules: list[Rule] = []
    problems: list[str] = []
    for verdict, texts in lists:
        for text in texts:
            try:
                rules.append(parse_rule(text, verdict, source))
            except RuleSyntaxError as exc:
                problems.append(str(exc))
    return rules, problems


# A word that must be quoted to keep its boundaries in a joined command: empty, or holding a blank, a
# quote, a backslash or a shell operator character.
_NEEDS_QUOTES = re.compile(r"""^$|[\s'"\\;&|<>()]""")


def quoted_command(argv: Sequence[str]) -> str:
    """``argv`` joined by spaces, the words that need it quoted as ``shlex.quote`` does (module docstring).

    ``("find", ".", "-name", "*.tmp -delete")`` is ``find . -name '*.tmp -delete'``; a command whose
    words hold no blank, quote, backslash or ``;&|<>()`` reads as its normalized form (``ls *.py``).
    ``shlex.split`` gives ``argv`` back, so two different argvs never share a quoted form.
    """
    return " ".join(shlex.quote(word) if _NEEDS_QUOTES.search(word) else word for word in argv)


def exact_bash_pattern(command: str) -> str:
    """A ``bash`` glob that matches ``command`` and nothing else (``[``, ``*`` and ``?`` escaped)."""
    return re.sub(r"([\[*?])", r"[\1]", command)


def exact_path_pattern(rel: str) -> str:
    """A gitignore-style pattern that matches the workspace-relative path ``rel`` only (anchored)."""
    escaped = re.sub(r"([\\\[*?])", r"\\\1", rel)
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    return "/" + escaped


def _bash(pattern: str, verdict: Verdict) -> Rule:
    return Rule("bash", pattern, verdict)


DEFAULT_BASH_RULES: tuple[Rule, ...] = (
    _bash("ls*", "allow"),
    _bash("cat *", "allow"),
    _bash("grep *", "allow"),
    _bash("git status*", "allow"),
    _bash("git diff*", "allow"),
    _bash("pytest*", "allow"),
    _bash("rm *", "deny"),
    _bash("sudo *", "deny"),
    _bash("curl *", "deny"),
    _bash("wget *", "deny"),
    _bash("git push*", "deny"),
)
"""The seed policy, exactly (the table of ``shared/corpus/shell-commands/README.md``).

Corpus sh86's hazard (``ls*`` has no space, so as a plain glob it also allows ``lsof`` and ``lsblk``)
is closed by ``Rule.matches``: an allow glob glued to a word allows that word only as a whole.
"""

DEFAULT_FILE_RULES: tuple[Rule, ...] = (
    Rule("read", "**", "allow"),
    Rule("edit", "**", "allow"),
    # Hooks and config in a .git directory (a submodule's too) run code on the user's next git
    # command, and a reviewer rarely reads them.
    Rule("edit", ".git", "deny"),
)
"""Reads and edits inside the workspace are allowed (edits are proposals the user reviews), except
edits of a ``.git`` directory. Paths outside the workspace and secret files never reach these rules:
the path policy refuses them first."""

BUILTIN_RULES: tuple[Rule, ...] = DEFAULT_BASH_RULES + DEFAULT_FILE_RULES

WORKSPACE_MODE_BASH = frozenset({"ls*", "cat *", "grep *", "git status*", "git diff*"})
"""The patterns of the built-in bash allow rules that still apply in ``shell.mode = "workspace"``,
where a command's writes are real: the read-only ones. ``pytest*`` is not among them: tests run the
project's code (``conftest.py``) and pytest writes files (``--junitxml``)."""


@dataclass(frozen=True)
class Judgement:
    """One verdict with the label of what decided it and a one-line reason.

    Attributes:
        verdict: allow, ask or deny.
        rule: a rule's label (``bash: rm * (built-in)``), ``FALLBACK_RULE``, or the label of an engine
            check (``paths: secret file``, ``fallback: cannot read: ...``).
        reason: one line for the user (``no rule matches "make build"``).
        liftable: for an "ask", True when an "Always allow" may lift it: only the fallback ask is.
    """

    verdict: Verdict
    rule: str
    reason: str
    liftable: bool = False


def judge(key: str, subject: str, rules: Iterable[Rule], *, quoted: str | None = None) -> Judgement:
    """The verdict of the ``key`` rules on ``subject``: the strictest match, else the fallback ask.

    Args:
        key: ``bash``, ``read``, ``edit`` or an MCP tool name (``mcp__srv__tool``).
        subject: a normalized command, a workspace-relative path, or the MCP tool name.
        rules: every rule of every source, in any order (the result does not depend on it except for
            which of several equally strict labels is named: the first).
        quoted: for ``bash``, the command's quoted form (``Rule.matches``).
    """
    mcp = key.startswith("mcp__")
    matching = [
        r
        for r in rules
        if (r.key.startswith("mcp__") if mcp else r.key == key) and r.matches(subject, quoted)
    ]
    if not matching:
        return Judgement("ask", FALLBACK_RULE, f'no rule matches "{subject}"', liftable=True)
    rule = max(matching, key=lambda r: STRICTNESS[r.verdict])
    return Judgement(rule.verdict, rule.label, f'"{subject}" matches {rule.label}')


def strictest(judgements: Iterable[Judgement]) -> Judgement:
    """The first of the strictest judgements, an unliftable one before a liftable one.

    Raises:
        ValueError: ``judgements`` is empty.
    """
    return max(judgements, key=lambda j: (STRICTNESS[j.verdict], not j.liftable))
