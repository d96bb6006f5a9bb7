"""Which model APIs and providers exist, and how a thread's model becomes an `Endpoint`.

`ProviderRegistry(models, root, apis=…, providers=…)` (built by `app.providers`, with the
registries of `app.registries`) fills two registries of the one mechanism (`llmspace/registry.py`):

- `apis: Registry[ModelApi]` — model API name -> `ModelApi` (adapter factory, payload builder
  for traces, declared capabilities). The built-ins `openai-completions`, `openai-responses`,
  `anthropic-messages` and the offline `replay` are registered at construction with source
  `built-in` (`register_builtins`); a plugin registers its API the same way.
- `providers: Registry[ProviderEntry]` — provider id -> entry. The built-in catalogue
  (`settings/catalog.py`) and `replay` are `built-in`; custom providers of `models.json` are
  `user` (re-read on every resolution, `sync_user_providers`). A `models.json` entry for a
  built-in id such as `openai` only configures the built-in (key, base URL, models), so it is
  not a second registration. Two sources with one id make both inactive (an error names them).
  Plugin providers (`plugin:<name>:model-provider:<id>`, registered by
  `llmspace/plugins/contributions/plugin_contributions.py`) carry their own settings in `ProviderEntry.view`;
  when one is gone, `explain_missing(provider_id)` (set by `app.py`) says why, so a thread
  that names it fails with "provider … is unavailable (plugin … is disabled)".

Queries:
- `adapter(api, context) -> Adapter` — made by the API's factory for one run.
- `choose(model) -> RunModel` — the model a run of a thread saved with `model` calls (no
  flags) and, when that is not the saved one, why ("has no API key"); asks no server unless
  `refresh`, never raises (the editor's model row shows it, `ui/editor/model_row.py`).
- `resolve(model, provider=None, model_id=None) -> (Endpoint, ModelInfo)` — explicit
  provider/model (CLI flags) win over the thread's saved model; the saved model falls back
  (`choose`) to the default model of `models.json` and then the first enabled model. Raises
  `UserFacingError` "Select a model to run…" or "No API key for …: set ENV …". An
  `offline` provider (no base URL, key or model list, e.g. `replay`) accepts any model id.
- `refresh_local(ids, timeout)` — asks local servers for their models (`providers/discovery.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.model import ModelConfig
from ..errors import UserFacingError
from ..paths import DataRoot
from ..registry import BUILTIN, USER, Registry
from ..settings.catalog import BUILTINS
from ..settings.models import ModelSettings
from ..settings.provider_entries import ProviderView
from . import discovery
from .base import Adapter, AdapterContext, Endpoint, ModelApi, ModelInfo, ModelRequest

API_HINT = "Use anthropic-messages, openai-completions or openai-responses, or install the plugin that provides it."


@dataclass(frozen=True)
class ProviderEntry:
    """One registration of the `providers` registry.

    `offline`: the provider has no settings (no base URL, key or model list); any model id
    is accepted and the endpoint carries only the provider id and API. `view`: the settings
    a provider brings along (plugin providers; its API key already resolved) instead of
    an entry of `models.json`."""

    id: str
    api: str
    name: str = ""
    offline: bool = False
    view: ProviderView | None = None


@dataclass(frozen=True)
class RunModel:
    """The model a run calls (`model`, None when there is none) for a thread whose saved model
    is `saved`, and why the saved one is not used (`reason`, a clause after the model's name,
    such as "has no API key")."""

    model: ModelConfig | None
    saved: ModelConfig | None
    reason: str | None = None

    @property
    def fell_back(self) -> bool:
        """The run calls another model than the thread's saved one."""
        return self.saved is not None and self.model is not None and \
            (self.model.provider, self.model.id) != (self.saved.provider, self.saved.id)


def _completions(context: AdapterContext) -> Adapter:
    from .openai_completions import OpenAICompletionsAdapter

    return OpenAICompletionsAdapter()


def _responses(context: AdapterContext) -> Adapter:
    from .openai_responses import OpenAIResponsesAdapter

    return OpenAIResponsesAdapter()


