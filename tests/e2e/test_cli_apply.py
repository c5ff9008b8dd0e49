"""``agent-ls run --apply`` is all or nothing, through the real command: a name near the file system's
limit is written, a folder that became a file or a write that fails refuses or rolls back the whole
apply in one line with no traceback and no temporary file, and new files get the user's umask."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent_cli import environment, script, start, tree, wait_for_line
from tests.support.corpus import CORPUS, require_corpus


def _write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def _run(
    tmp_path: Path, root: Path, steps: list[dict[str, Any]], *, umask: int = 0o022, fsize: int | None = None
) -> subprocess.CompletedProcess[str]:
    def limits() -> None:
        os.umask(umask)
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, resource.RLIM_INFINITY))

    temp = tmp_path / "tmp"
    temp.mkdir(exist_ok=True)
    process = start(
        ["run", "t", "--model", script(tmp_path / "script.json", steps), "--apply"],
        cwd=root,
        env=environment(temp),
        preexec_fn=limits,
    )
    _, stderr = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, "", stderr)


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob(".agent-ls*"))


def test_the_corpus_long_name_is_applied_with_every_other_file(tmp_path: Path) -> None:
    require_corpus()
    steps = json.loads((CORPUS / "found-2026-11-30/F03-apply-partial-long-name/script.json").read_text())
    root = tmp_path / "ws"
    root.mkdir()
    done = _run(tmp_path, root, steps)
    assert done.returncode == 0, done.stderr
    long_name = steps[0]["tool_calls"][1]["arguments"]["path"]
    assert len(long_name.encode()) == 244
    assert tree(root) == {"a.txt": b"first\n", long_name: b"second\n", "z.txt": b"third\n"}
    assert "agent-ls: applied 3 file(s)" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)], ids=["022", "027", "002"]
)
def test_new_files_and_folders_get_the_users_umask_and_a_changed_file_keeps_its_mode(
    tmp_path: Path, umask: int, mode: int
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "run.sh").write_text("echo old\n")
    (root / "run.sh").chmod(0o750)
    done = _run(
        tmp_path,
        root,
        [
            {"tool_calls": [_write("run.sh", "echo new\n"), _write("pkg/new.py", "x = 1\n")]},
            {"content": "ok"},
        ],
        umask=umask,
    )
    assert done.returncode == 0, done.stderr
    assert (root / "pkg" / "new.py").stat().st_mode & 0o777 == mode
    assert (root / "pkg").stat().st_mode & 0o777 == 0o777 & ~umask
    assert (root / "run.sh").stat().st_mode & 0o777 == 0o750
    assert (root / "run.sh").read_text() == "echo new\n"


def test_a_write_error_in_the_middle_rolls_back_every_file_in_one_line(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("old a\n")
    before = tree(root)
    big = "x" * 2_000_000  # over the file size limit the run gets: its write fails mid-apply
    done = _run(
        tmp_path,
        root,
        [
            {"tool_calls": [_write("a.txt", "new a\n"), _write("data/big.txt", big), _write("z.txt", "z\n")]},
            {"content": "ok"},
        ],
        fsize=1_000_000,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "agent-ls: apply failed (data/big.txt: File too large); rolled back, nothing changed"
    )
    assert "Traceback" not in done.stderr
    assert tree(root) == before and sorted(p.name for p in root.iterdir()) == ["a.txt"]


def test_a_folder_that_became_a_file_before_the_apply_refuses_it_with_nothing_written(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("old a\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    steps = [
        {"tool_calls": [_write("a.txt", "new a\n"), _write("sub/new.txt", "n\n")]},
        {"content": "ok", "delay_s": 5},
    ]
    process = start(
        ["run", "t", "--model", script(tmp_path / "script.json", steps), "--apply"],
        cwd=root,
        env=environment(temp),
    )
    wait_for_line(process, "turn 2")
    (root / "sub").write_text("the user's file named sub\n")
    _, rest = process.communicate(timeout=60)
    assert process.returncode == 1
    assert rest.splitlines()[-1] == (
        "agent-ls: not applying, nothing written: sub/new.txt: sub is a file, not a folder"
    )
    assert tree(root) == {"a.txt": b"old a\n", "sub": b"the user's file named sub\n"}
    assert _leftovers(root) == [] and "Traceback" not in rest


def test_an_apply_killed_earlier_is_finished_by_the_next_run_before_anything_else(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(3):
        (root / f"f{i}.txt").write_text(f"old {i}\n")
    code = f"""
        import os, signal
        from pathlib import Path
        from agent_ls.workspace.apply_files import FileWrite, stage_files
        writes = [FileWrite(f"f{{i}}.txt", b"new %d\\n" % i) for i in range(3)]
        staged = stage_files(Path({str(root)!r}), writes)
        staged.journal.commit()
        os.replace(staged.targets[0].temp, staged.targets[0].path)
        os.kill(os.getpid(), signal.SIGKILL)
    """
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=False)
    assert tree(root)["f0.txt"] == b"new 0\n" and tree(root)["f1.txt"] == b"old 1\n"
    done = _run(tmp_path, root, [{"content": "nothing to change"}])
    assert done.returncode == 0, done.stderr
    assert "agent-ls: completed an apply interrupted at " in done.stderr
    assert tree(root) == {"f0.txt": b"new 0\n", "f1.txt": b"new 1\n", "f2.txt": b"new 2\n"}
    assert _leftovers(root) == []


def test_a_run_with_no_usable_model_still_finishes_an_interrupted_apply_and_reads_the_config_after_it(
    tmp_path: Path,
) -> None:
    """Recovery comes first, even before the config files are read and the model is resolved: the
    workspace config the interrupted apply was writing is read whole, and exit 2 leaves no half-apply."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "agent-ls.toml").write_text('model = "not a model string"\n')
    (root / "f.txt").write_text("old\n")
    code = f"""
        import os, signal
        from pathlib import Path
        from agent_ls.workspace.apply_files import FileWrite, stage_files
        writes = [FileWrite("f.txt", b"new\\n"), FileWrite("agent-ls.toml", b'model = "replay:none.json"\\n')]
        staged = stage_files(Path({str(root)!r}), writes)
        staged.journal.commit()
        os.replace(staged.targets[0].temp, staged.targets[0].path)
        os.kill(os.getpid(), signal.SIGKILL)
    """
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=False)
    assert tree(root)["agent-ls.toml"] == b'model = "not a model string"\n'
    temp = tmp_path / "tmp"
    temp.mkdir()
    process = start(["run", "t"], cwd=root, env=environment(temp))
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 2, stderr
    lines = stderr.splitlines()
    assert lines[0].startswith("agent-ls: completed an apply interrupted at "), stderr
    # The config read is the one the apply finished writing (an untrusted workspace's replay model is
    # ignored, with a warning), not the half-applied file's model string.
    assert 'model = "replay:..." is ignored' in stderr and "not a model string" not in stderr, stderr
    assert lines[-1].startswith("agent-ls: no model configured"), stderr
    assert tree(root) == {"agent-ls.toml": b'model = "replay:none.json"\n', "f.txt": b"new\n"}
    assert _leftovers(root) == []
