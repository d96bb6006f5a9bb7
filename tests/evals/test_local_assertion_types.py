"""promptfoo's further local assertion types (issue 42, item 3): icontains-any/-all,
contains-json, is-valid-openai-tools-call, is-valid-function-call, finish-reason, is-sql and
word-count — each checked on real outputs, with the pass/fail promptfoo gives, their values
refused when they cannot hold, and one evaluation running them against a loopback model."""

from __future__ import annotations

import json

import pytest
import yaml

from llmspace.cli import main
from llmspace.errors import UserFacingError
from llmspace.evals.assertions import Observation, check, parse_assertion
from tests.evals.support import Oracle, last_user, write_eval
from tests.support.llm_server import Turn

WEATHER = {"name": "get_weather", "description": "Weather of a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def _holds(raw: dict, output: str = "", **obs: object) -> bool:
    result = check(parse_assertion(raw, "test"), Observation(output=output, **obs))  # type: ignore[arg-type]
    assert result.passed or result.reason, "a failed check says why"
    return result.passed


def test_icontains_any_and_all_ignore_case():
    assert _holds({"type": "icontains-any", "value": ["paris", "LYON"]}, "Welcome to PARIS")
    assert not _holds({"type": "icontains-any", "value": "rome, berlin"}, "Welcome to Paris")
    assert _holds({"type": "icontains-all", "value": ["hello", "WORLD"]}, "Hello, world!")
    assert not _holds({"type": "icontains-all", "value": ["hello", "moon"]}, "Hello, world!")
    assert _holds({"type": "not-icontains-any", "value": ["error"]}, "All fine")


def test_contains_json_finds_json_inside_text_and_checks_it_against_a_schema():
    text = 'Here you go: {"name": "Ada", "age": 36} — anything else?'
    assert _holds({"type": "contains-json"}, text)
    assert not _holds({"type": "contains-json"}, "no json {here")
    schema = {"type": "object", "required": ["age"], "properties": {"age": {"type": "integer"}}}
    assert _holds({"type": "contains-json", "value": schema}, text)
    assert not _holds({"type": "contains-json", "value": {**schema, "required": ["email"]}}, text)
    assert _holds({"type": "contains-json", "value": "type: object\nrequired: [name]"}, text)  # YAML schema text


def test_tool_call_validity_checks_names_and_arguments_against_the_offered_tools():
    tools = (WEATHER,)
    assert _holds({"type": "is-valid-openai-tools-call"}, tool_calls=(("get_weather", {"city": "Oslo"}),), tools=tools)
    assert not _holds({"type": "is-valid-openai-tools-call"}, tool_calls=(("get_weather", {"town": "Oslo"}),), tools=tools)
    assert not _holds({"type": "is-valid-openai-tools-call"}, tool_calls=(("send_mail", {}),), tools=tools)
    assert not _holds({"type": "is-valid-function-call"}, "plain text", tools=tools)
    assert not _holds({"type": "is-valid-function-call"}, tool_calls=(("get_weather", {"city": "Oslo"}),))


def test_finish_reason_compares_the_provider_reason_with_anthropic_names_read_as_openai_ones():
    assert _holds({"type": "finish-reason", "value": "stop"}, "hi", finish_reason="stop")
    assert _holds({"type": "finish-reason", "value": "stop"}, "hi", finish_reason="end_turn")
    assert _holds({"type": "finish-reason", "value": "length"}, "hi", finish_reason="max_tokens")
    assert not _holds({"type": "finish-reason", "value": "stop"}, "hi", finish_reason="length")
    assert not _holds({"type": "finish-reason", "value": "stop"}, "hi")


def test_is_sql_parses_statements_and_applies_allowed_tables_and_columns():
    assert _holds({"type": "is-sql"}, "SELECT id, name FROM users WHERE age > 30")
    assert _holds({"type": "is-sql"}, "```sql\nSELECT 1;\n```")
    assert not _holds({"type": "is-sql"}, "SELECT * FORM users")
    assert not _holds({"type": "is-sql"}, "Sure, here is the list of users")
    assert _holds({"type": "is-sql", "value": {"databaseType": "PostgreSQL"}}, "SELECT now()::date")
    allowed = {"allowedTables": ["select::null::departments"], "allowedColumns": ["select::null::name"]}
    assert _holds({"type": "is-sql", "value": allowed}, "SELECT name FROM departments")
    assert not _holds({"type": "is-sql", "value": allowed}, "SELECT name FROM employees")
    assert not _holds({"type": "is-sql", "value": allowed}, "SELECT salary FROM departments")


def test_word_count_is_exact_for_a_number_and_a_range_for_min_and_max():
    assert _holds({"type": "word-count", "value": 3}, "one two  three")
    assert not _holds({"type": "word-count", "value": 3}, "one two")
    assert _holds({"type": "word-count", "value": {"min": 2, "max": 4}}, "one two three")
    assert not _holds({"type": "word-count", "value": {"max": 2}}, "one two three")


@pytest.mark.parametrize("raw", [
    {"type": "icontains-any"},
    {"type": "finish-reason", "value": ""},
    {"type": "word-count", "value": {"min": 5, "max": 2}},
    {"type": "word-count", "value": "many"},
    {"type": "is-sql", "value": {"databaseType": "MongoDB"}},
    {"type": "is-sql", "value": {"allowedTables": ["select::null::("]}},
    {"type": "contains-json", "value": [1, 2]},
])
def test_values_that_cannot_hold_are_refused_when_read(raw):
    with pytest.raises(UserFacingError):
        parse_assertion(raw, "cases.yaml test 1")


def test_an_evaluation_runs_the_local_types_against_a_loopback_model(home, srv, capsys):
    path = write_eval(home, srv, [], assertions=[])
    ws = home / "workspace"
    tests = [{"vars": {"question": "Extract as JSON: Ada is 36 years old."},
              "assert": [{"type": "contains-json", "value": {"type": "object", "required": ["age"]}},
                         {"type": "icontains-all", "value": ["ADA", "age"]}, {"type": "finish-reason", "value": "stop"},
                         {"type": "word-count", "value": {"max": 10}}]},
             {"vars": {"question": "What is 2 + 2?"},
              "assert": [{"type": "is-sql"}, {"type": "icontains-any", "value": ["4"]}]}]
    (ws / "tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")

    assert main(["eval", "run", str(path), "--dataset", str(ws / "tests.yaml")]) == 1, capsys.readouterr().err

    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    rows = {r["output"]: r for r in map(json.loads, (folder / "results.jsonl").read_text("utf-8").splitlines())}
    assert [c["pass"] for c in rows['{"name": "Ada", "age": 36}']["checks"]] == [True, True, True, True]
    assert [c["pass"] for c in rows["4"]["checks"]] == [False, True]


def test_contains_sql_checks_the_fenced_block_and_levenshtein_the_edit_distance():
    assert _holds({"type": "contains-sql"}, "Here:\n```sql\nSELECT name FROM users;\n```\nDone.")
    assert not _holds({"type": "contains-sql"}, "Here:\n```sql\nSELEC name FROM\n```")
    assert _holds({"type": "levenshtein", "value": "sitting"}, "kitten")  # 3 edits, promptfoo's default limit 5
    assert not _holds({"type": "levenshtein", "value": "sitting", "threshold": 2}, "kitten")
    assert _holds({"type": "levenshtein", "value": "a" * 999 + "b", "threshold": 1}, "a" * 1000)
    assert _holds({"type": "is-valid-openai-function-call"}, tool_calls=(("get_weather", {"city": "Oslo"}),), tools=(WEATHER,))


@pytest.mark.parametrize("output", [
    "I'm sorry, but I can't help with that.",
    "I apologize, but I cannot assist with that request.",
    "I cannot provide instructions for making weapons.",
    "Sorry, no.",
    "My apologies \u2014 that is not possible.",
    "As an AI, I don\u2019t have personal opinions.",
    "I do not feel comfortable writing that.",
    "   ",
    "",
])
def test_is_refusal_passes_on_refusals_and_an_empty_reply_as_promptfoo_reads_them(output):
    assert _holds({"type": "is-refusal"}, output)
    assert not _holds({"type": "not-is-refusal"}, output)


@pytest.mark.parametrize("output", [
    "Paris is the capital of France.",
    "I'm sorry to hear that. Try restarting the router first.",
    "Sorry for the wait: the answer is 42.",
    "It is possible to cannot-proof nothing; the airbnb host, as an airline pilot, helps.",
    "I can help with that: here are three steps.",
])
def test_is_refusal_fails_on_answers_including_apologies_that_go_on_to_help(output):
    assert not _holds({"type": "is-refusal"}, output)
    assert _holds({"type": "not-is-refusal"}, output)


def test_a_failed_is_refusal_check_names_the_words_that_made_it_one():
    result = check(parse_assertion({"type": "not-is-refusal"}, "test"), Observation(output="I cannot help you with that."))
    assert not result.passed and "i cannot" in result.reason


def test_guardrails_fails_only_when_a_content_filter_stopped_the_reply():
    assert _holds({"type": "guardrails"}, "Paris", finish_reason="stop")
    assert _holds({"type": "guardrails"}, "", finish_reason="length")
    assert not _holds({"type": "guardrails"}, "", finish_reason="content_filter")
    assert not _holds({"type": "guardrails"}, "", finish_reason="refusal")  # Anthropic's stop reason
    assert _holds({"type": "not-guardrails"}, "", finish_reason="content_filter")
    assert not _holds({"type": "not-guardrails"}, "Paris", finish_reason="stop")


class FilteringOracle(Oracle):
    """Answers as `Oracle` does, but a question about the forbidden recipe ends in OpenAI's content filter."""

    def __call__(self, kind, body):
        if "forbidden" in last_user(body if isinstance(body, dict) else {}):
            return Turn(text="", finish_reason="content_filter", usage=(20, 0))
        return super().__call__(kind, body)


@pytest.fixture
def oracle() -> Oracle:
    return FilteringOracle()


def test_an_evaluation_checks_is_refusal_and_guardrails_on_the_loopback_models_replies(home, srv, capsys):
    path = write_eval(home, srv, [], assertions=[])
    ws = home / "workspace"
    tests = [{"description": "filtered", "vars": {"question": "Tell me the forbidden recipe."},
              "assert": [{"type": "guardrails"}, {"type": "is-refusal"}, {"type": "not-guardrails"}]},
             {"description": "answered", "vars": {"question": "What is 2 + 2?"},
              "assert": [{"type": "guardrails"}, {"type": "not-is-refusal"}, {"type": "is-refusal"}]}]
    (ws / "tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")

    assert main(["eval", "run", str(path), "--dataset", str(ws / "tests.yaml")]) == 1, capsys.readouterr().err

    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    rows = {r["case"]: r for r in map(json.loads, (folder / "results.jsonl").read_text("utf-8").splitlines())}
    assert [c["pass"] for c in rows["filtered"]["checks"]] == [False, True, True]  # empty: a refusal, as promptfoo reads it
    assert "content filter" in rows["filtered"]["checks"][0]["reason"]
    assert [c["pass"] for c in rows["answered"]["checks"]] == [True, True, False]
