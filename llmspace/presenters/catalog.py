"""What the editor's pickers offer: models by provider with availability, built-in tools by
group, MCP tools per server, the thread's plugin tools by plugin, how a tool is named
(`tool_label`: a plugin tool with its plugin), and what the model row says (`run_model_label`:
the model a run will call, `params_label`: its parameters). Thin adapters over `app.models`,
`tools.builtins` and `app.mcp`; the model and MCP pickers degrade to "nothing available"
(with a reason) when their service fails. No Tk.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.model import ModelConfig, Tool

if TYPE_CHECKING:
    from ..app import App
from ..tools.builtins import builtin_groups, builtin_tools
from ..tools.plugin_tools import plugin_of

log = logging.getLogger("llmspace.presenters.catalog")


@dataclass(frozen=True)
class ModelChoice:
    provider: str
    provider_name: str
    model_id: str
    model_name: str
    available: bool
    reason: str = ""


def model_choices(app: App) -> tuple[list[ModelChoice], str | None]:
    """All enabled models of every provider, with whether each can run now: the providers of
    `models.json` and the catalogue, then those of active plugins (`app.providers.plugin_views()`,
    named with their plugin), as Settings › Models lists them."""
    try:
        settings = app.models
        providers = settings.providers()
    except Exception as exc:
        log.info("model settings unavailable: %s", exc)
        return [], "Model settings are not available."
    out: list[ModelChoice] = []
    for p in providers:
        try:
            configured = settings.is_configured(p.id)
        except Exception:
            configured = False
        reason = "" if configured else (f"Set {p.env_var} or add a key in Settings › Models." if p.env_var else "Not configured.")
        if p.local and p.reachable is False:
            reason = reason or f"{p.name} is not running."
        for m in p.enabled_models():
            out.append(ModelChoice(p.id, p.name, m.id, m.name or m.id, configured and not (p.local and p.reachable is False), reason))
    return out + _plugin_choices(app), None


def _plugin_choices(app: App) -> list[ModelChoice]:
    """The models of active plugin providers; one that cannot run says why (as a run would)."""
    try:
        views = app.providers.plugin_views()
    except Exception as exc:
        log.info("plugin providers unavailable: %s", exc)
        return []
    out: list[ModelChoice] = []
    for source, v in views:
        key_missing = v.needs_key and not v.api_key_setting
        reason = ("No base URL: see the plugin's settings." if not v.base_url
                  else "No API key: see the plugin's settings." if key_missing else "")
        name = f"{v.name} (plugin {source.removeprefix('plugin:')})"
        out.extend(ModelChoice(v.id, name, m.id, m.name or m.id, not reason, reason) for m in v.enabled_models())
    return out


def run_model_label(app: App, saved: ModelConfig | None) -> str:
    """What the editor's model row says: the model a run will call, and when that is not the
    thread's saved model, which one that is and why ("ollama/qwen3 (openai/gpt-4.1-mini has
    no API key)"). A thread without a model shows the default it runs on."""
    def name(m: ModelConfig) -> str:
        return f"{m.provider}/{m.id}"

    try:
        choice = app.providers.choose(saved)
    except Exception as exc:  # settings that cannot be read: show what the thread names
        log.info("could not tell which model runs: %s", exc)
        return name(saved) if saved is not None else "Default model"
    if saved is None:
        return f"Default: {name(choice.model)}" if choice.model is not None else "No model: add one in Settings › Models"
    if choice.fell_back and choice.model is not None:
        return f"{name(choice.model)} ({name(saved)} {choice.reason or 'cannot run'})"
    if choice.model is None and choice.reason:
        return f"{name(saved)} ({choice.reason})"
    return name(saved)


PARAM_LABELS = {"temperature": "temperature", "maxTokens": "max tokens", "reasoning": "reasoning",
                "responseType": "response format"}


def params_label(params: dict[str, Any]) -> str:
    """The model parameters as the editor lists them under the model: "temperature 0.7 · max tokens 4096"."""
    parts = []
    for key in sorted(params, key=lambda k: list(PARAM_LABELS).index(k) if k in PARAM_LABELS else len(PARAM_LABELS)):
        value = params[key]
        if key == "responseType" and isinstance(value, dict):
            value = value.get("type")
        parts.append(f"{PARAM_LABELS.get(key, key)} {value}")
    return " · ".join(parts)


def builtin_tool_groups() -> dict[str, list[Tool]]:
    """`{group: [Tool]}` of the built-in tools."""
    tools = {t.name: t for t in builtin_tools()}
    groups: dict[str, list[Tool]] = {}
    for group, names in builtin_groups().items():
        groups[group] = [tools[n] for n in names if n in tools]
    return groups


def mcp_servers(app: App) -> tuple[list[Any], str | None]:
    try:
        return list(app.mcp.servers()), None
    except Exception as exc:
        return [], f"MCP is not available: {exc}"


def mcp_tools(app: App, server: str) -> list[Any]:
    """Thread tools of one MCP server (connects it; call from a worker thread)."""
    return list(app.mcp.thread_tools(server))


def tool_label(tool: Tool) -> str:
    """A tool's name as the editor lists it: `name (plugin <plugin>)` for a plugin tool."""
    plugin = plugin_of(tool)
    return f"{tool.name} (plugin {plugin})" if plugin else tool.name


def plugin_tool_groups(tools: list[Tool], app: App | None = None) -> dict[str, list[Tool]]:
    """The plugin tools among `tools`, by plugin, in the thread's order; with `app`, followed
    by the tools of active plugins the thread does not have yet (entries to add: name,
    description and parameters copied from what the plugin reported). Starts no host."""
    groups: dict[str, list[Tool]] = {}
    have: set[str] = set()
    for t in tools:
        if t.type == "plugin":
            groups.setdefault(plugin_of(t) or "unknown plugin", []).append(t)
            have.add(t.toolId or "")
    if app is not None:
        from ..plugins.code.calls import plugin_tool_entry_for

        try:
            specs = app.plugin_code.tool_specs()
        except Exception:  # the picker still shows the thread's own tools
            log.warning("could not list the plugin tools", exc_info=True)
            specs = []
        for spec in specs:
            if spec.canonical_id not in have:
                groups.setdefault(spec.ref.plugin, []).append(plugin_tool_entry_for(spec))
    return groups
