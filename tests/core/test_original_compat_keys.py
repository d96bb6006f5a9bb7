"""Compatibility with the original app: frozen template outputs live under "\\u0000rendered"
(older files of ours used " rendered" and are migrated on load), and an invalid
`available_skills` format falls back to xml."""

from __future__ import annotations

from dataclasses import dataclass

from llmspace.core.templating import frozen_values as F
from llmspace.core.templating import variables as V
from llmspace.core.templating.render import render_thread
from llmspace.core.templating.resolution import RenderEnv
from llmspace.core.threadio import parse_thread, serialize_thread, thread_from_data


def _thread(snapshot: dict | None = None, system: str = "{% if true %}{{ who }}{% endif %}"):
    ctx = {"systemPrompt": system, "variableVariants": {"active": "default", "variants": {"default": {"who": "Ada"}}},
           "messages": [{"id": "m1", "role": "user", "content": [
               {"type": "text", "text": "plain"}, {"type": "text", "text": "{% if true %}B{% endif %}"}]}]}
    if snapshot is not None:
        ctx["snapshot"] = {"variables": snapshot}
    return thread_from_data({"title": "t", "context": ctx})


def test_a_template_output_is_frozen_under_the_originals_nul_key() -> None:
    out = render_thread(_thread(), RenderEnv())
    assert out.snapshot == {"systemPrompt": {"\u0000rendered": "Ada"}, "message:m1:text": {"\u0000rendered:1": "B"}}
    t = _thread()
    F.apply_snapshot(t, out.snapshot)
    raw = serialize_thread(t)
    assert b'"\\u0000rendered": "Ada"' in raw and b'"\\u0000rendered:1": "B"' in raw
    assert b"\x00" not in raw  # NUL is escaped in the JSON text, never written raw
    assert parse_thread(raw).context.snapshot.variables["systemPrompt"] == {"\u0000rendered": "Ada"}


def test_a_file_written_by_the_original_app_reuses_its_frozen_output_and_round_trips() -> None:
    t = _thread({"systemPrompt": {"\u0000rendered": "FROZEN"}})
    assert render_thread(t, RenderEnv()).system_prompt == "FROZEN"
    raw = serialize_thread(t)
    assert serialize_thread(parse_thread(raw)) == raw


def test_the_legacy_space_key_is_read_and_migrated_so_the_next_save_writes_the_nul_key() -> None:
    t = _thread({"systemPrompt": {"who": "x", " rendered": "OLD"}, "message:m1:text": {" rendered:1": "OLD1"}})
    assert F.snapshot_variables(t) == {"systemPrompt": {"who": "x", "\u0000rendered": "OLD"},
                                       "message:m1:text": {"\u0000rendered:1": "OLD1"}}
    out = render_thread(t, RenderEnv())
    assert out.system_prompt == "OLD" and out.message_texts["m1"] == ["plain", "OLD1"]
    raw = serialize_thread(t)
    assert b'" rendered' not in raw and b'"\\u0000rendered": "OLD"' in raw
    # Key order within the place is kept.
    assert raw.index(b'"who"') < raw.index(b'"\\u0000rendered"')


def test_when_both_keys_are_present_the_originals_wins() -> None:
    t = _thread({"systemPrompt": {" rendered": "LEGACY", "\u0000rendered": "NUL"}})
    assert F.snapshot_variables(t) == {"systemPrompt": {"\u0000rendered": "NUL"}}


def test_a_legacy_key_in_a_snapshot_passed_to_render_is_read_too() -> None:
    out = render_thread(_thread(), RenderEnv(snapshot={"systemPrompt": {" rendered": "OLD"}}))
    assert out.system_prompt == "OLD"
    assert out.snapshot["systemPrompt"] == {"\u0000rendered": "OLD"}


def test_changing_a_variable_drops_frozen_outputs_under_both_keys() -> None:
    t = _thread({"systemPrompt": {"\u0000rendered": "A"}})
    t.context.snapshot.variables["message:m1:text"] = {" rendered:1": "B", "who": "x"}  # set after load: not migrated
    F.on_variable_changed(t, "other")
    assert F.snapshot_variables(t) == {"message:m1:text": {"who": "x"}}


@dataclass
class _Skill:
    name: str
    description: str
    path: str


class _Skills:
    def enabled(self) -> list[_Skill]:
        return [_Skill("coder", "Writes code", "/s/coder")]


def test_an_invalid_skills_format_falls_back_to_xml_as_in_the_original() -> None:
    t = thread_from_data({"title": "t", "context": {
        "systemPrompt": "{{ s }}",
        "variables": {"s": {"type": "skills", "skillNames": [], "format": "bullets", "indent": 0}}}})
    assert V.typed_variables(t)["s"].format == "xml"
    assert render_thread(t, RenderEnv(skills=_Skills())).system_prompt == (
        '<available-skills>\n<skill name="coder" path="/s/coder">\nWrites code\n</skill>\n</available-skills>')


def test_the_default_skills_variable_still_uses_markdown_list() -> None:
    t = thread_from_data({"title": "t", "context": {"systemPrompt": "{{ available_skills }}"}})
    assert render_thread(t, RenderEnv(skills=_Skills())).system_prompt == "- **coder**: Writes code"
