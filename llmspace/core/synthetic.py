"""Synthetic threads for benchmarks, tests and the large-thread mode of the editor.

`big_thread_data(target_bytes, messages)` builds a realistic native thread as plain JSON
data: user/assistant turns with thinking, tool calls, usage, timing and a few images.
Deterministic for a given seed. Pure; no I/O.
"""

from __future__ import annotations

import base64
import random
from typing import Any

_WORDS = [
    "agent", "prompt", "model", "tool", "call", "result", "thread", "context", "variable", "system", "user",
    "assistant", "stream", "token", "latency", "cost", "evaluate", "rubric", "score", "compare", "workspace",
    "file", "json", "schema", "über", "naïve", "café", "数据", "模型", "—", "“quoted”", "✓",
]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _image_b64(rng: random.Random, nbytes: int) -> str:
    return base64.b64encode(rng.randbytes(nbytes)).decode("ascii")


def big_thread_data(target_bytes: int = 10_000_000, messages: int = 5_000, *, images: int = 4, seed: int = 7) -> dict[str, Any]:
    """A native thread of about `target_bytes` bytes when serialised, with `messages` messages."""
    rng = random.Random(seed)
    image_pool = [_image_b64(rng, 60_000) for _ in range(max(images, 0))]
    per_message = max(200, (target_bytes - sum(len(i) for i in image_pool)) // max(messages, 1))
    words = max(8, per_message // 9)
    msgs: list[dict[str, Any]] = []
    for i in range(messages):
        if i % 2 == 0:
            content: list[dict[str, Any]] = [{"type": "text", "text": _sentence(rng, words)}]
            if image_pool and i % (messages // max(len(image_pool), 1) or 1) == 0:
                content.append({"type": "image_data", "mimeType": "image/png", "data": image_pool[(i // 2) % len(image_pool)]})
            msgs.append({"id": f"msg_{i}", "role": "user", "content": content})
        else:
            msg: dict[str, Any] = {
                "id": f"msg_{i}",
                "role": "assistant",
                "content": [{"type": "text", "text": _sentence(rng, words // 2)}],
                "thinking": _sentence(rng, words // 4),
            }
            if i % 3 == 0:
                msg["toolCalls"] = [
                    {
                        "id": f"call_{i}",
                        "input": {"name": "read", "arguments": {"description": "read a file", "path": f"/tmp/f{i}.txt"}},
                        "output": {"content": [{"type": "text", "text": _sentence(rng, words // 4)}], "isError": False},
                    }
                ]
            msg["usage"] = {
                "input": 1000 + i, "output": 200, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1200 + i,
                "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003},
            }
            msg["timing"] = {"firstTokenMs": 350, "durationMs": 1800}
            msgs.append(msg)
    return {
        "title": "big",
        "model": {"provider": "openai", "id": "gpt-4.1", "params": {"temperature": 0.7, "maxTokens": 4096}},
        "context": {
            "systemPrompt": "You are a helpful assistant. Today is {{current_date}}.",
            "tools": [
                {"type": "builtin", "name": "read", "description": "Read a file", "strict": True,
                 "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
            ],
            "messages": msgs,
        },
    }
