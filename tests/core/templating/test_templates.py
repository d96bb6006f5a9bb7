"""The template path (core/templating/templates.py) and its sandbox (core/templating/sandbox.py)."""

from __future__ import annotations

from typing import Any

import pytest

from llmspace.core.templating.templates import (
    MAX_INCLUDE_COUNT,
    MAX_INCLUDE_DEPTH,
    TemplateError,
    TemplateRenderer,
    is_template,
    referenced_names,
    rename_in_template,
    wrap_json,
)


def renderer(variables: dict[str, Any] | None = None, files: dict[str, str] | None = None,
             reads: list[str] | None = None, exists_calls: list[str] | None = None) -> TemplateRenderer:
    files = files or {}

    def load(path: str) -> str | None:
        if reads is not None:
            reads.append(path)
        return files.get(path)

    def exists(path: str) -> bool:
        if exists_calls is not None:
            exists_calls.append(path)
        return path in files

    return TemplateRenderer(variables or {}, load, exists)


def render(text: str, variables: dict[str, Any] | None = None, files: dict[str, str] | None = None) -> str:
    return renderer(variables, files).render(text)


# -- dispatch ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "{% for x in y %}", '{{@include("x")}}', "{{ @include(x) }}", "{{ user.name }}",
    "{{ items[0] }}", "{{ price | round }}", "{{ include(x) }}",
])
def test_block_tags_macros_member_access_filters_and_calls_take_the_template_path(text: str) -> None:
    assert is_template(text)


@pytest.mark.parametrize("text", [
    "{{ current_date }}", "a { b } {{c}} text", '{"a": {{ "nested" }} }', "plain text", "{{ }}",
])
def test_plain_variables_and_stray_braces_take_the_simple_path(text: str) -> None:
    assert not is_template(text)


# -- syntax --------------------------------------------------------------------------------

def test_if_else_treats_an_empty_string_as_false() -> None:
    assert render("{% if pro %}PRO{% else %}FREE{% endif %}", {"pro": ""}) == "FREE"


def test_for_loop_exposes_loop_index() -> None:
    assert render('{% for t in ["a","b","c"] %}{{ loop.index }}:{{ t }} {% endfor %}') == "1:a 2:b 3:c "


def test_set_raw_filters_comparisons_and_inline_if_work() -> None:
    text = ("{% set n = 3 %}{{ n * 2 }}|{% raw %}{{ keep }}{% endraw %}|{{ name | upper }}|"
            "{{ items | join(', ') }}|{{ 'yes' if n > 2 else 'no' }}|{{ 'a' in name }}|{{ missing | default('d') }}")
    out = render(text, {"name": "ada", "items": wrap_json(["x", "y"])})
    assert out == "6|{{ keep }}|ADA|x, y|yes|true|{{missing}}"


def test_for_else_and_key_value_iteration_over_a_json_object() -> None:
    out = render("{% for k, v in data.items() %}{{ k }}={{ v }};{% endfor %}{% for x in [] %}x{% else %}empty{% endfor %}",
                 {"data": wrap_json({"a": 1, "b": 2})})
    assert out == "a=1;b=2;empty"


def test_text_outside_tags_keeps_its_trailing_newline() -> None:
    assert render("{% if true %}x{% endif %}\n\n") == "x\n\n"


def test_output_is_not_html_escaped() -> None:
    assert render("{% if true %}{{ v }}{% endif %}", {"v": '<a> & "b"'}) == '<a> & "b"'


def test_malformed_template_raises_with_the_line() -> None:
    with pytest.raises(TemplateError, match="line 2"):
        render("ok\n{% for x in y %}oops")


# -- unknown names -------------------------------------------------------------------------

def test_known_variables_substitute_and_unknown_names_stay_literal() -> None:
    out = render("{% if true %}{{ current_date }} / {{ mystery }}{% endif %}", {"current_date": "2026-07-20"})
    assert out == "2026-07-20 / {{mystery}}"


def test_unknown_names_are_falsy_in_conditions() -> None:
    assert render("{% if mystery %}yes{% else %}no{% endif %}") == "no"


def test_loop_and_set_locals_win_over_sentinels() -> None:
    assert render("{% for x in ['a'] %}{{ x }}{% endfor %}{% set y = 'b' %}{{ y }}") == "ab"


# -- include -------------------------------------------------------------------------------

def test_include_inlines_file_contents() -> None:
    assert render('before {{@include("~/x.md")}} after', files={"~/x.md": "FILE"}) == "before FILE after"


