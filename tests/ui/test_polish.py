"""The polish list of issue 22 (item 12): one test per item where it makes sense."""

from __future__ import annotations

import threading

from llmspace.core.threadio import clone_thread
from llmspace.plugins.code.calls import CommandOutcome

from .conftest import open_tabs, pump_until


def test_a_command_message_and_its_write_note_read_as_two_sentences():
    from llmspace.ui.plugin_commands import outcome_text

    outcome = CommandOutcome("success", "args=alpha|beta|--stamp", write_note="untitled.json was updated.")
    assert outcome_text(outcome) == "args=alpha|beta|--stamp. untitled.json was updated."
    assert outcome_text(CommandOutcome("success", "Stamped.", write_note="plan.json was updated.")) == \
        "Stamped. plan.json was updated."
    assert outcome_text(CommandOutcome("success", "Done!")) == "Done!"


def test_the_write_note_names_the_file_after_a_staged_write_renamed_it(window, app):
    from llmspace.ui.plugin_commands import _active_tab

    (editor,) = open_tabs(window, app, "untitled")
    tab = _active_tab(window.ui, window.tab_pages)
    assert tab is not None
    new = clone_thread(editor.p.thread)
    new.title = "[Draft] untitled"
    result: list[str | None] = []
    worker = threading.Thread(target=lambda: result.append(tab.commit(new)))
    worker.start()
    pump_until(window.root, lambda: result, timeout=30)
    worker.join(5)
    assert result == [None] and tab.filename == "[Draft] untitled.json"


def test_a_storage_save_says_where_the_thread_went_in_words_not_json():
    from llmspace.ui.storage_actions import locator_text

    assert locator_text({"id": "thr_42", "version": 3}) == "Saved as thr_42 (version 3)."
    assert locator_text({"id": "thr_42", "url": "https://x.test/t/42"}) == "Saved as thr_42 (url https://x.test/t/42)."
    assert locator_text({}) == "Saved."


def test_one_action_has_one_name_install_plugin_and_the_plugin_buttons_wait_for_a_selection(window, app):
    from llmspace.ui.plugin_install import INSTALL_LABEL

    assert INSTALL_LABEL == "Install Plugin…"
    labels = [r.value.display_name for r in app.registries.commands.active()]
    assert "File: Install Plugin…" in labels and not [x for x in labels if "Install plugin" in x or "from ZIP" in x]
    dialog = window.open_settings()
    page = dialog.plugins_page
    dialog.nb.select(page)
    window.root.update()

    def texts(widget):
        out = []
        for child in widget.winfo_children():
            try:
                out.append(str(child.cget("text")))
            except Exception:
                pass
            out += texts(child)
        return out

    shown = texts(page)
    assert INSTALL_LABEL in shown and "Install from ZIP…" not in shown
    assert not [t for t in shown if "Install plugin…" in t]
    assert page.current() is None
    assert [str(b.cget("state")) for b in (page.switch, page.reload_button, page.remove_button)] == ["disabled"] * 3
    dialog.destroy()


def _tools_dialog(window, app):
    (editor,) = open_tabs(window, app, "tools")
    return editor, editor.settings.edit_tools()


def test_long_tool_descriptions_end_at_a_word_with_the_whole_text_in_a_tooltip(window, app):
    from llmspace.tools.builtins import builtin_tools

    _editor, dlg = _tools_dialog(window, app)
    full = {t.name: " ".join((t.description or "").split()) for t in builtin_tools()}
    long = [n for n, d in full.items() if len(d) > 60]
    assert long
    for name in long:
        shown = dlg.check_texts[name].split(" — ", 1)[1]
        assert shown.endswith("…")
        kept = shown[:-1].rstrip()
        assert full[name].startswith(kept) and full[name][len(kept)] == " "  # cut between words
        assert dlg.tips[name] == full[name]
    dlg.destroy()


def test_apply_in_the_tools_dialog_applies_and_keeps_it_open(window, app):
    editor, dlg = _tools_dialog(window, app)
    name = next(iter(dlg.checks))
    dlg.checks[name][0].set(True)
    dlg.apply()
    window.root.update()
    assert name in editor.p.tool_names()
    assert dlg.winfo_exists() and dlg.msg.cget("text") == "Applied."
    dlg.destroy()


def test_the_variables_dialogs_skills_list_scrolls_when_it_holds_more_than_it_shows(window, app):
    import orjson

    from llmspace.jsonio import write_bytes_atomic
    from llmspace.ui.editor.variables_dialog import VariablesDialog

    write_bytes_atomic(app.workspace.root / "skills.json", orjson.dumps({
        "title": "skills", "context": {"variables": {"s": {"type": "skills", "skillNames": ["skill-11"]}},
                                       "messages": []}}))
    window.tree_view.refresh()
    editor = window.open_thread("skills.json")
    names = [f"skill-{k:02d}" for k in range(12)]
    dlg = VariablesDialog(editor, editor.p, lambda: None, skill_names=lambda: names)
    window.root.update()
    _v, lb, _all, _names = dlg.skill_boxes["s"]
    assert lb.size() == 12 and int(lb.cget("height")) < 12
    bar = dlg.skill_bars["s"]
    assert bar.winfo_ismapped() and str(lb.cget("yscrollcommand"))
    bar.set(*lb.yview())
    lb.yview_moveto(1.0)
    window.root.update()
    assert lb.yview()[1] == 1.0
    dlg.destroy()


def test_no_column_header_of_settings_models_is_clipped(window):
    import tkinter.font as tkfont

    dialog = window.open_settings()
    page = dialog.models_page
    window.root.update()
    font = tkfont.nametofont("TkHeadingFont")
    for tree in (page.list, page.plugin_list):
        for col in ("#0", *tree["columns"]):
            text = str(tree.heading(col, "text"))
            assert int(tree.column(col, "width")) >= font.measure(text) + 16, (text, tree.column(col, "width"))
    dialog.destroy()


def test_the_title_field_keeps_its_width_while_the_run_status_changes(window, app):
    (editor,) = open_tabs(window, app, "steady")
    window.root.update()
    before = editor.header.title_entry.winfo_width()
    for text in ("Running…", "Stopping…", "Retrying…", "Stopped", ""):
        editor.header.status.configure(text=text)
        window.root.update()
        assert editor.header.title_entry.winfo_width() == before, text


def test_run_switches_show_their_state_on_or_off_in_the_run_menu_and_the_editors_settings_menu(window, app):
    (editor,) = open_tabs(window, app, "switches")
    window.switches.auto_run.set(False)
    for menu in (window.menus.run_menu, editor.header.settings_menu):
        labels = {menu.entrycget(i, "label"): i for i in range(menu.index("end") + 1)
                  if menu.type(i) == "checkbutton"}
        for label in ("Enable ReAct loop", "Auto run tools"):
            i = labels[label]
            assert str(menu.entrycget(i, "image")) and str(menu.entrycget(i, "selectimage"))  # a box when off too
            assert str(menu.entrycget(i, "image")) != str(menu.entrycget(i, "selectimage"))
