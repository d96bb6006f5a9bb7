"""The adapter contract: a provider-neutral request in, a generator of `StreamEvent`s out.

    adapter.stream(request, cancel) -> Iterator[StreamEvent]

Adapters build the HTTP request for their API, stream it with `requests`, parse SSE
incrementally and yield events from `providers/events.py`. They do no retries, threading,
persistence or tool execution (that is `agent/`), and never put secrets in events.
Built-in providers register exactly as plugin providers will: a `ModelApi` in the `apis`
registry of `providers/registry.py`. `CancelToken` lives in `llmspace/cancel.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..cancel import CancelToken as CancelToken  # re-exported for callers outside this package
from ..core.model import ModelParams
from ..settings.model_info import Api as Api
from ..settings.model_info import ModelInfo as ModelInfo
from ..settings.provider_entries import DEFAULT_CONNECT_TIMEOUT, DEFAULT_PROGRESS_TIMEOUT, DEFAULT_READ_TIMEOUT, DEFAULT_RETRY_DEADLINE
from .events import StreamEvent

if TYPE_CHECKING:
    from ..core.model import Thread


@dataclass(frozen=True)
class Endpoint:
    """Where and how to call: resolved from settings for one run (the key already resolved).

    Timeouts in seconds (per provider in `models.json`: `connectTimeout`, `readTimeout`,
    `retryDeadline`, `progressTimeout`): `connect_timeout` to open the connection;
    `read_timeout` without any data, before the headers and between chunks alike;
    `retry_deadline` bounds the time `providers/retry.py` spends on one call, retries and
    their waits included; `progress_timeout` without model output (`events.is_progress`),
    whatever else the server sends meanwhile — enforced by `providers/progress.py`.
    `tolerant_tool_calls`: the provider's `compat.tolerantToolCalls` (`providers/tolerant_calls.py`)."""

    provider_id: str
    api: Api
    base_url: str
    api_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    retry_deadline: float = DEFAULT_RETRY_DEADLINE
    progress_timeout: float = DEFAULT_PROGRESS_TIMEOUT
    tolerant_tool_calls: bool = False


@dataclass(frozen=True)
class NeutralToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    result_text: str = ""
    result_is_error: bool = False
    result_images: tuple[tuple[str, str], ...] = ()  # (mime type, base64) images the tool returned


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


def seconds(value: float) -> str:
    """A duration for a message: "60", "0.3", "1.5"."""
    return f"{value:.0f}" if value >= 10 else f"{value:.2g}"


class Adapter(Protocol):
    @property
    def api(self) -> Api: ...

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamEvent]: ...


@dataclass(frozen=True)
class AdapterContext:
    """What an adapter may know about the run it serves; most adapters need none of it.

    `thread` is the run's own Thread (read it, never change it); `run_id` a recorded run
    the user picked (`--replay-run`)."""

    thread: Thread | None = None
    run_id: str | None = None


@dataclass(frozen=True)
class ModelApi:
    """One registration of the `apis` registry (`providers/registry.py`): how to make the
    adapter for an API, and what the run loop may do with it.

    `create(context)` makes an adapter for one run (cheap: built-ins hold no state).
    `build_payload(request)` is the HTTP body the adapter would send, for traces (None: the
    trace has no request body). Declared capabilities, never decided by name:
    `retried` — failures before the first token are retried (`providers/retry.py`);
    `traced` — each call writes a trace under `traces/`;
    `sets_thread_model` — an explicit `--provider/--model` naming this API's provider
    becomes the thread's saved model, and the run history records the model called.
    `embeddings(endpoint, model)` — for an API that is not OpenAI's but can serve OpenAI's
    `/embeddings` (the built-in engine): a context manager around one embeddings request,
    yielding the endpoint to post it to (None: only OpenAI-compatible APIs embed).
    """

    create: Callable[[AdapterContext], Adapter]
    build_payload: Callable[[ModelRequest], dict[str, Any]] | None = None
    retried: bool = True
    traced: bool = True
    sets_thread_model: bool = True
    embeddings: Callable[[Endpoint, str], AbstractContextManager[Endpoint]] | None = None
