"""What a plugin's `mcp.json` and `models.json` contribute, read and interpolated.

    servers, problems = mcp_servers(record, settings, environ)     # canonical ID -> McpServerConfig
    providers, problems = model_providers(record, settings, environ)  # canonical ID -> ProviderEntry

Both files have the user files' format (`{"servers": [...]}`, `{"providers": [...]}`).
Every string is interpolated after loading (llmspace/plugins/package/interpolate.py: whole-string
`$ENV`, `${settings.a.b}`); the files are never written. IDs are namespaced:
`plugin:<name>:mcp:<id>` and `plugin:<name>:model-provider:<id>`. Only entries whose
extension the loader found valid (`Extension.status == "active"`) are read; an entry that
still does not make a usable definition is returned in `problems` (canonical ID -> reason).
A stdio server's `cwd` defaults to the plugin folder, and a relative one is taken from it.
Secret values (API keys, headers, server environment) are added to the redactor's known
secrets. Shown text (`name`, `description`, each model's `name`) loses control characters
(`plain_text`); a model `id` with one is a key, so its provider is refused with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...core.names import plain_text
from ...errors import UserFacingError
from ...jsonio import SETTINGS_MAX_BYTES, read_json
from ...providers.registry import ProviderEntry
from ...redact import KNOWN
from ...settings.mcp import McpServerConfig, normalize_name
from ...settings.provider_entries import custom_view
from ..diagnostics import secret_env_values
from ..model import PluginRecord
from ..package.interpolate import interpolate

Problems = dict[str, str]


def _items(record: PluginRecord, kind: str, filename: str, key: str, settings: Mapping[str, Any],
           environ: Mapping[str, str] | None) -> list[tuple[str, dict[str, Any]]]:
    """(local id, interpolated entry) of each valid entry of `filename`."""
    wanted = {e.id for e in record.extensions if e.kind == kind and e.status == "active"}
    if not wanted:
        return []
    try:
        data = read_json(record.folder / filename, max_bytes=SETTINGS_MAX_BYTES)
    except UserFacingError:
        return []  # changed since discovery; the next reload reports it
    items = data.get(key) if isinstance(data, dict) else None
    out: list[tuple[str, dict[str, Any]]] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("id") in wanted:
            out.append((str(item["id"]), _shown_plain(interpolate(item, settings, environ))))
    return out


def _shown_plain(item: dict[str, Any]) -> dict[str, Any]:
    """`item` with its shown text (name, description, models' names) free of control characters."""
    for entry in [item, *(m for m in item.get("models") or [] if isinstance(m, dict))] \
            if isinstance(item.get("models", []), list) else [item]:
        for key in ("name", "description"):
            if isinstance(entry.get(key), str):
                entry[key] = plain_text(entry[key])
    return item


def _secrets(headers: Any, env: Any = None) -> None:
    """Header values and secret-looking environment values become known secrets."""
    values = [v for v in (headers or {}).values() if isinstance(v, str)] if isinstance(headers, dict) else []
    if isinstance(env, dict):
        values += secret_env_values((), {k: v for k, v in env.items() if isinstance(v, str)})
    KNOWN.add(values)


def mcp_servers(record: PluginRecord, settings: Mapping[str, Any],
                environ: Mapping[str, str] | None = None) -> tuple[dict[str, McpServerConfig], Problems]:
    servers: dict[str, McpServerConfig] = {}
    problems: Problems = {}
    for ident, item in _items(record, "mcp", "mcp.json", "servers", settings, environ):
        cid = f"plugin:{record.key}:mcp:{ident}"
        fields = {k: v for k, v in item.items() if k not in ("readiness", "enabled", "createdAt", "updatedAt")}
        fields.update(id=cid, serverName=normalize_name(str(item.get("name") or ident)))
        if item.get("transport") == "stdio":
            cwd = item.get("cwd")
            fields["cwd"] = str(record.folder / cwd) if isinstance(cwd, str) and cwd.strip() else str(record.folder)
            if not str(item.get("command") or "").strip():
                problems[cid] = f"server {ident!r} in mcp.json has no \"command\" (after interpolation)"
                continue
        elif not str(item.get("url") or "").strip():
            problems[cid] = f"server {ident!r} in mcp.json has no \"url\" (after interpolation)"
            continue
        try:
            cfg = McpServerConfig.model_validate(fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            problems[cid] = f"server {ident!r} in mcp.json: {where}: {first.get('msg')}"
            continue
        _secrets(cfg.headers, cfg.env)
        servers[cid] = cfg
    return servers, problems


def model_providers(record: PluginRecord, settings: Mapping[str, Any],
                    environ: Mapping[str, str] | None = None) -> tuple[dict[str, ProviderEntry], Problems]:
    providers: dict[str, ProviderEntry] = {}
    problems: Problems = {}
    for ident, item in _items(record, "model-provider", "models.json", "providers", settings, environ):
        cid = f"plugin:{record.key}:model-provider:{ident}"
        if not isinstance(item.get("models", []), list) or not isinstance(item.get("headers", {}), dict):
            problems[cid] = f"provider {ident!r} in models.json: \"models\" must be a list and \"headers\" an object"
            continue
        bad = [m["id"] for m in item.get("models", []) if isinstance(m, dict) and isinstance(m.get("id"), str)
               and plain_text(m["id"]) != m["id"]]
        if bad:
            problems[cid] = (f"provider {ident!r} in models.json: the model id {bad[0]!r} has a control character; "
                             "remove it from the id")
            continue
        view = custom_view(item, cid)
        if isinstance(item.get("apiKey"), str):
            KNOWN.add([item["apiKey"]])
        _secrets(item.get("headers"))
        providers[cid] = ProviderEntry(id=cid, api=view.api, name=view.name, view=view)
    return providers, problems


def files_of(record: PluginRecord, filename: str) -> tuple[str, ...]:
    return (str(Path(record.folder) / filename),)
