"""Provider and model settings: `settings/models.json`.

`ModelSettings(root)` merges the built-in providers (`settings/catalog.py`) with the file:
API keys (a literal, `$ENV_NAME`, the provider's own env var, or the OS keyring as a third
source), base-URL and header overrides, disabledModels, custom providers and models, and
the default model, and per-provider timeouts (`connectTimeout`, `readTimeout`,
`retryDeadline`, `progressTimeout`, in seconds; see `timeouts`). Local key-less providers (Ollama, llama.cpp, LM Studio, vLLM) list the
models their server reports; `providers/discovery.py` asks the servers (this module makes no
network calls) and hands the answer to `record_discovery`, which caches it in memory and in
`data/local-models.json`. A provider's `api` may be any name a model API is registered under.

A corrupt `models.json` (malformed, or a provider value of the wrong type such as
`"disabledModels": 5`, see `_shape_problem`) is reported as `load_error`, never overwritten (writes are refused
until the user fixes it) and the built-ins keep working.
"""

from __future__ import annotations

import copy
import logging
import math
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.model import ModelConfig
from ..errors import UserFacingError
from ..jsonio import SETTINGS_MAX_BYTES, read_json, write_json_atomic
from ..paths import DataRoot
from .catalog import BUILTINS, KEYRING_SERVICE, BuiltinProvider
from .model_info import ModelInfo

log = logging.getLogger("llmspace.models")

APIS = ("anthropic-messages", "openai-completions", "openai-responses")
DISCOVERY_TIMEOUT = 1.0

# Per-provider timeouts (seconds): models.json key -> (Endpoint field, default)
DEFAULT_CONNECT_TIMEOUT = 10.0  # to open the connection
DEFAULT_READ_TIMEOUT = 60.0  # without any data: before the response headers, and between chunks
DEFAULT_RETRY_DEADLINE = 120.0  # one model call, all retries and their waits included
DEFAULT_PROGRESS_TIMEOUT = 300.0  # without model output (a delta, usage or finish), keep-alives or not
MAX_TIMEOUT = 24 * 3600.0
TIMEOUT_KEYS = {"connectTimeout": ("connect_timeout", DEFAULT_CONNECT_TIMEOUT),
                "readTimeout": ("read_timeout", DEFAULT_READ_TIMEOUT),
                "retryDeadline": ("retry_deadline", DEFAULT_RETRY_DEADLINE),
                "progressTimeout": ("progress_timeout", DEFAULT_PROGRESS_TIMEOUT)}


@dataclass
class ProviderView:
    """One provider as the app sees it: built-in defaults with the user's settings applied."""

    id: str
    name: str
    api: str
    base_url: str
    builtin: bool
    local: bool
    needs_key: bool
    env_var: str | None
    api_key_setting: str | None  # as written in models.json ("$ENV" or a literal), if any
    headers: dict[str, str] = field(default_factory=dict)
    models: list[ModelInfo] = field(default_factory=list)
    disabled: frozenset[str] = frozenset()
    reachable: bool | None = None  # local providers: result of the last discovery
    timeouts: dict[str, float] = field(default_factory=dict)  # Endpoint field -> seconds (each of TIMEOUT_KEYS)

    def enabled_models(self) -> list[ModelInfo]:
        return [m for m in self.models if m.id not in self.disabled]


def model_from_dict(d: dict[str, Any], default_api: str) -> ModelInfo:
    """A `CustomModel` record (pi-ai shape) as a `ModelInfo`."""
    cost = d.get("cost")
    if not isinstance(cost, dict):
        cost = {}

    def num(v: Any) -> float:
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0

    inputs = d.get("input")
    if not isinstance(inputs, list):
        inputs = ["text"]
    api = _api_name(d.get("api"), default_api)
    return ModelInfo(
        id=str(d["id"]), name=str(d.get("name") or d["id"]), api=api,
        reasoning=bool(d.get("reasoning", False)), input=tuple(str(x) for x in inputs),
        context_window=d.get("contextWindow") if isinstance(d.get("contextWindow"), int) else None,
        max_tokens=d.get("maxTokens") if isinstance(d.get("maxTokens"), int) else None,
        cost_input=num(cost.get("input")), cost_output=num(cost.get("output")),
        cost_cache_read=num(cost.get("cacheRead")), cost_cache_write=num(cost.get("cacheWrite")),
    )


