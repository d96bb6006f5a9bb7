"""First-use usability in a real 1280x800 window: dialog buttons stay on screen, every dialog
closes with Escape, the editor's Edit/⚙ buttons are never pushed out by long labels, and
zooming in keeps tree rows from overlapping."""

from __future__ import annotations

import pytest

from llmspace.presenters import catalog


@pytest.fixture
def ed(window, app):
    rel = app.workspace.create_thread("", "usability")
    window.tree_view.refresh()
    return window.open_thread(rel)


def fully_inside(widget, container) -> bool:
    """The widget is mapped, not squeezed below its requested size, and within `container`."""
    widget.update_idletasks()
    if not widget.winfo_ismapped():
        return False
    if widget.winfo_width() < widget.winfo_reqwidth() - 1 or widget.winfo_height() < widget.winfo_reqheight() - 1:
        return False
    x, y = widget.winfo_rootx() - container.winfo_rootx(), widget.winfo_rooty() - container.winfo_rooty()
    return x >= 0 and y >= 0 and x + widget.winfo_width() <= container.winfo_width() \
        and y + widget.winfo_height() <= container.winfo_height()


def buttons(widget, text: str) -> list:
    found = []
    for child in widget.winfo_children():
        try:
            if child.winfo_class() == "TButton" and child.cget("text") == text:
                found.append(child)
        except Exception:
            pass
        found.extend(buttons(child, text))
    return found


def press_escape(root, dialog, inner) -> None:
    inner.focus_force()
    root.update()
    inner.event_generate("<Escape>")
    root.update()


def test_the_settings_dialog_shows_its_save_and_close_buttons_and_closes_with_escape(window):
    dlg = window.open_settings()
    window.root.update()
    for label in ("Save", "Close"):
        assert fully_inside(buttons(dlg, label)[-1], dlg), label
    add = buttons(dlg, "Add provider")
    if add:  # the Models page is present: its buttons are not cut off either
        dlg.nb.select(dlg.models_page)
        window.root.update()
        assert fully_inside(add[0], dlg)
    press_escape(window.root, dlg, dlg.nb)
    assert not dlg.winfo_exists()


def test_the_tools_dialog_shows_every_builtin_and_its_buttons(ed):
    dlg = ed.settings.edit_tools()
    ed.ui.root.update()
    groups = catalog.builtin_tool_groups()
    last = list(groups.values())[-1][-1].name
    check = [w for w in dlg.checks.values() if w[1].name == last]
    assert check
    boxes = [c for c in _all(dlg) if c.winfo_class() == "TCheckbutton" and c.cget("text").startswith(last + " ")]
    assert boxes and fully_inside(boxes[0], dlg)
    assert fully_inside(buttons(dlg, "Apply")[0], dlg) and fully_inside(buttons(dlg, "Close")[0], dlg)
    press_escape(ed.ui.root, dlg, dlg)
    assert not dlg.winfo_exists()


def _all(widget) -> list:
    out = []
    for child in widget.winfo_children():
        out.append(child)
        out.extend(_all(child))
    return out


def test_every_editor_dialog_closes_with_escape(ed):
    ed.p.set_model("openai", "gpt-4.1")
    root = ed.ui.root
    for make in (ed.settings.edit_params, ed.settings.edit_variables, lambda: ed.settings.edit_tools().edit_function(None)):
        dlg = make()
        root.update()
        press_escape(root, dlg, dlg)
        assert not dlg.winfo_exists()


def test_the_parameter_popover_can_be_cancelled_without_changing_anything(ed, app):
    ed.p.set_model("openai", "gpt-4.1")
    pop = ed.settings.edit_params()
    pop.vars["temperature"][0].set(True)
    (cancel,) = buttons(pop, "Cancel")
    cancel.invoke()
    assert not pop.winfo_exists()
    assert "temperature" not in ed.p.params()


