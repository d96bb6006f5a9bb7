"""The Variables dialog's logic without Tk: JSON checked as typed, file paths relative to the
working directory, and Save in one undo step in the thread's format (JSON and file variables
in `context.variables`, text ones in `variableVariants`)."""

from __future__ import annotations

import json

import pytest

from llmspace.errors import UserFacingError
from llmspace.presenters.editor import EditorPresenter
from llmspace.presenters.variable_forms import json_problem, json_status, relative_path, variable_data


@pytest.fixture
def ed(app):
    return EditorPresenter(app.workspace, app.workspace.create_thread("", "vars"))


def saved(app, rel):
    return json.loads(app.workspace.resolve(rel).read_text("utf-8"))["context"]


def test_json_is_checked_with_the_line_and_column_of_the_mistake():
    assert json_problem('{"a": [1, 2]}') is None
    assert json_problem("   ") is None  # no value yet
    assert json_problem('{\n  "a": 1\n  "b": 2\n}') == "Line 3, column 3: Expecting ',' delimiter"
    assert json_status('{"a": 1}') == (True, "Valid JSON")
    assert json_status("{")[0] is False
    assert json_status("")[0] is True and "stays as written" in json_status("")[1]


def test_a_file_inside_the_working_directory_is_kept_relative(tmp_path):
    (tmp_path / "data").mkdir()
    assert relative_path(str(tmp_path / "data" / "n.txt"), tmp_path) == "data/n.txt"
    assert relative_path("/elsewhere/n.txt", tmp_path) == "/elsewhere/n.txt"
    assert relative_path(str(tmp_path), tmp_path) == str(tmp_path)
    assert relative_path(str(tmp_path / "n.txt"), None) == str(tmp_path / "n.txt")


def test_only_json_and_file_variables_are_added_as_new_kinds():
    assert variable_data("json", "{}") == {"type": "json", "value": "{}"}
    with pytest.raises(UserFacingError):
        variable_data("skills", "")


def test_saving_adds_json_and_file_variables_in_the_threads_format_in_one_undo_step(ed, app):
    steps = len(ed.undo_history.undo)
    assert ed.save_variables({"profile": {"type": "json", "value": '{"city": "Paris"}'},
                              "notes": {"type": "file", "value": "data/n.txt"}}, set(), {"tone": "warm"})
    assert len(ed.undo_history.undo) == steps + 1
    ed.save()
    ctx = saved(app, ed.rel)
    assert ctx["variables"]["profile"] == {"type": "json", "value": '{"city": "Paris"}'}
    assert ctx["variables"]["notes"] == {"type": "file", "value": "data/n.txt"}
    assert ctx["variableVariants"]["variants"]["default"] == {"tone": "warm"}
    ed.undo()
    assert "profile" not in ed.typed_variables() and "notes" not in ed.typed_variables() and ed.custom_variables() == {}


def test_invalid_json_a_bad_name_or_a_taken_name_changes_nothing(ed):
    steps = len(ed.undo_history.undo)
    with pytest.raises(UserFacingError, match="not valid JSON: Line 1"):
        ed.save_variables({"cfg": {"type": "json", "value": "{oops"}}, set(), {"x": "1"})
    with pytest.raises(UserFacingError, match="not a valid variable name"):
        ed.save_variables({"bad name": {"type": "json", "value": "{}"}}, set(), {})
    with pytest.raises(UserFacingError, match="already exists"):
        ed.save_variables({"x": {"type": "json", "value": "{}"}}, set(), {"x": "text"})
    with pytest.raises(UserFacingError, match="already exists"):
        ed.save_variables({"current_date": {"type": "currentDate", "format": "iso-date"},
                           "cfg": {"type": "json", "value": "{}"}}, set(), {"current_date": "clash"})
    assert len(ed.undo_history.undo) == steps and ed.custom_variables() == {} and "cfg" not in ed.typed_variables()


def test_removing_changing_and_leaving_variables_untouched(ed):
    ed.save_variables({"cfg": {"type": "json", "value": "{}"}, "doc": {"type": "file", "value": "a.txt"}}, set(), {})
    steps = len(ed.undo_history.undo)
    assert not ed.save_variables({"cfg": {"type": "json", "value": "{}"}}, set(), {})  # nothing changed
    assert len(ed.undo_history.undo) == steps
    assert ed.save_variables({"doc": {"type": "file", "value": "b.txt"}}, {"cfg"}, {})
    assert "cfg" not in ed.typed_variables() and ed.typed_variables()["doc"].value == "b.txt"
    assert len(ed.undo_history.undo) == steps + 1
    # a name freed by a removal can be taken by another kind in the same save
    assert ed.save_variables({}, {"doc"}, {"doc": "now text"})
    assert ed.custom_variables() == {"doc": "now text"} and "doc" not in ed.typed_variables()


def test_a_stored_invalid_json_value_left_untouched_does_not_block_saving(ed):
    ctx = ed.thread.ensure_context()
    from llmspace.core.model import Variable

    ctx.variables = {**(ctx.variables or {}), "legacy": Variable(type="json", value="{not json")}
    assert ed.save_variables({"legacy": {"type": "json", "value": "{not json"}}, set(), {"x": "1"})
    assert ed.custom_variables() == {"x": "1"}