def _keyring_get(provider_id: str) -> str | None:
    if os.environ.get("LLM_SPACE_NO_KEYRING"):
        return None
    try:
        import keyring  # optional
        from keyring.errors import KeyringError
    except Exception:
        return None
    try:
        value = keyring.get_password(KEYRING_SERVICE, provider_id)
    except (KeyringError, RuntimeError, OSError):
        return None
    except Exception:  # a broken backend must not break the app
        log.warning("keyring lookup failed", exc_info=True)
        return None
    return value or None


class ModelSettings:
    """Reads and writes `settings/models.json`; answers which models exist and are usable."""

    def __init__(self, root: DataRoot) -> None:
        self.root = root
        self.path = root.settings_file("models")
        self._cache_path = root.root / "data" / "local-models.json"
        self._lock = threading.RLock()
        self.load_error: UserFacingError | None = None
        self._data: dict[str, Any] = {"providers": []}
        self._discovered: dict[str, list[str]] = {}
        self._reachable: dict[str, bool] = {}
        self._refreshed: set[str] = set()
        # Asks local servers for their models (`providers/discovery.refresh_local`; set by app.py).
        self.discoverer: Callable[[ModelSettings, list[str] | None, float], dict[str, bool]] | None = None
        self.reload()

    # -- file ------------------------------------------------------------------------------
    def reload(self) -> None:
        with self._lock:
            self.load_error = None
            self._data = {"providers": []}
            if self.path.exists():
                try:
                    data = read_json(self.path, max_bytes=SETTINGS_MAX_BYTES)
                    if not isinstance(data, dict) or not isinstance(data.get("providers", []), list):
                        raise UserFacingError(f"{self.path}: expected an object with a \"providers\" list.",
                                              hint="Fix the file in a text editor; it was left unchanged.")
                    problem = _shape_problem(data)
                    if problem:
                        raise UserFacingError(f"{self.path}: {problem}.",
                                              hint="Fix the file in a text editor; it was left unchanged.")
                    self._data = data
                except UserFacingError as exc:
                    self.load_error = exc
                    log.warning("models.json unreadable: %s", exc)
            self._load_cache()

    def _load_cache(self) -> None:
        try:
            data = read_json(self._cache_path, max_bytes=SETTINGS_MAX_BYTES) if self._cache_path.exists() else {}
        except UserFacingError:
            data = {}
        if isinstance(data, dict):
            self._discovered = {k: [str(m) for m in v] for k, v in data.items() if isinstance(v, list)}

    @property
    def data(self) -> dict[str, Any]:
        """A copy of the file's content (what would be saved)."""
        with self._lock:
            return copy.deepcopy(self._data)

    def _save(self) -> None:
        if self.load_error is not None:
            raise UserFacingError(f"Not saving model settings: {self.load_error.message}",
                                  hint="Fix or remove settings/models.json first; it was left unchanged.")
        write_json_atomic(self.path, self._data, trailing_newline=True)

    def _entry(self, provider_id: str, create: bool = False) -> dict[str, Any] | None:
        for p in self._data.setdefault("providers", []):
            if isinstance(p, dict) and p.get("id") == provider_id:
                return p
        if not create:
            return None
        entry: dict[str, Any] = {"id": provider_id}
        if provider_id in BUILTINS:
            entry["builtin"] = True
        self._data["providers"].append(entry)
        return entry

    # -- providers ---------------------------------------------------------------------------
    def providers(self) -> list[ProviderView]:
        """Built-in providers (in catalogue order) then custom ones (in file order)."""
        with self._lock:
            out = [self._view_builtin(b) for b in BUILTINS.values()]
            for p in self._data.get("providers", []):
                if isinstance(p, dict) and p.get("id") and p["id"] not in BUILTINS:
                    out.append(self._view_custom(p))
            return out

    def provider(self, provider_id: str) -> ProviderView | None:
        for p in self.providers():
            if p.id == provider_id:
                return p
        return None

    def _view_builtin(self, b: BuiltinProvider) -> ProviderView:
        entry = self._entry(b.id) or {}
        models = list(b.models)
        if b.local:
            models = [ModelInfo(id=m, name=m, api=b.api) for m in self._discovered.get(b.id, [])]
        models += self._custom_models(entry, b.api)
        return ProviderView(
            id=b.id, name=str(entry.get("name") or b.name), api=b.api,
            base_url=str(entry.get("baseUrl") or b.base_url), builtin=True, local=b.local,
            needs_key=b.env_var is not None, env_var=b.env_var,
            api_key_setting=entry.get("apiKey") if isinstance(entry.get("apiKey"), str) else None,
            headers=_str_dict(entry.get("headers")), models=_dedupe(models),
            disabled=frozenset(str(x) for x in entry.get("disabledModels") or []),
            reachable=self._reachable.get(b.id), timeouts=_timeouts(entry),
        )

    def _view_custom(self, p: dict[str, Any]) -> ProviderView:
        return custom_view(p)

    @staticmethod
    def _custom_models(entry: dict[str, Any], api: str) -> list[ModelInfo]:
        return _models_of(entry, api)

    # -- keys ------------------------------------------------------------------------------
    def api_key(self, provider_id: str) -> str | None:
        """The key to send: configured literal or `$ENV`, else the provider's env var, else the keyring."""
        view = self.provider(provider_id)
        if view is None:
            return None
        setting = view.api_key_setting
        if setting:
            if setting.startswith("$"):
                value = os.environ.get(setting[1:], "").strip()
                if value:
                    return value
            else:
                return setting
        if view.env_var:
            value = os.environ.get(view.env_var, "").strip()
            if value:
                return value
        return _keyring_get(provider_id)

    def store_key_in_keyring(self, provider_id: str, value: str | None) -> bool:
        """Keep a key in the OS keyring instead of models.json (None deletes it).
        Returns False when no usable keyring is available."""
        try:
            import keyring
            from keyring.errors import KeyringError, PasswordDeleteError
        except Exception:
            return False
        try:
            if value:
                keyring.set_password(KEYRING_SERVICE, provider_id, value)
            else:
                try:
                    keyring.delete_password(KEYRING_SERVICE, provider_id)
                except PasswordDeleteError:
                    pass
        except (KeyringError, RuntimeError, OSError):
            return False
        return True

    def key_hint(self, provider_id: str) -> str:
        """Which env var the user should set (for error messages)."""
        view = self.provider(provider_id)
        if view and view.api_key_setting and view.api_key_setting.startswith("$"):
            return view.api_key_setting[1:]
        if view and view.env_var:
            return view.env_var
        return f"{provider_id.upper().replace('-', '_')}_API_KEY"

    def is_configured(self, provider_id: str) -> bool:
        view = self.provider(provider_id)
        if view is None:
            return False
        return (not view.needs_key) or self.api_key(provider_id) is not None

    # -- models ----------------------------------------------------------------------------
    def model_info(self, provider_id: str, model_id: str) -> ModelInfo | None:
        view = self.provider(provider_id)
        if view is None:
            return None
        for m in view.models:
            if m.id == model_id:
                return m if m.api else replace(m, api=view.api)
        return None

    def is_available(self, provider_id: str, model_id: str) -> bool:
        view = self.provider(provider_id)
        if view is None or model_id in view.disabled or not self.is_configured(provider_id):
            return False
        return any(m.id == model_id for m in view.models)

    @property
    def default_model(self) -> ModelConfig | None:
        d = self._data.get("defaultModel")
        if isinstance(d, dict) and d.get("provider") and d.get("id"):
            try:
                return ModelConfig.model_validate(d)
            except Exception:
                return None
        return None

    def resolve_model(self, saved: ModelConfig | None) -> ModelConfig | None:
        """Saved model if available → default model if available → first enabled model of
        the configured providers sorted by display name → None."""
        for candidate in (saved, self.default_model):
            if candidate is None:
                continue
            if self.is_available(candidate.provider, candidate.id):
                return candidate
        for view in sorted(self.providers(), key=lambda v: v.name.lower()):
            if not self.is_configured(view.id):
                continue
            for m in view.enabled_models():
                return ModelConfig(provider=view.id, id=m.id)
        return None

    # -- discovery (the HTTP probing is `providers/discovery.py`) ---------------------------
    def refresh_local(self, provider_ids: list[str] | None = None, timeout: float = DISCOVERY_TIMEOUT) -> dict[str, bool]:
        """Ask local servers for their models through `discoverer` (set by `app.py` to
        `providers.discovery.refresh_local`); returns reachability. Without a discoverer
        nothing is asked (settings make no network calls)."""
        if self.discoverer is None:
            return {}
        return self.discoverer(self, provider_ids, timeout)

    def was_refreshed(self, provider_id: str) -> bool:
        """Whether the local server of `provider_id` was asked for its models in this process."""
        with self._lock:
            return provider_id in self._refreshed

    def record_discovery(self, found: dict[str, list[str] | None]) -> None:
        """Keep what local servers reported (provider id -> model ids, None: not reachable),
        in memory and in `data/local-models.json`."""
        if not found:
            return
        with self._lock:
            for pid, ids in found.items():
                self._refreshed.add(pid)
                self._reachable[pid] = ids is not None
                if ids is not None:
                    self._discovered[pid] = list(ids)
            cache = dict(self._discovered)
        try:
            write_json_atomic(self._cache_path, cache, trailing_newline=True)
        except UserFacingError:
            log.warning("could not write the local model cache", exc_info=True)

    # -- edits (each saves) -----------------------------------------------------------------
    def set_default_model(self, provider_id: str, model_id: str) -> None:
        with self._lock:
            self._data["defaultModel"] = {"provider": provider_id, "id": model_id}
            self._save()

    def set_model_enabled(self, provider_id: str, model_id: str, enabled: bool) -> None:
        with self._lock:
            entry = self._entry(provider_id, create=True)
            assert entry is not None
            disabled = [str(x) for x in entry.get("disabledModels") or [] if x != model_id]
            if not enabled:
                disabled.append(model_id)
            entry["disabledModels"] = disabled
            self._save()

    def set_api_key(self, provider_id: str, value: str | None) -> None:
        """Store `$ENV_NAME` or a literal in models.json (None removes it)."""
        with self._lock:
            entry = self._entry(provider_id, create=True)
            assert entry is not None
            if value:
                entry["apiKey"] = value
            else:
                entry.pop("apiKey", None)
            self._save()

    def set_provider(self, config: dict[str, Any]) -> None:
        """Add or replace a custom provider (`{id, name, baseUrl, api, apiKey?, headers?, models?}`)."""
        pid = str(config.get("id") or "").strip()
        if not pid or pid in BUILTINS:
            raise UserFacingError(f"Invalid provider id {pid!r}: choose a new, non-empty id.")
        if not str(config.get("baseUrl") or "").strip():
            raise UserFacingError(f"Provider {pid} needs a base URL (for example http://127.0.0.1:8080/v1).")
        entry = dict(config)
        entry.setdefault("api", "openai-completions")
        if entry["api"] not in APIS:
            raise UserFacingError(f"Unknown API {entry['api']!r}: use one of {', '.join(APIS)}.")
        entry["customModels"] = [str(m["id"]) for m in entry.get("models") or [] if isinstance(m, dict) and m.get("id")]
        with self._lock:
            providers = self._data.setdefault("providers", [])
            for i, p in enumerate(providers):
                if isinstance(p, dict) and p.get("id") == pid:
                    for key in TIMEOUT_KEYS:  # set in the file by hand; the editor does not show them
                        if key in p and key not in entry:
                            entry[key] = p[key]
                    providers[i] = entry
                    break
            else:
                providers.append(entry)
            self._save()

    def remove_provider(self, provider_id: str) -> None:
        with self._lock:
            self._data["providers"] = [p for p in self._data.get("providers", []) if not (isinstance(p, dict) and p.get("id") == provider_id)]
            self._save()


