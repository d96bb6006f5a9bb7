"""Content blocks of foreign chat exports (OpenAI and Anthropic shapes) -> parts.

`read_content(value)` accepts a string, a list of blocks or strings, a single block or
null, and sorts what it finds into text, thinking, tool uses, tool results and images.
Images: Anthropic `image` blocks with base64 sources, OpenAI `image_url` data URLs and
the native `image_data` shape; remote URLs and non-`image/<word>` types are dropped.
`thread_context(system, tools, messages)` is the imported thread's `context` (system
prompts joined by blank lines; empty ones left out).

Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_DATA_URL = re.compile(r"^data:(image/[A-Za-z0-9_]+);base64,(.*)$", re.S)
_MIME = re.compile(r"^image/[A-Za-z0-9_]+$")
TEXT_TYPES = ("text", "input_text", "output_text")


@dataclass
class ToolUse:
    id: str | None
    name: str
    input: Any


@dataclass
class ToolResult:
    tool_use_id: str
    text: str
    is_error: bool | None


@dataclass
class Parts:
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    tool_uses: list[ToolUse] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    images: list[dict[str, str]] = field(default_factory=list)


def _image_from_url(value: Any) -> dict[str, str] | None:
    url = value.get("url") if isinstance(value, dict) else value
    if not isinstance(url, str):
        return None
    m = _DATA_URL.match(url.strip())
    if not m or not m.group(2).strip():
        return None
    return {"type": "image_data", "mimeType": m.group(1), "data": m.group(2).strip()}


def _image_block(block: dict[str, Any]) -> dict[str, str] | None:
    kind = block.get("type")
    if kind == "image":
        src = block.get("source")
        if isinstance(src, dict) and src.get("type") == "base64":
            mime, data = src.get("media_type"), src.get("data")
            if isinstance(mime, str) and _MIME.match(mime) and isinstance(data, str) and data:
                return {"type": "image_data", "mimeType": mime, "data": data}
        return None
    if kind == "image_url":
        return _image_from_url(block.get("image_url"))
    if kind == "input_image":
        return _image_from_url(block.get("image_url"))
    if kind == "image_data":
        mime, data = block.get("mimeType"), block.get("data")
        if isinstance(mime, str) and _MIME.match(mime) and isinstance(data, str) and data:
            return {"type": "image_data", "mimeType": mime, "data": data}
    return None


def plain_text(value: Any) -> str:
    """The text of a tool result's content: a string, or its text blocks joined by newlines."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return ""
    out: list[str] = []
    for block in value:
        if isinstance(block, str):
            out.append(block)
        elif isinstance(block, dict) and block.get("type", "text") in TEXT_TYPES and isinstance(block.get("text"), str):
            out.append(block["text"])
    return "\n".join(out)


def read_content(value: Any) -> Parts:
    """Sort a message's `content` into parts (see the module docstring)."""
    parts = Parts()
    if isinstance(value, str):
        if value.strip():
            parts.texts.append(value)
        return parts
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return parts
    for block in value:
        if isinstance(block, str):
            if block.strip():
                parts.texts.append(block)
            continue
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in TEXT_TYPES:
            text = block.get("text")
            if isinstance(text, str) and text.strip():
                parts.texts.append(text)
        elif kind == "thinking":
            text = block.get("thinking")
            if isinstance(text, str) and text.strip():
                parts.thinking.append(text)
        elif kind == "tool_use":
            name = block.get("name")
            if isinstance(name, str) and name:
                ident = block.get("id")
                parts.tool_uses.append(ToolUse(ident if isinstance(ident, str) and ident else None, name, block.get("input")))
        elif kind == "tool_result":
            ident = block.get("tool_use_id")
            if isinstance(ident, str) and ident:
                flag = block.get("is_error")
                parts.tool_results.append(ToolResult(ident, plain_text(block.get("content")),
                                                     flag if isinstance(flag, bool) else None))
        else:
            image = _image_block(block)
            if image is not None:
                parts.images.append(image)
    return parts


def thread_context(system: list[str], tools: list[dict[str, Any]], messages: list[dict[str, Any]]) -> dict[str, Any]:
    context: dict[str, Any] = {}
    if system:
        context["systemPrompt"] = "\n\n".join(system)
    if tools:
        context["tools"] = tools
    context["messages"] = messages
    return context
