"""render_thread: values of every variable kind, both paths, frozen values, errors."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmspace.core.model import Variable
from llmspace.core.templating import frozen_values as F
from llmspace.core.templating import variables as V
from llmspace.core.templating.builtin_formats import format_current_date, format_skills
from llmspace.core.templating.render import render_thread
from llmspace.core.templating.resolution import RenderEnv
from llmspace.core.threadio import serialize_thread, thread_from_data
from llmspace.errors import UserFacingError

NOW = datetime(2026, 7, 12, 9, 5, 7, tzinfo=timezone(timedelta(hours=2)))


@dataclass
class FakeSkill:
    name: str
    description: str
    path: str


class FakeSkills:
    def __init__(self, *skills: FakeSkill) -> None:
        self.skills = list(skills)
        self.calls = 0

    def enabled(self) -> list[FakeSkill]:
        self.calls += 1
        return sorted(self.skills, key=lambda s: s.name)


SKILLS = FakeSkills(FakeSkill("writer", "Writes\n  prose.", "/s/writer"), FakeSkill("coder", "Writes code & <tests>", "/s/coder"))


def make(system: str | None = None, *, variables: dict[str, Any] | None = None, custom: dict[str, str] | None = None,
         messages: list[dict[str, Any]] | None = None, snapshot: dict[str, Any] | None = None,
         tools: list[dict[str, Any]] | None = None):
    ctx: dict[str, Any] = {}
    if tools is not None:
        ctx["tools"] = tools
    if system is not None:
        ctx["systemPrompt"] = system
    if variables is not None:
        ctx["variables"] = variables
    if custom is not None:
        ctx["variableVariants"] = {"active": "default", "variants": {"default": custom}}
    if snapshot is not None:
        ctx["snapshot"] = {"variables": snapshot}
    if messages is not None:
        ctx["messages"] = messages
    return thread_from_data({"title": "t", "context": ctx})


def user(mid: str, *texts: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": [{"type": "text", "text": t} for t in texts]}


def env(**kw: Any) -> RenderEnv:
    kw.setdefault("now", NOW)
    kw.setdefault("skills", SKILLS)
    return RenderEnv(**kw)


def system_of(thread: Any, **kw: Any) -> str:
    return render_thread(thread, env(**kw)).system_prompt


# -- built-in values ------------------------------------------------------------------------

def test_default_variables_render_without_being_stored_in_the_thread() -> None:
    t = make("{{ current_date }}|{{ current_working_directory }}|{{available_skills}}")
    before = serialize_thread(t)
    out = system_of(t)
    assert out == "2026-07-12, Sunday|~/Desktop/llm-space-project|- **coder**: Writes code & <tests>\n\n- **writer**: Writes prose."
    assert serialize_thread(t) == before


def test_current_date_formats() -> None:
    assert format_current_date("readable-date", NOW) == "2026-07-12, Sunday"
    assert format_current_date("iso-date", NOW) == "2026-07-12"
    assert format_current_date("local-date-time", NOW).startswith("2026-07-12 09:05:07 GMT+02:00 (")
    west = datetime(2026, 1, 2, 23, 0, 0, tzinfo=timezone(timedelta(hours=-9, minutes=-30)))
    assert format_current_date("local-date-time", west).startswith("2026-01-02 23:00:00 GMT-09:30 (")


def test_unknown_date_format_falls_back_to_readable_date() -> None:
    t = make("{{ d }}", variables={"d": {"type": "currentDate", "format": "weird"}})
    assert system_of(t) == "2026-07-12, Sunday"


def test_working_directory_is_rendered_as_stored_without_an_existence_check(tmp_path: Path) -> None:
    missing = str(tmp_path / "does-not-exist")
    t = make("cwd={{ current_working_directory }}", variables={"current_working_directory": {"type": "workingDirectory", "value": missing}})
    assert system_of(t) == f"cwd={missing}"
    assert not Path(missing).exists()


def test_skills_xml_format_escapes_and_indents() -> None:
    t = make("{{ s }}", variables={"s": {"type": "skills", "skillNames": [], "format": "xml", "indent": 2}})
    assert system_of(t) == (
        "  <available-skills>\n"
        '  <skill name="coder" path="/s/coder">\n'
        "  Writes code &amp; &lt;tests&gt;\n"
        "  </skill>\n"
        '  <skill name="writer" path="/s/writer">\n'
        "  Writes prose.\n"
        "  </skill>\n"
        "  </available-skills>"
    )


def test_skills_markdown_list_with_indent_four_and_a_chosen_subset_in_order() -> None:
    t = make("{{ s }}", variables={"s": {"type": "skills", "skillNames": ["writer", "coder"], "format": "markdown-list", "indent": 4}})
    assert system_of(t) == "    - **writer**: Writes prose.\n    \n    - **coder**: Writes code & <tests>"


def test_skills_indent_other_than_two_or_four_means_none_and_empty_description_says_so() -> None:
    skills = FakeSkills(FakeSkill("a`b", "  ", "/p"))
    t = make("{{ s }}", variables={"s": {"type": "skills", "skillNames": [], "format": "markdown-list", "indent": 3}})
    assert system_of(t, skills=skills) == "- **a\\`b**: No description"
    assert format_skills([], "xml") == "<available-skills>\n</available-skills>"


def test_include_all_false_with_an_empty_selection_renders_nothing() -> None:
    t = make("[{{ s }}]", variables={"s": {"type": "skills", "skillNames": [], "includeAll": False, "format": "xml"}})
    assert system_of(t) == "[]"


def test_a_named_skill_that_is_not_enabled_stops_the_render_with_its_place() -> None:
    t = make("x", variables={"s": {"type": "skills", "skillNames": ["nope"], "format": "xml"}},
             messages=[user("m1", "use {{ s }}")])
    with pytest.raises(UserFacingError) as exc:
        render_thread(t, env())
    assert str(exc.value) == ('Unable to render prompt variables: Skill "nope" in variable "s" is not enabled '
                              "or cannot be found. (in message 1 (user, id m1))")


def test_skills_are_resolved_fresh_on_every_render_even_when_frozen() -> None:
    t = make("{{ available_skills }}")
    first = render_thread(t, env(skills=FakeSkills(FakeSkill("one", "1", "/1"))))
    F.apply_snapshot(t, first.snapshot)
    second = render_thread(t, env(skills=FakeSkills(FakeSkill("two", "2", "/2"))))
    assert first.system_prompt == "- **one**: 1"
    assert second.system_prompt == "- **two**: 2"


def test_skills_used_in_a_template_re_render_instead_of_reusing_the_frozen_output() -> None:
    t = make("{% if true %}{{ available_skills }}{% endif %}")
    F.apply_snapshot(t, render_thread(t, env(skills=FakeSkills(FakeSkill("one", "1", "/1")))).snapshot)
    assert system_of(t, skills=FakeSkills(FakeSkill("two", "2", "/2"))) == "- **two**: 2"


def test_json_variable_prints_pretty_on_the_simple_path_and_raw_text_when_invalid() -> None:
    assert system_of(make("{{ data }}", variables={"data": {"type": "json", "value": '{"n":1}'}})) == '{\n  "n": 1\n}'
    assert system_of(make("{{ data }}", variables={"data": {"type": "json", "value": "{bad"}})) == "{bad"
    assert system_of(make("{{ data }}", variables={"data": {"type": "json", "value": "  "}})) == "{{ data }}"


def test_json_variable_fields_and_iteration_on_the_template_path() -> None:
    t = make("{% for i in data.items %}{{ i }}{% endfor %}|{{ data.user.name }}",
             variables={"data": {"type": "json", "value": '{"user":{"name":"Ada"},"items":["a","b"]}'}})
    assert system_of(t) == "ab|Ada"


def test_invalid_json_leaves_field_access_empty() -> None:
    assert system_of(make("[{{ data.x }}]", variables={"data": {"type": "json", "value": "{bad"}})) == "[]"


def test_file_variable_inlines_contents_raw(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("HELLO {{ not_rendered }}", encoding="utf-8")
    t = make("[{{ doc }}]", variables={"doc": {"type": "file", "value": " notes.md "}})
    assert system_of(t, base_dir=tmp_path) == "[HELLO {{ not_rendered }}]"


def test_file_variable_expands_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "n.md").write_text("H", encoding="utf-8")
    assert system_of(make("{{ doc }}", variables={"doc": {"type": "file", "value": "~/n.md"}})) == "H"


def test_file_variable_missing_file_or_folder_inlines_empty(tmp_path: Path) -> None:
    t = make("[{{ doc }}][{{ dir }}]", variables={"doc": {"type": "file", "value": str(tmp_path / "missing.md")},
                                               "dir": {"type": "file", "value": str(tmp_path)}})
    assert system_of(t) == "[][]"


def test_file_variable_with_an_empty_path_leaves_the_placeholder() -> None:
    assert system_of(make("[{{ doc }}]", variables={"doc": {"type": "file", "value": ""}})) == "[{{ doc }}]"


def test_custom_text_variable_value_is_used_as_is() -> None:
    assert system_of(make("{{ greeting }}, {{greeting}}!", custom={"greeting": " Hi "})) == " Hi ,  Hi !"


def test_an_empty_custom_variable_stops_the_render_naming_the_place() -> None:
    t = make("Hello {{ who }}", custom={"who": "   "})
    with pytest.raises(UserFacingError, match=r'^Unable to render prompt variables: Variable "who" is empty\. \(in the system prompt\)$'):
        render_thread(t, env())


def test_invalid_variable_names_and_custom_built_in_clashes_refuse_the_render() -> None:
    with pytest.raises(UserFacingError, match='Unable to render prompt variables: Custom variable name "bad-name" is invalid'):
        render_thread(make("x", custom={"bad-name": "v"}), env())
    with pytest.raises(UserFacingError, match='"current_date" is defined as both a built-in and a custom variable'):
        render_thread(make("x", variables={"current_date": {"type": "currentDate", "format": "iso-date"}},
                           custom={"current_date": "v"}), env())


# -- simple path ----------------------------------------------------------------------------

def test_simple_path_keeps_unknown_names_and_non_names_byte_for_byte() -> None:
    text = '{{ greeting }} {{ stray }} x {"a": {{ "nested" }} } {{bad-name}} {{}} {{ two words }}'
    assert system_of(make(text, custom={"greeting": "Hi"})) == 'Hi {{ stray }} x {"a": {{ "nested" }} } {{bad-name}} {{}} {{ two words }}'


def test_overrides_replace_custom_values_for_this_render_only() -> None:
    t = make("{{ topic }}/{{ extra }}", custom={"topic": "cats"})
    assert system_of(t, overrides={"topic": "dogs", "extra": "E"}) == "dogs/E"
    assert system_of(t) == "cats/{{ extra }}"


def test_overrides_win_over_frozen_values() -> None:
    t = make("{{ topic }}", custom={"topic": "cats"}, snapshot={"systemPrompt": {"topic": "old"}})
    assert system_of(t) == "old"
    assert system_of(t, overrides={"topic": "dogs"}) == "dogs"


def test_overrides_set_the_value_of_working_directory_json_and_file_variables(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("B", encoding="utf-8")
    t = make("{{ current_working_directory }}|{{ j }}|{{ f }}", variables={
        "j": {"type": "json", "value": "1"}, "f": {"type": "file", "value": "a.md"}})
    assert system_of(t, base_dir=tmp_path, overrides={"current_working_directory": "/w", "j": "[2]", "f": "b.md"}) == "/w|[\n  2\n]|B"


def test_overriding_a_date_or_skills_variable_or_an_invalid_name_is_refused() -> None:
    with pytest.raises(UserFacingError, match=r"current_date.*cannot be set"):
        render_thread(make("x"), env(overrides={"current_date": "x"}))
    with pytest.raises(UserFacingError, match=r"available_skills.*cannot be set"):
        render_thread(make("x"), env(overrides={"available_skills": "x"}))
    with pytest.raises(UserFacingError, match="not a valid variable name"):
        render_thread(make("x"), env(overrides={"1x": "x"}))


# -- template path --------------------------------------------------------------------------

def test_template_path_renders_logic_include_and_known_variables(tmp_path: Path) -> None:
    (tmp_path / "f.md").write_text("INC {{ greeting }}", encoding="utf-8")
    t = make('{% if true %}{{ greeting }}-{{@include("f.md")}}{% endif %}', custom={"greeting": "Hi"})
    assert system_of(t, base_dir=tmp_path) == "Hi-INC Hi"


def test_exists_checks_readable_files(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("", encoding="utf-8")
    t = make('{% if exists("AGENTS.md") %}yes{% endif %}{% if exists("NOPE.md") %}no{% endif %}')
    assert system_of(t, base_dir=tmp_path) == "yes"


def test_a_malformed_template_keeps_the_original_text_and_warns_with_its_place() -> None:
    src = "{% for x in y %}broken"
    t = make(src, messages=[user("m1", "{{ ''.__class__.__mro__ }}")])
    out = render_thread(t, env())
    assert out.system_prompt == src
    assert out.message_texts["m1"] == ["{{ ''.__class__.__mro__ }}"]
    assert [p.place for p in out.problems] == ["systemPrompt", "message:m1:text"]
    assert out.warnings[0].startswith("Template error in the system prompt:")
    assert "sandbox" in out.warnings[1]
    assert out.snapshot is None


def test_empty_and_unknown_names_are_falsy_in_templates_but_print_themselves() -> None:
    t = make("{% if who %}A{% else %}B{% endif %}{% if zzz %}C{% else %}D{% endif %}{{ zzz }}", custom={"who": ""})
    assert system_of(t) == "BD{{zzz}}"


# -- frozen values --------------------------------------------------------------------------

def test_snapshot_maps_per_place_are_exact() -> None:
    t = make("{{ current_date }} {{ stray }}", custom={"g": "Hi"},
             messages=[user("m1", "{{ g }}", "{% if true %}T{% endif %}", "plain"),
                       {"id": "a1", "role": "assistant", "content": [],
                        "toolCalls": [{"id": "c1", "input": {"name": "f", "arguments": {}},
                                       "output": {"content": [{"type": "text", "text": "got {{g}}"}]}},
                                      {"id": "c2", "input": {"name": "f", "arguments": {}}}]}],
             tools=[{"type": "function", "name": "f"}])
    out = render_thread(t, env())
    assert out.snapshot == {
        "systemPrompt": {"current_date": "2026-07-12, Sunday"},
        "message:m1:text": {"g": "Hi", "\u0000rendered:1": "T"},
        "toolResult:a1:c1:text": {"g": "Hi"},
    }
    assert out.message_texts == {"m1": ["Hi", "T", "plain"], "a1": []}
    assert out.tool_result_texts == {("a1", "c1"): ["got Hi"]}


def test_frozen_values_keep_history_byte_stable_across_runs() -> None:
    t = make("{{ current_date }}", messages=[user("m1", "{{ current_date }}")])
    F.apply_snapshot(t, render_thread(t, env()).snapshot)
    t.messages.append(thread_from_data({"title": "x", "context": {"messages": [user("m2", "{{ current_date }}")]}}).messages[0])
    later = render_thread(t, env(now=NOW + timedelta(days=3)))
    assert later.system_prompt == "2026-07-12, Sunday"
    assert later.message_texts == {"m1": ["2026-07-12, Sunday"], "m2": ["2026-07-15, Wednesday"]}


def test_a_frozen_include_survives_a_file_change(tmp_path: Path) -> None:
    f = tmp_path / "f.md"
    f.write_text("V1", encoding="utf-8")
    t = make('{{@include("f.md")}}')
    first = render_thread(t, env(base_dir=tmp_path))
    assert first.snapshot == {"systemPrompt": {"\u0000rendered": "V1", "\u0000includeVersion": "2"}}
    F.apply_snapshot(t, first.snapshot)
    f.write_text("V2", encoding="utf-8")
    assert system_of(t, base_dir=tmp_path) == "V1"
    fresh = make('{{@include("f.md")}}')
    assert system_of(fresh, base_dir=tmp_path) == "V2"


def test_a_legacy_include_snapshot_without_the_version_marker_re_renders(tmp_path: Path) -> None:
    (tmp_path / "f.md").write_text("NEW", encoding="utf-8")
    t = make('{{@include("f.md")}}', snapshot={"systemPrompt": {"\u0000rendered": "OLD"}})
    out = render_thread(t, env(base_dir=tmp_path))
    assert out.system_prompt == "NEW"
    assert out.snapshot == {"systemPrompt": {"\u0000rendered": "NEW", "\u0000includeVersion": "2"}}


def test_a_frozen_template_output_without_include_is_reused() -> None:
    t = make("{% if true %}{{ current_date }}{% endif %}", snapshot={"systemPrompt": {"\u0000rendered": "FROZEN"}})
    assert system_of(t) == "FROZEN"


def test_editing_a_variable_value_invalidates_its_frozen_values_and_template_outputs() -> None:
    t = make("{{ g }}", custom={"g": "one"}, messages=[user("m1", "{% if true %}{{ g }}{% endif %}")])
    F.apply_snapshot(t, render_thread(t, env()).snapshot)
    V.set_text_variable(t, "g", "two")
    out = render_thread(t, env())
    assert out.system_prompt == "two"
    assert out.message_texts["m1"] == ["two"]


def test_frozen_values_of_a_variable_that_was_deleted_still_apply() -> None:
    t = make("{{ g }}", snapshot={"systemPrompt": {"g": "kept"}})
    assert system_of(t) == "kept"


def test_env_snapshot_replaces_the_stored_one() -> None:
    t = make("{{ g }}", custom={"g": "fresh"}, snapshot={"systemPrompt": {"g": "stored"}})
    assert system_of(t, snapshot={}) == "fresh"
    assert system_of(t, snapshot={"systemPrompt": {"g": "given"}}) == "given"


def test_render_does_not_change_the_thread_and_apply_gives_the_model_view() -> None:
    t = make("{{ g }}", custom={"g": "Hi"}, messages=[user("m1", "say {{ g }}")])
    before = serialize_thread(t)
    out = render_thread(t, env())
    model_view = out.apply(t)
    assert serialize_thread(t) == before
    assert model_view.context.systemPrompt == "Hi"
    assert model_view.messages[0].content[0].text == "say Hi"


def test_a_thread_without_texts_renders_empty() -> None:
    out = render_thread(thread_from_data({"title": "t"}), RenderEnv())
    assert out.system_prompt == "" and out.message_texts == {} and out.snapshot is None


def test_typed_variable_model_objects_are_accepted() -> None:
    t = make("{{ when }}")
    V.set_typed_variable(t, "when", Variable(type="currentDate", format="iso-date"))
    assert system_of(t) == "2026-07-12"


def test_relative_paths_resolve_against_the_working_directory_variable(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("rules", encoding="utf-8")
    t = make('{% if exists("AGENTS.md") %}{{@include("AGENTS.md")}}{% endif %}|{{ doc }}',
             variables={"current_working_directory": {"type": "workingDirectory", "value": str(tmp_path)},
                        "doc": {"type": "file", "value": "AGENTS.md"}})
    assert system_of(t) == "rules|rules"


def test_templates_resolve_only_the_variables_they_use() -> None:
    skills = FakeSkills()
    t = make("{% if true %}ok{% endif %}",
             variables={"s": {"type": "skills", "skillNames": ["missing"], "format": "xml"}})
    assert system_of(t, skills=skills) == "ok"
    assert skills.calls == 0


def test_a_template_using_a_variable_that_fails_to_resolve_leaves_it_as_written() -> None:
    t = make("{% if true %}[{{ s }}]{% endif %}", variables={"s": {"type": "skills", "skillNames": ["missing"], "format": "xml"}})
    assert system_of(t) == "[{{s}}]"


def test_headless_workflow_render_record_save_reopen_is_byte_stable(tmp_path: Path) -> None:
    from llmspace.core.workspace import Workspace

    ws = Workspace(tmp_path / "ws", use_os_trash=False)
    t = make("Today {{ current_date }}.", custom={"tone": "dry"},
             messages=[user("m1", "Be {{ tone }}. {% if true %}{{ current_date }}{% endif %}")])
    t.title = "flow"
    ws.save("flow.json", t)
    opened = ws.open("flow.json")
    first = render_thread(opened, env())
    F.apply_snapshot(opened, first.snapshot)  # what the run loop does when it records the run
    ws.save("flow.json", opened)
    raw = (tmp_path / "ws" / "flow.json").read_text(encoding="utf-8")
    assert '"snapshot": {\n      "variables": {\n        "systemPrompt": {\n          "current_date": "2026-07-12, Sunday"' in raw
    again = ws.open("flow.json")
    later = render_thread(again, env(now=NOW + timedelta(days=30)))
    assert (later.system_prompt, later.message_texts) == (first.system_prompt, first.message_texts)
    assert later.snapshot == first.snapshot == {
        "systemPrompt": {"current_date": "2026-07-12, Sunday"},
        "message:m1:text": {"\u0000rendered": "Be dry. 2026-07-12, Sunday"},
    }
    F.on_message_edited(again, "m1")
    assert render_thread(again, env(now=NOW + timedelta(days=30))).message_texts["m1"] == ["Be dry. 2026-08-11, Tuesday"]


_TEXT = st.text(alphabet="ab {}.|%@()[]-x\n'\"", max_size=60)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_any_text_renders_without_crashing_and_simple_texts_stay_byte_for_byte(text: str) -> None:
    from llmspace.core.templating.templates import is_template

    out = render_thread(make(text, messages=[user("m1", text)]), env())
    if not is_template(text):
        assert out.system_prompt == text and out.message_texts["m1"] == [text]
    elif out.problems:
        assert out.system_prompt == text


def test_names_left_as_written_in_authored_texts_are_reported_once_per_place() -> None:
    t = make("{{ stray }} {{ stray }} {{ doc }}", variables={"doc": {"type": "file", "value": ""}},
             messages=[user("m1", "{{ stray }}"),
                       {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "{{ stray }}"}],
                        "toolCalls": [{"id": "c1", "input": {"name": "f", "arguments": {}},
                                       "output": {"content": [{"type": "text", "text": "{{ stray }}"}]}}]}])
    out = render_thread(t, env())
    assert out.warnings == [
        "Unknown variable {{ stray }} in the system prompt was sent as written.",
        'Variable "doc" in the system prompt has no value; {{ doc }} was sent as written.',
        "Unknown variable {{ stray }} in message 1 (user, id m1) was sent as written.",
    ]
    assert [p.kind for p in out.problems] == ["unresolved"] * 3


def test_json_numbers_print_as_javascript_does() -> None:
    t = make("{{ data }}|{% if true %}{{ data.a }} {{ data.b }}{% endif %}",
             variables={"data": {"type": "json", "value": '{"a": 1.0, "b": 2.5, "c": 1e3}'}})
    assert system_of(t) == '{\n  "a": 1,\n  "b": 2.5,\n  "c": 1000\n}|1 2.5'
