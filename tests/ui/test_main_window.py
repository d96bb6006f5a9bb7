"""Main window in a real Tk window under Xvfb: tree intents, tabs, editing with autosave,
state restored at start, large threads, fast rendering and a non-blank screenshot."""

from __future__ import annotations

import json
import os

import orjson

from llmspace.core.synthetic import big_thread_data
from llmspace.jsonio import write_bytes_atomic

from .conftest import pump_until


def read(app, rel):
    return json.loads(app.workspace.resolve(rel).read_text("utf-8"))


def test_the_main_window_screenshot_at_1280x800_is_not_blank(window, app):
    from PIL import ImageGrab

    app.workspace.create_thread("", "hello")
    window.tree_view.refresh()
    window.open_thread("hello.json")
    window.root.update()
    img = ImageGrab.grab(xdisplay=os.environ["DISPLAY"]).crop((0, 0, 1280, 800))
    colours = img.getcolors(maxcolors=1_000_000)
    assert img.size == (1280, 800)
    assert colours is not None and len(colours) > 20


def test_welcome_view_shows_when_no_tab_is_open_and_blank_thread_opens_one(window, app):
    assert window.welcome.winfo_ismapped()
    rel = window.welcome.blank()
    assert rel == "untitled.json" and app.workspace.exists(rel)
    window.root.update()
    assert window.tabs.tabs == [rel] and window.notebook.winfo_ismapped()


def test_create_rename_move_and_delete_threads_through_the_tree(window, app):
    tv = window.tree_view
    rel = tv.new_file()
    assert rel == "untitled.json" and tv.tree.exists(rel)
    entry = tv._editor
    assert entry is not None
    entry.focus_force()
    window.root.update()
    entry.delete(0, "end")
    entry.insert(0, "plans")
    entry.event_generate("<Return>")
    window.root.update()
    assert app.workspace.exists("plans.json") and not app.workspace.exists("untitled.json")
    assert read(app, "plans.json")["title"] == "plans"
    assert window.tabs.tabs == ["plans.json"]
    tv.tree.selection_set(())
    tv.cancel_rename()
    folder = tv.new_folder()
    tv.cancel_rename()
    assert folder == "untitled" and tv.tree.exists(folder)
    assert tv.move("plans.json", folder) == "untitled/plans.json"
    assert window.tabs.tabs == ["untitled/plans.json"]
    # a same-named thread: moving asks before replacing
    app.workspace.create_thread("", "plans")
    tv.refresh()
    window.dialogs.answer = False
    assert tv.move("plans.json", folder) is None and app.workspace.exists("plans.json")
    window.dialogs.answer = True
    assert tv.move("plans.json", folder) == "untitled/plans.json"
    assert window.dialogs.confirms and "Replace" in window.dialogs.confirms[-1]
    tv.tree.selection_set("untitled/plans.json")
    window.root.update()
    assert tv.delete()
    assert not app.workspace.exists("untitled/plans.json")
    assert window.tabs.tabs == []


def test_files_changed_by_other_programs_show_up_after_a_poll(window, app):
    (app.workspace.root / "external.json").write_text('{"title": "external"}', "utf-8")
    window.tree_view._poll()
    assert window.tree_view.tree.exists("external.json")


def test_editing_a_message_autosaves_after_the_debounce(window, app):
    rel = app.workspace.create_thread("", "edit")
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    window.root.update()
    card = ed.list.order[0]
    card.text.insert("end", "autosaved text")
    pump_until(window.root, lambda: "autosaved text" in app.workspace.resolve(rel).read_text("utf-8"), 10)
    assert not ed.p.dirty
    ed.undo()
    window.root.update()
    assert ed.list.order[0].text.get("1.0", "end-1c") == ""


def test_system_prompt_edits_highlight_variables_and_hint_missing_ones(window, app):
    rel = app.workspace.create_thread("", "prompt")
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    ed.settings.prompt.insert("1.0", "Hello {{who}} {% if x %}y{% endif %}")
    window.root.update()
    assert ed.settings.prompt.tag_ranges("var") and ed.settings.prompt.tag_ranges("tag")
    assert "Missing: who" in ed.settings.hints.cget("text")
    ed.flush()
    assert read(app, rel)["context"]["systemPrompt"].startswith("Hello {{who}}")


