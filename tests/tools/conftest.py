"""Helpers for the tool tests: a router without an app, and one-call execution of a built-in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from llmspace.core.model import ToolCall, ToolCallOutput
from llmspace.tools.base import ToolContext
from llmspace.tools.builtins import builtin_tool
from llmspace.tools.router import ToolRouter


class Runner:
    """Runs built-ins by name against a working directory."""

    def __init__(self, cwd: Path, **settings: Any) -> None:
        self.cwd = cwd
        self.router = ToolRouter(settings=settings)
        self.ctx = ToolContext(working_directory=str(cwd))

    def out(self, name: str, /, router_timeout: float | None = None, **arguments: Any) -> ToolCallOutput:
        tool = builtin_tool(name)
        assert tool is not None, name
        arguments.setdefault("description", "test") if "description" in (tool.parameters or {}).get("properties", {}) else None
        call = ToolCall.model_validate({"id": "call_1", "input": {"name": name, "arguments": arguments}})
        return self.router.execute(tool, call, self.ctx, None, router_timeout)

    def ok(self, name: str, /, **arguments: Any) -> str:
        out = self.out(name, **arguments)
        assert out.isError is False, out.text()
        return out.text()

    def err(self, name: str, /, **arguments: Any) -> str:
        out = self.out(name, **arguments)
        assert out.isError is True, out.text()
        return out.text()


@pytest.fixture
def run(tmp_path: Path) -> Runner:
    work = tmp_path / "work"
    work.mkdir()
    return Runner(work)
