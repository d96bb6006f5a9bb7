"""Shared fixtures: a temporary LLM_SPACE_HOME and an App built on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.paths import DataRoot


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data root; LLM_SPACE_HOME points at it for the test and its subprocesses."""
    root = tmp_path / "llm-space-home"
    root.mkdir()
    monkeypatch.setenv("LLM_SPACE_HOME", str(root))
    # Deleted test files go to the data root's .trash, not the real user's trash.
    monkeypatch.setenv("LLM_SPACE_NO_OS_TRASH", "1")
    return root


@pytest.fixture
def app(home: Path):
    application = App(DataRoot(home))
    yield application
    application.close()
