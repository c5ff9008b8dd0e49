"""git command lines: global options removed, and why a git command can do more than its name says.

``git_normalize`` turns ``git -C . --no-pager status -s`` into ``git status -s`` so that rules match the
subcommand, and lists the risks that make the command "never auto-allowed" whatever the rules say
(``git diff*`` glob-matches ``git difftool``; ``git status*`` matches ``git --git-dir=x status``):

- global options that change configuration or run a pager (``-c``, ``--config-env``, ``-p``,
  ``--exec-path``), or that point git at another repository, whose configuration (``core.fsmonitor``,
  ``diff.external``, ``core.pager``...) runs programs: ``--git-dir``, ``--work-tree``, ``--bare``,
  ``-C DIR`` unless ``DIR`` is ``.`` (git's discovery starts there anyway; the engine follows ``cd``);
- subcommands that run other programs or servers by design (``difftool``, ``mergetool``,
  ``filter-branch``, ``send-email``, ``daemon``, ``instaweb``, ``submodule foreach``, ``bisect run``...);
- subcommand options that run a program or write a file (``--ext-diff``, ``--textconv``,
  ``--upload-pack``, ``--receive-pack``, ``--exec``, ``rebase -x``, ``grep -O``, ``clone -u/-c``,
  ``--template``, ``--separate-git-dir``, ``--output``, ``archive -o/--remote``...), long options
  matched as abbreviations too, as git's parse-options accepts them;
- ``ext::``/``fd::`` transports (a command as the remote);
- ``git config`` writes, ``--file``/``--blob`` and keys whose value is a program to run.

Sources: git 2.39 manual pages git(1) (OPTIONS, ENVIRONMENT), git-config(1), git-difftool(1),
git-mergetool(1), git-rebase(1), git-submodule(1), git-bisect(1), git-clone(1), git-fetch(1),
git-ls-remote(1), git-push(1), git-archive(1), git-grep(1), git-cat-file(1), git-init(1), git-help(1),
gitremote-helpers(7) and git's ``git.c`` (``handle_options``: global options are matched exactly).
The variables that do the same from the environment (``GIT_DIR``, ``GIT_CONFIG_*``...) are in
``shell_argv``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from agent_ls.policy.shell_state import OTHER_REPOSITORY_REASON
from agent_ls.policy.shell_words import Word


@dataclass(frozen=True)
class GitNormal:
    """``git`` argv with its global options removed (``git <subcommand> ...``), and why it is risky."""

    words: tuple[Word, ...]
    risky: tuple[str, ...] = ()


_GLOBAL_FLAGS = frozenset(
    {"-P", "--no-pager", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
     "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-lazy-fetch", "--no-advice"}
)  # fmt: skip
_GLOBAL_VALUED = frozenset({"--namespace", "--super-prefix", "--attr-source"})
_OTHER_REPOSITORY = OTHER_REPOSITORY_REASON

# Subcommands that run other programs, servers or mail by design (their tools, filters, scripts or
# helpers come from options or configuration).
_RUNS_PROGRAMS = frozenset(
    {"difftool", "mergetool", "difftool--helper", "mergetool--lib", "filter-branch", "send-email",
     "imap-send", "daemon", "instaweb", "http-backend", "shell", "web--browse", "remote-ext", "remote-fd",
     "credential", "credential-cache", "credential-cache--daemon", "credential-store", "hook",
     "maintenance", "submodule--helper", "p4", "svn", "cvsserver", "cvsimport", "cvsexportcommit",
     "archimport"}
)  # fmt: skip
# Subcommands that run a command given as an operand: git submodule foreach CMD, git bisect run CMD.
_RUNS_OPERAND = {"submodule": "foreach", "bisect": "run"}

# Long options that run a program or write a file, with the shortest abbreviation git reads as them
# (``--text`` is diff's own option, not an abbreviation of ``--textconv``).
_RISKY_LONG: dict[str, str] = {
    "ext-diff": "e", "textconv": "textc", "output": "o", "upload-pack": "u", "receive-pack": "r",
    "exec": "e", "open-files-in-pager": "o", "template": "t", "separate-git-dir": "s",
}  # fmt: skip
_RISKY_SUBCOMMAND_LONG: dict[str, dict[str, str]] = {
    "clone": {"config": "c"},
    "archive": {"remote": "r"},
    "format-patch": {"output-directory": "o"},
    "cat-file": {"filters": "filters"},
    "help": {"web": "w"},
}
_RISKY_LONG_REASON = "can run a program or write a file"


@dataclass(frozen=True)
class _Shorts:
    risky: dict[str, str]  # letter -> what it does
    valued: str = ""  # letters whose value follows (attached or in the next word)


_RISKY_SHORT: dict[str, _Shorts] = {
    "grep": _Shorts({"O": "runs a program"}, valued="ABCefm"),
    "rebase": _Shorts({"x": "runs a command"}, valued="sXCS"),
    "clone": _Shorts({"u": "runs a program", "c": "sets configuration of the new repository"}, valued="objc"),
    "archive": _Shorts({"o": "writes a file"}),
    "format-patch": _Shorts({"o": "writes files"}, valued="v"),
    "help": _Shorts({"w": "runs a web browser"}),
}

# Transports whose "address" is a command (gitremote-helpers(7), git-remote-ext(1)).
_COMMAND_TRANSPORT = re.compile(r"(ext|fd)::")

# git configuration keys whose value is a program to run, or that pull in other configuration.
_RISKY_KEYS = frozenset(
    {"core.pager", "core.sshcommand", "core.editor", "core.fsmonitor", "core.hookspath", "core.askpass",
     "core.gitproxy", "core.worktree", "diff.external", "sequence.editor", "gpg.program",
     "credential.helper", "uploadpack.packobjectshook", "init.templatedir"}
)  # fmt: skip
_RISKY_KEY_PREFIXES = ("pager.", "alias.", "filter.", "include.", "includeif.", "credential.", "protocol.")
_RISKY_KEY_SUFFIXES = (".command", ".driver", ".textconv", ".program", ".cmd", ".helper", ".tool", ".path")

# git-config(1): options that read, that write, and that take a value; subcommands of git >= 2.46.
_CONFIG_READS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list"}
)
_CONFIG_WRITES = frozenset(
    {"--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "-e",
     "--edit"}
)  # fmt: skip
_CONFIG_VALUED = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment", "--value", "--url"})
_CONFIG_READ_SUBCOMMANDS = frozenset({"get", "list"})
_CONFIG_WRITE_SUBCOMMANDS = frozenset({"set", "unset", "rename-section", "remove-section", "edit"})
_CONFIG_FILE_OPTIONS = frozenset({"-f", "--file", "--blob"})


def git_normalize(words: Sequence[Word]) -> GitNormal:
    """Drop git's global options (``git.c`` handle_options) and note everything that runs or writes."""
    risky: list[str] = []
    i = 1
    while i < len(words) and words[i].static:
        arg = words[i].text
        option, equals, value = arg.partition("=")
        if arg in ("-c", "--config-env") or option == "--config-env":
            if not equals:
                i += 1
                value = words[i].text if i < len(words) else ""
            risky.append(f"git {option} {value} changes configuration")
        elif arg in ("-p", "--paginate"):
            risky.append(f"git {arg} runs a pager")
        elif option == "--exec-path":
            risky.append("git --exec-path changes where git finds its programs")
        elif arg == "--bare":
            risky.append(f"git --bare reads the current directory as a repository, which {_OTHER_REPOSITORY}")
        elif option in ("-C", "--git-dir", "--work-tree"):
            if not equals:
                i += 1
                value = words[i].text if i < len(words) else ""
            if option != "-C" or value != ".":
                risky.append(f"git {option} {value} {_OTHER_REPOSITORY}")
        elif arg in _GLOBAL_FLAGS:
            pass
        elif option in _GLOBAL_VALUED:
            i += 0 if equals else 1
        else:
            break
        i += 1
    args = tuple(words[i + 1 :])
    subcommand = words[i].text if i < len(words) and words[i].static else ""
    risky.extend(_subcommand_risks(subcommand, args))
    if word_glob := [word.text for word in args if word.glob]:
        risky.append(f"git arguments with patterns may expand to options: {' '.join(word_glob)}")
    return GitNormal((words[0], *words[i:]), tuple(risky))


