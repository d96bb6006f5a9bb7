"""Shared pieces of tool execution: the call context, the tool error, path resolution and
result serialisation.

`ToolContext` is built by the run loop (or the UI's "Call this tool") for one thread and
handed to `ToolRouter.execute_calls`; built-in implementations receive a `CallEnv` that adds
the per-call cancel token, timeout and the router's settings overrides. `rich_output(parts)`
checks a plugin's `create_result` parts (text and images) and makes the output from them.
The services a context holds are typed by the Protocols below (skills lookup, MCP caller). Raising `ToolError` (or any exception) in an
implementation becomes an error result with that message.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..cancel import CancelToken
from ..core.model import IMAGE_MIME_PATTERN, TextContent, ToolCallOutput, ToolImageContent
from ..paths import DataRoot, expand_home

_IMAGE_MIME = re.compile(IMAGE_MIME_PATTERN)


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
                  timeout: float | None = None, cancel: CancelToken | None = None,
                  *, elicit: Any = None) -> ToolCallOutput: ...


@dataclass
class ToolContext:
    """Where a thread's tools run: its working directory and the services they may use."""

    working_directory: str
    data_root: DataRoot | None = None
    skills: SkillLookup | None = None
    workspace_root: Path | None = None
    mcp: McpToolCaller | None = None
    elicit: Any = None  # answers an MCP server's requests for input (`mcp.elicitation.Elicitor`); None declines
    # For plugin tools (computed once per context, so the calls of one batch share them):
    thread_data: Callable[[], dict[str, Any]] | None = None  # the owning thread as on disk
    variables: Callable[[], dict[str, Any]] | None = None  # its prompt variables, resolved


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


def rich_output(parts: list[dict[str, Any]]) -> ToolCallOutput:
    """A tool output from `create_result` parts: `{"type": "text", "text"}` and
    `{"type": "image", "mimeType": "image/…", "data": "<base64>"}` (whitespace in the data is
    dropped). Other keys of a part are ignored. Raises `ToolError` naming the bad part."""
    if not isinstance(parts, list):
        raise ToolError(f"A tool result must be a list of text and image parts, not {_kind(parts)}.")
    content: list[TextContent | ToolImageContent] = []
    for i, part in enumerate(parts):
        where = f"Part {i + 1} of the tool result"
        if not isinstance(part, dict):
            raise ToolError(f"{where} must be an object with a type, not {_kind(part)}.")
        kind = part.get("type")
        if kind == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise ToolError(f"{where} (text) needs `text` as a string, not {_kind(text)}.")
            content.append(TextContent(type="text", text=text))
        elif kind == "image":
            content.append(_image_part(where, part))
        else:
            raise ToolError(f"{where} has type {kind!r}; use \"text\" or \"image\".")
    return ToolCallOutput(content=content, isError=False)


def _image_part(where: str, part: dict[str, Any]) -> ToolImageContent:
    mime, data = part.get("mimeType"), part.get("data")
    if not isinstance(mime, str) or not _IMAGE_MIME.match(mime):
        raise ToolError(f"{where} (image) needs `mimeType` like \"image/png\", not {mime!r}.")
    if not isinstance(data, str):
        raise ToolError(f"{where} (image) needs `data` as a base64 string, not {_kind(data)}.")
    data = "".join(data.split())
    try:
        if not data:
            raise ValueError
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ToolError(f"{where} (image) has `data` that is not valid base64 (send the image bytes base64-encoded).") from None
    return ToolImageContent(type="image", mimeType=mime, data=data)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return names.get(type(value), f"a {type(value).__name__}")
