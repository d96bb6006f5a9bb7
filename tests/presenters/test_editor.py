"""Editor presenter: edit intents, undo/redo, saving, validation of tools and parameters."""

import json

import pytest

from llmspace.errors import UserFacingError
from llmspace.presenters.editor import EditorPresenter
from llmspace.presenters.undo import UNDO_STEPS


@pytest.fixture
def ed(app):
    rel = app.workspace.create_thread("", "t")
    return EditorPresenter(app.workspace, rel)


def saved(app, rel):
    return json.loads(app.workspace.resolve(rel).read_text("utf-8"))


def test_editing_text_then_saving_writes_only_the_fields_set(ed, app):
    ed.message_intents.set_message_text(0, "hello")
    assert ed.dirty and ed.save() and not ed.dirty
    data = saved(app, ed.rel)
    assert data["context"]["messages"][0]["content"] == [{"type": "text", "text": "hello"}]
    assert "model" not in data


def test_add_insert_move_toggle_and_remove_messages(ed):
    ed.message_intents.set_message_text(0, "q")
    ed.message_intents.add_message()  # alternates: assistant
    ed.message_intents.add_message("user", before=0)
    roles = [m.role for m in ed.messages]
    assert roles == ["user", "user", "assistant"]
    ed.message_intents.move_message(0, 2)
    assert ed.messages[0].text() == "q"
    ed.message_intents.toggle_role(2)
    assert ed.messages[2].role == "assistant"
    ed.message_intents.toggle_role(1)
    assert ed.messages[1].role == "user"
    ed.message_intents.remove_message(0)
    assert len(ed.messages) == 2


def test_undo_and_redo_restore_states_and_typing_is_one_step(ed):
    ed.message_intents.set_message_text(0, "a")
    ed.message_intents.set_message_text(0, "ab")  # same field within a second: same undo step
    ed.set_system_prompt("sys")
    assert ed.undo() and ed.system_prompt == ""
    assert ed.undo() and ed.messages[0].text() == ""
    assert not ed.undo()
    assert ed.redo() and ed.messages[0].text() == "ab"


def test_undo_keeps_at_most_100_steps(ed):
    for i in range(UNDO_STEPS + 20):
        ed.set_system_prompt(str(i))
        ed.undo_history.break_run()
    assert len(ed.undo_history.undo) == UNDO_STEPS


def test_images_go_before_text_and_only_into_user_messages(ed):
    ed.message_intents.set_message_text(0, "look")
    ed.message_intents.add_image(0, "image/png", "iVBORw0KGgo=")
    assert [c.type for c in ed.messages[0].content] == ["image_data", "text"]
    ed.message_intents.remove_image(0, 0)
    assert [c.type for c in ed.messages[0].content] == ["text"]
    ed.message_intents.add_message("assistant")
    with pytest.raises(UserFacingError):
        ed.message_intents.add_image(1, "image/png", "x")


def test_model_and_parameters_are_set_and_removed(ed, app):
    with pytest.raises(UserFacingError):
        ed.set_param("temperature", 0.5)
    ed.set_model("openai", "gpt-4.1")
    ed.set_param("temperature", 0.5)
    ed.set_param("responseType", {"type": "json_schema", "jsonSchema": {"type": "object"}})
    assert ed.params()["temperature"] == 0.5
    with pytest.raises(UserFacingError):
        ed.set_param("temperature", 3)
    ed.set_param("temperature", None)
    ed.set_param("responseType", None)
    ed.save()
    assert saved(app, ed.rel)["model"] == {"provider": "openai", "id": "gpt-4.1"}


def test_function_tools_are_validated_and_names_stay_unique(ed):
    with pytest.raises(UserFacingError, match="not valid JSON"):
        ed.upsert_function_tool("{")
    with pytest.raises(UserFacingError, match="name"):
        ed.upsert_function_tool('{"name": "bad name"}')
    with pytest.raises(UserFacingError, match="schema"):
        ed.upsert_function_tool('{"name": "f", "parameters": {"type": "object", "properties": 3}}')
    assert ed.upsert_function_tool('{"name": "f", "description": "d"}') == "f"
    with pytest.raises(UserFacingError, match="already exists"):
        ed.upsert_function_tool('{"name": "f"}')
    ed.upsert_function_tool('{"name": "g", "description": "e"}', replacing="f")
    assert ed.tool_names() == {"g"}
    assert ed.add_tools([{"type": "builtin", "name": "read"}, {"type": "builtin", "name": "g"}]) == 1
    ed.remove_tools({"read"})
    assert ed.tool_names() == {"g"}


