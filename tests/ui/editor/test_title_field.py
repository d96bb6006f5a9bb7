"""The title field renames the thread's file only when the user means it: clicking a tab does
not put the focus (and a selection) in the title, so a stray keystroke renames nothing; a
rename the user makes (Enter, or leaving the field after typing in it) is one undo step."""

from __future__ import annotations

import pytest

from ..conftest import open_tabs, pump_until


def click_tab(window, rel: str) -> None:
    """Press and release mouse button 1 on the tab of `rel`, as a click does."""
    nb = window.notebook
    nb.update_idletasks()
    want = window.tabs.tabs.index(rel)
    for x in range(2, nb.winfo_width(), 4):
        if str(nb.tk.call(str(nb), "identify", "tab", x, 10)) == str(want):
            nb.event_generate("<ButtonPress-1>", x=x, y=10)
            nb.event_generate("<ButtonRelease-1>", x=x, y=10)
            window.root.update()
            return
    raise AssertionError(f"no tab for {rel}")


def type_keys(widget, text: str) -> None:
    for ch in text:
        widget.event_generate("<KeyPress>", keysym=ch)
    widget.update()


@pytest.fixture
def two_tabs(window, app):
    return open_tabs(window, app, "support-reply", "other")


def test_clicking_a_tab_leaves_the_title_alone_so_a_stray_keystroke_renames_nothing(two_tabs, window, app):
    ed, _other = two_tabs
    click_tab(window, "support-reply.json")
    assert window.tabs.active == "support-reply.json"
    focus = pump_until(window.root, window.root.focus_get, timeout=5)
    assert focus is not ed.header.title_entry
    type_keys(focus, "x")  # the keystroke goes wherever the focus is
    ed.settings.prompt.focus_force()  # then the user clicks elsewhere
    window.root.update()
    ed.flush()
    assert app.workspace.exists("support-reply.json")
    assert not app.workspace.exists("x.json")
    assert ed.header.title_var.get() == "support-reply"


def test_setting_the_title_text_without_typing_does_not_rename_on_leaving_the_field(two_tabs, window, app):
    ed, _other = two_tabs
    click_tab(window, "support-reply.json")
    ed.header.title_entry.focus_force()
    window.root.update()
    ed.header.show_title("something-else")  # the program, not the user, changed the text
    ed.settings.prompt.focus_force()
    window.root.update()
    assert app.workspace.exists("support-reply.json")


def test_a_typed_title_renames_on_enter_and_undo_renames_it_back(two_tabs, window, app):
    ed, _other = two_tabs
    click_tab(window, "support-reply.json")
    entry = ed.header.title_entry
    entry.focus_force()
    window.root.update()
    entry.selection_range(0, "end")
    type_keys(entry, "xy")
    entry.event_generate("<KeyPress>", keysym="Return")
    window.root.update()
    assert app.workspace.exists("xy.json") and not app.workspace.exists("support-reply.json")
    assert window.tabs.active == "xy.json"
    assert "Renamed" in window.status.msg.cget("text")

    window.tab_pages.undo()  # Ctrl+Z: the next undo restores the old name
    window.root.update()
    assert app.workspace.exists("support-reply.json") and not app.workspace.exists("xy.json")
    assert window.tabs.active == "support-reply.json"
    assert ed.header.title_var.get() == "support-reply"
    assert window.notebook.tab(window.pages["support-reply.json"], "text").strip() == "support-reply"

    window.tab_pages.redo()
    window.root.update()
    assert app.workspace.exists("xy.json") and not app.workspace.exists("support-reply.json")


def test_leaving_the_field_after_typing_renames_and_escape_reverts(two_tabs, window, app):
    ed, _other = two_tabs
    click_tab(window, "support-reply.json")
    entry = ed.header.title_entry
    entry.focus_force()
    window.root.update()
    entry.icursor("end")
    type_keys(entry, "2")
    ed.settings.prompt.focus_force()
    window.root.update()
    assert app.workspace.exists("support-reply2.json")

    entry.focus_force()
    window.root.update()
    type_keys(entry, "9")
    entry.event_generate("<KeyPress>", keysym="Escape")
    ed.settings.prompt.focus_force()
    window.root.update()
    assert ed.header.title_var.get() == "support-reply2"
    assert app.workspace.exists("support-reply2.json")
