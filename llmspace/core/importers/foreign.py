"""OpenAI Chat Completions-style and Anthropic Messages-style exports -> thread data.

`normalize_foreign(root, resolve_model)` reads: messages from a root
`messages` array (or the root array itself); system prompt from root `system` plus every
`system`/`developer` message, joined by a blank line; user/assistant/tool roles mapped,
tool results attached to earlier tool calls (Anthropic `is_error` kept as `isError`),
unknown roles skipped; tools from root `tools`; the model only from a root `model` string
that `resolve_model` recognises (or a native `{provider, id}` object); root `title` kept.

Returns plain thread data (validated by the caller) or a skip reason. Pure.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from ..tool_arguments import stored_arguments
from .content import Parts, plain_text, read_content, thread_context

# Given a foreign model id, the native {provider, id} it maps to (or None).
ModelResolver = Callable[[str], "dict[str, str] | None"]
NOTHING_FOUND = "no messages, system prompt, tools or model found"


def _new_id() -> str:
    return str(uuid.uuid4())


class _Ids:
    """Source ids when usable and unique, fresh uuids otherwise."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def take(self, value: Any) -> str:
        ident = value if isinstance(value, str) and value and value not in self.seen else _new_id()
        self.seen.add(ident)
        return ident


def _system_text(value: Any) -> str:
    if isinstance(value, str):
        return value if value.strip() else ""
    if isinstance(value, list):
        text = "\n".join(b["text"] for b in value if isinstance(b, dict) and isinstance(b.get("text"), str))
        return text if text.strip() else ""
    return ""


def _tool_call(ident: str, name: str, raw_args: Any) -> dict[str, Any]:
    args, partial = stored_arguments(raw_args)
    call_input: dict[str, Any] = {"name": name, "arguments": args}
    if partial is not None:
        call_input["partialArguments"] = partial
    return {"id": ident, "input": call_input}


def _openai_calls(msg: dict[str, Any]) -> list[tuple[Any, str, Any]]:
    """(id, name, raw arguments) of `tool_calls` (nested `function` or flat) and legacy `function_call`."""
    out: list[tuple[Any, str, Any]] = []
    calls = msg.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            if not isinstance(call, dict):
                continue
            inner = call.get("function")
            fn = inner if isinstance(inner, dict) else call
            name = fn.get("name")
            if isinstance(name, str) and name:
                out.append((call.get("id"), name, fn.get("arguments")))
    legacy = msg.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("name"), str) and legacy["name"]:
        out.append((None, legacy["name"], legacy.get("arguments")))
    return out


def _tool(entry: Any) -> dict[str, Any] | None:
    """One root `tools` entry as a native tool (function unless a complete MCP or plugin tool)."""
    if not isinstance(entry, dict):
        return None
    function = entry.get("function")
    spec = function if entry.get("type") == "function" and isinstance(function, dict) else entry
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        return None
    desc = spec.get("description")
    params = spec.get("parameters")
    if not isinstance(params, dict):
        params = spec.get("input_schema")
    source = entry.get("source")
    if not isinstance(source, dict):
        source = {}
    is_mcp = entry.get("type") == "mcp" or (entry.get("type") is None and source.get("type") == "mcp")
    plugin = {k: entry[k] for k in ("pluginId", "toolId") if isinstance(entry.get(k), str)}
    is_plugin = entry.get("type") == "plugin" and len(plugin) == 2
    tool: dict[str, Any] = {"type": "mcp" if is_mcp else "plugin" if is_plugin else "function",
                            **(plugin if is_plugin else {}), "name": name,
                            "description": desc if isinstance(desc, str) else "",
                            "parameters": params if isinstance(params, dict) else {}}
    strict = spec.get("strict")
    if isinstance(strict, bool):
        tool["strict"] = strict
    if is_mcp:
        for key in ("serverId", "serverName", "toolName"):
            value = entry.get(key, source.get(key))
            if not isinstance(value, str):
                return None  # an incomplete MCP tool is dropped
            tool[key] = value
    return tool


