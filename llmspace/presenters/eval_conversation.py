"""A conversation cell of an evaluation (`mode: conversation`) as the app shows it: the
transcript as plain text for the cell's window (`conversation_text`), and as thread messages
for "Open as thread" (`conversation_messages`): every user turn, agent reply, tool call and
result in order. The user's turns and the tool results are someone else's text (a simulator's,
a tool's): they are marked `"literal": true`, as imported trace text is, so the thread sends
them as written and never renders them as templates.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.model import Thread


def conversation_text(conversation: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> str:
    lines: list[str] = []
    for e in conversation:
        role = e.get("role")
        if role == "user":
            text = str(e.get("text") or "")
            note = " (ended the conversation)" if e.get("stop") else ""
            if text or note:
                lines += [f"User{note}:", text] if text else [f"User{note}"]
        elif role == "assistant":
            if e.get("text"):
                lines += ["Agent:", str(e["text"])]
            for c in e.get("toolCalls") or []:
                lines.append(f"Agent calls {c.get('name')} {json.dumps(c.get('arguments') or {}, ensure_ascii=False, sort_keys=True)}")
        elif role == "tool":
            how = f", simulated ({e['simulated']})" if e.get("simulated") else ""
            lines += [f"Tool {e.get('name')}{how}{', error' if e.get('isError') else ''}:", str(e.get("result") or "")]
        lines.append("")
    return "\n".join(lines).rstrip()


def _id(role: str) -> str:
    return f"{role}-{uuid.uuid4()}"


def conversation_messages(conversation: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as thread messages (the thread file's format)."""
    results = {e.get("id"): e for e in conversation if e.get("role") == "tool"}
    messages: list[dict[str, Any]] = []
    for e in conversation:
        role = e.get("role")
        if role == "user" and e.get("text"):
            messages.append({"id": _id("user"), "role": "user", "content": [{"type": "text", "text": str(e["text"])}],
                             "literal": True})
        elif role == "assistant":
            message: dict[str, Any] = {"id": _id("assistant"), "role": "assistant",
                                       "content": [{"type": "text", "text": str(e.get("text") or "")}]}
            calls = []
            for c in e.get("toolCalls") or []:
                call: dict[str, Any] = {"id": str(c.get("id")), "input": {"name": str(c.get("name")),
                                                                            "arguments": dict(c.get("arguments") or {})}}
                result = results.get(c.get("id"))
                if result is not None:
                    output: dict[str, Any] = {"content": [{"type": "text", "text": str(result.get("result") or "")}],
                                              "literal": True}
                    if result.get("isError"):
                        output["isError"] = True
                    call["output"] = output
                calls.append(call)
            if calls:
                message["toolCalls"] = calls
            messages.append(message)
    return messages


def file_read_warning(thread: Thread, rel: str) -> str | None:
    """What a thread made of a conversation would read or probe on this computer when run (as
    `llmspace import` warns), or None."""
    from ..core.templating.file_reads import local_file_reads

    reads = local_file_reads(thread)
    return reads.describe(rel) if reads else None