def _messages(context: AdapterContext) -> Adapter:
    from .anthropic_messages import AnthropicMessagesAdapter

    return AnthropicMessagesAdapter()


def _completions_payload(request: ModelRequest) -> dict[str, Any]:
    from .openai_completions import build_payload

    return build_payload(request)


def _responses_payload(request: ModelRequest) -> dict[str, Any]:
    from .openai_responses import build_payload

    return build_payload(request)


def _messages_payload(request: ModelRequest) -> dict[str, Any]:
    from .anthropic_messages import build_payload

    return build_payload(request)


BUILTIN_APIS: dict[str, ModelApi] = {
    "openai-completions": ModelApi(create=_completions, build_payload=_completions_payload),
    "openai-responses": ModelApi(create=_responses, build_payload=_responses_payload),
    "anthropic-messages": ModelApi(create=_messages, build_payload=_messages_payload),
}


def builtin_apis() -> Registry[ModelApi]:
    """A registry holding only the built-in HTTP APIs (for a `TraceWriter` made on its own)."""
    apis: Registry[ModelApi] = Registry("model API")
    for name, api in BUILTIN_APIS.items():
        apis.register(name, api, source=BUILTIN)
    return apis


def register_builtins(apis: Registry[ModelApi], providers: Registry[ProviderEntry]) -> None:
    """The built-in APIs and providers, registered exactly as a plugin registers its own."""
    from . import replay

    for name, api in BUILTIN_APIS.items():
        apis.register(name, api, source=BUILTIN)
    for b in BUILTINS.values():
        providers.register(b.id, ProviderEntry(id=b.id, api=b.api, name=b.name), source=BUILTIN)
    apis.register(replay.PROVIDER_ID, replay.REPLAY_API, source=BUILTIN)
    providers.register(replay.PROVIDER_ID, ProviderEntry(id=replay.PROVIDER_ID, api=replay.PROVIDER_ID, name="Replay",
                                                         offline=True), source=BUILTIN)