# git's own commands (``git --list-cmds=main,nohelpers``, git 2.39). Any other subcommand is an alias
# from some config file or a ``git-<name>`` program on PATH: either can run anything, and a rule such
# as ``git diff*`` would glob-match ``git diffall`` (found by an adversarial review).
_KNOWN_SUBCOMMANDS = frozenset(
    {
        "add",
        "am",
        "annotate",
        "apply",
        "archive",
        "bisect",
        "blame",
        "branch",
        "bugreport",
        "bundle",
        "cat-file",
        "check-attr",
        "check-ignore",
        "check-mailmap",
        "check-ref-format",
        "checkout",
        "checkout-index",
        "cherry",
        "cherry-pick",
        "clean",
        "clone",
        "column",
        "commit",
        "commit-graph",
        "commit-tree",
        "config",
        "count-objects",
        "credential",
        "credential-cache",
        "credential-store",
        "daemon",
        "describe",
        "diagnose",
        "diff",
        "diff-files",
        "diff-index",
        "diff-tree",
        "difftool",
        "fast-export",
        "fast-import",
        "fetch",
        "fetch-pack",
        "filter-branch",
        "fmt-merge-msg",
        "for-each-ref",
        "for-each-repo",
        "format-patch",
        "fsck",
        "fsck-objects",
        "gc",
        "get-tar-commit-id",
        "grep",
        "hash-object",
        "help",
        "hook",
        "http-backend",
        "http-fetch",
        "http-push",
        "imap-send",
        "index-pack",
        "init",
        "init-db",
        "instaweb",
        "interpret-trailers",
        "log",
        "ls-files",
        "ls-remote",
        "ls-tree",
        "mailinfo",
        "mailsplit",
        "maintenance",
        "merge",
        "merge-base",
        "merge-file",
        "merge-index",
        "merge-octopus",
        "merge-one-file",
        "merge-ours",
        "merge-recursive",
        "merge-recursive-ours",
        "merge-recursive-theirs",
        "merge-resolve",
        "merge-subtree",
        "merge-tree",
        "mergetool",
        "mktag",
        "mktree",
        "multi-pack-index",
        "mv",
        "name-rev",
        "notes",
        "pack-objects",
        "pack-redundant",
        "pack-refs",
        "patch-id",
        "pickaxe",
        "prune",
        "prune-packed",
        "pull",
        "push",
        "quiltimport",
        "range-diff",
        "read-tree",
        "rebase",
        "receive-pack",
        "reflog",
        "remote",
        "remote-ext",
        "remote-fd",
        "remote-ftp",
        "remote-ftps",
        "remote-http",
        "remote-https",
        "repack",
        "replace",
        "request-pull",
        "rerere",
        "reset",
        "restore",
        "rev-list",
        "rev-parse",
        "revert",
        "rm",
        "send-pack",
        "shell",
        "shortlog",
        "show",
        "show-branch",
        "show-index",
        "show-ref",
        "sparse-checkout",
        "stage",
        "stash",
        "status",
        "stripspace",
        "submodule",
        "subtree",
        "switch",
        "symbolic-ref",
        "tag",
        "unpack-file",
        "unpack-objects",
        "update-index",
        "update-ref",
        "update-server-info",
        "upload-archive",
        "upload-pack",
        "var",
        "verify-commit",
        "verify-pack",
        "verify-tag",
        "version",
        "whatchanged",
        "worktree",
        "write-tree",
    }
)


