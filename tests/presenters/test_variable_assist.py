"""Variable help without Tk: highlight spans, the `{{` completion (prefix, filter, what is
inserted) and the hover text, resolved as the run renders it or saying why it cannot be."""

from __future__ import annotations

from datetime import datetime

import pytest

from llmspace.core.model import Thread
from llmspace.core.templating.resolution import RenderEnv
from llmspace.presenters.variable_assist import (
    HOVER_CHARS,
    completion_edit,
    completion_label,
    completion_prefix,
    cut,
    filter_completions,
    highlight_spans,
    hover_query,
    parse_reference,
    resolve_hover,
    typed_open_braces,
)


def thread(variables=None, custom=None, snapshot=None, system="") -> Thread:
    ctx: dict = {"systemPrompt": system}
    if variables is not None:
        ctx["variables"] = variables
    if custom is not None:
        ctx["variableVariants"] = {"active": "default", "variants": {"default": custom}}
    if snapshot is not None:
        ctx["snapshot"] = {"variables": snapshot}
    return Thread.model_validate({"title": "t", "context": ctx})


def hover(t: Thread, written: str, place="systemPrompt", trusted=True, **env) -> str:
    q = hover_query(t, written, place, trusted)
    assert q is not None
    return resolve_hover(q, RenderEnv(**env))


def test_highlight_spans_find_variables_and_tags_and_stay_linear_on_stray_braces():
    text = "Hi {{ name }} {% if x %}yes{% endif %} {{ unclosed"
    assert highlight_spans(text) == [("var", 3, 13), ("tag", 14, 24), ("tag", 27, 38)]
    assert highlight_spans("no braces") == []
    assert highlight_spans("{{" * 20000 + "x}}") == [("var", 39997, 40003)]


@pytest.mark.parametrize(("before", "prefix"), [
    ("Dear {{", ""), ("Dear {{cu", "cu"), ("{{ cur_2", "cur_2"), ("{{name}} and {{na", "na"),
    ("{{name}}", None), ("{{na me", None), ("no braces", None), ("{{ @inc", None), ("{", None)])
def test_the_completion_prefix_is_the_name_typed_after_an_open_pair_of_braces(before, prefix):
    assert completion_prefix(before) == prefix


def test_completions_are_filtered_by_prefix_first_then_by_contained_text():
    items = [("available_skills", ""), ("current_date", ""), ("user_date", ""), ("Customer", "")]
    assert [n for n, _ in filter_completions(items, "")] == ["available_skills", "current_date", "user_date", "Customer"]
    assert [n for n, _ in filter_completions(items, "cu")] == ["current_date", "Customer"]
    assert [n for n, _ in filter_completions(items, "date")] == ["current_date", "user_date"]
    assert filter_completions(items, "zzz") == []


def test_picking_a_name_replaces_the_typed_prefix_and_closes_the_braces_once():
    assert completion_edit("cu", "current_date", "") == (2, "current_date}}")
    assert completion_edit("", "x", " and more") == (0, "x}}")
    assert completion_edit("cu", "current_date", "}} rest") == (2, "current_date")
    assert completion_label("n", "a\nlong   hint " * 10).startswith("n — a long hint")
    assert completion_label("n", "a" * 80).endswith("…") and completion_label("n", "") == "n"


def test_references_are_names_expressions_or_includes():
    assert parse_reference("{{ name }}") == ("name", "name")
    assert parse_reference("{{profile.city}}") == ("expression", "profile")
    assert parse_reference("{{ items | join(', ') }}") == ("expression", "items")
    assert parse_reference("{{@include('a.md')}}") == ("include", "")
    assert parse_reference("{{ 1 + 2 }}") is None and parse_reference("plain") is None