def custom_view(p: dict[str, Any], provider_id: str | None = None) -> ProviderView:
    """A provider entry in the `models.json` shape (`{id, name, api, baseUrl, apiKey, headers,
    models, …}`) as a `ProviderView`; `provider_id` overrides its `id` (plugin providers are
    namespaced, llmspace/plugins/contrib_models.py)."""
    api = _api_name(p.get("api"), "openai-completions")
    pid = provider_id or str(p["id"])
    return ProviderView(
        id=pid, name=str(p.get("name") or p["id"]), api=api, base_url=str(p.get("baseUrl") or ""),
        builtin=False, local=False, needs_key=False, env_var=None,
        api_key_setting=p.get("apiKey") if isinstance(p.get("apiKey"), str) else None,
        headers=_str_dict(p.get("headers")), models=_dedupe(_models_of(p, api)),
        disabled=frozenset(str(x) for x in p.get("disabledModels") or []), timeouts=_timeouts(p),
    )


def _models_of(entry: dict[str, Any], api: str) -> list[ModelInfo]:
    out = []
    for m in entry.get("models") or []:
        if isinstance(m, dict) and m.get("id"):
            out.append(model_from_dict(m, api))
    return out


def _api_name(value: Any, default: str) -> str:
    """A provider's or model's `api` as written: any non-empty name (the `apis` registry of
    `providers/registry.py` says whether an adapter exists for it), else `default`."""
    return value.strip() if isinstance(value, str) and value.strip() else default


