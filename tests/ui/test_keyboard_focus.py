"""The keyboard in a real window: "+ Message" puts the focus in the new message; Tab and
Shift+Tab leave text boxes (Ctrl+M makes Tab insert a tab in the focused one, shown in the
status bar); F6 / Shift+F6 cycle the main regions."""

from __future__ import annotations

import pytest

from .conftest import open_tabs, pump_until


def type_into_focus(root, text: str) -> None:
    for ch in text:
        (root.focus_get() or root).event_generate("<KeyPress>", keysym=ch)
    root.update()


def test_plus_message_focuses_the_new_message_so_typed_text_lands_in_it(window, app):
    ed, = open_tabs(window, app, "adding")
    pump_until(window.root, lambda: ed.list.order and ed.list.order[0].winfo_ismapped(), 10)
    before = len(ed.p.messages)
    ed.add_btn.focus_force()
    window.root.update()
    ed.add_btn.event_generate("<Key-Return>")  # the button, pressed from the keyboard (ttkbootstrap: Enter)
    pump_until(window.root, lambda: len(ed.p.messages) == before + 1, 10)
    new_id = ed.p.messages[-1].id
    window.root.update()
    type_into_focus(window.root, "hello")
    assert ed.p.messages[-1].text() == "hello"
    assert window.root.focus_get() is ed.list.cards[new_id].text


def press(widget, keysym: str, **kw) -> None:
    widget.event_generate(f"<{keysym}>", **kw)
    widget.update()


def focused(window):
    return window.root.focus_get()


@pytest.fixture
def ed(window, app):
    ed, = open_tabs(window, app, "keys")
    pump_until(window.root, lambda: ed.list.order and ed.list.order[0].winfo_ismapped(), 10)
    return ed


@pytest.mark.parametrize("where", ["prompt", "message", "title"])
def test_tab_and_shift_tab_leave_the_title_prompt_and_message_boxes_without_typing_a_tab(ed, window, where):
    box = {"prompt": ed.settings.prompt, "message": ed.list.order[0].text, "title": ed.header.title_entry}[where]
    box.focus_force()
    window.root.update()
    before = box.get() if where == "title" else box.get("1.0", "end-1c")
    press(box, "Tab")
    after = focused(window)
    assert after is not None and after is not box
    assert (box.get() if where == "title" else box.get("1.0", "end-1c")) == before  # no tab typed
    press(after, "Shift-Tab")
    assert focused(window) is box


def test_escape_then_tab_in_the_system_prompt_still_leaves_it(ed, window):
    ed.settings.prompt.focus_force()
    window.root.update()
    press(ed.settings.prompt, "Escape")
    press(ed.settings.prompt, "Tab")
    assert focused(window) is not ed.settings.prompt and "\t" not in ed.settings.prompt.get("1.0", "end")


def test_ctrl_m_switches_the_focused_box_to_inserting_tabs_and_the_status_bar_says_so(ed, window):
    prompt, message = ed.settings.prompt, ed.list.order[0].text
    prompt.focus_force()
    window.root.update()
    assert window.status.mode.cget("text") == ""
    press(prompt, "Control-m")
    assert "Tab inserts a tab" in window.status.mode.cget("text")
    press(prompt, "Tab")
    assert focused(window) is prompt and ed.p.system_prompt == "\t"
    message.focus_force()  # only the box it was switched in
    window.root.update()
    assert window.status.mode.cget("text") == ""
    press(message, "Tab")
    assert focused(window) is not message and "\t" not in message.get("1.0", "end")
    prompt.focus_force()
    window.root.update()
    assert "Tab inserts a tab" in window.status.mode.cget("text")
    press(prompt, "Control-m")  # and back
    assert window.status.mode.cget("text") == ""
    press(prompt, "Tab")
    assert focused(window) is not prompt and ed.p.system_prompt == "\t"


def test_f6_and_shift_f6_cycle_the_tree_the_settings_the_messages_and_the_history(ed, window):
    ed.toggle_history()
    window.root.update()
    ed.settings.prompt.focus_force()
    window.root.update()
    seen = []
    for _ in range(4):
        press(focused(window), "F6")
        seen.append(focused(window))
    assert seen == [ed.list.order[0].text, ed.history_panel.list, window.tree_view.tree, ed.header.title_entry]
    press(focused(window), "Shift-F6")
    assert focused(window) is window.tree_view.tree
    press(focused(window), "Shift-F6")
    assert focused(window) is ed.history_panel.list


def test_ctrl_enter_on_a_focused_button_does_not_press_it(ed, window, monkeypatch):
    runs = []
    monkeypatch.setattr(window.tab_pages, "run_or_stop", lambda: runs.append(1))
    window.menus._bind_keys()  # the shortcut table holds the method bound at start
    ed.header.history_btn.focus_force()
    window.root.update()
    press(ed.header.history_btn, "Control-Return")
    assert ed.history_panel is None  # History was not pressed
    assert runs == [1]  # Ctrl+Enter still did its own job


def test_escape_in_the_trees_rename_box_gives_the_focus_back_to_the_tree(window, app):
    tv = window.tree_view
    tv.tree.focus_force()
    window.root.update()
    tv.new_file()
    window.root.update()
    entry = tv._editor
    entry.focus_force()
    window.root.update()
    press(entry, "Escape")
    assert tv._editor is None and focused(window) is tv.tree


def test_tab_leaves_a_text_variables_value_box_in_the_variables_dialog(ed, window):
    dlg = ed.settings.edit_variables()
    dlg.add_row("city", "Paris")
    window.root.update()
    _name, box = dlg.entries[-1]
    box.focus_force()
    window.root.update()
    press(box, "Tab")
    assert focused(window) is not box and box.get("1.0", "end-1c") == "Paris"
    press(focused(window), "Shift-Tab")
    assert focused(window) is box
    dlg.destroy()


def test_escape_closes_the_model_menu_and_the_focus_is_back_on_its_button(ed, window):
    ed.settings.model_btn.focus_force()
    window.root.update()
    press(ed.settings.model_btn, "Return")
    menu = pump_until(window.root, lambda: focused(window) if focused(window) is not None
                      and focused(window).winfo_class() == "Menu" else None, 10)
    assert menu.winfo_ismapped()
    press(menu, "Escape")
    pump_until(window.root, lambda: not menu.winfo_ismapped(), 10)
    assert focused(window) is ed.settings.model_btn
