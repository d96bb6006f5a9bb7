"""Which adapter serves which API, and how a thread's model becomes an `Endpoint`.

`ProviderRegistry(models, root)` (built by `app.providers`):

- `adapter(api) -> Adapter` — the built-in adapters for `openai-completions`,
  `openai-responses` and `anthropic-messages` are created on first use; anything else
  (plugin providers, the offline `replay` provider) is added with
  `register_adapter(api, adapter)` — built-ins register exactly the same way.
- `resolve(model, provider=None, model_id=None) -> (Endpoint, ModelInfo)` — explicit
  provider/model (CLI flags) win over the thread's saved model; the saved model falls back
  to the default and then the first enabled model (reference §6.1). Raises
  `UserFacingError` "Select a model to run…" or "No API key for …: set ENV …".
  A provider id equal to a registered non-HTTP api (e.g. "replay") resolves to an Endpoint
  with that api and an empty base URL.
"""

from __future__ import annotations

import threading


from ..core.model import ModelConfig
from ..errors import UserFacingError
from ..paths import DataRoot
from ..settings.models import ModelSettings
from .base import Adapter, Endpoint, ModelInfo



def _builtin(api: str) -> Adapter | None:
    if api == "openai-completions":
        from .openai_completions import OpenAICompletionsAdapter

        return OpenAICompletionsAdapter()
    if api == "openai-responses":
        from .openai_responses import OpenAIResponsesAdapter

        return OpenAIResponsesAdapter()
    if api == "anthropic-messages":
        from .anthropic_messages import AnthropicMessagesAdapter

        return AnthropicMessagesAdapter()
    return None


class ProviderRegistry:
    """Adapters by API, and model resolution against `ModelSettings`."""

    def __init__(self, models: ModelSettings, root: DataRoot) -> None:
        self.models = models
        self.root = root
        self._adapters: dict[str, Adapter] = {}
        self._lock = threading.Lock()

    def register_adapter(self, api: str, adapter: Adapter) -> None:
        with self._lock:
            self._adapters[api] = adapter

    def adapter(self, api: str) -> Adapter:
        with self._lock:
            found = self._adapters.get(api)
            if found is None:
                found = _builtin(api)
                if found is None:
                    raise UserFacingError(f"No adapter for the API {api!r}.",
                                          hint="Use anthropic-messages, openai-completions or openai-responses, or install the plugin that provides it.")
                self._adapters[api] = found
            return found

    def apis(self) -> list[str]:
        with self._lock:
            return sorted(set(self._adapters) | {"openai-completions", "openai-responses", "anthropic-messages"})

    def resolve(self, model: ModelConfig | None, provider: str | None = None,
                model_id: str | None = None) -> tuple[Endpoint, ModelInfo]:
        """The endpoint and model to call for a thread whose saved model is `model`."""
        with self._lock:
            special = provider if provider in self._adapters and self.models.provider(provider) is None else None
        if special is not None:
            mid = model_id or (model.id if model is not None and model.provider == special else special)
            return Endpoint(provider_id=special, api=special, base_url=""), ModelInfo(id=mid, name=mid, api=special)  # type: ignore[arg-type]

        chosen: ModelConfig | None
        if provider or model_id:
            chosen = self._explicit(model, provider, model_id)
        else:
            if model is not None:
                with self._lock:
                    registered = model.provider in self._adapters
                if registered and self.models.provider(model.provider) is None:
                    return self.resolve(model, provider=model.provider, model_id=model.id)
            chosen = self.models.resolve_model(model)
        if chosen is None:
            raise UserFacingError("Select a model to run.",
                                  hint="Pick a model in the thread's model menu, set a default model in Settings › Models, or pass --provider and --model.")
        view = self.models.provider(chosen.provider)
        if view is None:
            raise UserFacingError(f"Unknown provider {chosen.provider!r}.",
                                  hint="Add it in Settings › Models or choose another model (see `llmspace models`).")
        info = self.models.model_info(view.id, chosen.id)
        if info is None:
            # an explicitly named model the catalogue does not know yet (a new or local model)
            info = ModelInfo(id=chosen.id, name=chosen.id, api=view.api)  # type: ignore[arg-type]
        key = self.models.api_key(view.id)
        wants_env = bool(view.api_key_setting and view.api_key_setting.startswith("$"))
        if (view.needs_key or wants_env) and not key:
            env = self.models.key_hint(view.id)
            raise UserFacingError(f"No API key for {view.name}: set {env} or add one in Settings › Models.")
        if not view.base_url:
            raise UserFacingError(f"Provider {view.name} has no base URL.", hint="Set one in Settings › Models.")
        api = info.api or view.api
        endpoint = Endpoint(provider_id=view.id, api=api, base_url=view.base_url.rstrip("/"),  # type: ignore[arg-type]
                            api_key=key, headers=dict(view.headers), **view.timeouts)
        return endpoint, info

    def _explicit(self, saved: ModelConfig | None, provider: str | None, model_id: str | None) -> ModelConfig:
        if provider and model_id:
            return ModelConfig(provider=provider, id=model_id)
        if provider:
            if saved is not None and saved.provider == provider:
                return saved
            view = self.models.provider(provider)
            if view is None:
                raise UserFacingError(f"Unknown provider {provider!r}.", hint="See `llmspace models` for the list.")
            if view.local and not view.models:
                self.models.refresh_local([provider], timeout=0.5)
                view = self.models.provider(provider) or view
            enabled = view.enabled_models()
            if not enabled:
                raise UserFacingError(f"{view.name} lists no models.", hint="Pass --model, or start the server and run `llmspace models --refresh`.")
            return ModelConfig(provider=provider, id=enabled[0].id)
        assert model_id is not None
        candidates = [v.id for v in self.models.providers() if any(m.id == model_id for m in v.models)]
        if saved is not None and saved.provider in candidates:
            return ModelConfig(provider=saved.provider, id=model_id)
        configured = [c for c in candidates if self.models.is_configured(c)]
        if configured or candidates:
            return ModelConfig(provider=(configured or candidates)[0], id=model_id)
        if saved is not None:
            return ModelConfig(provider=saved.provider, id=model_id)
        raise UserFacingError(f"No provider lists the model {model_id!r}.", hint="Pass --provider too.")