def _timeouts(entry: dict[str, Any]) -> dict[str, float]:
    """`connect_timeout`, `read_timeout`, `retry_deadline`, `progress_timeout` (seconds) from a
    provider entry's `connectTimeout`, `readTimeout`, `retryDeadline`, `progressTimeout`; a missing, non-numeric or non-positive
    value takes the default (a wrong one is logged), and any value is capped at a day."""
    out: dict[str, float] = {}
    for key, (name, default) in TIMEOUT_KEYS.items():
        value = entry.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
            out[name] = min(float(value), MAX_TIMEOUT)
            continue
        if value is not None:
            log.warning("models.json: provider %s: %s must be a positive number of seconds, got %r; using %g",
                        entry.get("id"), key, value, default)
        out[name] = default
    return out


def _json_kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return {int: "a number", float: "a number", str: "text", dict: "an object", list: "a list"}.get(type(v), type(v).__name__)


# Provider-entry keys the code iterates or hashes: a wrong type would break every command.
_LIST_KEYS = {"disabledModels": "a list of model ids", "models": "a list of model objects",
              "customModels": "a list of model ids"}


def _shape_problem(data: dict[str, Any]) -> str | None:
    """The JSON path and expectation of the first provider entry value of the wrong type."""
    for i, entry in enumerate(data.get("providers", [])):
        if not isinstance(entry, dict):
            continue  # entries that are not objects are ignored
        if "id" in entry and not isinstance(entry["id"], str):
            return f"providers[{i}].id must be text, not {_json_kind(entry['id'])}"
        for key, expected in _LIST_KEYS.items():
            value = entry.get(key)
            if value is not None and not isinstance(value, list):
                return f"providers[{i}].{key} must be {expected}, not {_json_kind(value)}"
        disabled = entry.get("disabledModels") or []
        for j, item in enumerate(disabled):
            if not isinstance(item, str):
                return f"providers[{i}].disabledModels[{j}] must be a model id (text), not {_json_kind(item)}"
        if entry.get("headers") is not None and not isinstance(entry["headers"], dict):
            return f"providers[{i}].headers must be an object, not {_json_kind(entry['headers'])}"
    return None


def _str_dict(v: Any) -> dict[str, str]:
    return {str(k): str(x) for k, x in v.items()} if isinstance(v, dict) else {}


def _dedupe(models: list[ModelInfo]) -> list[ModelInfo]:
    seen: dict[str, ModelInfo] = {}
    for m in models:
        seen[m.id] = m  # later (custom) records win
    return list(seen.values())
