"""A loopback GitHub for every test here, with the environment pointing the app at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .github_server import CLIENT_ID, GitHubServer


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch, home: Path) -> Iterator[GitHubServer]:
    server = GitHubServer()
    monkeypatch.setenv("LLM_SPACE_GITHUB_API", server.api)
    monkeypatch.setenv("LLM_SPACE_GITHUB_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
    with server.running():
        yield server