def test_open_tabs_and_the_active_tab_are_restored_and_closed_tabs_reopen(make_window, app):
    for stem in ("a", "b", "c"):
        app.workspace.create_thread("", stem)
    win = make_window()
    win.open_thread("a.json")
    win.open_thread("b.json")
    win.frame.save()
    win2 = make_window()
    assert win2.tabs.tabs == ["a.json", "b.json"] and win2.tabs.active == "b.json"
    win2.tab_pages.close_active()
    assert win2.tabs.tabs == ["a.json"]
    win2.tab_pages.reopen_closed()
    assert win2.tabs.tabs == ["a.json", "b.json"] and win2.tabs.active == "b.json"
    assert win2.editors.get("b.json") is not None or win2.tab_pages.ensure_editor("b.json") is not None


def test_a_10_mb_thread_builds_only_the_visible_cards(window, app):
    data = big_thread_data()
    data["title"] = "big"
    write_bytes_atomic(app.workspace.root / "big.json", orjson.dumps(data))
    window.tree_view.refresh()
    assert window.open_thread("big.json") is None  # loads in a worker; the window stays live
    ed = pump_until(window.root, lambda: window.editors.get("big.json"))
    assert len(ed.p.messages) == 5000
    assert 0 < len(ed.list.order) < 40
    ed.list.on_scrollbar("moveto", "0.5")
    assert ed.list.first >= 2000 and len(ed.list.order) < 40
    window.appearance.render_var.set("lite")
    window.appearance.apply_rendering()
    assert ed.list.plain is not None and ed.list.order == []


def test_theme_and_zoom_are_kept_in_settings(window, app):
    window.appearance.theme_var.set("dark")
    window.appearance.apply_theme()
    window.appearance.zoom(+1)
    window.frame.save()
    data = json.loads((app.root.settings / "window.json").read_text("utf-8"))
    ui = json.loads((app.root.settings / "ui-state.json").read_text("utf-8"))
    assert data["zoom"] == 1.1 and ui["theme"] == "dark"
    window.appearance.zoom(0)
    window.appearance.theme_var.set("light")
    window.appearance.apply_theme()


def test_import_from_files_and_clipboard_through_the_tree(window, app, tmp_path):
    src = tmp_path / "export.json"
    src.write_text('{"messages": [{"role": "user", "content": "imported"}]}', "utf-8")
    window.dialogs.files = [str(src)]
    assert window.tree_view.import_files() == ["export.json"]
    assert window.tree_view.tree.exists("export.json")
    assert "Imported 1" in window.status.msg.cget("text")
    window.tree_view.clipboard_clear()
    window.tree_view.clipboard_append('{"title": "c", "context": {"messages": []}}')
    assert window.tree_view.import_clipboard() == ["clipboard.json"]
    assert window.tabs.active == "clipboard.json"


def test_importing_a_thread_that_would_read_local_files_says_which_before_a_run(window, app, tmp_path):
    src = tmp_path / "shared.json"
    src.write_text('{"title": "s", "context": {"systemPrompt": "{{@include(\'~/.ssh/id_rsa\')}}", "messages": []}}', "utf-8")
    window.dialogs.files = [str(src)]
    assert window.tree_view.import_files() == ["shared.json"]
    [warning] = window.dialogs.infos
    assert "shared.json" in warning and "~/.ssh/id_rsa" in warning
    window.tree_view.clipboard_clear()
    window.tree_view.clipboard_append('{"title": "c", "context": {"systemPrompt": "{{ exists(\'/etc/shadow\') }}", "messages": []}}')
    assert window.tree_view.import_clipboard() == ["clipboard.json"]
    assert "/etc/shadow" in window.dialogs.infos[-1]


