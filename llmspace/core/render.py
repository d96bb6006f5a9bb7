"""Render a thread for a run: the text the model receives.

`render_thread(thread, env)` returns the rendered system prompt and message texts plus the
updated frozen-value snapshot and warnings. Until the variables issue lands this is a
pass-through (text unchanged). Pure: no network, no threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import Thread


@dataclass
class RenderEnv:
    """What rendering may consult besides the thread (skills, a file reader, the clock)."""

    skills: Any = None  # a SkillManager-like object with enabled skills, or None
    now: Any = None  # a datetime for current_date, or None for "now"
    overrides: dict[str, str] = field(default_factory=dict)  # `--var NAME=VALUE` from the CLI


@dataclass
class RenderedThread:
    system_prompt: str
    # message id -> rendered text of each text part, in order
    message_texts: dict[str, list[str]] = field(default_factory=dict)
    # (message id, tool call id) -> rendered tool-result text parts
    tool_result_texts: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    snapshot: dict[str, dict[str, str]] | None = None
    warnings: list[str] = field(default_factory=list)


def render_thread(thread: Thread, env: RenderEnv | None = None) -> RenderedThread:
    ctx = thread.context
    out = RenderedThread(system_prompt=(ctx.systemPrompt if ctx and ctx.systemPrompt else ""))
    for msg in thread.messages:
        out.message_texts[msg.id] = [c.text for c in msg.content if getattr(c, "type", None) == "text"]
        for call in getattr(msg, "toolCalls", None) or []:
            if call.output is not None:
                out.tool_result_texts[(msg.id, call.id)] = [c.text for c in call.output.content]
    return out
