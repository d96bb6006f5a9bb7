"""promptfoo files run with promptfoo's semantics against a loopback model and judge: the
files of tests/fixtures/promptfoo give, case by case, the verdict promptfoo gives
(`metadata.promptfoo`); `defaultTest`, CSV `__expected` columns, `{{var}}` in criteria, 0–1
rubric thresholds, list variables, `$ref`, `assert-set`, tests from files; the description
names the case everywhere; a key llmspace does not run stops `eval new` and `eval run` with
exit 2 naming the key and the file, before any call."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from llmspace.cli import main
from llmspace.errors import UserFacingError
from llmspace.evals.dataset import load_dataset
from tests.evals.support import Oracle, write_thread
from tests.support.llm_server import LoopbackLLM, configure_provider

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "promptfoo"
FIXTURE_FILES = ["default_test.yaml", "array_vars.yaml", "templates_and_sets.yaml", "expected.csv", "rubric.yaml",
                 "files/promptfooconfig.yaml"]


def _setup(home: Path, srv: LoopbackLLM, dataset: str, **fields: Any) -> Path:
    """The thread quiz.json ({{question}}), the fixtures copied to workspace/pf and quiz.eval.yaml."""
    configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
    write_thread(home)
    ws = home / "workspace"
    shutil.copytree(FIXTURES, ws / "pf", dirs_exist_ok=True)
    spec = {"thread": "quiz.json", "dataset": dataset, "models": ["loop/good"], "judge": "loop/judge", **fields}
    path = ws / "quiz.eval.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def _rows(home: Path) -> dict[str, dict[str, Any]]:
    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    lines = (folder / "results.jsonl").read_text("utf-8").splitlines()
    return {row["case"]: row for row in map(json.loads, lines)}


@pytest.fixture
def judged_oracle(oracle: Oracle) -> Oracle:
    oracle.judge_answer = '{"score": 4, "reason": "Mostly right."}'  # 0.75 on promptfoo's scale
    return oracle


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_every_case_of_a_promptfoo_shaped_file_gets_the_verdict_promptfoo_gives(home, srv, judged_oracle, name, capsys):
    path = _setup(home, srv, f"pf/{name}")
    expected = {c.id: c.values["promptfoo"] for c in load_dataset(home / "workspace" / "pf" / name).cases}

    code = main(["eval", "run", str(path)])

    err = capsys.readouterr().err
    assert code in (0, 1), err
    got = {case: row["status"] for case, row in _rows(home).items()}
    assert got == expected
    assert code == (0 if set(expected.values()) == {"pass"} else 1)


def test_criteria_are_rendered_with_the_cases_variables_before_the_judge_sees_them(home, srv, judged_oracle, capsys):
    path = _setup(home, srv, "pf/rubric.yaml")
    assert main(["eval", "run", str(path)]) == 1, capsys.readouterr().err
    prompts = [p for (m, p), _n in judged_oracle.calls.items() if m == "judge"]
    assert prompts and all('The answer to "What is 1 + 2?" is a correct arithmetic result' in p for p in prompts)
    assert not any("{{" in p for p in prompts)
    err = capsys.readouterr().err
    assert "judge `provider` names openai/gpt-4o-mini" in err  # the judge it names is not configured: said so


def test_descriptions_name_the_cases_in_results_junit_and_identical_tests_stay_separate(home, srv, oracle, capsys):
    path = _setup(home, srv, "pf/array_vars.yaml")
    assert main(["eval", "run", str(path)]) == 1, capsys.readouterr().err
    rows = _rows(home)
    assert {"every sum is four", "every sum is four (2)", "every sum is four (3)", "same test twice",
            "same test twice (2)"} <= set(rows)
    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    junit = (folder / "junit.xml").read_text("utf-8")
    assert 'name="none is two' in junit and "same test twice (2)" in junit
    assert oracle.model_calls("good") >= 4  # the two identical tests are two cells (the second a cache hit or a call)


def _refusal(home: Path, srv: LoopbackLLM, oracle: Oracle, text: str, capsys: pytest.CaptureFixture[str]) -> str:
    path = _setup(home, srv, "pf/bad.yaml")
    (home / "workspace" / "pf" / "bad.yaml").write_text(text, encoding="utf-8")
    assert main(["eval", "run", str(path)]) == 2
    run_err = capsys.readouterr().err
    path.unlink()
    assert main(["eval", "new", "quiz.json", "--dataset", str(home / "workspace" / "pf" / "bad.yaml"),
                 "--models", "loop/good"]) == 2
    new_err = capsys.readouterr().err
    assert not path.exists() and not (home / "evals").exists()
    assert sum(oracle.calls.values()) == 0
    assert "bad.yaml" in run_err and "bad.yaml" in new_err
    return run_err + new_err


@pytest.mark.parametrize("key, text", [
    ("contextTransform", "tests:\n  - vars: {question: hi}\n    assert:\n      - {type: equals, value: ok, contextTransform: output}\n"),
    ("storeOutputAs", "tests:\n  - vars: {question: hi}\n    options: {storeOutputAs: answer}\n"),
    ("rubricPrompt", "tests:\n  - vars: {question: hi}\n    assert:\n      - {type: g-eval, value: ok, rubricPrompt: Grade it}\n"),
    ("scenarios", "scenarios: []\ntests:\n  - vars: {question: hi}\n"),
    ("bogus", "tests:\n  - vars: {question: hi}\n    bogus: 1\n"),
    ("__prefix", None),
    ("promptfoo:anthropic:prompt-improver", ("defaultTest:\n  provider: {id: 'promptfoo:anthropic:prompt-improver'}\n"
                                             "tests:\n  - vars: {question: hi}\n")),
    ("assertScoringFunction", "defaultTest:\n  assertScoringFunction: file://score.js\ntests:\n  - vars: {question: hi}\n"),
])
def test_a_key_llmspace_does_not_run_stops_eval_new_and_eval_run_naming_it(home, srv, oracle, key, text, capsys):
    if text is None:  # a CSV column
        path = _setup(home, srv, "pf/bad.csv")
        (home / "workspace" / "pf" / "bad.csv").write_text("question,__expected,__prefix\nhi,ok,Say:\n", encoding="utf-8")
        assert main(["eval", "run", str(path)]) == 2
        err = capsys.readouterr().err
        assert key in err and "bad.csv" in err and sum(oracle.calls.values()) == 0
        return
    err = _refusal(home, srv, oracle, text, capsys)
    assert err.count(key) >= 2


def test_an_undefined_variable_and_an_empty_cell_are_the_empty_string_with_a_note(home, srv, oracle, capsys):
    path = _setup(home, srv, "pf/blank.csv")
    write_thread(home, text="{{question}}{{suffix}}")
    (home / "workspace" / "pf" / "blank.csv").write_text(
        "question,topic,__expected\nWhat is 1 + 1?,,2\n", encoding="utf-8")
    assert main(["eval", "run", str(path)]) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert "'suffix'" in err and "empty string" in err  # the thread's {{suffix}}: no test defines it
    assert "1 empty cell(s) of blank.csv" in err
    assert oracle.model_calls("good") == 1 and ("good", "What is 1 + 1?") in oracle.calls
    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    notes = json.loads((folder / "summary.json").read_text("utf-8"))["notes"]
    assert any("'suffix'" in n for n in notes) and any("empty cell" in n for n in notes)


def test_test_files_outside_the_configurations_folder_are_refused(home, srv, oracle, capsys):
    path = _setup(home, srv, "pf/files/promptfooconfig.yaml")
    (home / "workspace" / "pf" / "files" / "promptfooconfig.yaml").write_text("tests: file://../expected.csv\n", encoding="utf-8")
    assert main(["eval", "run", str(path)]) == 2
    assert "outside the test file's folder" in capsys.readouterr().err
    assert sum(oracle.calls.values()) == 0


def test_settings_that_do_not_change_verdicts_load_with_a_note_and_code_file_values_stay_references(tmp_path):
    (tmp_path / "check.js").write_text("module.exports = () => true;\n", encoding="utf-8")
    (tmp_path / "promptfooconfig.yaml").write_text(
        "derivedMetrics: [{name: m, value: a + b}]\ntracing: {enabled: true}\nnunjucksFilters: {up: up.js}\n"
        "tests:\n  - vars: {q: hi}\n    assert:\n      - {type: javascript, value: 'file://check.js:run'}\n"
        "      - {type: contains, value: hi, metric: greeting}\n"
        "      - {type: llm-rubric, value: polite, config: {temperature: 0}}\n", encoding="utf-8")
    data = load_dataset(tmp_path / "promptfooconfig.yaml")
    (case,) = data.cases
    assert case.assertions[0].value == "file://check.js:run"  # the code host reads it; not inlined as text
    notes = "\n".join(data.notes)
    assert all(k in notes for k in ("derivedMetrics", "tracing", "nunjucksFilters", "metric", "assertion `config`"))


def test_a_csv_config_column_naming_no_expected_column_sets_nothing_and_says_so(tmp_path):
    (tmp_path / "tests.csv").write_text("q,__expected1,__config:__expected:threshold,__config:__expected1:threshold\n"
                                        "hi,llm-rubric: polite about {{q}},0.9,0.5\n", encoding="utf-8")
    data = load_dataset(tmp_path / "tests.csv")
    (case,) = data.cases
    (rubric,) = case.assertions
    assert rubric.value == "polite about hi" and rubric.threshold == 3.0  # 0.5 on promptfoo's scale
    assert any("__config:__expected:threshold" in n and "sets nothing" in n for n in data.notes)


def test_eval_new_on_a_promptfoo_configuration_says_what_runs_differently_and_the_file_runs(home, srv, oracle, capsys):
    path = _setup(home, srv, "pf/default_test.yaml")
    path.unlink()
    assert main(["eval", "new", "quiz.json", "--dataset", str(home / "workspace" / "pf" / "default_test.yaml"),
                 "--models", "loop/good"]) == 0
    err = capsys.readouterr().err
    assert "`prompts` of default_test.yaml: not used: the thread is the prompt" in err and "`providers`" in err
    assert "assert: []" in path.read_text("utf-8")  # the file's own checks, no added `contains`
    assert main(["eval", "run", str(path)]) == 1
    assert set(_rows(home)) == {"default answer is right", "default answer is wrong", "own answer overrides the default",
                                "threshold lets one of two pass"}


@pytest.mark.parametrize("where, provider, says", [
    ("defaultTest", "{id: 'promptfoo:anthropic:prompt-improver'}", "--variants"),
    ("defaultTest", "openai:gpt-4.1", "models:"),
    ("test", "promptfoo:anthropic:prompt-improver", "--variants"),
    ("test", "{id: openai:gpt-4.1-mini}", "models:"),
])
def test_a_provider_that_answers_or_drives_the_tests_is_refused_saying_what_to_use_instead(tmp_path, where, provider, says):
    text = (f"defaultTest:\n  provider: {provider}\ntests:\n  - vars: {{q: hi}}\n" if where == "defaultTest"
            else f"tests:\n  - vars: {{q: hi}}\n    provider: {provider}\n")
    (tmp_path / "promptfooconfig.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(UserFacingError) as caught:
        load_dataset(tmp_path / "promptfooconfig.yaml")
    message = f"{caught.value} {caught.value.hint}"
    assert "promptfooconfig.yaml" in message and ("defaultTest" if where == "defaultTest" else "test 1") in message
    assert says in message and "nothing was run" in message


def test_filters_the_older_name_of_nunjucks_filters_loads_with_a_note_and_a_filtered_value_is_refused(tmp_path):
    (tmp_path / "promptfooconfig.yaml").write_text(
        "filters: {allcaps: ./allcaps.js}\ntests:\n  - vars: {q: hi}\n    assert: [{type: contains, value: hi}]\n", encoding="utf-8")
    data = load_dataset(tmp_path / "promptfooconfig.yaml")
    assert len(data.cases) == 1 and any("`filters`" in n and "nunjucksFilters" in n for n in data.notes)
    (tmp_path / "promptfooconfig.yaml").write_text(
        "filters: {allcaps: ./allcaps.js}\ntests:\n  - vars: {q: hi}\n    assert: [{type: contains, value: '{{q | allcaps}}'}]\n",
        encoding="utf-8")
    with pytest.raises(UserFacingError, match="filters"):
        load_dataset(tmp_path / "promptfooconfig.yaml")


def test_outputs_which_promptfoo_ignores_loads_with_a_note_and_extension_hooks_are_refused_saying_why(tmp_path):
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text("outputs:\n  - type: csv\ntests:\n  - vars: {q: hi}\n", encoding="utf-8")
    data = load_dataset(path)
    assert len(data.cases) == 1 and any("`outputs`" in n and "promptfoo ignores it" in n for n in data.notes)
    path.write_text("extensions: ['file://hooks.py:extension_hook']\ntests:\n  - vars: {q: hi}\n", encoding="utf-8")
    with pytest.raises(UserFacingError, match=r"extensions.*add tests"):
        load_dataset(path)


def test_a_tests_options_timeout_loads_with_a_note_naming_the_providers_timeouts(tmp_path):
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text("defaultTest:\n  options: {timeout: 90000}\ntests:\n  - vars: {q: hi}\n  - vars: {q: ho}\n", encoding="utf-8")
    data = load_dataset(path)
    assert len(data.cases) == 2
    assert any(n.startswith("options.timeout: accepted, not applied") and "readTimeout" in n for n in data.notes)


def test_a_file_glob_variable_gives_one_case_per_file_of_the_folder_and_nothing_outside_it(tmp_path):
    folder = tmp_path / "pf"
    (folder / "articles").mkdir(parents=True)
    for name, text in (("b.txt", "Second article."), ("a.txt", "First article."), ("c.md", "Third article.")):
        (folder / "articles" / name).write_text(text, encoding="utf-8")
    (folder / "articles" / "sub").mkdir()  # a folder the glob matches is not a case
    path = folder / "promptfooconfig.yaml"
    path.write_text("tests:\n  - vars: {article: 'file://articles/*', tone: [short, long]}\n"
                    "    assert: [{type: not-contains, value: 'AI language model'}]\n", encoding="utf-8")
    cases = load_dataset(path).cases
    assert sorted((c.values["article"], c.values["tone"]) for c in cases) == [
        (text, tone) for text in ("First article.", "Second article.", "Third article.") for tone in ("long", "short")]
    assert len({c.id for c in cases}) == 6
    (tmp_path / "secret.txt").write_text("outside", encoding="utf-8")
    path.write_text("tests:\n  - vars: {article: 'file://../secre*.txt'}\n", encoding="utf-8")
    with pytest.raises(UserFacingError, match="outside the test file's folder"):
        load_dataset(path)
    path.write_text("tests:\n  - vars: {article: 'file://missing/*.txt'}\n", encoding="utf-8")
    with pytest.raises(UserFacingError, match="no file matches"):
        load_dataset(path)


def test_a_csv_row_with_more_cells_than_columns_is_refused_naming_the_row_and_the_quoting_fix(tmp_path):
    (tmp_path / "places.csv").write_text("location,__expected\nAntarctica,icontains: ice\nPetra, Jordan,icontains: rock\n",
                                         encoding="utf-8")
    with pytest.raises(UserFacingError) as caught:
        load_dataset(tmp_path / "places.csv")
    text = str(caught.value)
    assert "places.csv row 2 has more cells than there are columns" in text and "'icontains: rock'" in text
    assert "Quote a cell" in text
    (tmp_path / "places.csv").write_text('location,__expected\n"Petra, Jordan",icontains: rock\n', encoding="utf-8")
    assert load_dataset(tmp_path / "places.csv").cases[0].values["location"] == "Petra, Jordan"


@pytest.mark.parametrize("key, says", [("dataset", "tests: file://FILE.csv"), ("filter", "filter the rows")])
def test_test_keys_promptfoo_does_not_know_are_refused_saying_promptfoo_does_not_read_them(tmp_path, key, says):
    (tmp_path / "promptfooconfig.yaml").write_text(
        f"tests:\n  - {key}: file://logs.csv\n    assert: [{{type: not-contains, value: 'I am an AI'}}]\n", encoding="utf-8")
    with pytest.raises(UserFacingError) as caught:
        load_dataset(tmp_path / "promptfooconfig.yaml")
    assert f"`{key}`" in str(caught.value) and "promptfoo does not read" in str(caught.value) and says in str(caught.value)


def test_non_empty_which_is_not_a_promptfoo_type_is_refused_naming_what_to_write_instead(tmp_path):
    from llmspace.evals.assertion_types import refusal_reason

    (tmp_path / "promptfooconfig.yaml").write_text("tests:\n  - vars: {q: hi}\n    assert: [{type: non-empty, value: true}]\n",
                                                   encoding="utf-8")
    assert set(load_dataset(tmp_path / "promptfooconfig.yaml").unsupported) == {"non-empty"}
    assert "not a promptfoo assertion type" in refusal_reason("non-empty") and "not-equals" in refusal_reason("non-empty")
