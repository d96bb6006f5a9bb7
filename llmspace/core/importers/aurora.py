"""Aurora thread exports (PascalCase `Messages` + `Tools`) -> thread data.

Messages: `Role` (system/user/assistant/tool, any case), text from `Content.StringValue`,
assistant `Content.ToolCalls[]` = `{ID, FunctionCall: {Name, Arguments}}` (arguments parsed
leniently), tool results matched by `ToolCallID`. Tools: `{Name, Description, Strict,
ToolParameters}` with parameter type codes 1 string, 2 number, 3 boolean, 4 object,
5 array (anything else: string). No title, model, thinking or usage.

Pure.
"""

from __future__ import annotations

import uuid
from typing import Any, TypeGuard

from ..tool_arguments import stored_arguments
from .content import thread_context

_TYPES = {1: "string", 2: "number", 3: "boolean", 4: "object", 5: "array"}
NOTHING_FOUND = "no messages, system prompt or tools found"


def is_aurora(value: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict) and isinstance(value.get("Messages"), list) and isinstance(value.get("Tools"), list)


def _text(msg: dict[str, Any]) -> str:
    content = msg.get("Content")
    value = content.get("StringValue") if isinstance(content, dict) else None
    return value if isinstance(value, str) else ""


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            num = float(value.strip())
        except ValueError:
            return None
        if num != num or num in (float("inf"), float("-inf")):
            return None
        return int(num) if num.is_integer() and "." not in value and "e" not in value.lower() else num
    return None


def _param(spec: Any, depth: int = 0) -> dict[str, Any]:
    """One ParamSpec as a JSON Schema property."""
    if not isinstance(spec, dict):
        return {"type": "string"}
    code = spec.get("Type")
    kind = _TYPES.get(code, "string") if isinstance(code, int) and not isinstance(code, bool) else "string"
    out: dict[str, Any] = {"type": kind}
    for src, dst in (("Description", "description"), ("Title", "title"), ("Format", "format")):
        if isinstance(spec.get(src), str):
            out[dst] = spec[src]
    if isinstance(spec.get("Enum"), list):
        out["enum"] = spec["Enum"]
    if "Default" in spec:
        out["default"] = spec["Default"]
    minimum = _number(spec.get("Minimum"))
    if minimum is not None:
        out["minimum"] = minimum
    items = spec.get("Items")
    if kind == "array":
        item = items.get("item") if isinstance(items, dict) else None
        out["items"] = _param(item, depth + 1) if isinstance(item, dict) and depth < 32 else {}
    elif kind == "object" and isinstance(items, dict) and depth < 32:
        out["properties"] = {str(k): _param(v, depth + 1) for k, v in items.items()}
    return out


def _tool(entry: Any) -> dict[str, Any] | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("Name"), str) or not entry["Name"]:
        return None
    params = entry.get("ToolParameters")
    props: dict[str, Any] = {}
    required: list[str] = []
    if isinstance(params, dict):
        for name, spec in params.items():
            props[name] = _param(spec)
            if isinstance(spec, dict) and spec.get("IsRequired") is True:
                required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    tool: dict[str, Any] = {"type": "function", "name": entry["Name"],
                            "description": entry["Description"] if isinstance(entry.get("Description"), str) else "",
                            "parameters": schema}
    if isinstance(entry.get("Strict"), bool):
        tool["strict"] = entry["Strict"]
    return tool


def normalize_aurora(root: dict[str, Any]) -> dict[str, Any] | str:
    """Thread data from an Aurora export, or the reason it was skipped."""
    system: list[str] = []
    messages: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    for msg in root["Messages"]:
        if not isinstance(msg, dict) or not isinstance(msg.get("Role"), str):
            continue
        role, text = msg["Role"].lower(), _text(msg)
        if role == "system":
            if text.strip():
                system.append(text)
        elif role == "user":
            if text:
                messages.append({"id": str(uuid.uuid4()), "role": "user", "content": [{"type": "text", "text": text}]})
        elif role == "assistant":
            content = msg.get("Content")
            raw_calls = content.get("ToolCalls") if isinstance(content, dict) else None
            tool_calls = []
            for call in raw_calls if isinstance(raw_calls, list) else []:
                fn = call.get("FunctionCall") if isinstance(call, dict) else None
                if not isinstance(fn, dict) or not isinstance(fn.get("Name"), str) or not fn["Name"]:
                    continue
                ident = call.get("ID") if isinstance(call.get("ID"), str) and call["ID"] else str(uuid.uuid4())
                args, partial = stored_arguments(fn.get("Arguments"))
                call_input: dict[str, Any] = {"name": fn["Name"], "arguments": args}
                if partial is not None:
                    call_input["partialArguments"] = partial
                item = {"id": ident, "input": call_input}
                calls[ident] = item
                tool_calls.append(item)
            if text or tool_calls:
                out: dict[str, Any] = {"id": str(uuid.uuid4()), "role": "assistant",
                                       "content": [{"type": "text", "text": text}] if text else []}
                if tool_calls:
                    out["toolCalls"] = tool_calls
                messages.append(out)
        elif role == "tool":
            call_id = msg.get("ToolCallID")
            target = calls.get(call_id) if isinstance(call_id, str) else None
            if target is not None and text:
                target["output"] = {"content": [{"type": "text", "text": text}]}
    tools = [t for t in (_tool(e) for e in root["Tools"]) if t is not None]
    if not messages and not system and not tools:
        return NOTHING_FOUND
    return {"context": thread_context(system, tools, messages)}
