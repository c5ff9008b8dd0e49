"""The instruction watcher: which paths count, bumps, and a real watch of a temporary directory."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_ls.instructions.watch import InstructionWatcher

ROOT = Path("/ws")


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("AGENTS.md", True),
        ("pkg/deep/AGENTS.md", True),
        ("pkg/AGENTS.override.md", True),
        ("CLAUDE.md", True),
        (".agents/skills/review/SKILL.md", True),
        (".claude/skills/review/SKILL.md", True),
        (".agents/skills/review/references/guide.md", True),  # anything under a skills dir
        (".agents/skills/renamed", True),  # a skill folder renamed or removed
        ("elsewhere/SKILL.md", True),
        ("README.md", False),
        ("agents.md", False),  # names are exact, as the loaders read them
        ("src/skills.py", False),
        ("GEMINI.md", False),
        (".git/AGENTS.md", False),
        ("node_modules/pkg/AGENTS.md", False),
        ("node_modules/pkg/skills/x/SKILL.md", False),
    ],
)
def test_which_paths_count(rel: str, expected: bool) -> None:
    assert InstructionWatcher().watches(ROOT / rel, [ROOT]) is expected


@pytest.mark.parametrize(
    ("fallbacks", "rel", "expected"),
    [
        ((), "CLAUDE.md", False),
        (("GEMINI.md",), "pkg/GEMINI.md", True),
        ((".claude/CLAUDE.md",), ".claude/CLAUDE.md", True),
        ((".claude/CLAUDE.md",), "CLAUDE.md", False),
    ],
)
def test_configured_fallbacks_count(fallbacks: tuple[str, ...], rel: str, expected: bool) -> None:
    assert InstructionWatcher(fallback_filenames=fallbacks).watches(ROOT / rel, [ROOT]) is expected


def test_skipped_dirs_count_only_below_the_root() -> None:
    """A workspace that itself lives under node_modules is still watched."""
    root = Path("/home/u/node_modules/app")
    watcher = InstructionWatcher()
    assert watcher.watches(root / "AGENTS.md", [root])
    assert not watcher.watches(root / "node_modules" / "AGENTS.md", [root])


def test_bump_counts_and_tells_the_listener() -> None:
    seen: list[int] = []
    watcher = InstructionWatcher(on_change=seen.append)
    assert watcher.generation == 0
    assert watcher.bump() == 1
    assert watcher.bump() == 2
    assert (watcher.generation, seen) == (2, [1, 2])


def test_a_failing_listener_does_not_stop_the_count() -> None:
    def broken(_generation: int) -> None:
        raise RuntimeError("boom")

    watcher = InstructionWatcher(on_change=broken)
    assert watcher.bump() == 1
    assert watcher.generation == 1


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


async def _bumped_by(watcher: InstructionWatcher, path: Path, timeout_s: float = 10.0) -> None:
    """Write ``path`` until the generation moves (the watch starts in a thread: no fixed sleep)."""
    before = watcher.generation
    async with asyncio.timeout(timeout_s):
        attempt = 0
        while watcher.generation == before:
            attempt += 1
            _write(path, f"# {attempt}\n")
            await asyncio.sleep(0.1)


async def _settled(watcher: InstructionWatcher, quiet_s: float = 0.3) -> int:
    """The generation once it has not moved for ``quiet_s`` (bounded by the caller's timeout)."""
    last = watcher.generation
    while True:
        await asyncio.sleep(quiet_s)
        if watcher.generation == last:
            return last
        last = watcher.generation


async def test_writing_an_agents_md_bumps_the_generation(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    watcher = InstructionWatcher(debounce_ms=50)
    watcher.start([tmp_path, tmp_path / "missing"])
    assert watcher.running and watcher.roots == (tmp_path,)
    try:
        await _bumped_by(watcher, tmp_path / "pkg" / "AGENTS.md")
    finally:
        await watcher.aclose()
    assert watcher.generation >= 1
    assert not watcher.running and watcher.roots == ()


async def test_unrelated_files_do_not_bump(tmp_path: Path) -> None:
    watcher = InstructionWatcher(debounce_ms=50)
    watcher.start([tmp_path])
    try:
        await _bumped_by(watcher, tmp_path / "AGENTS.md")  # the watch is up
        async with asyncio.timeout(10):
            ready = await _settled(watcher)  # the batches of the last attempts have arrived
        for name in ("notes.md", "skills.py", "agents.md"):
            (tmp_path / name).write_text("x\n", encoding="utf-8")
        await asyncio.sleep(0.4)  # several debounce windows (50 ms) and steps (50 ms)
        assert watcher.generation == ready
        skill_dir = tmp_path / ".agents" / "skills" / "x"
        skill_dir.mkdir(parents=True)
        await _bumped_by(watcher, skill_dir / "SKILL.md")
    finally:
        await watcher.aclose()


async def test_start_without_an_existing_root_watches_nothing(tmp_path: Path) -> None:
    watcher = InstructionWatcher()
    watcher.start([tmp_path / "missing"])
    assert not watcher.running
    await watcher.aclose()


async def test_start_again_replaces_the_watch(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    watcher = InstructionWatcher(debounce_ms=50)
    watcher.start([first])
    watcher.start([second])
    try:
        assert watcher.roots == (second,)
        await _bumped_by(watcher, second / "AGENTS.md")
    finally:
        await watcher.aclose()
