"""Fixtures of the conversation tests: `scripted`, the scripted agent, user, tool simulator and
judge (scripted.py), and `srv`, a loopback server answering with them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.evals.conversation.scripted import Scripted
from tests.support.llm_server import LoopbackLLM


@pytest.fixture
def scripted() -> Scripted:
    return Scripted()


@pytest.fixture
def srv(scripted: Scripted) -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        server.responder = scripted
        yield server
