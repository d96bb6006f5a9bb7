"""File › Import from Storage… and Save to Storage… in a real window: a plugin storage
imports a thread into workspace/imported/ and opens it in a tab; the open thread is saved
to the storage off the UI thread, ending in a notification with the locator."""

from __future__ import annotations

import json

from tests.plugins.code_plugins import code_plugin
from tests.plugins.test_code_storages import FOLDER_STORAGE

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
