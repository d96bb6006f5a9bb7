"""Flatten an MCP `CallToolResult` to the text a Thread records as the tool result.

Text parts as they are; `[image: <mime>, <n> bytes]`; `[audio: <mime>, <n> bytes]`;
embedded resource text under a `[resource: <uri>]` header, or a blob summary;
`[resource link: <name>] <uri>`; `structuredContent` appended as pretty JSON. Parts are
joined by blank lines, trimmed, and capped at 20,000 characters plus `\\n\\n[truncated]`.
Works on the SDK's pydantic objects by attribute (duck-typed), so importing this module
does not import `mcp`.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

OUTPUT_CAP = 20_000
TRUNCATED_MARKER = "\n\n[truncated]"


def _b64_size(data: Any) -> int:
    if not isinstance(data, str):
        return 0
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)


def _get(obj: Any, *names: str) -> Any:
    for n in names:
        if isinstance(obj, dict):
            if n in obj:
                return obj[n]
        elif hasattr(obj, n):
            return getattr(obj, n)
    return None


def flatten_part(part: Any) -> str:
    kind = _get(part, "type")
    if kind == "text":
        return str(_get(part, "text") or "")
    if kind in ("image", "audio"):
        mime = _get(part, "mime_type", "mimeType") or "application/octet-stream"
        return f"[{kind}: {mime}, {_b64_size(_get(part, 'data'))} bytes]"
    if kind == "resource":
        res = _get(part, "resource")
        uri = str(_get(res, "uri") or "")
        text = _get(res, "text")
        if isinstance(text, str):
            return f"[resource: {uri}]\n{text}"
        mime = _get(res, "mime_type", "mimeType") or "application/octet-stream"
        return f"[resource: {uri}] ({mime}, {_b64_size(_get(res, 'blob'))} bytes)"
    if kind == "resource_link":
        name = _get(part, "name") or _get(part, "uri") or ""
        return f"[resource link: {name}] {_get(part, 'uri') or ''}"
    try:
        dumped = part.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(part, "model_dump") else part
        return json.dumps(dumped, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(part)


def cap(text: str, limit: int = OUTPUT_CAP) -> str:
    return text if len(text) <= limit else text[:limit] + TRUNCATED_MARKER


def flatten_result(result: Any) -> tuple[str, bool]:
    """(text, isError) of a CallToolResult-like object."""
    parts = [flatten_part(p) for p in (_get(result, "content") or [])]
    structured = _get(result, "structured_content", "structuredContent")
    if structured is not None:
        parts.append(json.dumps(structured, indent=2, ensure_ascii=False))
    text = "\n\n".join(p for p in parts if p != "").strip()
    return cap(text), bool(_get(result, "is_error", "isError"))
