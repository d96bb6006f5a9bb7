"""Keyboard and small controls a new user reaches for: Ctrl+Tab switches tabs wherever the
focus is, the file pickers start in the workspace (then in the folder last used), a click
on the temperature slider's track moves it there (not to 0, 1 or 2), and the theme
commands are in the palette with their shortcuts."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import open_tabs


@pytest.fixture
def two_tabs(window, app):
    return open_tabs(window, app, "first", "second")


def in_editor(widget, ed) -> bool:
    return widget is not None and str(widget).startswith(str(ed))


@pytest.mark.parametrize("where", ["prompt", "message", "title", "tree"])
def test_ctrl_tab_switches_tabs_wherever_the_focus_is(two_tabs, window, where):
    _first, second = two_tabs
    widget = {"prompt": second.settings.prompt, "message": second.list.order[0].text, "title": second.header.title_entry,
              "tree": window.tree_view.tree}[where]
    widget.focus_force()
    window.root.update()
    widget.event_generate("<Control-Tab>")
    window.root.update()
    assert window.tabs.active == "first.json"
    assert not in_editor(window.root.focus_get(), second)  # the focus did not stay in the hidden tab
    focus = window.root.focus_get() or window.root
    focus.event_generate("<Control-Shift-Tab>")
    window.root.update()
    assert window.tabs.active == "second.json"


def test_file_pickers_start_in_the_workspace_then_in_the_folder_last_used(window, app, monkeypatch, tmp_path):
    from tkinter import filedialog

    from llmspace.ui.dialogs import Dialogs

    asked: list[dict] = []
    picked = tmp_path / "pictures" / "cat.png"
    picked.parent.mkdir()
    monkeypatch.setattr(filedialog, "askopenfilename", lambda **kw: (asked.append(kw), str(picked))[1])
    monkeypatch.setattr(filedialog, "askopenfilenames", lambda **kw: (asked.append(kw), (str(picked),))[1])
    dialogs = Dialogs(window.root, start_dir=lambda: app.workspace.root)
    assert dialogs.open_file("Add image", (("Images", "*.png"),)) == str(picked)
    assert Path(asked[0]["initialdir"]) == Path(app.workspace.root)
    dialogs.open_files()
    assert Path(asked[1]["initialdir"]) == picked.parent


def test_the_window_opens_its_pickers_in_the_workspace(make_window, app):
    from llmspace.ui.dialogs import Dialogs

    win = make_window(scripted_dialogs=False)
    assert isinstance(win.dialogs, Dialogs) and win.ui.dialogs is win.dialogs
    assert Path(win.dialogs.initial_dir()) == Path(app.workspace.root)


def test_a_click_on_the_temperature_track_moves_the_slider_there(window, app):
    rel = app.workspace.create_thread("", "params")
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    ed.p.set_model("openai", "gpt-4.1")
    pop = ed.settings.edit_params()
    window.root.update()
    scale = next(w for w in pop.winfo_children()[0].winfo_children() if w.winfo_class() == "TScale")
    var = pop.vars["temperature"][1]
    assert float(var.get()) == 1.0
    x = scale.winfo_width() * 0.65  # about 1.3 on the 0..2 track
    y = scale.winfo_height() // 2
    scale.event_generate("<Button-1>", x=int(x), y=y)
    scale.event_generate("<ButtonRelease-1>", x=int(x), y=y)
    window.root.update()
    value = float(var.get())
    assert abs(value - 1.3) <= 0.15, value
    assert value == round(value, 1)  # tenths, as the label shows
    scale.focus_force()
    scale.event_generate("<Right>")
    window.root.update()
    assert float(var.get()) == pytest.approx(round(value + 0.1, 1))
    pop.destroy()


def test_the_theme_commands_are_in_the_palette_with_their_shortcuts(window):
    commands = {r.value.display_name: r.value for r in window.app.registries.commands.active()}
    for name in ("View: Light Theme", "View: Dark Theme", "View: System Theme"):
        assert name in commands and commands[name].shortcut, name
    palette = window.open_palette()
    try:
        labels = list(palette.listbox.get(0, "end"))
        assert any(label.startswith("View: Dark Theme") and commands["View: Dark Theme"].shortcut in label
                   for label in labels), labels
    finally:
        palette.destroy()
    commands["View: Dark Theme"].run()
    window.root.update()
    assert window.appearance.theme_var.get() == "dark" and "dark" in window.root.style.theme_use()
    commands["View: Light Theme"].run()
    window.root.update()
    assert "light" in window.root.style.theme_use()