def test_hover_shows_text_date_and_pretty_json_values():
    t = thread(variables={"current_date": {"type": "currentDate", "format": "iso-date"},
                          "cfg": {"type": "json", "value": '{"n":1}'}},
               custom={"customer": "Acme Corp"})
    assert hover(t, "{{customer}}") == "customer · text\nAcme Corp"
    assert hover(t, "{{ current_date }}", now=datetime(2024, 5, 1, 12).astimezone()) == "current_date · date\n2024-05-01"
    assert hover(t, "{{cfg}}") == 'cfg · JSON\n{\n  "n": 1\n}'
    assert hover(t, "{{cfg.n}}").startswith("cfg · JSON (used in {{cfg.n}})\n{")


def test_hover_says_why_a_value_cannot_be_resolved():
    t = thread(variables={"cfg": {"type": "json", "value": "{broken"}, "none": {"type": "json", "value": " "},
                          "doc": {"type": "file", "value": "missing.txt"}, "nofile": {"type": "file", "value": ""},
                          "current_working_directory": {"type": "workingDirectory", "value": "/nonexistent-dir"}},
               custom={"blank": "  "})
    assert "Unknown variable" in hover(t, "{{stranger}}") and "{{stranger}} is sent as written" in hover(t, "{{stranger}}")
    assert 'Variable "blank" is empty.' in hover(t, "{{blank}}") and "refused" in hover(t, "{{blank}}")
    assert "Not valid JSON" in hover(t, "{{cfg}}") and "{broken" in hover(t, "{{cfg}}")
    assert "JSON variable is empty" in hover(t, "{{none}}")
    assert "File not found" in hover(t, "{{doc}}") and "/nonexistent-dir/missing.txt" in hover(t, "{{doc}}")
    assert "No file chosen" in hover(t, "{{nofile}}")
    assert "sent as written" in hover(t, "{{customer}}", place="message:a1:text", trusted=False)
    assert "included when the thread runs" in hover(t, "{{@include('x.md')}}")


def test_hover_reads_a_file_variable_relative_to_the_working_directory(tmp_path):
    (tmp_path / "notes.txt").write_text("from the file", "utf-8")
    t = thread(variables={"doc": {"type": "file", "value": "notes.txt"},
                          "current_working_directory": {"type": "workingDirectory", "value": str(tmp_path)}})
    assert hover(t, "{{doc}}") == "doc · file\nfrom the file"


def test_a_long_value_is_cut_with_an_ellipsis():
    long = "x" * (HOVER_CHARS + 50)
    assert hover(thread(custom={"big": long}), "{{big}}") == "big · text\n" + "x" * HOVER_CHARS + "…"
    assert cut("\n".join(str(i) for i in range(30)), lines=3) == "0\n1\n2…"
    assert cut("short") == "short"


def test_a_value_frozen_at_the_last_run_is_what_the_run_uses_again():
    t = thread(custom={"customer": "New Co"}, snapshot={"systemPrompt": {"customer": "Old Co"}})
    text = hover(t, "{{customer}}")
    assert text.startswith("customer · text\nOld Co\n") and "frozen" in text
    assert hover(t, "{{customer}}", place="message:m1:text") == "customer · text\nNew Co"


def test_the_hover_query_is_a_copy_that_later_edits_do_not_change():
    t = thread(custom={"customer": "Acme"})
    q = hover_query(t, "{{customer}}", "systemPrompt", True)
    t.context.variableVariants.variants["default"]["customer"] = "Changed"
    assert resolve_hover(q) == "customer · text\nAcme"
    assert hover_query(t, "{{ 1 + 1 }}", "systemPrompt", True) is None


@pytest.mark.parametrize(("before", "typed", "opens"), [
    ("Hi {{", 1, True),  # the second brace just typed
    ("Hi {{", 2, True),
    ("Hi {{cus", 4, True),  # typed faster than the UI ran: the braces are in the typed text
    ("Hi {{cus", 3, False),  # only the name typed after an older `{{` (e.g. after Escape)
    ("Hi {{", 0, False),  # nothing typed (the cursor moved there)
    ("Hi {", 1, False),
    ("Hi {{x}} ", 1, False),
])
def test_the_list_opens_on_inserted_text_that_completes_an_open_pair_of_braces(before, typed, opens):
    assert typed_open_braces(before, typed) is opens