def test_include_of_a_missing_file_yields_nothing() -> None:
    assert render('a{{@include("nope.md")}}b') == "ab"


def test_include_with_an_empty_argument_renders_nothing() -> None:
    assert render("a{{@include()}}b{% if true %}{% endif %}") == "ab"


def test_include_renders_included_content_recursively() -> None:
    files = {"outer.md": 'Hi {{ name }} {{@include("inner.md")}}', "inner.md": "[nested]"}
    assert render('{{@include("outer.md")}}', {"name": "Ada"}, files) == "Hi Ada [nested]"


def test_include_path_can_be_an_expression() -> None:
    files = {"/w/AGENTS.md": "rules"}
    assert render('{{@include(cwd ~ "/AGENTS.md")}}', {"cwd": "/w"}, files) == "rules"


def test_a_file_that_is_not_a_valid_template_is_included_verbatim() -> None:
    files = {"bad.md": "literal {% oops and {{ x"}
    assert render('[{{@include("bad.md")}}]', files=files) == "[literal {% oops and {{ x]"


def test_self_include_terminates_at_the_depth_guard() -> None:
    reads: list[str] = []
    r = renderer(files={"loop.md": 'x{{@include("loop.md")}}'}, reads=reads)
    out = r.render('{{@include("loop.md")}}')
    assert len(reads) <= MAX_INCLUDE_DEPTH + 1
    assert out == "x" * MAX_INCLUDE_DEPTH


def test_at_most_a_hundred_includes_per_render() -> None:
    reads: list[str] = []
    r = renderer(files={"a.md": "a"}, reads=reads)
    out = r.render('{% for i in range(150) %}{{@include("a.md")}}{% endfor %}')
    assert out == "a" * MAX_INCLUDE_COUNT
    assert len(reads) == MAX_INCLUDE_COUNT


# -- exists --------------------------------------------------------------------------------

def test_exists_is_true_for_a_readable_file_and_false_otherwise() -> None:
    out = render('{{ exists("a.md") }} {% if exists("b.md") %}B{% else %}noB{% endif %}', files={"a.md": ""})
    assert out == "true noB"


def test_exists_is_memoised_per_render() -> None:
    calls: list[str] = []
    r = renderer(files={"a.md": "x"}, exists_calls=calls)
    r.render('{{ exists("a.md") }}{{ exists("a.md") }}')
    r.render('{% if exists("a.md") %}y{% endif %}')
    assert calls == ["a.md"]


def test_exists_inside_quoted_text_is_just_text() -> None:
    assert render('{{ "exists(x)" }}{% if true %}{% endif %}') == "exists(x)"


# -- JSON values ---------------------------------------------------------------------------

JSON = {"user": wrap_json({"name": "Ada", "active": True}), "items": wrap_json(["a", "b", "c"]),
        "flags": wrap_json({"beta": True}), "data": wrap_json({"items": ["x", "y"]})}


def test_json_field_access() -> None:
    assert render("Hi {{ user.name }}", JSON) == "Hi Ada"


def test_json_array_iteration() -> None:
    assert render("{% for i in items %}{{ i }}{% endfor %}", JSON) == "abc"


def test_json_keys_win_over_dict_methods() -> None:
    assert render("{% for i in data.items %}{{ i }}{% endfor %}", JSON) == "xy"


def test_json_nested_boolean_in_a_condition() -> None:
    assert render("{% if flags.beta %}beta{% else %}stable{% endif %}", JSON) == "beta"


def test_json_missing_field_renders_empty() -> None:
    assert render("[{{ user.missing }}]", JSON) == "[]"


def test_unknown_top_level_name_next_to_json_stays_literal() -> None:
    assert render("{% if true %}{{ user.name }} {{ stray }}{% endif %}", JSON) == "Ada {{stray}}"


def test_a_whole_json_object_prints_as_pretty_json() -> None:
    assert render("{% if true %}{{ flags }}{% endif %}", JSON) == '{\n  "beta": true\n}'


# -- sandbox -------------------------------------------------------------------------------