def test_variables_and_hints_for_missing_or_empty_values(ed):
    ed.set_system_prompt("Hi {{name}} from {{ place }} {% if x %}{% endif %}")
    assert ed.variable_hints() == {"name": "missing", "place": "missing", "x": "missing"}
    ed.set_variables({"name": "Ada", "place": "", "x": "1"})
    assert ed.variable_hints() == {"place": "empty"}
    assert ed.custom_variables() == {"name": "Ada", "place": "", "x": "1"}
    with pytest.raises(UserFacingError):
        ed.set_variables({"bad name": "v"})
    ed.set_variables({"name": "Ada", "place": "Paris"})
    assert ed.custom_variables() == {"name": "Ada", "place": "Paris"}


def test_default_variables_are_shown_and_typed_variables_can_change(ed):
    typed = ed.typed_variables()
    assert {v.type for v in typed.values()} >= {"currentDate", "workingDirectory", "skills"}
    assert not ed.dirty
    ed.set_typed_variable("current_working_directory", {"type": "workingDirectory", "value": "/tmp/project"})
    assert ed.typed_variables()["current_working_directory"].value == "/tmp/project"
    ed.set_typed_variable("data", {"type": "json", "value": "{\"a\": 1}"})
    assert "data" in ed.typed_variables()
    with pytest.raises(UserFacingError):
        ed.set_typed_variable("bad", {"type": "nope"})


def test_tool_results_are_editable_and_can_be_marked_as_error(app):
    rel = app.workspace.create_thread("", "calls")
    ed = EditorPresenter(app.workspace, rel)
    ed.thread = ed.thread.model_validate({"title": "calls", "context": {"messages": [
        {"id": "u", "role": "user", "content": [{"type": "text", "text": "q"}]},
        {"id": "a", "role": "assistant", "content": [{"type": "text", "text": ""}],
         "toolCalls": [{"id": "c1", "input": {"name": "lookup", "arguments": {}}}]}]}})
    assert [c.id for _, c in ed.message_intents.pending_function_calls()] == ["c1"]
    ed.message_intents.set_tool_result(1, "c1", "42", True)
    call = ed.messages[1].toolCalls[0]
    assert call.output.text() == "42" and call.output.isError is True
    ed.message_intents.set_tool_result(1, "c1", "43", False)
    assert call.output.isError is False and ed.message_intents.pending_function_calls() == []


def test_the_editor_is_read_only_while_running(ed):
    ed.read_only = True
    with pytest.raises(UserFacingError, match="read-only"):
        ed.message_intents.set_message_text(0, "x")


def test_renaming_the_title_renames_the_file(ed, app):
    ed.message_intents.set_message_text(0, "keep me")
    new = ed.rename("renamed")
    assert new == "renamed.json" and ed.title == "renamed"
    assert saved(app, new)["title"] == "renamed"
    assert saved(app, new)["context"]["messages"][0]["content"][0]["text"] == "keep me"


def test_run_history_rows_restore_as_one_undo_step_and_remove(app):
    rel = app.workspace.create_thread("", "hist")
    ed = EditorPresenter(app.workspace, rel)
    ed.thread = ed.thread.model_validate({"title": "hist", "context": {"systemPrompt": "now"}, "runHistory": [
        {"id": "r1", "timestamp": 1000, "thread": {"title": "hist", "context": {"systemPrompt": "then", "messages": [
            {"id": "u", "role": "user", "content": [{"type": "text", "text": "old question"}]}]}}}]})
    rows = ed.history_intents.history()
    assert [r.id for r in rows] == ["r1"] and rows[0].message_count == 1
    ed.history_intents.restore_run("r1")
    assert ed.system_prompt == "then" and ed.messages[0].text() == "old question"
    ed.undo()
    assert ed.system_prompt == "now"
    ed.history_intents.remove_run("r1")
    assert ed.history_intents.history() == [] and ed.dirty


