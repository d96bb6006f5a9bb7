"""The built-in provider `local` ("Built-in (llama.cpp)"): runs installed models on the engine.

    register(providers, root, on_use=…)   # app.py: the `local-engine` API
    discoverer(root)                      # app.py: `local` lists the installed models

`local` is a key-less local provider of the built-in catalogue (`settings/catalog.py`) whose
API is `local-engine`. Its models are those installed under `models/` (`LocalModels`), listed
the way other local servers' models are discovered, so `--provider local --model NAME`,
threads saved with such a model and the model menus work as for Ollama. A call resolves NAME
to its GGUF file, makes sure the engine runs with it (`engine.ensure_engine`: started on
first use, shared, health-checked) and then goes through the OpenAI-compatible adapter
(`providers/openai_completions.py`) with the engine's port and key — streaming, cancel,
usage, traces, history and evaluations are the adapter's. With tools offered, the reply
goes through `providers/tolerant_calls.py` (the registry wraps every adapter in
`TolerantAdapter`): the provider option `compat.tolerantToolCalls` is on for `local` unless
`models.json` turns it off: `{"id": "local", "compat": {"tolerantToolCalls": false}}`. A call
during which the engine crashed ends with an error saying so; the next call starts it again.
`local/NAME` also embeds (`ModelApi.embeddings`: the `similar` assertions of evaluations with
`--embedder local/NAME`): the installed embedding GGUF NAME on the engine's embedding instance
(`engine.ensure_engine(…, embedding=True)`), reached with OpenAI's `/embeddings`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError
from ..paths import DataRoot
from ..providers.base import AdapterContext, Api, CancelToken, Endpoint, ModelApi, ModelRequest
from ..providers.events import ErrorEvent, Finish, StreamEvent

if TYPE_CHECKING:
    from ..providers.registry import ProviderRegistry
    from ..settings.models import ModelSettings

LOCAL_ID = "local"
API: Api = "local-engine"


def _payload(request: ModelRequest) -> dict[str, Any]:
    from ..providers.openai_completions import build_payload

    return build_payload(request)


class LocalAdapter:
    """One run's adapter: the engine for the model, then the Chat Completions adapter."""

    api: Api = API

    def __init__(self, root: DataRoot, *, on_use: Callable[[], None] | None = None) -> None:
        self.root = root
        self.on_use = on_use

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        from ..providers.openai_completions import OpenAICompletionsAdapter
        from ..redact import KNOWN
        from . import engine
        from .models import LocalModels

        try:
            model = LocalModels(self.root).resolve(request.model.id)
            handle = engine.ensure_engine(self.root, model, cancelled=lambda: cancel.cancelled)
        except UserFacingError as exc:
            if cancel.cancelled:
                yield Finish("aborted")
            else:
                yield ErrorEvent(message=str(exc))
            return
        KNOWN.add([handle.api_key])
        if self.on_use is not None:
            self.on_use()
        endpoint = dataclasses.replace(request.endpoint, base_url=handle.base_url, api_key=handle.api_key)
        call = dataclasses.replace(request, endpoint=endpoint)
        with engine.in_use(self.root):
            for event in OpenAICompletionsAdapter().stream(call, cancel):
                # a failed call, or one whose stream simply ended (a killed server can close
                # the connection cleanly): was it the engine that went away?
                if isinstance(event, (ErrorEvent, Finish)) and not cancel.cancelled:
                    dropped = isinstance(event, ErrorEvent) and event.status is None
                    crashed = engine.crash_message(self.root, handle, dropped=dropped)
                    if crashed is not None:
                        event = ErrorEvent(message=crashed, in_stream=True)
                yield event


@contextlib.contextmanager
def embeddings(root: DataRoot, endpoint: Endpoint, model_id: str) -> Iterator[Endpoint]:
    """One embeddings request to the installed model `model_id`: the embedding engine started
    (or reused) with it, and marked in use while the request runs."""
    from ..redact import KNOWN
    from . import engine
    from .models import LocalModels

    model = LocalModels(root).resolve(model_id)
    handle = engine.ensure_engine(root, model, embedding=True)
    KNOWN.add([handle.api_key])
    with engine.in_use(root, embedding=True):
        yield dataclasses.replace(endpoint, base_url=handle.base_url, api_key=handle.api_key)


def register(providers: ProviderRegistry, root: DataRoot, *, on_use: Callable[[], None] | None = None) -> None:
    """Register the `local-engine` API (the `local` provider itself is in the built-in catalogue)."""
    from ..registry import BUILTIN

    def create(context: AdapterContext) -> LocalAdapter:
        return LocalAdapter(root, on_use=on_use)

    def embed(endpoint: Endpoint, model_id: str) -> contextlib.AbstractContextManager[Endpoint]:
        return embeddings(root, endpoint, model_id)

    providers.register_api(API, ModelApi(create=create, build_payload=_payload, embeddings=embed), source=BUILTIN)


def installed_names(root: DataRoot) -> list[str]:
    from .models import LocalModels

    try:
        return [m.name for m in LocalModels(root).installed()]
    except UserFacingError:
        return []


def discoverer(root: DataRoot) -> Callable[[ModelSettings, list[str] | None, float], dict[str, bool]]:
    """`ModelSettings.discoverer` for the app: local servers are asked over HTTP
    (`providers/discovery.py`); `local` lists the installed models without any request."""

    def discover(models: ModelSettings, provider_ids: list[str] | None, timeout: float) -> dict[str, bool]:
        from ..providers.discovery import refresh_local

        servers = [v.id for v in models.providers() if v.local and v.id != LOCAL_ID
                   and (provider_ids is None or v.id in provider_ids)]
        result = refresh_local(models, servers, timeout) if servers else {}
        if provider_ids is None or LOCAL_ID in provider_ids:
            models.record_discovery({LOCAL_ID: installed_names(root)})
            result[LOCAL_ID] = True
        return result

    return discover