def test_the_examples_chooser_can_be_cancelled(window):
    from llmspace.ui.welcome import ExamplesDialog

    dlg = ExamplesDialog(window.root, window.starter.example)
    window.root.update()
    (cancel,) = buttons(dlg, "Cancel")
    assert fully_inside(cancel, dlg)
    cancel.invoke()
    assert not dlg.winfo_exists()
    dlg = ExamplesDialog(window.root, window.starter.example)
    press_escape(window.root, dlg, dlg.listbox)
    assert not dlg.winfo_exists()


def test_long_tool_lists_and_model_labels_never_hide_the_edit_and_parameter_buttons(ed, window):
    groups = catalog.builtin_tool_groups()
    ed.p.add_tools([t for tools in groups.values() for t in tools])
    ed.p.set_model("openai", "gpt-4.1-mini-with-a-very-long-model-identifier-for-testing")
    ed.p.set_param("temperature", 0.7)
    ed.refresh_all()
    window.appearance.zoom(+1)
    window.appearance.zoom(+1)
    root = ed.ui.root
    root.update()
    try:
        for btn in (ed.settings.tools_btn, ed.settings.vars_btn, ed.settings.params_btn):
            assert fully_inside(btn, btn.master), btn
    finally:
        window.appearance.zoom(0)


def test_zooming_in_makes_tree_rows_tall_enough_for_the_text(window):
    import tkinter.font as tkfont
    from tkinter import ttk

    try:
        window.appearance.zoom(+1)
        window.appearance.zoom(+1)
        line = tkfont.nametofont("TkDefaultFont", root=window.root).metrics("linespace")
        assert int(ttk.Style(master=window.root).lookup("Treeview", "rowheight")) >= line
    finally:
        window.appearance.zoom(0)


def test_the_compare_dialog_shows_each_runs_result_first_even_under_a_long_system_prompt(window, app):
    import orjson

    from llmspace.jsonio import write_bytes_atomic

    long_prompt = "\n".join(f"Rule {i}: be careful." for i in range(30))

    def run(rid, ts, answer):
        return {"id": rid, "timestamp": ts, "thread": {"title": "cmp", "context": {
            "systemPrompt": long_prompt, "messages": [
                {"id": "u", "role": "user", "content": [{"type": "text", "text": "q"}]},
                {"id": "a" + rid, "role": "assistant", "content": [{"type": "text", "text": answer}]}]}}}

    write_bytes_atomic(app.workspace.root / "cmpl.json", orjson.dumps(
        {"title": "cmp", "runHistory": [run("r1", 1000, "first answer"), run("r2", 2000, "second answer")]}))
    window.tree_view.refresh()
    ed = window.open_thread("cmpl.json")
    ed.toggle_history()
    ed.history_panel.list.selection_set(("r1", "r2"))
    window.root.update()
    dlg = ed.history_panel.compare()
    window.root.update()
    firsts = [t.get("1.0", "1.end") for t in dlg.side_texts]
    assert any("first answer" in f for f in firsts) and any("second answer" in f for f in firsts)
    dlg.destroy()


def test_the_variables_dialog_explains_an_empty_text_variable_list_and_fits_its_fields(ed):
    dlg = ed.settings.edit_variables()
    ed.ui.root.update()
    assert dlg.empty_lbl.winfo_ismapped() and "Add variable" in dlg.empty_lbl.cget("text")
    assert "current_working_directory" in dlg.typed_fields
    entries = [w for w in _all(dlg) if w.winfo_class() == "TEntry"]
    assert entries and all(fully_inside(e, dlg) for e in entries)
    dlg.add_row("", "")
    ed.ui.root.update()
    assert not dlg.empty_lbl.winfo_ismapped()
    dlg.destroy()


def test_list_boxes_in_dialogs_follow_the_dark_theme(window):
    from llmspace.ui.palette import CommandPalette, PaletteItem
    from llmspace.ui.welcome import ExamplesDialog

    window.appearance.theme_var.set("dark")
    window.appearance.apply_theme()
    try:
        bg = window.root.style.colors.inputbg
        for dlg in (ExamplesDialog(window.root, window.starter.example), CommandPalette(window.root, [PaletteItem("Say hi", lambda args: None)])):
            window.root.update()
            assert dlg.listbox.cget("background").lower() == bg.lower()
            dlg.destroy()
    finally:
        window.appearance.theme_var.set("light")
        window.appearance.apply_theme()


