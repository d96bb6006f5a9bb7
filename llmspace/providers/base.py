"""The adapter contract: a provider-neutral request in, a generator of `StreamEvent`s out.

    adapter.stream(request, cancel) -> Iterator[StreamEvent]

Adapters build the HTTP request for their API, stream it with `requests`, parse SSE
incrementally and yield events from `providers/events.py`. They do no retries, threading,
persistence or tool execution (that is `agent/`), and never put secrets in events.
Built-in providers register exactly as plugin providers will (see `providers/registry.py`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Iterator, Literal, Protocol

from ..core.model import ModelParams
from ..settings.model_info import Api, ModelInfo
from ..settings.models import DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT, DEFAULT_RETRY_DEADLINE
from .events import StreamEvent



@dataclass(frozen=True)
class Endpoint:
    """Where and how to call: resolved from settings for one run (the key already resolved).

    Timeouts in seconds (per provider in `models.json`: `connectTimeout`, `readTimeout`,
    `retryDeadline`): `connect_timeout` to open the connection; `read_timeout` without any
    data, before the headers and between chunks alike; `retry_deadline` bounds the time
    `providers/retry.py` spends on one call, retries and their waits included."""

    provider_id: str
    api: Api
    base_url: str
    api_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    retry_deadline: float = DEFAULT_RETRY_DEADLINE


@dataclass(frozen=True)
class NeutralToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    result_text: str = ""
    result_is_error: bool = False


@dataclass(frozen=True)
class NeutralMessage:
    """A rendered message. Assistant messages carry their tool calls with results, and the
    adapter emits one tool-result message per call right after the assistant message."""

    role: Literal["user", "assistant"]
    text: str = ""
    images: tuple[tuple[str, str], ...] = ()  # (mime type, base64) — user messages only
    thinking: str | None = None
    tool_calls: tuple[NeutralToolCall, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)  # provider-specific replay data (e.g. thinking signatures)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ModelRequest:
    endpoint: Endpoint
    model: ModelInfo
    system_prompt: str
    messages: tuple[NeutralMessage, ...]
    tools: tuple[ToolSpec, ...] = ()
    params: ModelParams | None = None
    stream: bool = True


class CancelToken:
    """Set by Stop. Adapters check it between chunks and close the connection when set."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._callbacks: list[Any] = []
        self._lock = threading.Lock()

    def cancel(self) -> None:
        with self._lock:
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            try:
                cb()
            except Exception:
                pass

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def on_cancel(self, callback: Any) -> None:
        """Run `callback` when cancelled (at once if already cancelled), e.g. to close a socket."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)


def seconds(value: float) -> str:
    """A duration for a message: "60", "0.3", "1.5"."""
    return f"{value:.0f}" if value >= 10 else f"{value:.2g}"


class Adapter(Protocol):
    api: Api

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamEvent]: ...
