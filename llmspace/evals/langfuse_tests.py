"""Langfuse traces as promptfoo tests (`langfuse://traces?limit=…&userId=…`), as promptfoo reads them.

    tests = fetch_langfuse("langfuse://traces?limit=10", "promptfooconfig.yaml")

`GET /api/public/traces?fields=core,io,metrics&limit=…&page=…` on `LANGFUSE_BASE_URL` (else
`LANGFUSE_HOST`, else https://cloud.langfuse.com) with the keys `LANGFUSE_PUBLIC_KEY` and
`LANGFUSE_SECRET_KEY` (Basic auth, through `traces/langfuse_api.py`'s client), pages of at most
100 until `limit` (default 100, at most 1000) or `meta.totalPages`. The URL's `userId`,
`sessionId`, `name`, `fromTimestamp`, `toTimestamp`, `version`, `release` and `tags`
(comma-separated) are passed on.

A trace becomes a test with the vars `input` (the text of the last user message, or of a
`query`/`prompt`/`message`/`input`/`text` field), `output` (the answer's text from OpenAI- or
Anthropic-shaped output), `__langfuse_trace_id`, `__langfuse_timestamp`, `__langfuse_input`,
`__langfuse_output` and, when the trace has them, `__langfuse_name`, `_user_id`, `_session_id`,
`_tags`, `_metadata`, `_latency`, `_cost`, `_url`; the description `Trace: NAME (YYYY-MM-DD)`;
no variable expansion. promptfoo checks the stored output instead of asking a model; here the
models answer `input` and the stored output is a variable (`{{output}}`) the assertions may use.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import parse_qsl

from ..errors import UserFacingError
from ..traces.langfuse_api import LangfuseClient
from ..traces.remote import RemoteError, normalise_base_url
from .remote_sources import LANGFUSE_PREFIX, Budget, redacted, remote_failure

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
PAGE_SIZE = 100
FIELDS = "core,io,metrics"
TEXT_BLOCKS = ("text", "input_text", "output_text")
STRING_PARAMS = ("userId", "sessionId", "name", "fromTimestamp", "toTimestamp", "version", "release")
ENV_HINT = "LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY, and LANGFUSE_BASE_URL or LANGFUSE_HOST"


def parse_traces_url(spec: str, config_name: str) -> tuple[int, dict[str, Any]]:
    """(the trace limit, the query parameters passed to Langfuse)."""
    params = parse_qsl(spec[len(LANGFUSE_PREFIX):].removeprefix("?"), keep_blank_values=True)
    query: dict[str, Any] = {}
    limit = DEFAULT_LIMIT
    tags: list[str] = []
    for key, value in params:
        if key == "limit" and value:
            if not value.isdigit() or int(value) < 1:
                raise UserFacingError(f"{config_name}: the limit of {redacted(spec)} is not a positive whole number ({value!r}).")
            limit = min(int(value), MAX_LIMIT)
        elif key == "tags":
            tags.extend(t.strip() for t in value.split(",") if t.strip())
        elif key in STRING_PARAMS and value:
            query[key] = value
    if tags:
        query["tags"] = tags
    return limit, query


def fetch_langfuse(spec: str, config_name: str) -> list[dict[str, Any]]:
    limit, query = parse_traces_url(spec, config_name)
    public = os.environ.get("LANGFUSE_PUBLIC_KEY", "").strip()
    secret = os.environ.get("LANGFUSE_SECRET_KEY", "").strip()
    if not public or not secret:
        raise UserFacingError(f"{config_name}: {redacted(spec)} needs Langfuse keys, and LANGFUSE_PUBLIC_KEY or "
                              "LANGFUSE_SECRET_KEY is not set; nothing was run.",
                              hint=f"Set {ENV_HINT} (the keys of the Langfuse project that holds the traces).")
    raw_base = os.environ.get("LANGFUSE_BASE_URL", "").strip() or os.environ.get("LANGFUSE_HOST", "").strip() \
        or "https://cloud.langfuse.com"
    base = normalise_base_url(raw_base, "Langfuse")
    messages = {
        401: ("Langfuse rejected the keys", f"Check {ENV_HINT}."),
        403: ("Langfuse refused these keys access to the traces", "Use the keys of the project that holds the traces."),
        404: (f"Langfuse at {base} has no /api/public/traces", ("Check LANGFUSE_BASE_URL (or LANGFUSE_HOST): it is the "
                                                              "Langfuse server's address.")),
    }
    budget = Budget(redacted(spec), "Add a smaller `limit=` or a filter (`userId`, `name`, `fromTimestamp`, …) to the URL.")
    client = LangfuseClient(base, public, secret)
    tests: list[dict[str, Any]] = []
    page_limit = min(PAGE_SIZE, limit)
    try:
        page = 1
        while len(tests) < limit:
            try:
                answer = client.http.get("/api/public/traces", {**query, "fields": FIELDS, "limit": page_limit, "page": page})
            except RemoteError as exc:
                raise remote_failure(exc, redacted(spec), messages, "Connect to the network and run again (the tests are "
                                     "then kept, and later runs are offline).") from None
            data = answer.get("data") if isinstance(answer, dict) else None
            if not isinstance(data, list):
                raise UserFacingError(f"Langfuse at {base} answered /api/public/traces without a `data` list; nothing was run.",
                                      hint="Check LANGFUSE_BASE_URL (or LANGFUSE_HOST): it is the Langfuse server's address.")
            found = [trace_test(t, base) for t in data[: limit - len(tests)] if isinstance(t, dict) and t.get("id")]
            budget.add(found)
            tests.extend(found)
            meta = answer.get("meta") if isinstance(answer.get("meta"), dict) else None
            more = page < int(meta.get("totalPages") or 0) if meta and "totalPages" in meta else len(data) == page_limit
            if not data or not more:
                break
            page += 1
    finally:
        client.close()
    return tests


def trace_test(trace: dict[str, Any], base: str) -> dict[str, Any]:
    """One Langfuse trace as a promptfoo test."""
    variables: dict[str, Any] = {"__langfuse_trace_id": trace["id"], "__langfuse_timestamp": trace.get("timestamp")}
    optional = {"__langfuse_input": trace.get("input"), "__langfuse_output": trace.get("output"),
                "__langfuse_name": trace.get("name") or None, "__langfuse_user_id": trace.get("userId") or None,
                "__langfuse_session_id": trace.get("sessionId") or None, "__langfuse_tags": trace.get("tags") or None,
                "__langfuse_metadata": trace.get("metadata") or None, "__langfuse_latency": trace.get("latency"),
                "__langfuse_cost": trace.get("totalCost"), "__langfuse_url": _trace_url(base, trace.get("htmlPath"))}
    variables.update({k: v for k, v in optional.items() if v is not None})
    texts = {"input": input_text(trace.get("input")), "output": output_text(trace.get("output"))}
    variables.update({k: v for k, v in texts.items() if v is not None})
    day = str(trace.get("timestamp") or "")[:10]
    return {"description": f"Trace: {trace.get('name') or trace['id']}" + (f" ({day})" if day else ""),
            "vars": variables, "metadata": {"langfuseTraceId": trace["id"], "langfuseTraceUrl": variables.get("__langfuse_url")},
            "options": {"disableVarExpansion": True}}


def _trace_url(base: str, html_path: Any) -> str | None:
    if not isinstance(html_path, str) or not html_path:
        return None
    if html_path.lower().startswith(("http://", "https://")):
        return html_path
    return base + ("" if html_path.startswith("/") else "/") + html_path


def _is_block(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in TEXT_BLOCKS and "text" in value


def _joined(texts: list[Any]) -> Any:
    if len(texts) == 1:
        return texts[0]
    return "\n".join(t if isinstance(t, str) else json.dumps(t) for t in texts)


def _blocks(content: list[Any]) -> Any:
    texts = [b["text"] for b in content if _is_block(b)]
    return _joined(texts) if texts else json.dumps(content)


def _message_content(messages: list[Any]) -> Any:
    """The content of the last user message (else the last message), text blocks joined."""
    records = [m for m in messages if isinstance(m, dict)]
    if not records:
        return None
    users = [m for m in records if m.get("role") == "user"]
    last = users[-1] if users else records[-1]
    if "content" not in last:
        return None
    content = last["content"]
    return _blocks(content) if isinstance(content, list) else content


def input_text(value: Any) -> Any:
    """The text a trace's input asks, as promptfoo finds it."""
    if isinstance(value, list):
        found = _message_content(value)
        if found is None:
            texts = [b["text"] for b in value if _is_block(b)]
            found = _joined(texts) if texts else None
        return value if found is None else found
    if not isinstance(value, dict):
        return value
    if isinstance(value.get("messages"), list) and value["messages"]:
        found = _message_content(value["messages"])
        if found is not None:
            return found
    for key in ("query", "prompt", "message"):
        if value.get(key) is not None:
            return value[key]
    if value.get("input") is not None:
        return input_text(value["input"])
    return value.get("text") if value.get("text") is not None else value


