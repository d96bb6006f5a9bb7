"""Fixtures for run-loop tests: a loopback LLM server wired into a temporary data root, and
a helper that writes a thread into the workspace."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmspace.core.model import Thread
from llmspace.core.threadio import thread_from_data
from tests.support.llm_server import LoopbackLLM


@pytest.fixture
def srv() -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        yield server


def user(text: str, mid: str = "u1") -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": [{"type": "text", "text": text}]}


def assistant(text: str, mid: str, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"id": mid, "role": "assistant", "content": [{"type": "text", "text": text}]}
    if calls:
        msg["toolCalls"] = calls
    return msg


def make_thread(messages: list[dict[str, Any]], **extra: Any) -> Thread:
    context: dict[str, Any] = {"messages": messages}
    context.update(extra.pop("context", {}))
    return thread_from_data({"title": "t", **extra, "context": context})


def save_thread(app: Any, rel: str, thread: Thread) -> Path:
    app.workspace.save(rel, thread)
    return app.workspace.resolve(rel)
