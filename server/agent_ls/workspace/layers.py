"""A writable view of the real workspace with no copy: the kernel's overlayfs, mounted per command.

The shadow copy used to copy the workspace before the first command of a session: seconds to a minute
on a monorepo (``cp -a`` of 50,000 files). An overlay mount gives the same thing at once: the real tree
is the read-only lower layer, and every change a command makes lands in an upper folder of the
session's own (a changed file is copied up whole, a deleted one leaves a "whiteout", a folder replaced
whole is marked "opaque"). Bubblewrap 0.11 can mount one (``--overlay``); Debian 12 ships 0.8.0, so
the mount is made just before bubblewrap, by a shell in a new user and mount namespace of its own
(util-linux ``unshare``), which then becomes bubblewrap (``exec``), so nothing lingers and nobody else
sees the mount:

    unshare -Urm --propagation private /bin/sh -c 'mount --bind ROOT LOWER && mount -t overlay
        overlay -o lowerdir=LOWER,upperdir=UPPER,workdir=WORK,userxattr MERGED && exec "$@"' sh … bwrap …

- ROOT is bound to a fixed name first because overlay's option string cannot carry every path (a
  comma or a colon in a folder's name); the other paths are the session's own, and are checked.
- ``userxattr``: in a user namespace overlayfs keeps its whiteout and opaque marks in ``user.overlay.*``
  extended attributes (Linux 5.11 and later); the upper folder's file system must support them.
- Bubblewrap then runs in a user namespace nested in that one, with the caller's uid and gid
  (``--uid``/``--gid``), and binds the merged view at the session's path as it bound the copy.

``layers_status`` probes it once per process; where it fails (no ``unshare``, a kernel before 5.11,
user namespaces refused, an upper file system without user xattrs) the caller uses the copy.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

_MOUNT_SCRIPT = (
    'mount --bind "$1" "$2" && '
    'mount -t overlay overlay -o "lowerdir=$2,upperdir=$3,workdir=$4,userxattr" "$5" && '
    'shift 5 && exec "$@"'
)
_UNSAFE = re.compile(r"[,:\\\s=]")
"""Characters overlayfs' option string would read as separators: the session's paths must have none."""


@dataclass(frozen=True)
class MountLayers:
    """The folders of one overlay view of a workspace.

    Attributes:
        root: the real workspace (the lower layer).
        lower: an empty folder ``root`` is bound to, so that the option string names a safe path.
        upper: where the changes land (the session's, kept between commands).
        work: overlayfs' scratch folder, on the same file system as ``upper``.
        merged: the mount point, where commands run (an empty folder on the host).
        session: the session folder holding them all, hidden inside the sandbox (``wrap``).
    """

    root: Path
    lower: Path
    upper: Path
    work: Path
    merged: Path
    session: Path

    @classmethod
    def under(cls, root: Path, parent: Path, name: str) -> MountLayers:
        """The layers of ``root`` in the session folder ``parent``: ``parent/layers/{lower,upper,work}``,
        and the view at ``parent/view/name`` (commands see the workspace's own folder name)."""
        layers = parent / "layers"
        return cls(root, layers / "lower", layers / "upper", layers / "work", parent / "view" / name, parent)

    def make(self) -> None:
        """Create the folders, private to the user; idempotent. Raises OSError."""
        for folder in (self.lower, self.upper, self.work, self.merged):
            folder.parent.mkdir(mode=0o700, exist_ok=True)
            folder.mkdir(mode=0o700, exist_ok=True)

    def usable(self) -> bool:
        """Whether overlayfs' option string can name these folders (no comma, colon, backslash, space)."""
        return not any(_UNSAFE.search(str(p)) for p in (self.lower, self.upper, self.work))

    def wrap(self, bwrap_argv: Sequence[str], unshare: str) -> list[str]:
        """``bwrap_argv`` (from ``Sandbox.wrap``, with the merged view as its shadow) behind the mount.

        Bubblewrap gets its own user namespace, with the caller's uid and gid, inside the one that
        mounted the overlay (there the caller is root). The session folder is hidden (an empty tmpfs
        right after the system's read-only bind): the system bind is recursive, so where ``TMPDIR``
        lies outside the private ``/tmp`` it would show the lower layer (the real tree) and the unmasked
        view at their folders. The view is bound from the host's side, so hiding them changes nothing
        for it."""
        bwrap, *options = bwrap_argv
        ids = ["--unshare-user", "--uid", str(os.getuid()), "--gid", str(os.getgid())]
        for at in range(len(options) - 2):
            if options[at : at + 3] == ["--ro-bind", "/", "/"]:
                options[at + 3 : at + 3] = ["--tmpfs", str(self.session)]
                break
        else:  # not the argv Sandbox.wrap makes: refuse rather than show the real tree
            raise ValueError("the sandbox's argv binds no read-only system to hide the session folder in")
        return [
            unshare, "-Urm", "--propagation", "private", "/bin/sh", "-c", _MOUNT_SCRIPT, "sh",
            str(self.root), str(self.lower), str(self.upper), str(self.work), str(self.merged),
            bwrap, *ids, *options,
        ]  # fmt: skip


@dataclass(frozen=True)
class LayersStatus:
    """Whether overlay views work here: the ``unshare`` program, or None with ``detail`` saying why not."""

    unshare: str | None
    detail: str


@functools.cache
def layers_status(bwrap: str) -> LayersStatus:
    """Probe an overlay view once per process: mount one in a temporary folder and run ``true`` in
    bubblewrap inside it, checking that a deletion left a whiteout in the upper folder. Blocks
    (about 20 ms); call it from a worker thread on the event loop."""
    unshare = shutil.which("unshare")
    if unshare is None or shutil.which("mount") is None:
        return _refused("util-linux's unshare or mount is not installed")
    try:
        with tempfile.TemporaryDirectory(prefix="agent-ls-layers-probe-") as temp:
            parent = Path(temp)
            root = parent / "root"
            root.mkdir()
            (root / "gone").write_bytes(b"")
            layers = MountLayers.under(root, parent, "view")
            layers.make()
            if not layers.usable():
                return _refused(f"the temporary folder's path cannot be named to overlayfs: {temp}")
            argv = layers.wrap(
                [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev",
                 "--proc", "/proc", "--bind", str(layers.merged), str(layers.merged),
                 "--chdir", str(layers.merged), "--", "/bin/sh", "-c", "rm gone"],
                unshare,
            )  # fmt: skip
            done = subprocess.run(
                argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False
            )
            whiteout = layers.upper / "gone"
            if done.returncode != 0:
                lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
                return _refused(lines[-1] if lines else f"exit code {done.returncode}")
            if not (whiteout.is_char_device() and (root / "gone").exists()):
                return _refused("the overlay left no whiteout")
    except (OSError, subprocess.SubprocessError) as exc:
        return _refused(str(exc))
    return LayersStatus(unshare, "overlay views (overlayfs in a user namespace)")


def _refused(why: str) -> LayersStatus:
    log.info("no overlay views, the shadow copy copies the workspace: %s", why)
    return LayersStatus(None, why)
