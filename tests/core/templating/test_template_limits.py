"""Every template render is bounded — time, output size, integer size, list growth, loop
count — and a text past a bound stops the render with an error naming its place. Each case
here finishes in well under a second."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from llmspace.core.templating.render import render_thread
from llmspace.core.templating.resolution import RenderEnv
from llmspace.core.templating.templates import TemplateError, TemplateLimitError, TemplateRenderer
from llmspace.core.threadio import thread_from_data
from llmspace.errors import UserFacingError

FAST = 2.0  # seconds; each refusal must come much sooner than the 3 s time bound


def render(text: str, *, time_limit: float = 3.0, files: dict[str, str] | None = None) -> str:
    files = files or {}
    r = TemplateRenderer({}, files.get, lambda p: p in files, time_limit=time_limit)
    return r.render(text)


def refused(text: str, match: str, **kw: Any) -> TemplateLimitError:
    start = time.monotonic()
    with pytest.raises(TemplateLimitError, match=match) as info:
        render(text, **kw)
    assert time.monotonic() - start < FAST
    return info.value


# -- integer size ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "{{ (((10**256)**256)**256)**256 }}",
    "{{ 2 ** 20000 }}",
    "{% set ns = namespace(n=7) %}{% for i in range(60) %}{% set ns.n = ns.n * ns.n %}{% endfor %}",
    "{% set ns = namespace(n=3) %}{% for i in range(40) %}{% set ns.n = ns.n ** 2 %}{% endfor %}",
])
def test_huge_integers_are_refused_before_they_are_computed(text: str) -> None:
    refused(text, "number that is too large")


def test_ordinary_big_numbers_still_work() -> None:
    assert render("{{ 2 ** 64 }} {{ 10 ** 300 > 0 }} {{ 1.5 ** 2 }}") == "18446744073709551616 true 2.25"


# -- lists and texts that double ------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "{% set x = [1] %}{% for i in range(64) %}{{ x.extend(x) }}{% endfor %}",
    "{% set ns = namespace(l=[1]) %}{% for i in range(100) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
    "{% set ns = namespace(l=[1]) %}{% for i in range(100) %}{% set ns.l = ns.l * 2 %}{% endfor %}",
])
def test_a_loop_that_doubles_a_list_is_refused(text: str) -> None:
    refused(text, "too long")


@pytest.mark.parametrize("consume", ["{{ ns.l }}", "{{ ns.l | string | length }}", "{{ ns.l == ns.m }}",
                                     "{{ {ns.t: 1} | length }}", "{{ ns.l | tojson | length }}",
                                     "{{ 'x' ~ ns.l }}", "{{ '%s' % ns.l }}", "{{ ns.l | unique | list | length }}"])
def test_values_that_share_parts_cannot_blow_up_when_printed_compared_or_hashed(consume: str) -> None:
    build = ("{% set ns = namespace(l=[1], m=[1], t=(1,)) %}{% for i in range(100) %}"
             "{% set ns.l = [ns.l, ns.l] %}{% set ns.m = [ns.m, ns.m] %}{% set ns.t = (ns.t, ns.t) %}{% endfor %}")
    refused(build + consume, "too large to print or compare")


def test_a_captured_block_that_doubles_a_text_is_refused() -> None:
    refused('{% set ns = namespace(s="x") %}{% for i in range(64) %}{% set s2 %}{{ ns.s }}{{ ns.s }}{% endset %}'
            "{% set ns.s = s2 %}{% endfor %}", "too long|too much work")


def test_a_list_that_contains_itself_still_prints() -> None:
    assert render("{% set x = [1] %}{% set _ = x.append(x) %}{{ x }}") == "[1, [...]]"


# -- output size, loops, time -------------------------------------------------------------------

def test_the_whole_output_is_bounded() -> None:
    refused("{% set big = 'y' * 1000 %}{% for i in range(20000) %}{{ big }}{% endfor %}",
            "output that is too long")


def test_loop_iterations_are_bounded() -> None:
    refused("{% for a in range(1000) %}{% for b in range(1000) %}{% endfor %}{% endfor %}", "loops more than")


def test_wall_time_is_bounded() -> None:
    refused("{% for i in range(99999) %}{{ i * 2 }}{% endfor %}", r"takes too long \(over 0.05 seconds\)",
            time_limit=0.05)


def test_a_bound_passed_inside_an_included_file_names_the_file() -> None:
    err = refused('{{@include("loop.md")}}', "in the included file loop.md",
                  files={"loop.md": "{{ 2 ** 99999 }}"})
    assert "number that is too large" in err.reason


def test_a_bound_refusal_is_a_template_error_too() -> None:
    with pytest.raises(TemplateError):
        render("{{ 2 ** 99999 }}")


# -- through render_thread: a clear error naming the place ---------------------------------

def _thread(system: str = "ok", user_text: str = "hi", result: str | None = None) -> Any:
    messages: list[dict[str, Any]] = [{"id": "u1", "role": "user", "content": [{"type": "text", "text": user_text}]}]
    ctx: dict[str, Any] = {"systemPrompt": system, "messages": messages}
    if result is not None:
        messages.append({"id": "a1", "role": "assistant", "content": [],
                         "toolCalls": [{"id": "c1", "input": {"name": "f", "arguments": {}},
                                        "output": {"content": [{"type": "text", "text": result}]}}]})
        ctx["tools"] = [{"type": "function", "name": "f"}]
    return thread_from_data({"title": "t", "context": ctx})


@pytest.mark.parametrize("where, kw", [
    ("the system prompt", {"system": "{{ (((10**256)**256)**256)**256 }}"}),
    ("message 1 (user, id u1)", {"user_text": "{{ (((10**256)**256)**256)**256 }}"}),
    ("the result of tool call c1 in message 2 (id a1)", {"result": "{{ (((10**256)**256)**256)**256 }}"}),
])
def test_render_thread_stops_with_an_error_naming_the_place(where: str, kw: dict[str, str]) -> None:
    start = time.monotonic()
    with pytest.raises(UserFacingError) as info:
        render_thread(_thread(**kw), RenderEnv())
    assert time.monotonic() - start < FAST
    assert info.value.message == (f"Unable to render prompt variables: the template in {where} computes a number "
                                  "that is too large (over 10,000 bits); simplify it")


def test_render_thread_time_bound_is_configurable_and_named() -> None:
    t = _thread(system="{% for i in range(99999) %}{{ i }}{% endfor %}")
    with pytest.raises(UserFacingError, match=r"the template in the system prompt takes too long \(over 0.05 seconds\)"):
        render_thread(t, RenderEnv(template_seconds=0.05))


def test_large_ordinary_json_still_renders(tmp_path: Path) -> None:
    import json

    rows = [{"id": i, "name": f"n{i}", "tags": ["a", "b"]} for i in range(5000)]
    t = thread_from_data({"title": "t", "context": {
        "systemPrompt": "{% for r in rows %}{% if r.id in [1, 4999] %}{{ r.name }}{{ r.tags | join('') }};{% endif %}{% endfor %}"
                        "{{ rows | length }}",
        "variables": {"rows": {"type": "json", "value": json.dumps(rows)}}}})
    start = time.monotonic()
    assert render_thread(t, RenderEnv()).system_prompt == "n1ab;n4999ab;5000"
    assert time.monotonic() - start < FAST
