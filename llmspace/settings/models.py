"""Provider and model settings: `settings/models.json`.

`ModelSettings(root)` merges the built-in providers (`settings/catalog.py`) with the file:
API keys (a literal, `$ENV_NAME`, the provider's own env var, or the OS keyring as a third
source), base-URL and header overrides, disabledModels, custom providers and models, and
the default model, and per-provider timeouts (`connectTimeout`, `readTimeout`,
`retryDeadline`, `progressTimeout`, in seconds). How one provider entry reads — into a
`ProviderView`, its timeouts, the shape check — is `settings/provider_entries.py`. Local key-less providers (Ollama, llama.cpp, LM Studio, vLLM) list the
models their server reports; `providers/discovery.py` asks the servers (this module makes no
network calls) and hands the answer to `record_discovery`, which caches it in memory and in
`data/local-models.json`. A provider's `api` may be any name a model API is registered under.

A corrupt `models.json` (malformed, or a provider value of the wrong type such as
`"disabledModels": 5`, see `provider_entries.shape_problem`) is reported as `load_error`, never overwritten (writes are refused
until the user fixes it) and the built-ins keep working.
"""

from __future__ import annotations

import copy
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..core.model import ModelConfig
from ..errors import UserFacingError
from ..jsonio import SETTINGS_MAX_BYTES, read_json, write_json_atomic
from ..paths import DataRoot
from .catalog import BUILTINS, KEYRING_SERVICE, BuiltinProvider
from .model_info import ModelInfo
from .provider_entries import TIMEOUT_KEYS, ProviderView, builtin_view, custom_view, shape_problem

log = logging.getLogger("llmspace.models")

APIS = ("anthropic-messages", "openai-completions", "openai-responses")
DISCOVERY_TIMEOUT = 1.0


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
                    problem = shape_problem(data)
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
                    out.append(custom_view(p))
            return out

    def provider(self, provider_id: str) -> ProviderView | None:
        for p in self.providers():
            if p.id == provider_id:
                return p
        return None

    def _view_builtin(self, b: BuiltinProvider) -> ProviderView:
        discovered = self._discovered.get(b.id, []) if b.local else None
        return builtin_view(b, self._entry(b.id) or {}, discovered, self._reachable.get(b.id))

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
                    for key in (*TIMEOUT_KEYS, "compat"):  # set in the file by hand; the editor does not show them
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