class ProviderRegistry:
    """Model APIs and providers, and model resolution against `ModelSettings`."""

    def __init__(self, models: ModelSettings, root: DataRoot, *, apis: Registry[ModelApi] | None = None,
                 providers: Registry[ProviderEntry] | None = None) -> None:
        self.models = models
        self.root = root
        self.apis: Registry[ModelApi] = apis if apis is not None else Registry("model API")
        self.providers: Registry[ProviderEntry] = providers if providers is not None else Registry("model provider")
        # Why a provider ID names nothing (a plugin disabled or removed), or None; set by app.py.
        self.explain_missing: Callable[[str], str | None] | None = None
        register_builtins(self.apis, self.providers)
        self.sync_user_providers()

    # -- registration ----------------------------------------------------------------------
    def register_api(self, api: str, model_api: ModelApi, *, source: str = BUILTIN) -> None:
        self.apis.register(api, model_api, source=source)

    def register_adapter(self, api: str, adapter: Adapter, *, source: str = BUILTIN) -> None:
        """Register one adapter instance that serves every run of `api`."""
        self.apis.register(api, ModelApi(create=lambda _context: adapter), source=source)

    def sync_user_providers(self) -> None:
        """Register the custom providers of `models.json` (source `user`) as the file is now."""
        entries = {v.id: ProviderEntry(id=v.id, api=v.api, name=v.name) for v in self.models.providers() if not v.builtin}
        self.providers.replace_source(USER, entries, dict.fromkeys(entries, (str(self.models.path),)))

    # -- queries -----------------------------------------------------------------------------
    def model_api(self, api: str) -> ModelApi:
        return self.apis.require(api, hint=API_HINT)

    def adapter(self, api: str, context: AdapterContext | None = None) -> Adapter:
        """An adapter for one run of `api` (raises `UserFacingError` for an unknown API)."""
        return self.model_api(api).create(context or AdapterContext())

    def api_names(self) -> list[str]:
        return sorted(self.apis.ids())

    def refresh_local(self, provider_ids: list[str] | None = None, timeout: float = discovery.DISCOVERY_TIMEOUT) -> dict[str, bool]:
        """Ask local servers for their models (all, or `provider_ids`); returns reachability.
        Through the model settings' discoverer when the app set one (it also lists the built-in
        engine's installed models, `llmspace/local/provider.py`)."""
        if self.models.discoverer is not None:
            return self.models.refresh_local(provider_ids, timeout)
        return discovery.refresh_local(self.models, provider_ids, timeout)

    def _entry(self, provider_id: str) -> ProviderEntry | None:
        """The active entry of `provider_id`; None when unknown; an error naming both
        parties when two sources registered it, or saying why a plugin provider is gone."""
        if provider_id in self.providers:
            return self.providers.get(provider_id)
        if any(c.canonical_id == provider_id for c in self.providers.conflicts()):
            self.providers.require(provider_id)  # raises, naming the parties
        if provider_id.startswith("plugin:"):
            why = (self.explain_missing(provider_id) if self.explain_missing else None) or "its plugin is not active"
            raise UserFacingError(f"Provider {provider_id!r} is unavailable ({why}).",
                                  hint="Enable the plugin (`llmspace plugins enable NAME`) or choose another model "
                                       "(see `llmspace models`).")
        return None

    def view(self, provider_id: str) -> ProviderView | None:
        """The settings of `provider_id`: a plugin provider's own, else those of `models.json`."""
        entry = self._entry(provider_id)
        if entry is not None and entry.view is not None:
            return entry.view
        return self.models.provider(provider_id)

    def plugin_views(self) -> list[tuple[str, ProviderView]]:
        """(source, settings) of every active provider that brings its own settings (plugins)."""
        return [(r.source, r.value.view) for r in self.providers.active() if r.value.view is not None]

    def resolve(self, model: ModelConfig | None, provider: str | None = None,
                model_id: str | None = None) -> tuple[Endpoint, ModelInfo]:
        """The endpoint and model to call for a thread whose saved model is `model`."""
        self.sync_user_providers()
        target = provider or (model.provider if model is not None and not model_id else None)
        entry = self._entry(target) if target else None
        if entry is not None and entry.offline:
            return self._offline(entry, model_id or (model.id if model is not None and model.provider == entry.id else entry.id))

        chosen: ModelConfig | None
        if provider or model_id:
            chosen = self._explicit(model, provider, model_id)
        elif entry is not None and entry.view is not None and model is not None:
            chosen = model  # a plugin provider the thread names (models.json does not know it)
        else:
            chosen = self._fallback(model, refresh=True).model
        if chosen is None:
            raise UserFacingError("Select a model to run.",
                                  hint="Pick a model in the thread's model menu, set a default model in Settings › Models, or pass --provider and --model.")
        entry = self._entry(chosen.provider)  # a provider in conflict is not used
        if entry is not None and entry.offline:
            return self._offline(entry, chosen.id)
        own = entry.view if entry is not None else None
        view = own or self.models.provider(chosen.provider)
        if view is None:
            raise UserFacingError(f"Unknown provider {chosen.provider!r}.",
                                  hint="Add it in Settings › Models or choose another model (see `llmspace models`).")
        info = next((m for m in view.models if m.id == chosen.id), None) if own is not None else self.models.model_info(view.id, chosen.id)
        if info is None:
            # an explicitly named model the catalogue does not know yet (a new or local model)
            info = ModelInfo(id=chosen.id, name=chosen.id, api=view.api)
        key = (own.api_key_setting or None) if own is not None else self.models.api_key(view.id)
        wants_env = bool(view.api_key_setting and view.api_key_setting.startswith("$"))
        if (view.needs_key or wants_env) and not key:
            env = self.models.key_hint(view.id)
            raise UserFacingError(f"No API key for {view.name}: set {env} or add one in Settings › Models.")
        if not view.base_url:
            raise UserFacingError(f"Provider {view.name} has no base URL.", hint="Set one in Settings › Models.")
        api = info.api or view.api
        from .http import check_headers  # here: http imports requests, which startup does not need

        check_headers(view.id, view.headers, "the plugin's models.json" if own is not None else "settings/models.json")
        endpoint = Endpoint(provider_id=view.id, api=api, base_url=view.base_url.rstrip("/"),
                            api_key=key, headers=dict(view.headers), tolerant_tool_calls=view.tolerant_tool_calls,
                            **view.timeouts)
        return endpoint, info

    def choose(self, model: ModelConfig | None, *, refresh: bool = False) -> RunModel:
        """The model a run of a thread saved with `model` calls (as `resolve` without flags
        picks it) and why it is not the saved one. Without `refresh` no local server is asked;
        never raises (a provider that cannot be used is the reason)."""
        try:
            self.sync_user_providers()
            entry = self._entry(model.provider) if model is not None else None
        except UserFacingError as exc:
            return RunModel(None, model, "cannot run: " + str(exc).splitlines()[0])
        if entry is not None and (entry.offline or entry.view is not None):
            return RunModel(model, model)  # replay and plugin providers take the saved model as it is
        return self._fallback(model, refresh=refresh)

    def _fallback(self, model: ModelConfig | None, *, refresh: bool) -> RunModel:
        if refresh:
            self._refresh_candidates(model)
        chosen = self.models.resolve_model(model)
        if model is None or (chosen is not None and (chosen.provider, chosen.id) == (model.provider, model.id)):
            return RunModel(chosen, model)
        return RunModel(chosen, model, self.unavailable_reason(model))

    def unavailable_reason(self, model: ModelConfig) -> str:
        """Why `model` cannot run now, as a clause after its name ("has no API key")."""
        view = self.models.provider(model.provider)
        if view is None:
            return "names a provider that is not configured"
        if model.id in view.disabled:
            return "is disabled in Settings › Models"
        if not self.models.is_configured(view.id):
            return "has no API key"
        if view.local and view.reachable is False:
            return f"cannot reach {view.name}"
        if not any(m.id == model.id for m in view.models):
            return f"is not offered by {view.name}"
        return "is not available"

    @staticmethod
    def _offline(entry: ProviderEntry, model_id: str) -> tuple[Endpoint, ModelInfo]:
        return (Endpoint(provider_id=entry.id, api=entry.api, base_url=""),
                ModelInfo(id=model_id, name=model_id, api=entry.api))

    def _refresh_candidates(self, saved: ModelConfig | None) -> None:
        """Ask a local server once for its models before its saved/default model is judged."""
        for candidate in (saved, self.models.default_model):
            if candidate is None:
                continue
            view = self.models.provider(candidate.provider)
            if view is not None and view.local and not self.models.was_refreshed(view.id):
                self.refresh_local([view.id], timeout=0.5)

    def _explicit(self, saved: ModelConfig | None, provider: str | None, model_id: str | None) -> ModelConfig:
        if provider and model_id:
            return ModelConfig(provider=provider, id=model_id)
        if provider:
            if saved is not None and saved.provider == provider:
                return saved
            view = self.view(provider)
            if view is None:
                raise UserFacingError(f"Unknown provider {provider!r}.", hint="See `llmspace models` for the list.")
            if view.local and not view.models:
                self.refresh_local([provider], timeout=0.5)
                view = self.models.provider(provider) or view
            enabled = view.enabled_models()
            if not enabled:
                raise UserFacingError(f"{view.name} lists no models.", hint="Pass --model, or start the server and run `llmspace models --refresh`.")
            return ModelConfig(provider=provider, id=enabled[0].id)
        assert model_id is not None
        views = [*self.models.providers(), *(v for _, v in self.plugin_views())]
        candidates = [v.id for v in views if any(m.id == model_id for m in v.models)]
        if saved is not None and saved.provider in candidates:
            return ModelConfig(provider=saved.provider, id=model_id)
        configured = [c for c in candidates if self.models.is_configured(c)]
        if configured or candidates:
            return ModelConfig(provider=(configured or candidates)[0], id=model_id)
        if saved is not None:
            return ModelConfig(provider=saved.provider, id=model_id)
        raise UserFacingError(f"No provider lists the model {model_id!r}.", hint="Pass --provider too.")
