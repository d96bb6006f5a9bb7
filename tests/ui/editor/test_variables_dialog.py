"""JSON and file variables in the Variables dialog, in a real window: Add JSON variable checks
the value as it is typed and refuses to save broken JSON; Add file variable picks a file and
keeps it relative to the working directory; Save writes both in the thread's format in one
undo step; ✕ deletes one (asking first when the thread still uses it)."""

from __future__ import annotations

import json

import pytest

from llmspace.ui.editor.variables_dialog import ValueRow

from ..conftest import pump_until


@pytest.fixture
def ed(window, app):
    rel = app.workspace.create_thread("", "typed-vars")
    window.tree_view.refresh()
    return window.open_thread(rel)


def saved(app, rel):
    return json.loads(app.workspace.resolve(rel).read_text("utf-8"))["context"]


def button(widget, text: str):
    stack = [widget]
    while stack:
        w = stack.pop()
        if w.winfo_class() == "TButton" and str(w.cget("text")) == text:
            return w
        stack.extend(w.winfo_children())
    raise AssertionError(f"no button {text!r}")


def test_a_json_variable_is_checked_as_typed_and_saved_to_the_file(ed, app, window):
    dlg = ed.settings.edit_variables()
    button(dlg, "Add JSON variable").invoke()
    row = dlg.value_rows[-1]
    assert isinstance(row, ValueRow) and row.kind == "json"
    row.name_var.set("profile")
    row.text.insert("1.0", '{"city": "Paris",}')
    window.root.update()
    pump_until(window.root, lambda: "Line 1" in str(row.status.cget("text")), 5)
    assert "danger" in str(row.status.cget("style")).lower()
    assert not dlg.save() and "not valid JSON" in dlg.msg.cget("text")
    row.text.delete("1.0", "end")
    row.text.insert("1.0", '{"city": "Paris"}')
    pump_until(window.root, lambda: row.status.cget("text") == "Valid JSON", 5)
    assert dlg.save() and not dlg.winfo_exists()
    ed.flush()
    assert saved(app, ed.p.rel)["variables"]["profile"] == {"type": "json", "value": '{"city": "Paris"}'}
    assert "profile" in ed.settings.vars_lbl.cget("text")


def test_a_file_variable_is_picked_relative_to_the_working_directory_and_undone_in_one_step(ed, app, window, tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "notes.txt").write_text("hello", "utf-8")
    ed.p.set_typed_variable("current_working_directory", {"type": "workingDirectory", "value": str(tmp_path)})
    dlg = ed.settings.edit_variables()
    button(dlg, "Add file variable").invoke()
    button(dlg, "Add JSON variable").invoke()
    file_row, json_row = dlg.value_rows[-2:]
    file_row.name_var.set("notes")
    window.dialogs.files = [str(tmp_path / "data" / "notes.txt")]
    button(file_row, "Browse…").invoke()
    assert file_row.path_var.get() == "data/notes.txt"
    json_row.name_var.set("limits")
    json_row.text.insert("1.0", "[1, 2]")
    steps = len(ed.p.undo_history.undo)
    assert dlg.save()
    assert len(ed.p.undo_history.undo) == steps + 1
    ed.flush()
    variables = saved(app, ed.p.rel)["variables"]
    assert variables["notes"] == {"type": "file", "value": "data/notes.txt"}
    assert variables["limits"] == {"type": "json", "value": "[1, 2]"}
    ed.undo()
    assert "notes" not in ed.p.typed_variables() and "limits" not in ed.p.typed_variables()


def test_deleting_a_json_variable_asks_first_when_it_is_still_used(ed, app, window):
    ed.p.save_variables({"cfg": {"type": "json", "value": "{}"}}, set(), {})
    ed.p.set_system_prompt("Settings: {{cfg}}")
    dlg = ed.settings.edit_variables()
    row = next(r for r in dlg.value_rows if r.original == "cfg")
    window.dialogs.answer = False
    button(row, "✕").invoke()
    assert window.dialogs.confirms and "{{cfg}}" in window.dialogs.confirms[-1]
    assert not row.removed
    window.dialogs.answer = True
    button(row, "✕").invoke()
    assert row.removed and not row.winfo_ismapped()
    assert dlg.save()
    assert "cfg" not in ed.p.typed_variables()
    ed.undo()
    assert ed.p.typed_variables()["cfg"].value == "{}"
