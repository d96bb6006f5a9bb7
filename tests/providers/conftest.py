"""Fixtures for adapter tests: a running LoopbackLLM."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.llm_server import LoopbackLLM


@pytest.fixture
def srv() -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        yield server
