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


def _plugin_palette(tk_root, ran):
    from llmspace.ui.palette import CommandPalette, PaletteItem

    items = [PaletteItem("File: New File", lambda args: ran.append(("new", args)), "Ctrl+N"),
             PaletteItem("Stamp thread title", lambda args: ran.append(("stamp", args)),
                         key="plugin:atlas:command:stamp-title", alias="stamp-title", takes_arguments=True)]
    return CommandPalette(tk_root, items)


def test_a_plugin_command_typed_by_the_start_of_its_name_then_arguments_is_listed_and_runs_with_them(tk_root):
    ran: list[tuple[str, tuple[str, ...]]] = []
    pal = _plugin_palette(tk_root, ran)
    pal.query.set("stamp Draft")
    tk_root.update()
    assert [pal.listbox.get(i) for i in range(pal.listbox.size())] == ["Stamp thread title    — stamp-title"]
    assert pal.hint.cget("text") == "Arguments: 'Draft'"
    pal.entry.focus_force()
    tk_root.update()
    pal.entry.event_generate("<Return>", when="tail")
    tk_root.update()
    assert ran == [("stamp", ("Draft",))]


def test_the_palette_shows_its_placeholder_when_empty_and_no_commands_found_when_nothing_matches(tk_root):
    ran: list[tuple[str, tuple[str, ...]]] = []
    pal = _plugin_palette(tk_root, ran)
    tk_root.update()
    assert pal.placeholder.winfo_ismapped() and "alias" in pal.placeholder.cget("text")
    assert not pal.empty.winfo_ismapped()
    pal.query.set("zzzz")
    tk_root.update()
    assert not pal.placeholder.winfo_ismapped()
    assert pal.empty.winfo_ismapped() and pal.empty.cget("text") == "No commands found"
    pal.run_selected()
    assert ran == []
    pal.query.set("new")
    tk_root.update()
    assert not pal.empty.winfo_ismapped() and pal.listbox.size() == 1
    pal.destroy()