@pytest.mark.parametrize("attack", [
    "{{ ''.__class__.__mro__ }}",
    "{{ ''.__class__ }}",
    "{{ cycler.__init__.__globals__ }}",
    "{{ ().__class__.__base__.__subclasses__() }}",
    "{{ [].__class__.__base__.__subclasses__ }}",
    "{{ joiner.__init__.__globals__['os'] }}",
    "{{ lipsum.__globals__ }}",
    "{{ user.__class__.__init__ }}",
    "{{ ''['__class__'] }}",
    "{{ ('a' * 100000) * 100000 }}",
    "{{ 10 ** 100000000 }}",
])
def test_sandbox_escape_attempts_are_refused(attack: str) -> None:
    with pytest.raises(TemplateError, match=r"sandbox|unsafe|not allowed|too"):
        render(attack, JSON)


def test_a_sandbox_refusal_inside_an_include_is_refused_too() -> None:
    with pytest.raises(TemplateError):
        render('{{@include("evil.md")}}', files={"evil.md": "{{ ''.__class__.__mro__ }}"})


# -- scanning helpers ----------------------------------------------------------------------

def test_referenced_names_skip_locals_filters_attributes_and_strings() -> None:
    text = "{% for x in items %}{{ x | upper }}{{ user.name }}{{ 'quoted' }}{% endfor %}{{ exists(p) }}"
    assert [n for n, _s, _e in referenced_names(text)] == ["items", "user", "p"]
    _name, start, end = referenced_names(text)[0]
    assert text[start:end] == "items"


def test_rename_in_template_renames_identifiers_only() -> None:
    text = '{% if user %}{{ user.name }} "user" {{ a.user }} {{ "user" }}{% endif %} user'
    assert rename_in_template(text, "user", "person") == \
        '{% if person %}{{ person.name }} "user" {{ a.user }} {{ "user" }}{% endif %} user'


def test_unknown_dotted_and_indexed_names_stay_as_written() -> None:
    out = render('{% if true %}{{ user.name }} {{ rows[0] }} {{ cfg["k"].v }}{% endif %}')
    assert out == '{{user.name}} {{rows[0]}} {{cfg["k"].v}}'


def test_private_attributes_of_unknown_names_are_still_refused() -> None:
    with pytest.raises(TemplateError):
        render("{{ stray.__class__.__mro__ }}")


# -- work limits (tool results may take the template path) -----------------------------------

@pytest.mark.parametrize("attack", [
    "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
    "{% set s = 'x' * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}",
    "{% for c in 'ab' recursive %}{{ loop('ab') }}{% endfor %}",
    "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}",
    "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
    "{{ 'x' | center(1000000000) }}",
    "{{ 'x'.center(1000000000) }}",
    "{{ '%999999999s' | format(1) }}",
    "{{ '%999999999s' % 1 }}",
    "{{ '{:>999999999}'.format(1) }}",
    "{% for i in range(100000) %}" + "y" * 1000 + "{% endfor %}",
    "{% set big = 'x' * 100000 %}{{ big | replace('x', big) }}",
    "{% set big = 'x' * 100000 %}{{ big.replace('x', big) }}",
    "{% set big = 'x' * 100000 %}{{ range(100000) | join(big) }}",
    "{% set big = 'x' * 100000 %}{{ big.join(big) }}",
    "{% set big = 'x' * 100000 %}{{ range(100000) | map('string') | join(big) }}",
    "{% set lines = '\n' * 100000 %}{{ lines | indent(100000) }}",
])
def test_runaway_templates_are_refused(attack: str) -> None:
    with pytest.raises(TemplateError, match=r"too|not allowed|loops more"):
        render(attack)


def test_ordinary_loops_filters_and_big_numbers_as_values_still_work() -> None:
    out = render("{% for i in range(3) %}{{ i }}{% endfor %}|{{ 5000000 | string }}|{{ 'ab' ~ 'cd' }}|"
                 "{{ 'x' | center(5) }}|{{ '%05d' | format(42) }}|{{ [1, 2] + [3] }}|{{ 'a' + 'b' }}|{{ 7 % 3 }}|"
                 "{{ 'a-b' | replace('-', '+') }}|{{ [1, 2] | join(', ') }}|{{ 'a\nb' | indent(2) }}|{{ ', '.join(['x', 'y']) }}")
    assert out == "012|5000000|abcd|  x  |00042|[1, 2, 3]|ab|1|a+b|1, 2|a\n  b|x, y"


def test_lipsum_is_not_available() -> None:
    assert render("{% if true %}{{ lipsum }}{% endif %}") == "{{lipsum}}"


def test_work_limits_apply_to_each_text_separately() -> None:
    r = renderer()
    for _ in range(3):
        assert r.render("{% for i in range(60000) %}{% endfor %}done") == "done"
