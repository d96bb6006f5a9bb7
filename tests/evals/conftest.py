"""Fixtures of the evaluation tests: `oracle`, the scripted answers of the loopback model
(tests/evals/support.py), and `srv`, a loopback server answering with it. A module may
define its own of either name; pytest takes the module's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.evals.support import Oracle
from tests.support.llm_server import LoopbackLLM


@pytest.fixture
def oracle() -> Oracle:
    return Oracle()


@pytest.fixture
def srv(oracle: Oracle) -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        server.responder = oracle
        yield server
