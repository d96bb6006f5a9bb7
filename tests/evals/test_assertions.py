"""Every assertion type of `llmspace eval` passes and fails on the outputs it should, in its
plain and `not-` forms; weights, thresholds and the refusals made before a run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llmspace.errors import UserFacingError
from llmspace.evals.assertions import Observation, case_passes, case_score, check, parse_assertion
from tests.support.limited import run_limited

JSON_OUT = '{"name": "Ada", "age": 36}'
SCHEMA = {"type": "object", "required": ["name", "age"], "properties": {"age": {"type": "integer"}}}


def _obs(output: str = "The answer is 42.", **kw: Any) -> Observation:
    base: dict[str, Any] = {"tool_calls": (("lookup", {"word": "cat", "lang": "en"}),), "latency_ms": 120.0, "cost": 0.002,
                            "output_tokens": 30, "expected": "42", "vars": {"question": "6 × 7?", "n": 3}}
    base.update(kw)
    return Observation(output=output, **base)


CASES: list[tuple[dict[str, Any], Observation, Observation]] = [
    ({"type": "equals", "value": "The answer is 42."}, _obs(), _obs("the answer is 42.")),
    ({"type": "equals"}, _obs("42"), _obs("43")),  # no value: the case's expected
    ({"type": "equals", "value": {"name": "Ada", "age": 36}}, _obs(JSON_OUT), _obs('{"name": "Ada"}')),
    ({"type": "contains", "value": "42"}, _obs(), _obs("no idea")),
    ({"type": "contains"}, _obs(), _obs("forty-two")),
    ({"type": "icontains", "value": "THE ANSWER"}, _obs(), _obs("no idea")),
    ({"type": "contains-any", "value": ["41", "42"]}, _obs(), _obs("40")),
    ({"type": "contains-any", "value": "x, 42"}, _obs(), _obs("40")),
    ({"type": "contains-all", "value": ["answer", "42"]}, _obs(), _obs("42")),
    ({"type": "starts-with", "value": "The"}, _obs(), _obs("So, the answer")),
    ({"type": "regex", "value": r"\b\d+\.$"}, _obs(), _obs("forty-two")),
    ({"type": "is-json"}, _obs(JSON_OUT), _obs("name: Ada")),
    ({"type": "is-json"}, _obs("```json\n" + JSON_OUT + "\n```"), _obs("```\nnot json\n```")),
    ({"type": "is-json", "value": SCHEMA}, _obs(JSON_OUT), _obs('{"name": "Ada", "age": "old"}')),
    ({"type": "json-schema", "value": SCHEMA}, _obs(JSON_OUT), _obs('{"age": 3}')),
    ({"type": "tool-called", "value": "lookup"}, _obs(), _obs(tool_calls=())),
    ({"type": "tool-called", "value": {"name": "lookup", "arguments": {"word": "cat"}}}, _obs(),
     _obs(tool_calls=(("lookup", {"word": "dog"}),))),
    ({"type": "no-tool-called"}, _obs(tool_calls=()), _obs()),
    ({"type": "no-tool-called", "value": "delete"}, _obs(), _obs(tool_calls=(("delete", {}),))),
    ({"type": "max-latency", "value": 500}, _obs(), _obs(latency_ms=900.0)),
    ({"type": "max-cost", "value": 0.01}, _obs(), _obs(cost=0.05)),
    ({"type": "max-tokens", "value": 50}, _obs(), _obs(output_tokens=80)),
    ({"type": "template", "value": "output | length < 200"}, _obs(), _obs("x" * 300)),
    ({"type": "template", "value": "expected in output and vars.n == 3"}, _obs(), _obs("41")),
]


@pytest.mark.parametrize(("raw", "good", "bad"), CASES, ids=[f"{c[0]['type']}-{i}" for i, c in enumerate(CASES)])
def test_each_assertion_type_passes_and_fails_and_its_not_form_inverts_it(raw, good, bad):
    a = parse_assertion(raw, "test")
    assert check(a, good).passed, check(a, good).reason
    failed = check(a, bad)
    assert not failed.passed and failed.reason
    negated = parse_assertion({**raw, "type": "not-" + raw["type"]}, "test")
    assert not check(negated, good).passed
    assert check(negated, bad).passed


def test_a_template_the_sandbox_refuses_fails_the_check_with_the_reason():
    a = parse_assertion({"type": "template", "value": "output.__class__.__mro__"}, "t")
    result = check(a, _obs())
    assert not result.passed and "template error" in result.reason


def test_a_template_that_loops_too_long_is_stopped_by_the_sandbox_bounds():
    a = parse_assertion({"type": "template", "value": "range(100000) | map('string') | join | length > 0 and "
                                                       "(range(100000) | map('string') | join) * 1000 != ''"}, "t")
    result = check(a, _obs())
    assert not result.passed and "template error" in result.reason


@pytest.mark.parametrize(("raw", "message"), [
    ({"type": "webhook"}, "unknown assertion type"),
    ({"type": "contains-any"}, "needs a value"),
    ({"type": "regex", "value": "("}, "does not compile"),
    ({"type": "json-schema", "value": {"type": 12}}, "not a valid JSON Schema"),
    ({"type": "max-cost", "value": "cheap"}, "needs a number"),
    ({"type": "template", "value": "output |"}, "not valid"),
    ({"type": "not-llm-rubric", "value": "x"}, "no not- form"),
    ({"type": "contains", "value": "x", "wieght": 2}, "unknown key"),
    ({"type": "contains", "weight": -1}, "non-negative"),
])
def test_a_bad_assertion_is_refused_before_the_run(raw, message):
    with pytest.raises(UserFacingError, match=message):
        parse_assertion(raw, "cases.csv row 3")


def test_weights_and_a_case_threshold_decide_the_case():
    checks = [check(parse_assertion({"type": "contains", "value": "42", "weight": 3}, "t"), _obs()),
              check(parse_assertion({"type": "contains", "value": "zzz", "weight": 1}, "t"), _obs())]
    assert case_score(checks) == 0.75
    assert not case_passes(checks, None)  # default: every assertion passes
    assert case_passes(checks, 0.75)
    assert not case_passes(checks, 0.8)
    assert case_passes([], None) and case_score([]) == 1.0


EVIL = "^(a|aa)+$"
STUCK = "a" * 60 + "!"  # EVIL tries fib(60) ways to split this before giving up, in `re` and `regex` alike


def _check_in_child(raw: dict[str, Any], output: str) -> dict[str, Any]:
    """`check(parse_assertion(raw), output)` in a child interpreter (a regex that holds the
    GIL for ever would freeze this test process too), within a deadline."""
    code = ("import json, sys\nfrom llmspace.evals.assertions import Observation, check, parse_assertion\n"
            f"c = check(parse_assertion({raw!r}, 'test'), Observation(output={output!r}))\n"
            "print(json.dumps(c.to_data()))\n")
    done = run_limited(code, memory_mb=1024, timeout=60)
    assert done.returncode is not None, f"the check still ran after {done.seconds:.0f} s"
    assert done.returncode == 0, done.stderr[-1500:]
    assert done.seconds < 30
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("raw, output", [
    ({"type": "regex", "value": EVIL}, STUCK),
    ({"type": "json-schema", "value": {"type": "string", "pattern": EVIL}}, json.dumps(STUCK)),
    ({"type": "is-json", "value": {"type": "object", "patternProperties": {EVIL: {"type": "integer"}}}}, json.dumps({STUCK: 1})),
    ({"type": "json-schema", "value": {"type": "object", "patternProperties": {EVIL: True}, "additionalProperties": False}},
     json.dumps({STUCK: 1})),
    ({"type": "json-schema", "value": {"type": "object", "patternProperties": {EVIL: True}, "unevaluatedProperties": False}},
     json.dumps({STUCK: 1})),
    ({"type": "json-schema", "value": {"type": "object", "propertyNames": {"pattern": EVIL}}}, json.dumps({STUCK: 1})),
], ids=["regex", "pattern", "patternProperties", "additionalProperties", "unevaluatedProperties", "propertyNames"])
def test_a_regex_that_backtracks_for_ever_fails_its_check_in_about_a_second_with_a_reason(raw, output):
    result = _check_in_child(raw, output)
    assert result["pass"] is False
    assert f"the regex /{EVIL}/ took longer than 1 s" in result["reason"], result


def test_a_time_limited_regex_still_matches_and_a_not_regex_inverts_a_time_out_into_no_pass():
    assert check(parse_assertion({"type": "regex", "value": r"^\d+$"}, "t"), _obs("42")).passed
    assert check(parse_assertion({"type": "json-schema", "value": {"patternProperties": {"^x": {"type": "integer"}},
                                                                   "additionalProperties": False}}, "t"), _obs('{"xa": 1}')).passed
    bad = check(parse_assertion({"type": "json-schema", "value": {"patternProperties": {"^x": {"type": "integer"}},
                                                                  "additionalProperties": False}}, "t"), _obs('{"y": 1}'))
    assert not bad.passed and "'y' does not match any of the regexes: '^x'" in bad.reason
    result = _check_in_child({"type": "not-regex", "value": EVIL}, STUCK)
    assert result["pass"] is False and "took longer than 1 s" in result["reason"]
    result = _check_in_child({"type": "regex", "value": "(a+)+$"}, "a" * 40 + "!")  # the issue's: `regex` sees through it
    assert result == {"assertion": "regex '(a+)+$'", "pass": False, "weight": 1.0, "reason": "output does not match /(a+)+$/"}


def test_json_nested_100000_deep_fails_is_json_with_a_reason_instead_of_a_recursion_error():
    deep = "[" * 100_000 + "]" * 100_000
    for raw in ({"type": "is-json"}, {"type": "json-schema", "value": {"type": "array"}}):
        result = check(parse_assertion(raw, "t"), _obs(deep))
        assert not result.passed
        assert "output is not JSON the checks can read (nested more than 254 levels deep" in result.reason