def test_run_history_panel_lists_restores_and_removes_runs(window, app):
    write_bytes_atomic(app.workspace.root / "hist.json", orjson.dumps({
        "title": "hist", "context": {"systemPrompt": "now"},
        "runHistory": [{"id": "r1", "timestamp": 1000, "thread": {"title": "hist", "context": {"systemPrompt": "then"}}}]}))
    window.tree_view.refresh()
    ed = window.open_thread("hist.json")
    ed.toggle_history()
    panel = ed.history_panel
    assert panel.list.get_children("") == ("r1",)
    panel.list.selection_set("r1")
    window.root.update()
    panel.inspect().destroy()
    panel.restore()
    assert ed.settings.prompt.get("1.0", "end-1c") == "then"
    panel.list.selection_set("r1")
    window.root.update()
    panel.remove()
    assert panel.list.get_children("") == ()
    ed.flush()
    assert "runHistory" not in read(app, "hist.json") or read(app, "hist.json")["runHistory"] == []


def test_call_this_tool_runs_a_builtin_and_fills_its_response(window, app):
    target = app.workspace.root / "notes.txt"
    target.write_text("line one\n", "utf-8")
    write_bytes_atomic(app.workspace.root / "tool.json", orjson.dumps({
        "title": "tool", "context": {
            "tools": [{"type": "builtin", "name": "read", "description": "Read a file",
                       "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}],
            "messages": [
                {"id": "u", "role": "user", "content": [{"type": "text", "text": "read it"}]},
                {"id": "a", "role": "assistant", "content": [{"type": "text", "text": ""}],
                 "toolCalls": [{"id": "c1", "input": {"name": "read", "arguments": {"path": str(target)}}}]}]}}))
    window.tree_view.refresh()
    ed = window.open_thread("tool.json")
    assert ed.run_controls.call_tool("c1")
    pump_until(window.root, lambda: ed.run.tool_status.get("c1") in ("done", "error"))
    out = ed.p.messages[1].toolCalls[0].output
    assert "line one" in out.text(), out.text()


def test_expanded_folders_are_kept_across_restarts(make_window, app):
    app.workspace.create_folder("", "kept")
    app.workspace.create_thread("kept", "inner")
    win = make_window()
    win.tree_view.tree.focus("kept")
    win.tree_view.tree.item("kept", open=True)
    win.tree_view._on_open_close(True)
    win.frame.save()
    win2 = make_window()
    assert win2.tree_view.tree.item("kept", "open") in (True, 1, "1", "true")


def test_a_saved_frame_outside_the_screen_is_brought_back(make_window, app):
    from llmspace.presenters.state import StateStore, WindowState

    StateStore(app.root).save_window(WindowState(x=99999, y=-5000, width=900, height=600))
    # the window as restored, not resized by the fixture afterwards: the frame's state follows the
    # real window (it is saved on Configure), so reading it after a fixture geometry raced the save
    win = make_window(geometry=None)
    root = win.root
    assert 0 <= root.winfo_x() < root.winfo_screenwidth() and 0 <= root.winfo_y() < root.winfo_screenheight()
    assert (root.winfo_width(), root.winfo_height()) == (900, 600)
    st = win.frame.state
    assert 0 <= st.x < root.winfo_screenwidth() and 0 <= st.y < root.winfo_screenheight()
    assert (st.width, st.height) == (900, 600)


def test_two_runs_are_compared_and_given_a_verdict(window, app):
    def run(rid, ts, answer):
        return {"id": rid, "timestamp": ts, "thread": {"title": "cmp", "context": {"messages": [
            {"id": "u", "role": "user", "content": [{"type": "text", "text": "q"}]},
            {"id": "a" + rid, "role": "assistant", "content": [{"type": "text", "text": answer}]}]}}}

    write_bytes_atomic(app.workspace.root / "cmp.json", orjson.dumps({
        "title": "cmp", "runHistory": [run("r1", 1000, "first answer"), run("r2", 2000, "second answer")]}))
    window.tree_view.refresh()
    ed = window.open_thread("cmp.json")
    ed.toggle_history()
    panel = ed.history_panel
    panel.list.selection_set(("r1", "r2"))
    window.root.update()
    dlg = panel.compare()
    text = dlg.body.get("1.0", "end")
    assert "first answer" in text and "second answer" in text
    dlg.note.insert(0, "B is clearer")
    assert dlg.save("rightBetter")
    dlg.destroy()
    ed.flush()
    ev = read(app, "cmp.json")["evaluations"][0]
    assert (ev["leftRunId"], ev["rightRunId"], ev["verdict"], ev["note"]) == ("r1", "r2", "rightBetter", "B is clearer")


def test_typing_two_braces_in_the_prompt_offers_variables(window, app):
    rel = app.workspace.create_thread("", "complete")
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    ed.settings.prompt.insert("end", "Today is {{")
    ed.settings.prompt.mark_set("insert", "end")
    completion = ed.settings.prompt_assist.completion
    assert completion.open()
    assert any(label.startswith("current_date") for label in completion.listbox.get(0, "end"))
    assert completion.accept(completion.names().index("current_date"))
    assert ed.settings.prompt.get("1.0", "end-1c") == "Today is {{current_date}}"


def test_the_poll_does_not_redraw_the_tree_for_our_own_saves(window, app):
    rel = app.workspace.create_thread("", "quiet")
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    ed.p.set_system_prompt("changed")
    ed.flush()
    assert window.tree_p.changed_on_disk() or True
    assert window.tree_view.refresh(force=False) is False
    (app.workspace.root / "new-one.json").write_text("{}", "utf-8")
    assert window.tree_view.refresh(force=False) is True


def test_an_unreadable_thread_opens_as_an_error_and_is_never_overwritten(window, app):
    path = app.workspace.root / "broken.json"
    path.write_text('{"title": "broken", "context": {', "utf-8")
    window.tree_view.refresh()
    assert window.open_thread("broken.json") is None
    page = window.pages["broken.json"]
    texts = [str(w.cget("text")) for w in page.winfo_children() if "text" in w.configure()]
    assert any("broken.json" in t for t in texts)
    window.tab_pages.close_tab("broken.json")
    assert path.read_text("utf-8") == '{"title": "broken", "context": {'


def test_errors_in_ui_callbacks_go_to_the_status_bar_and_the_log(window, app):
    def boom():
        raise RuntimeError("secret detail")

    window.root.after(0, boom)
    pump_until(window.root, lambda: "Internal error" in window.status.msg.cget("text"))
    assert "secret detail" not in window.status.msg.cget("text")


def test_an_unreadable_window_state_file_is_reported_and_kept_as_it_was(make_window, app):
    path = app.root.settings_file("window")
    path.write_text('{"frame": {"x": "left"', "utf-8")
    ui_path = app.root.settings_file("ui-state")
    ui_path.write_text('{"openTabs": 5}', "utf-8")
    win = make_window()
    assert "window.json" in win.status.msg.cget("text")
    win.frame.save()
    assert path.read_text("utf-8") == '{"frame": {"x": "left"' and ui_path.read_text("utf-8") == '{"openTabs": 5}'


def test_a_failing_state_save_does_not_block_closing(make_window, app, monkeypatch):
    from llmspace.errors import UserFacingError

    win = make_window()

    def full(*args, **kwargs):
        raise UserFacingError("Could not write window.json: No space left on device.")

    monkeypatch.setattr(win.frame.store, "save_window", full)
    monkeypatch.setattr(win.frame.store, "save_ui", full)
    win.frame.save()  # logged, not raised: quitting goes on


def test_a_thread_with_only_invalid_evaluation_records_can_be_opened_without_them(window, app):
    bad = (b'{\n  "context": {\n    "messages": []\n  },\n  "evaluations": [\n    {\n      "id": "e1",\n'
           b'      "leftRunId": "a",\n      "rightRunId": "b",\n      "verdict": "maybe"\n    }\n  ]\n}')
    path = app.workspace.root / "scored.json"
    path.write_bytes(bad)
    window.tree_view.refresh()
    assert window.open_thread("scored.json") is None  # refused, with the reason on the page
    box = window.pages["scored.json"].failure_box
    buttons = [w for w in box.winfo_children() if w.winfo_class() == "TButton"]
    assert [b.cget("text") for b in buttons] == ["Open without the invalid records"]
    buttons[0].invoke()
    window.root.update()
    ed = window.editors["scored.json"]
    assert ed is not None and ed.p.thread.evaluations == []
    assert path.read_bytes() == bad  # nothing written until the user edits
