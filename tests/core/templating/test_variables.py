"""Variables of a thread: defaults, names, renames, references, invalidation."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from llmspace.core.model import Variable
from llmspace.core.templating import frozen_values as F
from llmspace.core.templating import references as H
from llmspace.core.templating import variables as V
from llmspace.core.threadio import parse_thread, serialize_thread, thread_from_data, thread_to_data
from llmspace.core.workspace import Workspace
from llmspace.errors import UserFacingError


def make(ctx: dict[str, Any]):
    return thread_from_data({"title": "t", "context": ctx})


def thread_with_refs():
    return make({
        "systemPrompt": "Hi {{ name }} and {{name}} but {{ names }}",
        "variableVariants": {"active": "default", "variants": {"default": {"name": "Ada", "blank": " "}}},
        "variables": {"data": {"type": "json", "value": "{}"}, "doc": {"type": "file", "value": ""}},
        "messages": [
            {"id": "m1", "role": "user", "content": [{"type": "text", "text": "{% if name %}{{ name | upper }}{% endif %}"}]},
            {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "ok"}],
             "toolCalls": [{"id": "c1", "input": {"name": "f", "arguments": {}},
                            "output": {"content": [{"type": "text", "text": "result {{ name }} {{ blank }} {{ ghost }} {{ bad-name }}"}]}}]},
        ],
        "snapshot": {"variables": {"systemPrompt": {"name": "Ada", "current_date": "2026-01-01, Thursday"},
                                   "message:m1:text": {"\u0000rendered": "ADA"},
                                   "toolResult:a1:c1:text": {"name": "Ada"}}},
    })


# -- defaults -------------------------------------------------------------------------------

def test_default_variables_are_materialised_for_the_editor() -> None:
    t = make({"systemPrompt": "x"})
    assert V.ensure_default_variables(t) is True
    data = thread_to_data(t)["context"]
    assert data["variables"] == {
        "current_date": {"type": "currentDate", "format": "readable-date"},
        "available_skills": {"type": "skills", "format": "markdown-list", "skillNames": [], "indent": 0},
        "current_working_directory": {"type": "workingDirectory", "value": "~/Desktop/llm-space-project"},
    }
    assert data["variableVariants"] == {"active": "default", "variants": {"default": {}}}
    assert V.ensure_default_variables(t) is False


def test_a_missing_default_type_is_added_under_a_free_name() -> None:
    t = make({"variables": {"current_date": {"type": "json", "value": "1"}, "current_date_2": {"type": "file", "value": ""}},
              "variableVariants": {"active": "default", "variants": {"default": {"available_skills": "text"}}}})
    V.ensure_default_variables(t)
    variables = t.context.variables
    assert variables["current_date_3"].type == "currentDate"
    assert variables["available_skills_2"].type == "skills"
    assert variables["current_working_directory"].type == "workingDirectory"


def test_variants_collapse_into_the_default_bucket() -> None:
    t = make({"variableVariants": {"active": "b", "variants": {"a": {"x": "1"}, "b": {"y": "2", "n": 3}}}})
    assert V.custom_values(t) == {"y": "2"}
    V.ensure_default_variables(t)
    assert thread_to_data(t)["context"]["variableVariants"] == {"active": "default", "variants": {"default": {"y": "2"}}}


def test_loading_and_saving_a_thread_does_not_materialise_defaults(tmp_path: Path) -> None:
    raw = b'{\n  "title": "t",\n  "context": {\n    "systemPrompt": "{{ current_date }}"\n  }\n}'
    (tmp_path / "t.json").write_bytes(raw)
    ws = Workspace(tmp_path, use_os_trash=False)
    thread = ws.open("t.json")
    ws.save("t.json", thread)
    assert (tmp_path / "t.json").read_bytes() == raw
    assert serialize_thread(parse_thread(raw)) == raw


def test_typed_variables_normalise_formats_indent_and_skill_names() -> None:
    t = make({"variables": {"s": {"type": "skills", "skillNames": ["a", 3, None, "b"], "format": "nope", "indent": 7}}})
    s = V.typed_variables(t)["s"]
    assert (s.format, s.indent, s.skill_names, s.include_all) == ("xml", 0, ("a", "b"), False)
    assert V.typed_variables(make({"variables": {"s": {"type": "skills", "skillNames": []}}}))["s"].include_all is True


# -- names ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name,ok", [("a", True), ("_x1", True), ("A_b_9", True), ("1a", False), ("a-b", False),
                                     ("", False), ("a b", False), ("é", False)])
def test_name_rule(name: str, ok: bool) -> None:
    assert V.is_valid_name(name) is ok


def test_names_are_unique_across_both_stores() -> None:
    t = thread_with_refs()
    with pytest.raises(UserFacingError, match="Variable name already exists"):
        V.set_text_variable(t, "data", "x")
    with pytest.raises(UserFacingError, match="Variable name already exists"):
        V.set_typed_variable(t, "name", Variable(type="file", value=""))
    with pytest.raises(UserFacingError, match="not a valid variable name"):
        V.set_text_variable(t, "9lives", "x")


def test_validation_problems_list_invalid_names_and_clashes() -> None:
    t = make({"variables": {"bad name": {"type": "json", "value": "1"}, "x": {"type": "json", "value": "1"}},
              "variableVariants": {"active": "default", "variants": {"default": {"x": "v"}}}})
    assert V.validation_problems(t) == [
        'Variable name "bad name" is invalid.',
        'Variable "x" is defined as both a built-in and a custom variable.',
    ]


# -- rename ---------------------------------------------------------------------------------

def test_rename_rewrites_every_reference_and_the_snapshot_keys() -> None:
    t = thread_with_refs()
    assert V.rename_variable(t, "name", "person") is True
    ctx = t.context
    assert ctx.systemPrompt == "Hi {{person}} and {{person}} but {{ names }}"
    assert t.messages[0].content[0].text == "{% if person %}{{ person | upper }}{% endif %}"
    assert t.messages[1].toolCalls[0].output.content[0].text == "result {{person}} {{ blank }} {{ ghost }} {{ bad-name }}"
    assert V.custom_values(t) == {"person": "Ada", "blank": " "}
    assert F.snapshot_variables(t) == {
        "systemPrompt": {"person": "Ada", "current_date": "2026-01-01, Thursday"},
        "message:m1:text": {"\u0000rendered": "ADA"},
        "toolResult:a1:c1:text": {"person": "Ada"},
    }


def test_rename_of_a_typed_variable_keeps_its_position() -> None:
    t = thread_with_refs()
    V.rename_variable(t, "data", "payload")
    assert list(t.context.variables) == ["payload", "doc"]


def test_rename_refuses_taken_or_invalid_names_and_ignores_unknown_ones() -> None:
    t = thread_with_refs()
    with pytest.raises(UserFacingError):
        V.rename_variable(t, "name", "data")
    with pytest.raises(UserFacingError):
        V.rename_variable(t, "name", "no way")
    assert V.rename_variable(t, "ghost", "spirit") is False


# -- references -----------------------------------------------------------------------------

def test_references_report_each_use_with_place_and_status() -> None:
    refs = H.references(thread_with_refs())
    got = [(r.name, r.place, r.status) for r in refs]
    assert got == [
        ("name", "systemPrompt", "ok"), ("name", "systemPrompt", "ok"), ("names", "systemPrompt", "unknown"),
        ("name", "message:m1:text", "ok"), ("name", "message:m1:text", "ok"),
        ("name", "toolResult:a1:c1:text", "ok"), ("blank", "toolResult:a1:c1:text", "empty"),
        ("ghost", "toolResult:a1:c1:text", "unknown"), ("bad-name", "toolResult:a1:c1:text", "invalid"),
    ]
    first = refs[0]
    assert "Hi {{ name }} and"[first.start:first.end] == "{{ name }}"


def test_value_status_for_typed_variables() -> None:
    t = thread_with_refs()
    assert H.value_status(t, "data") == "ok"
    assert H.value_status(t, "doc") == "empty"
    assert H.value_status(t, "current_date") == "ok"


def test_hints_for_the_completion_list() -> None:
    t = thread_with_refs()
    now = datetime(2026, 7, 12, tzinfo=UTC)
    assert H.variable_hint(t, "current_date", now) == "2026-07-12, Sunday"
    assert H.variable_hint(t, "available_skills") == "All enabled skills"
    assert H.variable_hint(t, "doc") == "(no file)"
    assert H.variable_hint(t, "blank") == "(empty)"
    assert H.variable_hint(t, "name") == "Ada"


# -- invalidation ---------------------------------------------------------------------------

def test_editing_the_system_prompt_drops_only_its_place() -> None:
    t = thread_with_refs()
    assert F.on_system_prompt_edited(t) is True
    assert set(F.snapshot_variables(t)) == {"message:m1:text", "toolResult:a1:c1:text"}
    assert F.on_system_prompt_edited(t) is False


def test_editing_a_message_or_a_tool_result_drops_its_place() -> None:
    t = thread_with_refs()
    F.on_message_edited(t, "m1")
    F.on_tool_result_edited(t, "a1", "c1")
    assert set(F.snapshot_variables(t)) == {"systemPrompt"}


def test_changing_a_variable_drops_its_values_and_every_frozen_template_output() -> None:
    t = thread_with_refs()
    F.on_variable_changed(t, "name")
    assert F.snapshot_variables(t) == {"systemPrompt": {"current_date": "2026-01-01, Thursday"}}


def test_removing_the_last_frozen_value_removes_the_snapshot_key_entirely() -> None:
    t = thread_with_refs()
    F.on_system_prompt_edited(t)
    F.on_message_edited(t, "m1")
    F.on_tool_result_edited(t, "a1", "c1")
    assert "snapshot" not in thread_to_data(t)["context"]


def test_deleting_a_variable_invalidates_it() -> None:
    t = thread_with_refs()
    assert V.delete_variable(t, "name") is True
    assert "name" not in V.custom_values(t)
    assert "name" not in F.snapshot_variables(t).get("systemPrompt", {})
    assert V.delete_variable(t, "name") is False


def test_apply_snapshot_keeps_other_snapshot_keys() -> None:
    t = make({"snapshot": {"variables": {"systemPrompt": {"a": "1"}}, "extra": 1}})
    F.apply_snapshot(t, None)
    assert thread_to_data(t)["context"]["snapshot"] == {"extra": 1}
    F.apply_snapshot(t, {"systemPrompt": {"b": "2"}, "empty": {}})
    assert thread_to_data(t)["context"]["snapshot"] == {"variables": {"systemPrompt": {"b": "2"}}, "extra": 1}


def test_completion_list_is_sorted_with_hints_and_reference_checks_work() -> None:
    t = thread_with_refs()
    items = dict(H.completions(t, datetime(2026, 7, 12, tzinfo=UTC)))
    assert list(items) == sorted(items)
    assert items["data"] == "{}" and items["current_working_directory"] == "~/Desktop/llm-space-project"
    assert H.is_referenced(t, "name") and H.is_referenced(t, "blank") and not H.is_referenced(t, "data")


def test_setting_a_variable_to_its_current_value_keeps_frozen_values() -> None:
    t = thread_with_refs()
    V.set_text_variable(t, "name", "Ada")
    V.set_typed_variable(t, "data", Variable(type="json", value="{}"))
    assert F.snapshot_variables(t)["message:m1:text"] == {"\u0000rendered": "ADA"}
    V.set_text_variable(t, "name", "Bob")
    assert "message:m1:text" not in F.snapshot_variables(t)
