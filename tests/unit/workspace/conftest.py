"""Fixtures for the workspace layer: a workspace on disk, a fake editor, an overlay with its shadow."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_ls.workspace.overlay import OpenBuffer, Overlay
from agent_ls.workspace.sandbox import Sandbox
from agent_ls.workspace.shadow import ShadowCopy
from tests.support.processes import require_sandbox


class FakeBuffers:
    """A ``BufferSource`` over a dict of absolute path to open buffer, like an editor's open tabs."""

    def __init__(self) -> None:
        self.open: dict[Path, OpenBuffer] = {}

    def get(self, path: Path) -> OpenBuffer | None:
        return self.open.get(path)

    def open_paths(self) -> list[Path]:
        return list(self.open)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture(params=["sandboxed", "unsandboxed"])
def sandbox(request: pytest.FixtureRequest) -> Sandbox | None:
    """Each test that takes it runs twice: in this machine's bubblewrap sandbox, and unsandboxed."""
    return require_sandbox() if request.param == "sandboxed" else None


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The system temporary directory, private to the test, where the pending pass writes."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def buffers() -> FakeBuffers:
    return FakeBuffers()


@pytest.fixture
def shadow(root: Path, tmp_path: Path) -> Iterator[ShadowCopy]:
    parent = tmp_path / "shadows"
    parent.mkdir()
    copy = ShadowCopy(root, temp_parent=parent)
    yield copy
    copy.close()


@pytest.fixture
def overlay(root: Path, buffers: FakeBuffers, shadow: ShadowCopy) -> Overlay:
    return Overlay(root, buffers, shadow=shadow)


def write(root: Path, files: dict[str, str | bytes]) -> None:
    """Create ``files`` (workspace-relative path to text or bytes) under ``root``, bytes exactly."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
