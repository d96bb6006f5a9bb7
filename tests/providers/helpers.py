"""Helpers for the provider tests: request builders, a Stop driver, event folding and the
registry of a data root."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from llmspace.cancel import CancelToken
from llmspace.core.model import ModelParams
from llmspace.paths import DataRoot
from llmspace.providers.base import Endpoint, ModelInfo, ModelRequest, NeutralMessage, NeutralToolCall, ToolSpec
from llmspace.providers.registry import ProviderRegistry
from llmspace.settings.models import ModelSettings
from tests.support.llm_server import LoopbackLLM

SECRET = "sk-test-0123456789abcdefSECRET"


def make_request(srv: LoopbackLLM, api: str, *, messages: tuple[NeutralMessage, ...] | None = None,
                 params: ModelParams | None = None, tools: tuple[ToolSpec, ...] = (), stream: bool = True,
                 reasoning: bool = True, system: str = "You are terse.", **endpoint: Any) -> ModelRequest:
    ep = Endpoint(provider_id="loop", api=api, base_url=srv.base_url, api_key=SECRET,  # type: ignore[arg-type]
                  connect_timeout=5, read_timeout=30, **endpoint)
    model = ModelInfo(id="loopback-model", name="Loopback", api=api, reasoning=reasoning, max_tokens=32000,  # type: ignore[arg-type]
                      cost_input=1.0, cost_output=2.0)
    if messages is None:
        messages = (NeutralMessage(role="user", text="Hi"),)
    return ModelRequest(endpoint=ep, model=model, system_prompt=system, messages=messages, tools=tools,
                        params=params, stream=stream)


def conversation() -> tuple[NeutralMessage, ...]:
    """user (text + image) → assistant with two tool calls (one answered, one not) → user."""
    return (
        NeutralMessage(role="user", text="Look at this", images=(("image/png", "iVBORw0KGgo="),)),
        NeutralMessage(role="assistant", text="Reading.", thinking="I should read",
                       tool_calls=(NeutralToolCall(id="call_1", name="read", arguments={"path": "a.txt"}, result_text="A"),
                                   NeutralToolCall(id="call_2", name="read", arguments={"path": "b.txt"},
                                                   result_text="no such file", result_is_error=True))),
        NeutralMessage(role="user", text="Thanks"),
    )


TOOLS = (ToolSpec(name="read", description="Read a file", parameters={"type": "object", "properties": {"path": {"type": "string"}}}),)


def collect(adapter: Any, request: ModelRequest, cancel: CancelToken | None = None) -> list[Any]:
    return list(adapter.stream(request, cancel or CancelToken()))


def stop_while_streaming(adapter: Any, srv: LoopbackLLM, request: ModelRequest, silent: bool = False) -> tuple[bool, list[Any]]:
    """Start a stream against a hanging server, press Stop once the server has the request;
    returns (stream ended within the bounded wait, events)."""
    srv.push_hang(silent=silent)
    srv.request_seen.clear()
    cancel = CancelToken()
    events: list[Any] = []
    done = threading.Event()

    def run() -> None:
        events.extend(adapter.stream(request, cancel))
        done.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert srv.request_seen.wait(5)
    cancel.cancel()
    ended = done.wait(5)
    return ended, events


def text_of(events: list[Any]) -> str:
    from llmspace.providers.events import TextDelta

    return "".join(e.text for e in events if isinstance(e, TextDelta))


def thinking_of(events: list[Any]) -> str:
    from llmspace.providers.events import ThinkingDelta

    return "".join(e.text for e in events if isinstance(e, ThinkingDelta))


def tool_calls_of(events: list[Any]) -> list[tuple[str, str, str]]:
    from llmspace.providers.events import ToolCallArgsDelta, ToolCallStart

    calls: dict[int, list[str]] = {}
    for e in events:
        if isinstance(e, ToolCallStart):
            calls[e.index] = [e.id, e.name, ""]
        elif isinstance(e, ToolCallArgsDelta):
            calls[e.index][2] += e.text
    return [tuple(calls[i]) for i in sorted(calls)]  # type: ignore[misc]


def mid_stream_error(api: str, text: str) -> list[bytes]:
    """A stream of one text delta, then the error event `api` sends mid-stream with `text`."""
    err = json.dumps({"message": text, "type": "invalid_request_error"})
    if api == "openai-completions":
        first = b'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n'
        return [first, f'data: {{"error": {err}}}\n\n'.encode()]
    if api == "openai-responses":
        first = b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hel"}\n\n'
        return [first, f'event: error\ndata: {{"type":"error","error":{err}}}\n\n'.encode()]
    first = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","type":"message","role":"assistant",'
             b'"content":[],"model":"x","usage":{"input_tokens":1,"output_tokens":0}}}\n\n')
    return [first, f'event: error\ndata: {{"type":"error","error":{err}}}\n\n'.encode()]


def assert_clean(text: str, s: dict[str, str]) -> None:
    """No secret value of `s` appears in `text`."""
    for name, value in s.items():
        assert value not in text, f"{name} leaked: {text}"


def registry(home: Path) -> ProviderRegistry:
    """The provider registry of the data root `home`."""
    root = DataRoot(home)
    return ProviderRegistry(ModelSettings(root), root)
