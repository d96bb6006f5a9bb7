"""Settings › Models screen logic (no Tk): provider rows with status, saving an API key
(`$ENV_NAME` or a literal), adding/removing a custom OpenAI-compatible provider, choosing
the default model — delegated to `settings.models.ModelSettings` (`app.models`). Apart from
them, the providers of plugins (`plugin:<name>:model-provider:<id>`, from
`app.providers.plugin_views()`), read-only, with their models; plugin providers left
inactive by an ID conflict are listed with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import UserFacingError
from ..redact import KNOWN, mask_url

APIS = ("openai-completions", "openai-responses", "anthropic-messages")


@dataclass(frozen=True)
class ProviderRow:
    id: str
    name: str
    api: str
    status: str
    models: int
    builtin: bool
    local: bool


@dataclass(frozen=True)
class PluginProviderRow:
    id: str
    name: str
    plugin: str
    api: str
    base_url: str
    status: str
    models: tuple[tuple[str, str], ...]  # (id, name)


class ModelsPagePresenter:
    def __init__(self, settings: Any, providers: Any = None) -> None:
        self.s = settings
        self.providers = providers  # `app.providers`: the plugin providers come from there

    def rows(self) -> list[ProviderRow]:
        out = []
        for p in self.s.providers():
            if p.local:
                status = {True: "running", False: "not running", None: "local"}[p.reachable]
            elif self.s.is_configured(p.id):
                status = "ready"
            else:
                status = f"needs a key (${self.s.key_hint(p.id)})"
            out.append(ProviderRow(p.id, p.name, p.api, status, len(p.enabled_models()), p.builtin, p.local))
        return out

    def plugin_rows(self) -> list[PluginProviderRow]:
        """The providers of active plugins (read-only here: their plugin's settings configure them)."""
        if self.providers is None:
            return []
        out = []
        for source, v in self.providers.plugin_views():
            status = "active" if v.base_url else "no base URL (see the plugin's settings)"
            out.append(PluginProviderRow(v.id, v.name, source.removeprefix("plugin:"), v.api, KNOWN.text(mask_url(v.base_url)),
                                         status, tuple((m.id, m.name) for m in v.models)))
        return out

    def plugin_conflicts(self) -> list[str]:
        if self.providers is None:
            return []
        return [c.message for c in self.providers.providers.conflicts()
                if any(src.startswith("plugin:") for src in c.sources)]

    def save_key(self, provider_id: str, value: str) -> None:
        value = value.strip()
        if value.startswith("$") and len(value) < 2:
            raise UserFacingError("Write the variable name after $, for example $OPENAI_API_KEY.")
        self.s.set_api_key(provider_id, value or None)

    def add_custom(self, pid: str, name: str, base_url: str, api: str, model_ids: str, api_key: str = "") -> None:
        ids = [m.strip() for m in model_ids.replace("\n", ",").split(",") if m.strip()]
        if api not in APIS:
            raise UserFacingError(f"Unknown API {api!r}: use one of {', '.join(APIS)}.")
        config: dict[str, Any] = {"id": pid.strip(), "name": name.strip() or pid.strip(), "baseUrl": base_url.strip(),
                                  "api": api, "models": [{"id": m, "name": m} for m in ids]}
        if api_key.strip():
            config["apiKey"] = api_key.strip()
        self.s.set_provider(config)

    def remove(self, provider_id: str) -> None:
        row = next((r for r in self.rows() if r.id == provider_id), None)
        if row is None:
            raise UserFacingError(f"There is no provider {provider_id!r}.")
        if row.builtin:
            raise UserFacingError(f"{row.name} is built in and cannot be removed.", hint="Disable its models instead.")
        self.s.remove_provider(provider_id)

    def default_label(self) -> str:
        d = self.s.default_model
        return f"{d.provider}/{d.id}" if d is not None else "Automatic"

    def set_default(self, label: str) -> None:
        provider, _, model = label.partition("/")
        if not provider or not model:
            raise UserFacingError("Pick a model as provider/model.")
        self.s.set_default_model(provider, model)
