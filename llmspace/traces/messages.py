"""Chat messages as trace sources write them -> `Msg`s of `spans.py`.

`parse_messages(value)` reads a message list in any of these shapes (a JSON string is decoded
first, by the original's rule): a bare list, `{messages: […]}`, `{input: […]}`, one message,
or OpenAI's `{choices: [{message}]}`. Each message may carry
- `content` as a string, a list of parts (`text`/`input_text`/`output_text`, `image_url` with
  a data URL, Anthropic's `image`, `tool_use`, `tool_result`, `thinking`) or nested JSON;
- `parts` as the OpenTelemetry GenAI conventions write them (`text`, `tool_call`,
  `tool_call_response`, `reasoning`, `blob`/`image` with base64 content);
- OpenAI's `tool_calls` and `tool_call_id` (a `tool` message is a tool result).

`unflatten(attributes, prefix)` turns OpenInference's flat keys (`llm.input_messages.0.
message.role`, …) into those dicts. Values that are not chat-shaped give None.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from .spans import Msg, Part, as_record, decode_text, first_string, json_text

_TEXT_TYPES = ("text", "input_text", "output_text")
_ROLES = {"human": "user", "ai": "assistant", "model": "assistant", "function": "tool", "tool_result": "tool"}


def parse_messages(value: Any) -> list[Msg] | None:
    """The messages in `value`, or None when it is not a message list (see the module docstring)."""
    value = decode_text(value)
    record = as_record(value)
    if record is not None:
        for key in ("messages", "input"):
            if isinstance(record.get(key), list):
                return parse_messages(record[key])
        choices = record.get("choices")
        if isinstance(choices, list) and choices and as_record(choices[0]) and as_record(choices[0].get("message")):
            return [m for m in (parse_message(c.get("message")) for c in choices if as_record(c)) if m is not None][:1]
        one = parse_message(record)
        return [one] if one is not None else None
    if isinstance(value, list):
        found = [parse_message(item) for item in value]
        messages = [m for m in found if m is not None]
        return messages if messages else None
    return None


def parse_message(item: Any) -> Msg | None:
    record = as_record(item)
    if record is None or not isinstance(record.get("role"), str):
        return None
    role = record["role"].strip().lower()
    role = _ROLES.get(role, role)
    msg = Msg(role=role)
    if "parts" in record and isinstance(record["parts"], list):
        for part in record["parts"]:
            msg.parts.extend(_parts_of(part))
    content = decode_nested(record.get("content"))
    if content is not None:
        msg.parts.extend(_content_parts(content))
    reasoning = first_string(record.get("reasoning_content"), record.get("reasoning"), record.get("thinking"))
    if reasoning:
        msg.parts.append(Part("reasoning", text=reasoning))
    calls = record.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        part = _openai_tool_call(call)
        if part is not None:
            msg.parts.append(part)
    if role == "tool":
        call_id = first_string(record.get("tool_call_id"), record.get("toolCallId"), record.get("id")) or ""
        texts = [p for p in msg.parts if p.kind == "text"]
        others = [p for p in msg.parts if p.kind != "text"]
        if texts or not others:
            text = "\n".join(p.text for p in texts)
            msg.parts = [Part("tool_result", text=text, call_id=call_id), *others]
    return msg


def plain_text(value: Any) -> str:
    """Text of any value as the original reads it: strings as they are, lists joined by
    lines, `text`/`content` keys followed, anything else as indented JSON."""
    value = decode_nested(value)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(t for t in (plain_text(item) for item in value) if t)
    record = as_record(value)
    if record is not None:
        for key in ("text", "content"):
            if key in record:
                return plain_text(record[key])
    return json_text(value)


def decode_nested(value: Any) -> Any:
    """Content that is itself a JSON wrapper (`{"content": …}`, a list of parts) decoded; plain text kept."""
    decoded = decode_text(value)
    if isinstance(decoded, dict | list):
        return decoded
    return value


def _content_parts(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [Part("text", text=content)] if content else []
    if isinstance(content, list):
        out: list[Part] = []
        for item in content:
            out.extend(_parts_of(item))
        return out
    record = as_record(content)
    if record is not None:
        if "type" in record:
            return _parts_of(record)
        for key in ("text", "content"):
            if key in record:
                return _content_parts(decode_nested(record[key]))
    if content is None:
        return []
    return [Part("text", text=json_text(content))]


def _image_from_url(url: str) -> Part | None:
    if url.startswith("data:") and ";base64," in url:
        head, _, data = url.partition(";base64,")
        mime = head[5:] or "image/png"
        if mime.startswith("image/"):
            return Part("image", mime=mime, data=data)
    return None


def _parts_of(item: Any) -> list[Part]:
    """One content part or GenAI `parts` entry -> parts (an unknown part keeps its JSON as text)."""
    if isinstance(item, str):
        return [Part("text", text=item)] if item else []
    record = as_record(item)
    if record is None:
        return [] if item is None else [Part("text", text=json_text(item))]
    kind = str(record.get("type", "text")).lower()
    if kind in _TEXT_TYPES:
        text = first_string(record.get("text"), record.get("content"))
        return [Part("text", text=text)] if text else []
    if kind in ("reasoning", "thinking"):
        text = first_string(record.get("content"), record.get("thinking"), record.get("text"))
        return [Part("reasoning", text=text)] if text else []
    if kind in ("tool_call", "tool_use", "function_call"):
        args = record.get("arguments", record.get("input"))
        return [Part("tool_call", call_id=str(record.get("id") or record.get("call_id") or ""),
                     name=str(record.get("name") or "tool"), arguments=decode_text(args))]
    if kind in ("tool_call_response", "tool_result", "function_call_output"):
        result = record.get("response", record.get("result", record.get("content", record.get("output"))))
        texts = _content_parts(decode_nested(result)) if not isinstance(result, str) else [Part("text", text=result)]
        text = "\n".join(p.text for p in texts if p.kind == "text")
        call_id = str(record.get("id") or record.get("tool_use_id") or record.get("call_id") or "")
        return [Part("tool_result", text=text, call_id=call_id, is_error=bool(record.get("is_error")))]
    if kind in ("image_url", "input_image"):
        ref = record.get("image_url")
        url = ref.get("url") if isinstance(ref, dict) else ref
        part = _image_from_url(url) if isinstance(url, str) else None
        return [part] if part else [Part("text", text=f"[image {url}]" if isinstance(url, str) else "[image]")]
    if kind in ("image", "blob"):
        source = as_record(record.get("source")) or record
        data = first_string(source.get("data"), source.get("content"))
        mime = first_string(source.get("media_type"), source.get("mime_type"), source.get("mimeType")) or ""
        if data and mime.startswith("image/"):
            return [Part("image", mime=mime, data=data)]
        if data and not mime and record.get("modality") == "image":
            return [Part("image", mime="image/png", data=data)]
        url = first_string(source.get("url"), record.get("uri"))
        part = _image_from_url(url) if url else None
        return [part] if part else [Part("text", text=f"[{kind} {mime or url or ''}]".replace(" ]", "]"))]
    if kind == "uri":
        return [Part("text", text=f"[{record.get('modality') or 'file'} {record.get('uri', '')}]")]
    text = first_string(record.get("text"), record.get("content"))
    return [Part("text", text=text)] if text else [Part("text", text=json_text(record))]


def _openai_tool_call(call: Any) -> Part | None:
    record = as_record(call)
    if record is None:
        return None
    function = as_record(record.get("function")) or record
    name = first_string(function.get("name")) or "tool"
    return Part("tool_call", call_id=str(record.get("id") or ""), name=name,
                arguments=decode_text(function.get("arguments")))


# -- OpenInference flat attributes ---------------------------------------------------------


def unflatten(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """`{prefix}.N.message.role` / `.content` / `.contents.M.message_content.*` /
    `.tool_calls.K.tool_call.*` / `.tool_call_id` -> OpenAI-shaped message dicts, by index."""
    rows: dict[int, dict[str, Any]] = {}
    lead = prefix + "."
    for key, value in attributes.items():
        if not key.startswith(lead):
            continue
        index, _, rest = key[len(lead):].partition(".")
        if not index.isdigit():
            continue
        rest = rest.removeprefix("message.")
        _put(rows.setdefault(int(index), {}), rest.split("."), value)
    out = []
    for _i, row in sorted(rows.items()):
        message: dict[str, Any] = {"role": row.get("role", "user")}
        if "content" in row:
            message["content"] = row["content"]
        contents = row.get("contents")
        if isinstance(contents, dict):
            message["content"] = [_oi_content(c.get("message_content", c)) for _k, c in sorted(contents.items()) if isinstance(c, dict)]
        calls = row.get("tool_calls")
        if isinstance(calls, dict):
            message["tool_calls"] = [_oi_call(c.get("tool_call", c)) for _k, c in sorted(calls.items()) if isinstance(c, dict)]
        if "tool_call_id" in row:
            message["tool_call_id"] = row["tool_call_id"]
        out.append(message)
    return out


def _put(tree: dict[str, Any], path: list[str], value: Any) -> None:
    for i, part in enumerate(path[:-1]):
        key: Any = int(part) if part.isdigit() else part
        nxt = tree.get(key)
        if not isinstance(nxt, dict):
            nxt = tree[key] = {}
        tree = nxt
        del i
    last: Any = int(path[-1]) if path[-1].isdigit() else path[-1]
    tree[last] = value


def _oi_content(value: Any) -> dict[str, Any]:
    record = as_record(value) or {}
    image = as_record(record.get("image"))
    if record.get("type") == "image" and image is not None:
        inner = as_record(image.get("image")) or image
        return {"type": "image_url", "image_url": {"url": inner.get("url", "")}}
    return {"type": "text", "text": record.get("text", "")}


def _oi_call(value: Any) -> dict[str, Any]:
    record = as_record(value) or {}
    function = as_record(record.get("function")) or {}
    return {"id": record.get("id", ""), "function": {"name": function.get("name", "tool"), "arguments": function.get("arguments")}}