def _item_text(item: Any) -> Any:
    if not isinstance(item, dict):
        return None
    if _is_block(item):
        return item["text"]
    if isinstance(item.get("content"), list):
        return _blocks(item["content"])
    if (item.get("type") == "message" or item.get("role") == "assistant") and "content" in item:
        return item["content"]
    return None


def _items_text(items: list[Any]) -> Any:
    texts = [t for t in map(_item_text, items) if t is not None]
    return _joined(texts) if texts else None


def output_text(value: Any) -> Any:
    """The answer's text in a trace's output, as promptfoo finds it."""
    if isinstance(value, list):
        found = _items_text(value)
        return value if found is None else found
    if not isinstance(value, dict):
        return value
    choices = value.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        choice = choices[0]
        message = choice.get("message")
        if isinstance(message, dict):
            content = message.get("content")
            if content is not None:
                return _blocks(content) if isinstance(content, list) else content
            call = message.get("tool_calls") or message.get("function_call")
            if call is not None:
                return call
        if choice.get("text") is not None:
            return choice["text"]
    if "content" in value and value["content"] is not None:
        return _blocks(value["content"]) if isinstance(value["content"], list) else value["content"]
    if isinstance(value.get("output"), list):
        found = _items_text(value["output"])
        if found is not None:
            return found
    for key in ("response", "output_text", "output", "result", "completion", "text"):
        if value.get(key) is not None:
            return value[key]
    return value