def _subcommand_risks(subcommand: str, args: Sequence[Word]) -> Iterator[str]:
    named = bool(subcommand) and not subcommand.startswith("-")  # not `git --version`, not a `$SUB`
    if named and subcommand not in _KNOWN_SUBCOMMANDS and subcommand not in _RUNS_PROGRAMS:
        yield f"git {subcommand} is not one of git's own commands (an alias or a git-{subcommand} program)"
    if subcommand in _RUNS_PROGRAMS:
        yield f"git {subcommand} runs other programs"
    operand = _RUNS_OPERAND.get(subcommand)
    if operand is not None and any(word.static and word.text == operand for word in args):
        yield f"git {subcommand} {operand} runs a command"
    longs = {**_RISKY_LONG, **_RISKY_SUBCOMMAND_LONG.get(subcommand, {})}
    shorts = _RISKY_SHORT.get(subcommand)
    for word in args:
        arg = word.text
        if not word.static:
            continue
        if arg.startswith("--") and len(arg) > 2:
            name = arg[2:].partition("=")[0]
            if any(long.startswith(name) and name.startswith(least) for long, least in longs.items()):
                yield f"git {subcommand} {arg} {_RISKY_LONG_REASON}"
        elif shorts is not None and arg.startswith("-") and len(arg) > 1:
            yield from _short_risks(subcommand, arg, shorts)
        if transport := _COMMAND_TRANSPORT.match(arg):
            yield f"git {subcommand} {arg}: the {transport.group(1)}:: transport runs a command"
    if subcommand == "config":
        yield from _config_risks(args)


def _short_risks(subcommand: str, arg: str, shorts: _Shorts) -> Iterator[str]:
    """The risky letters of a cluster of short options (``-ix cmd``), up to the first that takes a value."""
    for letter in arg[1:]:
        what = shorts.risky.get(letter)
        if what is not None:
            yield f"git {subcommand} -{letter} {what}"
        if what is not None or letter in shorts.valued:
            return


def _config_risks(args: Sequence[Word]) -> Iterator[str]:
    """``git config``: a write changes what later git commands run; ``--file`` reads any file."""
    options: list[str] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if not word.static:
            operands.append(word.text)
        elif word.text.startswith("-") and word.text != "-":
            option, equals, _ = word.text.partition("=")
            options.append(option)
            if option in _CONFIG_VALUED and not equals:
                i += 1
        else:
            operands.append(word.text)
        i += 1
    if any(option in _CONFIG_FILE_OPTIONS for option in options):
        yield "git config --file reads or writes a file the path rules do not check"
    reads = any(option in _CONFIG_READS for option in options) or (
        bool(operands) and operands[0] in _CONFIG_READ_SUBCOMMANDS
    )
    writes = (
        any(option in _CONFIG_WRITES for option in options)
        or (bool(operands) and operands[0] in _CONFIG_WRITE_SUBCOMMANDS)
        or not (reads or len(operands) <= 1)
    )
    if writes:
        keys = [operand for operand in operands if _risky_key(operand)]
        if keys:
            yield f"git config {keys[0]} sets a program to run"
        else:
            yield "git config writes configuration, which can make later git commands run programs"


def _risky_key(arg: str) -> bool:
    key = arg.partition("=")[0].lower()
    return key in _RISKY_KEYS or key.startswith(_RISKY_KEY_PREFIXES) or key.endswith(_RISKY_KEY_SUFFIXES)
