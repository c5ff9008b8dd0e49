"""All-or-nothing applies (``workspace/apply_files.py``): everything checked first, a failure rolls back,
temporary files never stay, new files get the umask, and a kill is undone or completed by ``recover``."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_ls.workspace.apply_files import FileWrite, StagedApply, apply_files, stage_files
from agent_ls.workspace.apply_journal import JOURNAL_NAME, recover


def _tree(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root``: relative path to bytes (the whole state a test compares)."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "a.txt").write_bytes(b"a\r\n")
    (root / "src" / "b.py").write_bytes(b"b\n")
    return root


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_writes_every_file_with_the_umask_for_new_ones_and_the_old_mode_for_the_others(
    ws: Path, umask_022: None
) -> None:
    (ws / "src" / "b.py").chmod(0o750)
    outcome = apply_files(
        ws, [FileWrite("a.txt", b"A\r\n"), FileWrite("src/b.py", b"B\n"), FileWrite("new/deep/c.txt", b"c")]
    )
    assert (outcome.applied, outcome.message) == (True, "applied 3 file(s)")
    assert _tree(ws) == {"a.txt": b"A\r\n", "new/deep/c.txt": b"c", "src/b.py": b"B\n"}
    assert (ws / "src" / "b.py").stat().st_mode & 0o777 == 0o750
    assert (ws / "new" / "deep" / "c.txt").stat().st_mode & 0o777 == 0o644
    assert (ws / "new").stat().st_mode & 0o777 == 0o755


def test_a_name_near_the_limit_is_written_and_one_over_it_refuses_the_whole_apply(ws: Path) -> None:
    near = "b" * 251 + ".txt"  # 255 bytes: valid, though "." + name + a suffix would not be
    assert apply_files(ws, [FileWrite("a.txt", b"1"), FileWrite(near, b"2")]).applied
    assert (ws / near).read_bytes() == b"2"
    before = _tree(ws)
    over = "c" * 300 + ".txt"
    outcome = apply_files(ws, [FileWrite("a.txt", b"x"), FileWrite(over, b"y"), FileWrite("z.txt", b"z")])
    assert not outcome.applied
    assert outcome.message == (
        f"not applying, nothing written: {over}: the name {over[:40]}… is 304 bytes; "
        "the file system allows 255"
    )
    assert _tree(ws) == before


@pytest.mark.parametrize(
    ("writes", "problem"),
    [
        ([FileWrite("a.txt/x.py", b"x")], "a.txt/x.py: a.txt is a file, not a folder"),
        ([FileWrite("src", b"x")], "src is a folder on disk"),
        ([FileWrite("../out.txt", b"x")], "'../out.txt' is not a path inside the workspace"),
        ([FileWrite("n\0ul", b"x")], "'n\\x00ul' is not a path inside the workspace"),
        (
            [FileWrite("lone\udc80\ud800", b"x")],
            "'lone\\udc80\\ud800': the name cannot be encoded for the file system",
        ),
        ([FileWrite("d.txt", b"1"), FileWrite("d.txt", b"2")], "d.txt and d.txt are the same file"),
        (
            [FileWrite("e", b"1"), FileWrite("e/f.txt", b"2")],
            "e is written as a file and needed as a folder by e/f.txt",
        ),
        ([FileWrite("x/" * 2100 + "y", b"1")], "the full path is longer than the file system allows"),
    ],
)
def test_each_problem_the_check_can_see_refuses_the_apply_before_anything_is_written(
    ws: Path, writes: list[FileWrite], problem: str
) -> None:
    before = _tree(ws)
    outcome = apply_files(ws, [FileWrite("a.txt", b"changed"), *writes])
    assert not outcome.applied
    assert outcome.message.startswith("not applying, nothing written: ")
    assert problem in outcome.message
    assert _tree(ws) == before and sorted(p.name for p in ws.iterdir()) == ["a.txt", "src"]


def test_a_symlinked_folder_leading_out_of_the_workspace_is_refused(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (ws / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    outcome = apply_files(ws, [FileWrite("link/x.txt", b"x")])
    assert outcome.message == (
        "not applying, nothing written: link/x.txt: link is a symlink leading outside the workspace"
    )
    assert list((tmp_path / "outside").iterdir()) == []


def test_a_file_reached_through_a_symlink_is_written_in_place_keeping_the_link(ws: Path) -> None:
    (ws / "alias.py").symlink_to("src/b.py")
    assert apply_files(ws, [FileWrite("alias.py", b"through\n")]).applied
    assert (ws / "alias.py").is_symlink() and (ws / "src" / "b.py").read_bytes() == b"through\n"


def test_a_save_during_the_apply_stops_it_and_the_files_already_replaced_are_restored(ws: Path) -> None:
    (ws / "z.txt").write_bytes(b"z\n")
    (ws / "z.txt").chmod(0o600)
    staged = stage_files(
        ws,
        [
            FileWrite("z.txt", b"Z\n"),
            FileWrite("new.txt", b"n"),
            FileWrite("a.txt", b"A"),
            FileWrite("src/b.py", b"B"),
        ],
    )
    assert isinstance(staged, StagedApply)
    (ws / "a.txt").write_bytes(b"the user's save\n")  # after the check, before the renames reach it
    outcome = staged.commit()
    assert outcome == type(outcome)(
        False, "apply failed (a.txt: changed on disk during the apply); rolled back, nothing changed"
    )
    assert _tree(ws) == {"a.txt": b"the user's save\n", "src/b.py": b"b\n", "z.txt": b"z\n"}
    assert (ws / "z.txt").stat().st_mode & 0o777 == 0o600


def test_a_write_error_while_staging_removes_everything_staged(ws: Path) -> None:
    before = _tree(ws)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, hard))  # Python ignores SIGXFSZ: writes fail
    try:
        outcome = apply_files(
            ws, [FileWrite("a.txt", b"A"), FileWrite("n/big.bin", b"\0" * 2_000_000), FileWrite("z", b"z")]
        )
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert outcome.message == "apply failed (n/big.bin: File too large); rolled back, nothing changed"
    assert _tree(ws) == before and sorted(p.name for p in ws.iterdir()) == ["a.txt", "src"]


@pytest.mark.parametrize("fraction", [0.1, 0.3, 0.5, 0.7])
def test_ctrl_c_in_the_middle_rolls_back_whatever_was_written_and_propagates(
    tmp_path: Path, fraction: float
) -> None:
    files = 300
    writes = [FileWrite(f"d{i % 7}/f{i}.txt", b"new %d\n" % i * 2000) for i in range(files)]
    timing = tmp_path / "timing"
    timing.mkdir()
    started = time.perf_counter()
    assert apply_files(timing, writes).applied
    duration_s = time.perf_counter() - started
    root = tmp_path / "ws"
    for i in range(0, files, 2):  # half replace files, half are new
        (root / f"d{i % 7}").mkdir(parents=True, exist_ok=True)
        (root / f"d{i % 7}" / f"f{i}.txt").write_bytes(b"old")
    before = _tree(root)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, duration_s * fraction)
    try:
        apply_files(root, writes)
        pytest.skip("the apply ended before the interrupt (a much faster run than the timing one)")
    except KeyboardInterrupt:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert _tree(root) == before
    assert not list(root.rglob(".agent-ls*")) and sorted(p.name for p in root.iterdir()) == [
        f"d{i}" for i in range(7)
    ]


def _killed_apply(root: Path, writes: int, replaced: int, *, commit: bool) -> None:
    """Leave the disk as an apply SIGKILLed at a precise point leaves it: ``writes`` files staged, the
    journal at the commit point or not, the first ``replaced`` renamed."""
    code = f"""
        import os, signal
        from pathlib import Path
        from agent_ls.workspace.apply_files import FileWrite, stage_files
        writes = [FileWrite(f"f{{i}}.txt", b"new %d" % i) for i in range({writes})]
        staged = stage_files(Path({str(root)!r}), writes)
        if {commit}:
            staged.journal.commit()
        for target in staged.targets[:{replaced}]:
            os.replace(target.temp, target.path)
        os.kill(os.getpid(), signal.SIGKILL)
    """
    process = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=False)
    assert process.returncode == -signal.SIGKILL


def test_an_apply_killed_before_its_commit_point_is_undone(tmp_path: Path) -> None:
    for i in range(4):
        (tmp_path / f"f{i}.txt").write_bytes(b"old %d" % i)
    before = _tree(tmp_path)
    _killed_apply(tmp_path, 4, 0, commit=False)
    assert (tmp_path / JOURNAL_NAME).exists() and len(list(tmp_path.glob(".agent-ls-*.tmp"))) == 4
    line = recover(tmp_path)
    assert line is not None and line.endswith(
        "had not changed any file yet; its temporary files were removed"
    )
    assert _tree(tmp_path) == before
    assert recover(tmp_path) is None


def test_an_apply_killed_after_its_commit_point_is_completed_and_a_file_changed_since_is_left(
    tmp_path: Path,
) -> None:
    for i in range(5):
        (tmp_path / f"f{i}.txt").write_bytes(b"old %d" % i)
    _killed_apply(tmp_path, 5, 2, commit=True)
    assert _tree(tmp_path)["f1.txt"] == b"new 1" and _tree(tmp_path)["f2.txt"] == b"old 2"
    (tmp_path / "f4.txt").write_bytes(b"the user's edit after the kill")
    line = recover(tmp_path)
    assert line is not None and line.endswith(
        ": 2 more file(s) written; left as they are (changed since, or their new text is missing): f4.txt"
    )
    assert _tree(tmp_path) == {
        "f0.txt": b"new 0",
        "f1.txt": b"new 1",
        "f2.txt": b"new 2",
        "f3.txt": b"new 3",
        "f4.txt": b"the user's edit after the kill",
    }


def test_the_next_apply_finishes_a_killed_one_first(tmp_path: Path) -> None:
    _killed_apply(tmp_path, 3, 1, commit=True)
    outcome = apply_files(tmp_path, [FileWrite("g.txt", b"g")])
    assert outcome.applied and outcome.recovered is not None and "2 more file(s) written" in outcome.recovered
    assert _tree(tmp_path) == {"f0.txt": b"new 0", "f1.txt": b"new 1", "f2.txt": b"new 2", "g.txt": b"g"}


def test_a_running_apply_is_never_recovered_by_another(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"old")
    staged = stage_files(tmp_path, [FileWrite("f.txt", b"new")])
    assert isinstance(staged, StagedApply)
    code = f"""
        from pathlib import Path
        from agent_ls.workspace.apply_files import FileWrite, apply_files
        print(apply_files(Path({str(tmp_path)!r}), [FileWrite("g.txt", b"g")]).message)
    """
    other = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    assert other.stdout.strip() == (
        f"not applying, nothing written: another apply is running in this workspace ({JOURNAL_NAME})"
    )
    assert staged.commit().applied and _tree(tmp_path) == {"f.txt": b"new"}


def test_a_journal_planted_in_a_repository_cannot_touch_anything_outside_it_or_in_git(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside.txt"
    (root / ".git").mkdir(parents=True)
    outside.write_bytes(b"precious")
    (root / ".git" / "config").write_bytes(b"[core]\n")
    empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # sha256 of b""
    (root / ".agent-ls-000000000000-0.tmp").write_bytes(b"")
    files = [
        {"path": "../outside.txt", "temp": None, "old": None, "new": None},
        {"path": ".git/config", "temp": ".agent-ls-000000000000-0.tmp", "old": None, "new": empty},
        {"path": "x.sh", "temp": "../outside.txt", "old": None, "new": empty},
    ]
    body = {"apply_id": "0" * 12, "pid": 1, "started": "then", "files": files, "dirs": ["..", "/tmp"]}
    (root / JOURNAL_NAME).write_bytes(b"commit\n" + json.dumps(body).encode())
    line = recover(root)
    assert line is not None and "0 more file(s) written" in line
    assert outside.read_bytes() == b"precious" and (root / ".git" / "config").read_bytes() == b"[core]\n"
    assert not (root / "x.sh").exists()


def test_a_root_that_is_not_a_folder_refuses_the_apply(tmp_path: Path) -> None:
    outcome = apply_files(tmp_path / "missing", [FileWrite("a.txt", b"a")])
    assert outcome.message == f"not applying, nothing written: {tmp_path / 'missing'} is not a folder"
    assert list(tmp_path.iterdir()) == []
