"""Fixtures of the optimization tests: `task`, the prompt-dependent loopback model and scripted
reflector (tests/optimize/support.py), and `srv`, a loopback server answering with it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.optimize.support import PromptTask
from tests.support.llm_server import LoopbackLLM


@pytest.fixture
def task() -> PromptTask:
    return PromptTask()


@pytest.fixture
def srv(task: PromptTask) -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        server.responder = task
        yield server
