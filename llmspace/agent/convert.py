"""Stored thread -> provider-neutral request parts (`providers/base.py`).

`neutral_messages(thread, rendered)` turns the stored messages into `NeutralMessage`s with
the rendered text: user text and images; assistant thinking, text and tool calls, each call
carrying its (rendered) result text and its images — an unanswered call sends one empty text, as the original
LLM Space app does. Images on assistant messages are dropped. Replay data stored by `agent/fold.py`
(`providerData`) goes back in `extra` only to the provider and API that produced it. `tool_specs(tools)` keeps only name,
description and parameters. `is_unanswered(call)` tells a call still waiting for a result.

Pure.
"""

from __future__ import annotations

from typing import Any

from ..core.model import AssistantMessage, ImageDataContent, TextContent, Thread, Tool, ToolCall, UserMessage
from ..core.templating.render import RenderedThread
from ..providers.base import Endpoint, NeutralMessage, NeutralToolCall, ToolSpec
from .fold import PROVIDER_DATA

EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def is_unanswered(call: ToolCall) -> bool:
    """True when the call has no result yet: no output, or only empty text (no image) and no error flag."""
    out = call.output
    if out is None:
        return True
    return not out.isError and not out.images() and not any(c.text for c in out.text_parts())


def _texts(msg: UserMessage | AssistantMessage, rendered: RenderedThread) -> str:
    parts = rendered.message_texts.get(msg.id)
    if parts is None:
        parts = [c.text for c in msg.content if isinstance(c, TextContent)]
    return "\n".join(parts)


def _replay_extra(msg: AssistantMessage, endpoint: Endpoint | None) -> dict[str, Any]:
    data = msg.extras().get(PROVIDER_DATA)
    if endpoint is None or not isinstance(data, dict):
        return {}
    if data.get("provider") != endpoint.provider_id or data.get("api") != endpoint.api:
        return {}
    return {k: v for k, v in data.items() if k not in ("provider", "api")}


def neutral_messages(thread: Thread, rendered: RenderedThread, endpoint: Endpoint | None = None) -> tuple[NeutralMessage, ...]:
    out: list[NeutralMessage] = []
    for msg in thread.messages:
        if isinstance(msg, UserMessage):
            images = tuple((c.mimeType, c.data) for c in msg.content if isinstance(c, ImageDataContent))
            out.append(NeutralMessage(role="user", text=_texts(msg, rendered), images=images))
            continue
        calls: list[NeutralToolCall] = []
        for call in msg.toolCalls or []:
            result_parts = rendered.tool_result_texts.get((msg.id, call.id))
            if result_parts is None:
                result_parts = [c.text for c in call.output.text_parts()] if call.output is not None else []
            images = tuple((c.mimeType, c.data) for c in call.output.images()) if call.output is not None else ()
            calls.append(NeutralToolCall(
                id=call.id,
                name=call.input.name,
                arguments=dict(call.input.arguments or {}),
                result_text="\n".join(result_parts),
                result_is_error=bool(call.output is not None and call.output.isError),
                result_images=images,
            ))
        out.append(NeutralMessage(role="assistant", text=_texts(msg, rendered), thinking=msg.thinking or None,
                                  tool_calls=tuple(calls), extra=_replay_extra(msg, endpoint)))
    return tuple(out)


def tool_specs(tools: list[Tool] | None) -> tuple[ToolSpec, ...]:
    return tuple(ToolSpec(name=t.name, description=t.description or "", parameters=t.parameters or dict(EMPTY_PARAMETERS))
                 for t in tools or [])
