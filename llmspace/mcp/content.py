"""MCP prompts and resources as thread content (JSON dicts of the thread file format).

A server's prompt or resource is someone else's text: the messages made here carry
`"literal": true`, the mark `core/templating/render.py` (`is_literal`) already honours for
text imported from a trace, so `{{…}}` and `{{@include(…)}}` in it are sent as written, never
rendered. Attaching a resource to a user message marks that message literal too (the mark
is per message).

Resources: text (and blobs of a `text/*` type, decoded as UTF-8) become a text part that
names the URI; images become image parts; any other binary type is refused with its MIME
type; more than 10 MB is refused. No `mcp` import.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from typing import Any

from ..core.model import AssistantMessage, Thread, UserMessage
from ..errors import UserFacingError
from .flatten import flatten_part

MAX_RESOURCE_BYTES = 10 * 1024 * 1024
LITERAL = "literal"


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


def _too_big(uri: str, size: int) -> None:
    if size > MAX_RESOURCE_BYTES:
        raise UserFacingError(f"The MCP resource {uri} is {_mb(size)}; at most 10 MB can be attached to a message.",
                              hint="Attach a smaller resource, or a part of it.")


def resource_parts(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Thread content parts for the contents of a `resources/read` (raises for what cannot be attached)."""
    parts: list[dict[str, Any]] = []
    for item in contents:
        uri = str(item.get("uri", ""))
        mime = str(item.get("mimeType") or "")
        if isinstance(item.get("text"), str):
            text = item["text"]
            _too_big(uri, len(text.encode("utf-8")))
            parts.append({"type": "text", "text": f"[resource: {uri}]\n{text}"})
            continue
        blob = item.get("blob")
        if not isinstance(blob, str):
            raise UserFacingError(f"The MCP resource {uri} has neither text nor data.")
        _too_big(uri, len(blob) * 3 // 4)
        try:
            data = base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError):
            raise UserFacingError(f"The MCP resource {uri}: its data is not valid base64.") from None
        _too_big(uri, len(data))
        if mime.startswith("text/"):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                raise UserFacingError(f"The MCP resource {uri} ({mime}) is not valid UTF-8 text.") from None
            parts.append({"type": "text", "text": f"[resource: {uri}]\n{text}"})
        elif mime.startswith("image/"):
            parts.append({"type": "image_data", "mimeType": mime, "data": base64.b64encode(data).decode("ascii")})
        else:
            raise UserFacingError(f"The MCP resource {uri} is {mime or 'binary data of no stated type'}: only text "
                                  "and images can be attached to a message.")
    return parts


def _prompt_part(content: dict[str, Any]) -> dict[str, Any]:
    kind = content.get("type")
    if kind == "text":
        return {"type": "text", "text": str(content.get("text", ""))}
    if kind == "image" and str(content.get("mimeType", "")).startswith("image/"):
        return {"type": "image_data", "mimeType": content["mimeType"], "data": str(content.get("data", ""))}
    if kind == "resource" and isinstance(content.get("resource"), dict):
        return resource_parts([content["resource"]])[0]
    return {"type": "text", "text": flatten_part(content)}


def prompt_messages(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Thread messages (user and assistant, as the server returns them), each marked literal."""
    out: list[dict[str, Any]] = []
    for message in result.get("messages") or []:
        role = "assistant" if message.get("role") == "assistant" else "user"
        out.append({"id": str(uuid.uuid4()), "role": role, "content": [_prompt_part(message.get("content") or {})],
                    LITERAL: True})
    return out


def insert_messages(thread: Thread, messages: list[dict[str, Any]]) -> None:
    """Append `prompt_messages(...)` to the thread."""
    for m in messages:
        thread.ensure_messages().append(
            AssistantMessage.model_validate(m) if m["role"] == "assistant" else UserMessage.model_validate(m))


def attach(thread: Thread, message_id: str | None, parts: list[dict[str, Any]]) -> str:
    """Attach `resource_parts(...)` to the user message `message_id` (marking it literal), or
    to a new literal user message; returns the message's id."""
    messages = thread.ensure_messages()
    if message_id is None:
        msg = UserMessage.model_validate({"id": str(uuid.uuid4()), "role": "user", "content": parts, LITERAL: True})
        messages.append(msg)
        return msg.id
    index = next((i for i, m in enumerate(messages) if m.id == message_id), None)
    if index is None or messages[index].role != "user":
        raise UserFacingError(f"The thread has no user message with id {message_id!r}.",
                              hint="A resource is attached to a user message.")
    data = messages[index].model_dump(mode="json", by_alias=True, exclude_unset=True)
    data["content"] = [*data.get("content", []), *parts]
    data[LITERAL] = True  # the server's text: sent as written, never rendered as a template
    messages[index] = UserMessage.model_validate(data)
    return message_id
