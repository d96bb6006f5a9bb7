"""Fixtures for the provider tests: a running LoopbackLLM, and `no_keys` (no API key in the
environment, no keyring) for the modules that ask for it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.llm_server import LoopbackLLM


@pytest.fixture
def srv() -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        yield server


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
