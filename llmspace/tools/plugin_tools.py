"""Plugin tool entries of a thread's `context.tools`.

    plugin_tool_entry(plugin, stem, name, description, parameters, strict) -> Tool
    plugin_tool_id(plugin, stem) -> "plugin:<plugin>:tool:<stem>"

An entry is `{"type": "plugin", "pluginId", "toolId", "name", "description", "parameters",
"strict"}` in that key order (`strict` left out when None). The router runs it through the
executor registered under its `toolId` (`tools/router.py`). Pure.
"""

from __future__ import annotations

from typing import Any

from ..core.model import Tool


def plugin_tool_id(plugin: str, stem: str) -> str:
    """The canonical ID of the tool in `tools/<stem>.*` of plugin `plugin`."""
    return f"plugin:{plugin}:tool:{stem}"


def plugin_tool_entry(plugin: str, stem: str, name: str, description: str, parameters: dict[str, Any],
                      strict: bool | None) -> Tool:
    """The thread tool entry of a plugin's tool (written in the documented key order)."""
    data: dict[str, Any] = {"type": "plugin", "pluginId": plugin, "toolId": plugin_tool_id(plugin, stem),
                            "name": name, "description": description, "parameters": parameters}
    if strict is not None:
        data["strict"] = strict
    return Tool.model_validate(data)


def plugin_of(tool: Tool) -> str | None:
    """The plugin a tool entry comes from (`pluginId`, else read from `toolId`), or None."""
    if tool.type != "plugin":
        return None
    if tool.pluginId:
        return tool.pluginId
    tid = tool.toolId or ""
    if tid.startswith("plugin:") and ":tool:" in tid:
        return tid[len("plugin:"):tid.rindex(":tool:")]
    return None
