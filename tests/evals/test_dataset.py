"""Datasets: CSV, JSON Lines, JSON arrays and YAML read into cases; ids by content hash;
promptfoo test files with `file://` values kept inside their folder and unsupported
assertion types listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.errors import UserFacingError
from llmspace.evals.dataset import load_dataset, unsupported_message
from tests.support.limited import billion_laughs, billion_laughs_flow, run_limited

ROWS = [{"id": "a", "question": "What is 1 + 1?", "expected": "2", "topic": "math"},
        {"question": "Name a colour.", "assert": [{"type": "icontains", "value": "red"}], "threshold": 0.5}]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json", "yaml"])
def test_every_format_gives_the_same_cases(tmp_path, fmt):
    import yaml

    if fmt == "csv":
        text = ('id,question,expected,topic,assert,threshold\n'
                'a,What is 1 + 1?,2,math,,\n'
                ',Name a colour.,,,"[{""type"": ""icontains"", ""value"": ""red""}]",0.5\n')
    elif fmt == "jsonl":
        text = "".join(json.dumps(r) + "\n" for r in ROWS)
    elif fmt == "json":
        text = json.dumps(ROWS)
    else:
        text = yaml.safe_dump(ROWS)
    cases = load_dataset(_write(tmp_path, f"cases.{fmt}", text)).cases

    assert cases[0].id == "a"
    assert cases[0].expected == "2" and cases[0].values["topic"] == "math"
    assert cases[0].variables_for({"question"}) == {"question": "What is 1 + 1?"}
    assert cases[1].id.startswith("h") and len(cases[1].id) == 12
    assert cases[1].assertions[0].type == "icontains" and cases[1].threshold == 0.5


def test_an_id_from_content_does_not_move_when_a_row_is_inserted_before(tmp_path):
    rows = [{"q": "one"}, {"q": "two"}]
    before = [c.id for c in load_dataset(_write(tmp_path, "a.json", json.dumps(rows))).cases]
    after = [c.id for c in load_dataset(_write(tmp_path, "b.json", json.dumps([{"q": "zero"}, *rows]))).cases]
    assert after[1:] == before


def test_identical_rows_without_ids_are_refused_naming_the_rows(tmp_path):
    with pytest.raises(UserFacingError, match="rows 1 and 3 have the same id"):
        load_dataset(_write(tmp_path, "c.jsonl", '{"q": "x"}\n{"q": "y"}\n{"q": "x"}\n'))


def test_a_bad_assert_cell_names_its_row(tmp_path):
    with pytest.raises(UserFacingError, match=r"cases\.csv row 2: unknown assertion type 'webhook'"):
        load_dataset(_write(tmp_path, "cases.csv", 'q,assert\nx,\ny,"[{""type"": ""webhook""}]"\n'))


def test_a_missing_dataset_and_an_unknown_format_are_clear_errors(tmp_path):
    with pytest.raises(UserFacingError, match="does not exist"):
        load_dataset(tmp_path / "nope.csv")
    with pytest.raises(UserFacingError, match="datasets are CSV"):
        load_dataset(_write(tmp_path, "cases.txt", "x"))


PROMPTFOO = """\
- description: capital
  vars:
    question: What is the capital of France?
    context: file://ctx/france.txt
  assert:
    - type: icontains
      value: paris
    - type: webhook
      value: http://localhost:9/grade
- vars:
    question: Say hi
  assert:
    - type: not-contains
      value: bye
    - type: moderation
"""


def test_promptfoo_tests_are_read_with_file_values_and_unsupported_types_listed(tmp_path):
    (tmp_path / "ctx").mkdir()
    (tmp_path / "ctx" / "france.txt").write_text("France is in Europe.", encoding="utf-8")
    data = load_dataset(_write(tmp_path, "tests.yaml", PROMPTFOO))

    first, second = data.cases
    assert first.values == {"question": "What is the capital of France?", "context": "France is in Europe."}
    assert first.description == "capital"
    assert [a.label for a in first.assertions] == ["icontains 'paris'"]
    assert second.assertions[0].negate and second.assertions[0].type == "contains"
    message = unsupported_message(data)
    assert message is not None and "webhook" in message and "moderation" in message and first.id in message


def test_a_promptfoo_file_value_outside_the_test_files_folder_is_refused(tmp_path):
    inner = tmp_path / "suite"
    inner.mkdir()
    (tmp_path / "secret.txt").write_text("s3cret", encoding="utf-8")
    text = "- vars:\n    question: file://../secret.txt\n"
    with pytest.raises(UserFacingError, match="outside the test file's folder"):
        load_dataset(_write(inner, "tests.yaml", text))


def test_a_promptfoo_config_with_a_tests_key_is_read(tmp_path):
    text = json.dumps({"prompts": ["{{q}}"], "tests": [{"vars": {"q": "hi"}, "assert": [{"type": "equals", "value": "hi"}]}]})
    cases = load_dataset(_write(tmp_path, "promptfooconfig.json", text)).cases
    assert cases[0].values == {"q": "hi"} and cases[0].assertions[0].type == "equals"


@pytest.mark.parametrize("name, text", [
    ("laughs.yaml", "- question: boom\n" + billion_laughs("  ")),
    ("laughs.csv", f'question,assert\nboom,"[{billion_laughs_flow()}]"\n'),
], ids=["yaml-dataset", "csv-assert-cell"])
def test_yaml_aliases_that_expand_a_billion_times_are_refused_with_a_clear_error(tmp_path, name, text):
    path = _write(tmp_path, name, text)
    code = ("from pathlib import Path\nfrom llmspace.errors import UserFacingError\nfrom llmspace.evals.dataset import load_dataset\n"
            f"try:\n    load_dataset(Path({str(path)!r}))\nexcept UserFacingError as exc:\n    print(exc.message)\n")
    done = run_limited(code, memory_mb=1024, timeout=120)
    assert done.returncode == 0, done.stderr[-1500:]
    assert "aliases (*name) expand to more than 10,000,000" in done.stdout and name in done.stdout
    assert done.seconds < 60


def test_yaml_anchors_that_share_an_assertion_are_read(tmp_path):
    text = ("- vars: {question: one}\n  assert: [&same {type: icontains, value: paris}]\n"
            "- vars: {question: two}\n  assert: [*same]\n")
    first, second = load_dataset(_write(tmp_path, "tests.yaml", text)).cases
    assert first.assertions == second.assertions and first.assertions[0].value == "paris"


def test_a_yaml_alias_inside_its_own_anchor_is_refused(tmp_path):
    with pytest.raises(UserFacingError, match="recursive alias"):
        load_dataset(_write(tmp_path, "loop.yaml", "- question: &q [*q]\n"))


def test_a_csv_cell_over_131072_characters_is_read_and_one_over_32_mb_is_a_clear_error(tmp_path):
    big = "x" * 200_000
    (case,) = load_dataset(_write(tmp_path, "big.csv", f"id,question\na,{big}\n")).cases
    assert case.values["question"] == big
    huge = _write(tmp_path, "huge.csv", "id,question\na,short\nb," + "y" * (32 * 1024 * 1024 + 1) + "\n")
    with pytest.raises(UserFacingError, match=r"huge\.csv line 3: a cell is larger than 33,554,432 characters"):
        load_dataset(huge)
