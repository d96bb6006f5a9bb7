"""A provider entry of `settings/models.json`, read: `ProviderView` (the provider as the
app sees it), `builtin_view` (a built-in provider with its entry applied), `custom_view` (an
entry in the models.json shape, also a plugin's provider),
`model_from_dict` (a `CustomModel` record), the per-provider timeouts (`connectTimeout`,
`readTimeout`, `retryDeadline`, `progressTimeout`, in seconds, defaults and the one-day cap)
and `shape_problem`, the check that refuses a file whose provider values have the wrong type
(`"disabledModels": 5`). Pure: no file, no state; `settings/models.ModelSettings` owns the file.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any

from .catalog import BuiltinProvider
from .model_info import ModelInfo

log = logging.getLogger("llmspace.models")

# Per-provider timeouts (seconds): models.json key -> (Endpoint field, default)
DEFAULT_CONNECT_TIMEOUT = 10.0  # to open the connection
DEFAULT_READ_TIMEOUT = 60.0  # without any data: before the response headers, and between chunks
DEFAULT_RETRY_DEADLINE = 120.0  # one model call, all retries and their waits included
DEFAULT_PROGRESS_TIMEOUT = 300.0  # without model output (a delta, usage or finish), keep-alives or not
MAX_TIMEOUT = 24 * 3600.0
# Built-in providers with `compat.tolerantToolCalls` on unless their entry turns it off.
TOLERANT_BY_DEFAULT = frozenset({"local"})
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
    tolerant_tool_calls: bool = False  # compat.tolerantToolCalls (providers/tolerant_calls.py)

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


def builtin_view(b: BuiltinProvider, entry: dict[str, Any], discovered: list[str] | None,
                 reachable: bool | None) -> ProviderView:
    """A built-in provider with its `models.json` entry (`{}` when none) applied; a local
    provider lists the model ids its server reported (`discovered`) instead of a catalogue."""
    models = list(b.models)
    if discovered is not None:
        models = [ModelInfo(id=m, name=m, api=b.api) for m in discovered]
    models += _models_of(entry, b.api)
    return ProviderView(
        id=b.id, name=str(entry.get("name") or b.name), api=b.api,
        base_url=str(entry.get("baseUrl") or b.base_url), builtin=True, local=b.local,
        needs_key=b.env_var is not None, env_var=b.env_var,
        api_key_setting=entry.get("apiKey") if isinstance(entry.get("apiKey"), str) else None,
        headers=_str_dict(entry.get("headers")), models=_dedupe(models),
        disabled=frozenset(str(x) for x in entry.get("disabledModels") or []),
        reachable=reachable, timeouts=_timeouts(entry),
        tolerant_tool_calls=_tolerant(entry, default=b.id in TOLERANT_BY_DEFAULT),
    )


def custom_view(p: dict[str, Any], provider_id: str | None = None) -> ProviderView:
    """A provider entry in the `models.json` shape (`{id, name, api, baseUrl, apiKey, headers,
    models, …}`) as a `ProviderView`; `provider_id` overrides its `id` (plugin providers are
    namespaced, llmspace/plugins/contributions/config_files.py)."""
    api = _api_name(p.get("api"), "openai-completions")
    pid = provider_id or str(p["id"])
    return ProviderView(
        id=pid, name=str(p.get("name") or p["id"]), api=api, base_url=str(p.get("baseUrl") or ""),
        builtin=False, local=False, needs_key=False, env_var=None,
        api_key_setting=p.get("apiKey") if isinstance(p.get("apiKey"), str) else None,
        headers=_str_dict(p.get("headers")), models=_dedupe(_models_of(p, api)),
        disabled=frozenset(str(x) for x in p.get("disabledModels") or []), timeouts=_timeouts(p),
        tolerant_tool_calls=_tolerant(p, default=False),
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


def _tolerant(entry: dict[str, Any], *, default: bool) -> bool:
    """`compat.tolerantToolCalls` of a provider entry (`shape_problem` refuses a non-boolean)."""
    compat = entry.get("compat")
    value = compat.get("tolerantToolCalls") if isinstance(compat, dict) else None
    return value if isinstance(value, bool) else default


def _json_kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return {int: "a number", float: "a number", str: "text", dict: "an object", list: "a list"}.get(type(v), type(v).__name__)


# Provider-entry keys the code iterates or hashes: a wrong type would break every command.
_LIST_KEYS = {"disabledModels": "a list of model ids", "models": "a list of model objects",
              "customModels": "a list of model ids"}


def shape_problem(data: dict[str, Any]) -> str | None:
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
        compat = entry.get("compat")
        if compat is not None and not isinstance(compat, dict):
            return f"providers[{i}].compat must be an object, not {_json_kind(compat)}"
        tolerant = compat.get("tolerantToolCalls") if isinstance(compat, dict) else None
        if tolerant is not None and not isinstance(tolerant, bool):
            return f"providers[{i}].compat.tolerantToolCalls must be true or false, not {_json_kind(tolerant)}"
    return None


def _str_dict(v: Any) -> dict[str, str]:
    return {str(k): str(x) for k, x in v.items()} if isinstance(v, dict) else {}


def _dedupe(models: list[ModelInfo]) -> list[ModelInfo]:
    seen: dict[str, ModelInfo] = {}
    for m in models:
        seen[m.id] = m  # later (custom) records win
    return list(seen.values())
