"""Importing a chat export whose tools include plugin tool entries: a complete entry stays
a plugin tool (pluginId and toolId kept), an incomplete one becomes a function tool."""

from __future__ import annotations

import orjson

from llmspace.core.importers import parse_import
from llmspace.core.threadio import serialize_thread


def test_a_complete_plugin_tool_entry_is_kept_and_an_incomplete_one_becomes_a_function():
    export = {"messages": [{"role": "user", "content": "Draw"}], "tools": [
        {"type": "plugin", "pluginId": "kit", "toolId": "plugin:kit:tool:diagram", "name": "draw_diagram",
         "description": "Draw.", "parameters": {"type": "object"}},
        {"type": "plugin", "pluginId": "kit", "name": "half_done", "parameters": {"type": "object"}},
    ]}
    [thread] = parse_import(orjson.dumps(export), "export.json")
    full, half = thread.context.tools
    assert (full.type, full.pluginId, full.toolId, full.name) == ("plugin", "kit", "plugin:kit:tool:diagram", "draw_diagram")
    assert (half.type, half.name) == ("function", "half_done")
    written = orjson.loads(serialize_thread(thread))["context"]["tools"][0]
    assert list(written) == ["type", "pluginId", "toolId", "name", "description", "parameters"]