def test_a_screen_high_saved_frame_leaves_room_for_the_menu_bar_so_the_status_bar_shows(make_window, app, tk_root, monkeypatch):
    from llmspace.presenters.state import StateStore, WindowState
    from llmspace.ui import window_frame

    # the fixture then sizes the window 1280x800 itself: on a loaded machine more than the
    # save delay passed before the check, and the frame recorded that size as its state
    monkeypatch.setattr(window_frame, "SAVE_DELAY_MS", 600_000)
    sh = tk_root.winfo_screenheight()
    StateStore(app.root).save_window(WindowState(x=0, y=0, width=1000, height=sh))
    win = make_window()
    assert win.frame.state.height + win.frame.menubar_allowance() <= sh
    assert win.frame.state.y + win.frame.state.height + win.frame.menubar_allowance() <= sh


def test_the_welcome_view_names_the_configured_default_model_without_loading_model_settings(window, app, home):
    from tests.support.llm_server import LoopbackLLM, configure_provider

    with LoopbackLLM() as srv:
        configure_provider(home, srv)
        window.welcome._show_detected()
        assert "models" not in app.__dict__  # the app's settings are loaded when first needed, not by the welcome
        assert "Default model: loop/loopback-model." in window.welcome.detected.cget("text")


def test_the_run_history_list_can_scroll_sideways_to_columns_that_do_not_fit(ed):
    ed.toggle_history()
    panel = ed.history_panel
    ed.ui.root.update()
    assert panel.xscroll.winfo_ismapped()
    assert panel.list.cget("xscrollcommand")
    ed.toggle_history()


def test_the_temperature_slider_shows_its_value(ed):
    ed.p.set_model("openai", "gpt-4.1")
    pop = ed.settings.edit_params()
    pop.vars["temperature"][1].set(0.34)
    ed.ui.root.update()
    assert pop.temp_lbl.cget("text") == "0.3"
    pop.destroy()


def test_the_rubric_editor_shows_every_criterions_remove_button(window, app):
    import orjson

    from llmspace.jsonio import write_bytes_atomic

    def run(rid, ts, answer):
        return {"id": rid, "timestamp": ts, "thread": {"title": "r", "context": {"messages": [
            {"id": "u", "role": "user", "content": [{"type": "text", "text": "q"}]},
            {"id": "a" + rid, "role": "assistant", "content": [{"type": "text", "text": answer}]}]}}}

    write_bytes_atomic(app.workspace.root / "rub.json", orjson.dumps(
        {"title": "r", "runHistory": [run("r1", 1000, "a"), run("r2", 2000, "b")]}))
    window.tree_view.refresh()
    ed = window.open_thread("rub.json")
    ed.toggle_history()
    ed.history_panel.list.selection_set(("r1", "r2"))
    window.root.update()
    dlg = ed.history_panel.compare()
    editor = dlg.new_rubric()
    window.root.update()
    removes = list(buttons(editor, "✕"))
    assert len(removes) == len(editor.rows) >= 2
    assert all(fully_inside(b, editor) for b in removes)
    removes[0].invoke()
    assert len(editor.rows) >= 1
    editor.destroy()
    dlg.destroy()


def test_a_zoom_round_trip_leaves_tree_rows_and_dialogs_as_tall_as_at_start(window):
    # zoom in and back to 100 % left every Treeview row 4 px taller than at start, so the Settings
    # dialog (its lists) asked for more than the screen gave it for the rest of the session
    from tkinter import ttk

    style = ttk.Style(master=window.root)
    before = style.lookup("Treeview", "rowheight")
    window.appearance.zoom(+1)
    window.appearance.zoom(0)
    assert style.lookup("Treeview", "rowheight") == before
