"""The "Atlas hello" palette command (alias: hello): the guide's minimal command (§16),
with the greeting and audience from the Atlas settings.

    Atlas hello                → "Hello, LLM Space!"   (settings: greeting, audience)
    hello 'map makers'         → "Hello, map makers!"  (arguments replace the audience)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the contract, for editors and type checkers only
    from llmspace.plugin_api import CommandContext, PluginResult


class HelloCommand:
    display_name = "Atlas hello"
    description = "Say hello to the audience from the Atlas settings (or to the names given)."

    def execute(self, context: CommandContext, args: tuple[str, ...] = ()) -> PluginResult:
        greeting = str(context.settings.get("greeting") or "Hello")
        audience = " ".join(a for a in args if a.strip()) or str(context.settings.get("audience") or "LLM Space")
        return context.create_result({"level": "success", "message": f"{greeting}, {audience}!"})