def test_clear_model_collapse_truncate_and_reload_from_disk(ed, app):
    ed.set_model("openai", "gpt-4.1")
    ed.clear_model()
    assert ed.thread.model is None
    ed.message_intents.toggle_collapsed(ed.messages[0].id)
    assert ed.messages[0].id in ed.collapsed
    ed.message_intents.add_message()
    ed.message_intents.add_message()
    ed.message_intents.truncate_after(0)
    assert len(ed.messages) == 1
    ed.undo()
    assert len(ed.messages) == 3
    ed.save()
    path = app.workspace.resolve(ed.rel)
    path.write_text(path.read_text("utf-8").replace('"context"', '"modelName": "x",\n  "context"', 1), "utf-8")
    ed.reload_from_disk()
    assert ed.thread.modelName == "x" and not ed.dirty


def _messy_history_file(app, name):
    from llmspace.jsonio import write_bytes_atomic

    data = {"title": name, "runHistory": [
        {"id": "r1", "timestamp": 1000, "thread": {"title": name}},
        {"timestamp": 2000, "thread": {"title": name}},
        {"id": "r1", "timestamp": 3000, "thread": {"title": name, "context": {"systemPrompt": "last"}}}],
        "evaluations": [{"id": "e1", "leftRunId": "r1", "rightRunId": "r1", "verdict": "tie"}]}
    path = app.workspace.root / f"{name}.json"
    write_bytes_atomic(path, json.dumps(data).encode())
    return f"{name}.json", path


def test_opening_applies_the_history_and_evaluation_load_rules_as_an_ordinary_edit(app):
    rel, path = _messy_history_file(app, "messy")
    before = path.read_bytes()
    ed = EditorPresenter(app.workspace, rel)
    assert ed.dirty and path.read_bytes() == before  # nothing written yet
    runs = ed.thread.runHistory
    assert [r.id for r in runs] == ["run-2000-1", "r1"] and runs[1].thread.context.systemPrompt == "last"
    assert ed.thread.evaluations == []
    assert ed.save()
    data = saved(app, rel)
    assert [r["id"] for r in data["runHistory"]] == ["run-2000-1", "r1"] and data["evaluations"] == []
    after_save = path.read_bytes()
    ed.reload_from_disk()
    assert not ed.dirty and path.read_bytes() == after_save


def test_a_clean_thread_opens_unchanged_and_is_not_rewritten(app):
    rel = app.workspace.create_thread("", "clean")
    path = app.workspace.resolve(rel)
    before = path.read_bytes()
    ed = EditorPresenter(app.workspace, rel)
    assert not ed.dirty and not ed.save() and path.read_bytes() == before


def test_a_rename_from_the_title_is_one_undo_step_that_renames_the_file_back(ed, app):
    def rename_to(title: str) -> str:
        ed.moved(str(app.workspace.rename(ed.rel, title)))
        return ed.rel

    ed.renamer = rename_to
    ed.set_system_prompt("before the rename")
    rename_to("renamed")
    ed.renamed("t", "renamed")
    assert ed.undo() and ed.rel == "t.json"
    assert app.workspace.exists("t.json") and not app.workspace.exists("renamed.json")
    assert ed.system_prompt == "before the rename"  # the rename step touched only the file name
    assert ed.redo() and app.workspace.exists("renamed.json") and ed.rel == "renamed.json"
    assert ed.undo() and ed.undo() and ed.system_prompt == ""


def test_an_undo_of_a_rename_that_fails_keeps_the_step(ed, app):
    def refuse(title: str) -> str:
        raise UserFacingError("A file named t already exists.")

    ed.renamer = refuse
    ed.renamed("t", "renamed")
    with pytest.raises(UserFacingError):
        ed.undo()
    assert ed.can_undo() and not ed.can_redo()
