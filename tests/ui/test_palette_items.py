"""The palette builds its own list from the commands registry (no window needed)."""

from __future__ import annotations

from llmspace.registries import BuiltinCommand, PaletteCommand
from llmspace.registry import Registry
from llmspace.ui.palette import palette_items


def test_the_palette_lists_every_active_registered_command_but_itself_with_its_shortcut():
    ran: list[str] = []
    commands: Registry[PaletteCommand] = Registry("command")
    commands.register("builtin:command:File/New File", BuiltinCommand("File: New File", lambda: ran.append("new"), "Ctrl+N"))
    commands.register("builtin:command:View/Command Palette…", BuiltinCommand("View: Command Palette…", lambda: None))
    items = palette_items(commands, run_plugin=lambda command, args: ran.append("plugin"))
    assert [(i.label, i.shortcut, i.takes_arguments) for i in items] == [("File: New File", "Ctrl+N", False)]
    items[0].run(())
    assert ran == ["new"]
