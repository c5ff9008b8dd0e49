"""The file watch of the shadow copy and the secret index (``tree_watch``) asks the kernel for changes only.

watchfiles' watch asked for ``IN_OPEN | IN_CLOSE_NOWRITE`` too, so every file a grep or a build read
in the watched workspace queued two events for this process to read: a ripgrep of 10,000 files took
1.5-1.9x as long while a session watched the tree (benchmarks/bench_scale.py, "later grep").
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agent_ls.workspace.tree_watch import TreeWatch
from tests.unit.workspace.conftest import write

_OPEN, _CLOSE_NOWRITE = 0x20, 0x10  # IN_OPEN, IN_CLOSE_NOWRITE


def _watched_masks() -> list[int]:
    """The event mask of every inotify watch this process holds (``/proc/self/fdinfo``)."""
    masks = []
    for name in os.listdir("/proc/self/fdinfo"):
        try:
            with open(f"/proc/self/fdinfo/{name}") as info:
                lines = info.read().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith("inotify wd:"):
                masks.append(int(line.split(" mask:")[1].split()[0], 16))
    return masks


def test_reads_in_a_watched_tree_queue_no_events_and_changes_are_still_reported(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root, {f"src/m{i}.py": "x = 1\n" for i in range(50)})
    (tmp_path / "markers").mkdir()
    watch = TreeWatch.start(root, [".", "src"], tmp_path / "copy", [], tmp_path / "markers")
    assert watch is not None
    try:
        masks = _watched_masks()
        assert masks and all(mask & (_OPEN | _CLOSE_NOWRITE) == 0 for mask in masks)
        subprocess.run(
            ["cat", *(str(p) for p in sorted((root / "src").iterdir()))], capture_output=True, check=True
        )
        changes = watch.collect()
        assert changes is not None and changes.real == set()
        (root / "src" / "m3.py").write_text("x = 2\n")
        (root / "src" / "m4.py").unlink()
        changes = watch.collect()
        assert changes is not None and changes.real == {"src/m3.py", "src/m4.py"}
    finally:
        watch.close()
