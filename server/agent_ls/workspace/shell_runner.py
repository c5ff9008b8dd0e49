"""The shell runner: shell commands run in the session's overlay view (``layered_copy.py``) of the
workspace where the machine has overlay views and commands run sandboxed, else in its shadow copy
(``shadow.py``); the choice is made at the first command (``_choose``). Both keep the same contract.

``ShellRunner`` implements the core ``CommandRunner`` port on top of it. Each command, in order:

1. settles a command that was cancelled (its changes are undone, not proposed);
2. syncs the copy and notes its reviewable files (``shadow_tree.reviewable_files``; after the first
   command, from what a file watch reported: ``ShadowCopy.prepare``);
3. runs ``/bin/bash -c`` (else ``/bin/sh -c``) in the copy with ``processes.execute``: inside the
   bubblewrap sandbox where one works (``workspace.sandbox``: no network, only the copy writable, the
   real workspace hidden, linked trees read-only with their secrets masked), an allowlisted
   environment without keys, the
   process group killed on exit, timeout or cancellation, and the output capped head plus tail;
4. brings the files the command changed back into the proposal (``bring_back``) when they are
   reviewable: not gitignored, outside caches, text in the file's own encoding, at most
   ``max_file_bytes``, allowed by the path policy and by ``may_propose`` (the permission engine's
   edit verdict). So a formatter's output becomes part of the diff. Anything else (deletions too: a
   proposal cannot delete a file) is undone at the next sync and named with its reason after the
   output (``[agent-ls: ...]``) and in ``take_left_out`` for the run's end; after a timeout nothing is
   brought back and every change is undone.

Without a sandbox the command runs unisolated, with the same environment, and the first output of the
runner says so in one line (``NO_SANDBOX_NOTE``). In ``workspace`` mode (``shell.mode``) commands run
in the real workspace instead: nothing is synced or brought back, and the sandbox makes the workspace
writable with every secret file masked, found by a walk of the whole tree (``ShadowCopy.secret_files``:
dependency trees, caches, build outputs and ``.git`` included; a folder too large to scan is hidden).
A folder left out or hidden for its size is named once in the output (``left_out_note``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

from agent_ls.core.ports import CommandResult
from agent_ls.workspace.bring_back import bring_back
from agent_ls.workspace.child_env import TOOLCHAIN_HOMES, child_environment
from agent_ls.workspace.layered_copy import LayeredCopy
from agent_ls.workspace.layers import layers_status
from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.processes import execute
from agent_ls.workspace.sandbox import Sandbox, find_sandbox
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shadow_state import Snapshot, WorkspaceSecrets

ShellMode = Literal["shadow", "workspace"]

NO_SANDBOX_NOTE = (
    "[agent-ls: no sandbox (bubblewrap not available); the command ran unisolated in the shadow copy]"
)
MAX_FILE_BYTES = 1_000_000
"""The largest file a command's change brings back into the proposal, in bytes."""

SKILL_DIR_MAX_ENTRIES = 2_000
"""A skill folder with more entries is not mounted in the sandbox (too large to check for secrets)."""