def _model(value: Any, resolve_model: ModelResolver | None) -> dict[str, Any] | None:
    if isinstance(value, str) and value and resolve_model is not None:
        found = resolve_model(value)
        if isinstance(found, dict) and isinstance(found.get("provider"), str) and isinstance(found.get("id"), str):
            return {"provider": found["provider"], "id": found["id"]}
    if isinstance(value, dict) and isinstance(value.get("provider"), str) and isinstance(value.get("id"), str):
        return {"provider": value["provider"], "id": value["id"]}
    return None


def normalize_foreign(root: Any, resolve_model: ModelResolver | None = None) -> dict[str, Any] | str:
    """Thread data from an OpenAI/Anthropic-style export, or the reason it was skipped."""
    if isinstance(root, list):
        raw_messages, top = root, {}
    elif isinstance(root, dict) and isinstance(root.get("messages"), list):
        raw_messages, top = root["messages"], root
    else:
        return "no messages array found"
    system: list[str] = []
    head = _system_text(top.get("system"))
    if head:
        system.append(head)
    messages: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    ids = _Ids()
    for msg in raw_messages:
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        role = role.lower() if isinstance(role, str) else None
        if role in ("system", "developer"):
            text = "\n".join(read_content(msg.get("content")).texts)
            if text.strip():
                system.append(text)
        elif role == "user":
            parts = read_content(msg.get("content"))
            _attach_results(parts, calls)
            content = [{"type": "text", "text": t} for t in parts.texts] + parts.images
            if content:
                messages.append({"id": ids.take(msg.get("id")), "role": "user", "content": content})
        elif role == "assistant":
            out = _assistant(msg, ids, calls)
            if out is not None:
                messages.append(out)
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            call = calls.get(call_id) if isinstance(call_id, str) else None
            if call is not None:
                call["output"] = {"content": [{"type": "text", "text": plain_text(msg.get("content"))}]}
    tools = [t for t in (_tool(e) for e in top.get("tools", []) or []) if t is not None] if isinstance(top.get("tools"), list) else []
    model = _model(top.get("model"), resolve_model)
    if not messages and not system and not tools and model is None:
        return NOTHING_FOUND
    data: dict[str, Any] = {}
    if isinstance(top.get("title"), str):
        data["title"] = top["title"]
    if model is not None:
        data["model"] = model
    data["context"] = thread_context(system, tools, messages)
    return data


def _attach_results(parts: Parts, calls: dict[str, dict[str, Any]]) -> None:
    for result in parts.tool_results:
        call = calls.get(result.tool_use_id)
        if call is None:
            continue  # a result for a call we never saw is dropped
        output: dict[str, Any] = {"content": [{"type": "text", "text": result.text}]}
        if result.is_error is not None:
            output["isError"] = result.is_error
        call["output"] = output


def _assistant(msg: dict[str, Any], ids: _Ids, calls: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    parts = read_content(msg.get("content"))
    tool_calls: list[dict[str, Any]] = []
    for use in parts.tool_uses:
        args = use.input if isinstance(use.input, dict) else {}
        tool_calls.append({"id": use.id or _new_id(), "input": {"name": use.name, "arguments": args}})
    for ident, name, raw in _openai_calls(msg):
        tool_calls.append(_tool_call(ident if isinstance(ident, str) and ident else _new_id(), name, raw))
    for call in tool_calls:
        calls[call["id"]] = call
    thinking = list(parts.thinking)
    for key in ("reasoning_content", "reasoning", "thinking"):
        value = msg.get(key)
        if isinstance(value, str) and value.strip():
            thinking.append(value)
            break
    if not parts.texts and not thinking and not tool_calls:
        return None
    out: dict[str, Any] = {"id": ids.take(msg.get("id")), "role": "assistant",
                           "content": [{"type": "text", "text": t} for t in parts.texts]}
    if thinking:
        out["thinking"] = "\n".join(thinking)
    if tool_calls:
        out["toolCalls"] = tool_calls
    return out
