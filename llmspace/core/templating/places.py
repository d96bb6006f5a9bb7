"""The text places of a thread that rendering evaluates and variables are used in: the system
prompt, each message's text parts and each tool result's text parts, with their place keys
(`systemPrompt`, `message:<id>:text`, `toolResult:<message id>:<call id>:text` — the keys of
the frozen-value snapshot, `core/templating/frozen_values.py`).

`iter_places` lists them with a readable label; `rewrite_texts` applies an edit to every one
(renaming a variable). Which places are evaluated at all (user messages and `function` tool
results, never a model reply) is decided in `core/templating/render.py`. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..model import TextContent, Thread

SYSTEM_PROMPT_PLACE = "systemPrompt"


def message_place(message_id: str) -> str:
    return f"message:{message_id}:text"


def tool_result_place(message_id: str, call_id: str) -> str:
    return f"toolResult:{message_id}:{call_id}:text"


def iter_places(thread: Thread) -> Iterator[tuple[str, str, list[str]]]:
    """(place key, label, texts) for the system prompt, message texts and tool results."""
    ctx = thread.context
    if ctx is not None and ctx.systemPrompt is not None:
        yield SYSTEM_PROMPT_PLACE, "the system prompt", [ctx.systemPrompt]
    for i, msg in enumerate(thread.messages, start=1):
        texts = [c.text for c in msg.content if isinstance(c, TextContent)]
        yield message_place(msg.id), f"message {i} ({msg.role}, id {msg.id})", texts
        for call in getattr(msg, "toolCalls", None) or []:
            if call.output is not None and call.output.text_parts():
                yield (
                    tool_result_place(msg.id, call.id),
                    f"the result of tool call {call.id} in message {i} (id {msg.id})",
                    [c.text for c in call.output.text_parts()],
                )


def rewrite_texts(thread: Thread, fn: Callable[[str], str]) -> bool:
    """Apply `fn(text) -> text` to every text surface in place. Returns changed."""
    changed = False
    ctx = thread.context
    if ctx is not None and ctx.systemPrompt is not None:
        new = fn(ctx.systemPrompt)
        if new != ctx.systemPrompt:
            ctx.systemPrompt = new
            changed = True
    for msg in thread.messages:
        for part in msg.content:
            if isinstance(part, TextContent):
                new = fn(part.text)
                if new != part.text:
                    part.text = new
                    changed = True
        for call in getattr(msg, "toolCalls", None) or []:
            for result in call.output.text_parts() if call.output is not None else []:
                new = fn(result.text)
                if new != result.text:
                    result.text = new
                    changed = True
    return changed