class ShellRunner:
    """Runs shell commands in the session's shadow copy (the core ``CommandRunner`` port).

    Args:
        shadow: the session's shadow copy (share it with the ``Overlay``, so search and commands see
            the same copy); synced from ``overlay`` before each command.
        overlay: the session's overlay (pending edits and open buffers); a command's reviewable
            changes are proposed to it.
        environ: the environment to pick the allowlisted variables from (see ``child_environment``);
            its ``HOME`` is the user's home, hidden by the sandbox.
        head_chars: characters kept from the start of the output (code points).
        tail_chars: characters kept from the end of the output (code points).
        sandbox: the sandbox to run commands in; ``"detect"`` (the default) uses ``find_sandbox()``,
            probed on the first command; None runs them unisolated, with ``NO_SANDBOX_NOTE`` as the
            first line of the first output.
        mode: ``shadow`` (the default) or ``workspace``: run in the real workspace (``shell.mode``).
        venv: a virtual environment whose ``bin`` goes first on ``PATH`` (read-only in the sandbox).
        key_names: environment variable names that hold keys (``api_key_env``); never passed on.
        max_file_bytes: the largest changed file brought back into the proposal, in bytes.
        may_propose: whether a command's change of a workspace-relative path may enter the proposal
            (wire the permission engine's edit verdict: a path whose edit is denied stays out);
            every reviewable path when None.
        paths: the session's path policy: it finds the secrets to mask in ``skill_dirs``.
        skill_dirs: the folders of the activated skills outside the workspace (asked before each
            command), mounted read-only in the sandbox so that their scripts run, their secrets masked;
            a folder over ``SKILL_DIR_MAX_ENTRIES`` entries is left out, with a note.
        layered: the session's overlay view (``layered_copy``), used instead of ``shadow`` when commands
            run sandboxed, overlay views work here (``layers.layers_status``) and the workspace's secret
            index is complete; its index also gives the masks of workspace mode.
    """

    def __init__(
        self,
        shadow: ShadowCopy,
        overlay: Overlay,
        environ: Mapping[str, str],
        *,
        head_chars: int = 8_000,
        tail_chars: int = 12_000,
        sandbox: Sandbox | Literal["detect"] | None = "detect",
        mode: ShellMode = "shadow",
        venv: Path | None = None,
        key_names: Sequence[str] = (),
        max_file_bytes: int = MAX_FILE_BYTES,
        may_propose: Callable[[str], bool] | None = None,
        paths: PathPolicy | None = None,
        skill_dirs: Callable[[], Sequence[Path]] = tuple,
        layered: LayeredCopy | None = None,
    ) -> None:
        self._shadow = shadow
        self._layered = layered
        self._tree: ShadowCopy | LayeredCopy | None = None
        self._unshare = ""
        self._paths = paths
        self._skill_dirs = skill_dirs
        self._skill_scans: dict[Path, tuple[int, list[Path] | None]] = {}
        self._may_propose = may_propose
        self._overlay = overlay
        self._env = child_environment(environ, venv=venv, key_names=key_names)
        home = environ.get("HOME")
        # The home a sandbox can hide (see workspace.sandbox._hidden_home); None for "/", relative or missing.
        usable = home and os.path.isabs(home) and os.path.isdir(home) and os.path.realpath(home) != "/"
        self._home = home if usable else None
        self._real_root = Path(os.path.realpath(overlay.root))
        self._shell = "/bin/bash" if Path("/bin/bash").exists() else "/bin/sh"
        self._head_chars = head_chars
        self._tail_chars = tail_chars
        self._detect = sandbox == "detect"
        self._sandbox = None if isinstance(sandbox, str) else sandbox
        self._mode = mode
        self._venv = Path(os.path.realpath(venv)) if venv is not None else None
        self._max_file_bytes = max_file_bytes
        self._noted = False
        self._left_out_noted: tuple[str, ...] = ()
        self._unsettled: Snapshot | None = None
        self._left_out: list[str] = []

    async def run(self, command: str, timeout_s: float) -> CommandResult:
        """Run ``command`` in the shadow copy (or the workspace) and return its exit code and output.

        Returns:
            ``exit_code`` is the shell's (negative for a signal), None when it timed out. ``output`` is
            stdout and stderr interleaved, decoded as UTF-8 (invalid bytes replaced) and capped to
            ``head_chars`` + ``tail_chars`` with an ``omission_note`` line (characters and lines
            omitted) between,
            then the ``[agent-ls: ...]`` lines about files brought back, refused or deleted.
            ``full_output`` is the whole output when it was cut (``processes.execute``'s ``keep_full``).

        Raises:
            asyncio.CancelledError: after the process group was killed. A failing or timed-out command
                is a normal result, never an exception.
            ToolError: the shadow copy cannot be prepared or the shell cannot be started.
        """
        if self._detect:
            self._sandbox = await asyncio.to_thread(find_sandbox)
            self._detect = False
        sandbox = self._sandbox
        if self._mode == "workspace":
            return await self._run_in_workspace(command, timeout_s, sandbox)
        tree = await self._choose(sandbox)
        if self._unsettled is not None:
            cancelled = await tree.changes_since(self._unsettled)
            await tree.restore([*cancelled.changed, *cancelled.deleted])
            self._unsettled = None
        cwd, before = await tree.prepare(self._overlay)
        self._unsettled = before  # until the changes are brought back: a cancellation leaves it set
        extra, extra_secrets, too_big = await asyncio.to_thread(self._extra_mounts)
        view = tree if isinstance(tree, LayeredCopy) else None
        result = await execute(
            [self._shell, "-c", command],
            cwd=cwd,
            env=self._environment(sandbox),
            sandbox=sandbox,
            workspace_root=self._overlay.root,
            timeout_s=timeout_s,
            head_chars=self._head_chars,
            tail_chars=self._tail_chars,
            keep_full=True,
            note=self._notes(sandbox, tree.left_out, too_big),
            readonly=[*self._readonly(tree), *extra],
            masked=[*tree.masked, *extra_secrets],
            masked_inside=view.masked_inside if view is not None else (),
            layers=(view.layers, self._unshare) if view is not None and view.layers is not None else None,
        )
        self._unsettled = None
        back = await bring_back(
            tree,
            self._overlay,
            before,
            timed_out=result.timed_out,
            max_file_bytes=self._max_file_bytes,
            may_propose=self._may_propose,
        )
        self._left_out.extend(back.left_out)
        if not back.notes:
            return result
        separator = "\n" if result.output and not result.output.endswith("\n") else ""
        output = f"{result.output}{separator}{back.notes}"
        return replace(result, output=output, changed_paths=tuple(sorted(back.proposed)))

    async def _run_in_workspace(
        self, command: str, timeout_s: float, sandbox: Sandbox | None
    ) -> CommandResult:
        root = self._real_root
        hidden = await asyncio.to_thread(self._workspace_secrets) if sandbox is not None else None
        venv = self._venv
        return await execute(
            [self._shell, "-c", command],
            cwd=root,
            env=self._environment(sandbox),
            sandbox=sandbox,
            workspace_root=root,
            timeout_s=timeout_s,
            head_chars=self._head_chars,
            tail_chars=self._tail_chars,
            keep_full=True,
            note=self._notes(sandbox, hidden.unchecked if hidden is not None else ()),
            readonly=[venv] if venv is not None and not venv.is_relative_to(root) else [],
            masked=hidden.paths if hidden is not None else (),
        )

    def _notes(
        self, sandbox: Sandbox | None, left_out: tuple[str, ...], too_big: Sequence[Path] = ()
    ) -> str | None:
        """The lines to put before a command's output: ``NO_SANDBOX_NOTE`` the first time, the folders
        ``left_out`` (or hidden) for their size whenever that list changes, and the skill folders too big
        to mount; None for none."""
        notes = [
            f"[agent-ls: the skill folder {d} holds over {SKILL_DIR_MAX_ENTRIES:,} entries: it is not in the "
            "sandbox, so its scripts cannot run here]"
            for d in too_big
        ]
        if sandbox is None and not self._noted:
            self._noted = True
            notes.append(NO_SANDBOX_NOTE)
        if left_out != self._left_out_noted:
            self._left_out_noted = left_out
            if left_out:
                notes.append(left_out_note(left_out, self._mode))
        return "\n".join(notes) or None

    def _environment(self, sandbox: Sandbox | None) -> dict[str, str]:
        """The command's environment with ``HOME`` on a scratch directory.

        In the sandbox, the user's home path is already an empty private tmpfs with only the toolchains
        re-exposed (``Sandbox.wrap``), so ``HOME`` keeps its value (``/tmp``, private too, when the home
        cannot be hidden). Without it, ``HOME`` is the session's scratch directory, and the roots of
        toolchains installed in the real home are named explicitly (``TOOLCHAIN_HOMES``).
        """
        env = dict(self._env)
        home = self._home
        if sandbox is not None:
            env["HOME"] = home or "/tmp"
            return env
        env["HOME"] = str(self._shadow.scratch_home())
        for name, directory in TOOLCHAIN_HOMES.items():
            if home and name not in env and os.path.isdir(os.path.join(home, directory)):
                env[name] = os.path.join(home, directory)
        return env

    def _extra_mounts(self) -> tuple[list[Path], list[Path], list[Path]]:
        """The activated skills' folders to mount read-only, the secrets in them to mask, and the folders
        too large to check (left out). Each folder is scanned once, again only when it changed."""
        mounts: list[Path] = []
        secrets: list[Path] = []
        too_big: list[Path] = []
        if self._paths is None:
            return mounts, secrets, too_big
        for directory in self._skill_dirs():
            try:
                stamp = directory.stat().st_mtime_ns
            except OSError:
                continue
            cached = self._skill_scans.get(directory)
            if cached is None or cached[0] != stamp:
                cached = (stamp, self._paths.secrets_under(directory, SKILL_DIR_MAX_ENTRIES))
                self._skill_scans[directory] = cached
            if cached[1] is None:
                too_big.append(directory)
            else:
                mounts.append(directory)
                secrets.extend(cached[1])
        return mounts, secrets, too_big

    async def _choose(self, sandbox: Sandbox | None) -> ShadowCopy | LayeredCopy:
        """The tree commands run in, chosen at the first command: the overlay view when it can be
        used (sandboxed, overlay views work here, the secret index is complete), else the copy."""
        if self._tree is None:
            self._tree = self._shadow
            layered = self._layered
            if sandbox is not None and layered is not None:
                status = await asyncio.to_thread(layers_status, sandbox.bwrap)
                if status.unshare is not None and not (await asyncio.to_thread(layered.masks)).too_large:
                    self._tree, self._unshare = layered, status.unshare
        return self._tree

    def _workspace_secrets(self) -> WorkspaceSecrets:
        """What workspace mode hides: the secret index's secrets (no walk), or the copy's walk of the
        whole tree when there is no index or it gave up. Blocks."""
        if self._layered is not None:
            masks = self._layered.masks()
            if not masks.too_large:
                return WorkspaceSecrets(tuple(self._real_root / rel for rel in masks.secret_paths()), ())
        return self._shadow.secret_files()

    def close(self) -> None:
        """Delete the overlay view's session folder (the copy is closed by its overlay). Idempotent."""
        if self._layered is not None:
            self._layered.close()

    def _readonly(self, tree: ShadowCopy | LayeredCopy) -> list[Path]:
        """Real paths the sandbox mounts read-only: what the copy links to, and the venv when it lies
        outside the workspace (one inside is linked, or left out with its secrets unchecked)."""
        mounts = list(tree.linked)
        if self._venv is not None and not self._venv.is_relative_to(self._real_root):
            mounts.append(self._venv)
        return mounts

    def take_left_out(self) -> tuple[str, ...]:
        """The changes commands made since the last call that did not come into the proposal, as
        ``path (why)`` lines in the order they happened; the list is then emptied (once per run)."""
        taken, self._left_out = tuple(self._left_out), []
        return taken


def left_out_note(rels: Sequence[str], mode: ShellMode) -> str:
    """The line naming the folders too large to check for secret files (``ShadowCopy.left_out``,
    ``WorkspaceSecrets.unchecked``)."""
    where = "hidden from commands" if mode == "workspace" else "left out of the workspace copy"
    return f"[agent-ls: {where} (too many files to check for secret files): {', '.join(rels)}]"
