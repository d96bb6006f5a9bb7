"""Shared pieces of tool execution: the call context, the tool error, path resolution and
result serialisation.

`ToolContext` is built by the run loop (or the UI's "Call this tool") for one thread and
handed to `ToolRouter.execute_calls`; built-in implementations receive a `CallEnv` that adds
the per-call cancel token, timeout and the router's settings overrides. The services a
context holds are typed by the Protocols below (skills lookup, MCP caller). Raising `ToolError` (or any exception) in an
implementation becomes an error result with that message.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..cancel import CancelToken
from ..core.model import TextContent, ToolCallOutput
from ..paths import DataRoot, expand_home


class FoundSkill(Protocol):
    """A skill as the `skill` tool reads it (`skills.skill.Skill`)."""

    @property
    def path(self) -> Path: ...

    def body(self) -> str: ...


class SkillLookup(Protocol):
    """Finds enabled skills by name (`skills.manager.SkillManager`)."""

    def find_enabled(self, name: str) -> FoundSkill | None: ...


class McpToolCaller(Protocol):
    """Calls MCP tools (`mcp.hub.McpHub`)."""

    def call_tool(self, server: str, tool_name: str, arguments: dict[str, Any] | None = None,
                  timeout: float | None = None, cancel: CancelToken | None = None) -> ToolCallOutput: ...


@dataclass
class ToolContext:
    """Where a thread's tools run: its working directory and the services they may use."""

    working_directory: str
    data_root: DataRoot | None = None
    skills: SkillLookup | None = None
    workspace_root: Path | None = None
    mcp: McpToolCaller | None = None


class ToolError(Exception):
    """A tool failure whose message is the tool result text (shown to model and user)."""


@dataclass
class CallEnv:
    """What one built-in call may use besides its arguments."""

    ctx: ToolContext
    cancel: CancelToken = field(default_factory=CancelToken)
    timeout: float | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # per-router overrides (tests)

    def cwd(self) -> Path:
        """The working directory (expanded; the process cwd when the thread sets none)."""
        wd = (self.ctx.working_directory or "").strip()
        return expand_home(wd) if wd else Path(os.getcwd())

    def resolve(self, path: str) -> Path:
        """Resolve a tool path argument: `~` expanded, relative paths against the cwd."""
        p = expand_home(str(path))
        if not p.is_absolute():
            p = self.cwd() / p
        return Path(os.path.normpath(p))


def text_output(text: str, is_error: bool = False) -> ToolCallOutput:
    """A tool output with one text part (fields set explicitly so they are written to files)."""
    return ToolCallOutput(content=[TextContent(type="text", text=text)], isError=is_error)


def error_output(message: str) -> ToolCallOutput:
    return text_output(message, True)


def serialise_result(value: Any) -> str:
    """Strings as they are; anything else as pretty JSON (2-space, like JSON.stringify)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)
