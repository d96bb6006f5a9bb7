"""File › Import from Storage… and Save to Storage… in a real window: a plugin storage
imports a thread into workspace/imported/ and opens it in a tab; the open thread is saved
to the storage off the UI thread, ending in a notification with the locator."""

from __future__ import annotations

import json

from tests.plugins.code_plugins import FOLDER_STORAGE, LISTING_STORAGE, code_plugin

from .conftest import pump_until


def test_import_from_storage_opens_the_thread_and_save_to_storage_writes_it(window, app, home):
    code_plugin(home, storages={"folder": FOLDER_STORAGE})
    (home / "library").mkdir()
    (home / "library" / "team__plan.json").write_text(json.dumps({"title": "plan", "context": {"messages": [
        {"id": "m1", "role": "user", "content": [{"type": "text", "text": "Plan the launch."}]}]}}))
    app.plugins.refresh()
    app.plugin_code.ensure_loaded()
    dialog = window.import_from_storage()
    assert dialog.box.get() == "Folder library (kit)"
    dialog.ident.set("team/plan")
    dialog.ok()
    pump_until(window.root, lambda: window.tab_pages.tabs.active == "imported/plan.json", timeout=60)
    editor = window.tab_pages.active_editor()
    assert editor.p.thread.messages[0].text() == "Plan the launch."
    saver = window.save_to_storage()
    saver.ident.set("team/copy")
    saver.ok()
    pump_until(window.root, lambda: (home / "library" / "team__copy.json").exists(), timeout=60)
    pump_until(window.root, lambda: any("Saved as team/copy" in t for t in window.ui.toasts.messages()), timeout=30)


def test_without_a_storage_the_import_command_says_what_to_install(window, app):
    assert window.import_from_storage() is None
    assert "No plugin can import threads" in window.dialogs.errors[-1]


def click(root, widget, x=None, y=None):
    """Press and release the left button on `widget` (its middle by default), as the user clicks."""
    root.update()
    x = widget.winfo_width() // 2 if x is None else x
    y = widget.winfo_height() // 2 if y is None else y
    widget.event_generate("<Enter>", x=x, y=y)
    widget.event_generate("<ButtonPress-1>", x=x, y=y)
    widget.event_generate("<ButtonRelease-1>", x=x, y=y)
    root.update()


def type_into(root, entry, text):
    entry.focus_force()
    pump_until(root, lambda: root.focus_get() is entry, timeout=10)
    for ch in text:
        entry.event_generate("<KeyPress>", keysym=ch)
        entry.event_generate("<KeyRelease>", keysym=ch)
    root.update()


def test_a_storage_that_can_list_shows_what_it_holds_and_choosing_a_thread_imports_it(window, app, home):
    code_plugin(home, storages={"listing": LISTING_STORAGE})
    (home / "library").mkdir()
    for key in ("team__plan", "team__review", "notes"):
        (home / "library" / f"{key}.json").write_text(json.dumps({"title": key, "context": {"messages": [
            {"id": "m1", "role": "user", "content": [{"type": "text", "text": f"Body of {key}."}]}]}}))
    app.plugins.refresh()
    app.plugin_code.ensure_loaded()
    dialog = window.import_from_storage()
    assert dialog.tree.winfo_ismapped() or pump_until(window.root, dialog.tree.winfo_ismapped, timeout=10)
    pump_until(window.root, lambda: len(dialog.rows()) == 2, timeout=60)  # a page holds two
    assert dialog.rows() == [("Notes", "notes"), ("Plan", "team/plan")]
    pump_until(window.root, lambda: str(dialog.more.cget("state")) == "normal", timeout=10)
    click(window.root, dialog.more)
    pump_until(window.root, lambda: len(dialog.rows()) == 3, timeout=60)
    assert str(dialog.more.cget("state")) == "disabled"  # the last page has no nextCursor
    type_into(window.root, dialog.search, "rev")
    pump_until(window.root, lambda: dialog.rows() == [("Review", "team/review")], timeout=60)
    row = dialog.tree.get_children()[0]
    x, y, w, h = dialog.tree.bbox(row)
    click(window.root, dialog.tree, x + w // 2, y + h // 2)
    assert dialog.ident.get() == "team/review"
    dialog.tree.event_generate("<ButtonPress-1>", x=x + w // 2, y=y + h // 2)  # a double-click: the dialog closes
    pump_until(window.root, lambda: window.tab_pages.tabs.active == "imported/review.json", timeout=60)
    assert window.tab_pages.active_editor().p.thread.messages[0].text() == "Body of team__review."


def test_a_storage_that_cannot_list_says_what_an_id_looks_like(window, app, home):
    code_plugin(home, storages={"folder": FOLDER_STORAGE, "listing": LISTING_STORAGE})
    app.plugins.refresh()
    app.plugin_code.ensure_loaded()
    dialog = window.import_from_storage()
    names = list(dialog.box.cget("values"))
    dialog.box.current(names.index("Folder library (kit)"))
    dialog.box.event_generate("<<ComboboxSelected>>")
    window.root.update()
    assert not dialog.tree.winfo_ismapped() and not dialog.search.winfo_ismapped()
    hint = str(dialog.hint.cget("text"))
    assert hint == ("Threads in a folder. The ID Folder library knows the thread by "
                    "(what follows llm-space://threads/folder-lib/ in a link).")
    click(window.root, dialog.nametowidget(str(dialog.entry)))
    dialog.ok()
    assert str(dialog.msg.cget("text")) == "Give the resource ID."
    dialog.box.current(names.index("Listing library (kit)"))
    dialog.box.event_generate("<<ComboboxSelected>>")
    pump_until(window.root, dialog.tree.winfo_ismapped, timeout=10)
    dialog.destroy()
