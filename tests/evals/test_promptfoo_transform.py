"""promptfoo's `transform` (issue 42, item 1): a test's `options.transform` (and its older name
`postprocess`) and an assertion's `transform` run in the confined code host of `javascript` and
`python` assertions, against a loopback model — each case of tests/fixtures/promptfoo/transform.yaml
gets the verdict promptfoo gives, the judge grades the transformed output, and the keys that stay
refused still stop `eval run` before any call."""

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
from tests.evals.support import Oracle, last_user, write_thread
from tests.support.llm_server import LoopbackLLM, Turn, configure_provider

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "promptfoo"
needs_js = pytest.mark.skipif(shutil.which("node") is None and shutil.which("bun") is None, reason="no JavaScript runtime")


def _setup(home: Path, srv: LoopbackLLM, dataset: str, text: str | None = None) -> Path:
    configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
    write_thread(home)
    ws = home / "workspace"
    shutil.copytree(FIXTURES, ws / "pf", dirs_exist_ok=True)
    if text is not None:
        (ws / "pf" / dataset).write_text(text, encoding="utf-8")
    spec = {"thread": "quiz.json", "dataset": f"pf/{dataset}", "models": ["loop/good"], "judge": "loop/judge"}
    path = ws / "quiz.eval.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def _rows(home: Path) -> dict[str, dict[str, Any]]:
    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    lines = (folder / "results.jsonl").read_text("utf-8").splitlines()
    return {row["case"]: row for row in map(json.loads, lines)}


@needs_js
def test_every_transformed_case_gets_the_verdict_promptfoo_gives(home, srv, oracle, capsys):
    path = _setup(home, srv, "transform.yaml")
    expected = {c.id: c.values["promptfoo"] for c in load_dataset(home / "workspace" / "pf" / "transform.yaml").cases}

    assert main(["eval", "run", str(path)]) == 1, capsys.readouterr().err

    rows = _rows(home)
    assert {case: row["status"] for case, row in rows.items()} == expected
    thrown = json.dumps(rows["a transform that throws fails the assertion"])
    assert "the transform raised TypeError" in thrown


def test_transforms_are_kept_on_the_assertions_the_test_before_the_assertions_own():
    cases = {c.id: c for c in load_dataset(FIXTURES / "transform.yaml").cases}
    chained = cases["the assertion transform gets what the test transform gave"].assertions[0]
    assert chained.transforms == ("JSON.parse(output)", "String(output.age + 1)")
    assert cases["postprocess is the older name of transform"].assertions[0].transforms == ("output.toUpperCase()",)
    assert cases["a transformed output that does not match fails"].assertions[0].transforms == ("output + '!'",)


@needs_js
def test_the_judge_grades_the_output_the_transform_gives(home, srv, oracle: Oracle, capsys):
    oracle.judge_answer = '{"score": 4, "reason": "Loud."}'
    text = ("tests:\n  - description: shouted\n    vars: {question: Say hi}\n    options: {transform: output.toUpperCase()}\n"
            "    assert:\n      - {type: llm-rubric, value: is written in capitals}\n")
    path = _setup(home, srv, "shout.yaml", text)

    assert main(["eval", "run", str(path)]) == 0, capsys.readouterr().err

    prompts = [p for (m, p), _n in oracle.calls.items() if m == "judge"]
    assert len(prompts) == 1 and "## The model's answer\n\nOK" in prompts[0]


@pytest.mark.parametrize("text, words", [
    ("tests:\n  - vars: {question: hi}\n    assert:\n      - {type: equals, value: ok, transform: ''}\n", "a transform is"),
    ("tests:\n  - vars: {question: hi}\n    options: {transform: 'file://shape.rb'}\n", "not a javascript file"),
    ("tests:\n  - vars: {question: hi}\n    assert:\n      - {type: equals, value: ok, contextTransform: output}\n",
     "contextTransform"),
])
def test_a_transform_that_cannot_run_is_refused_before_any_call(home, srv, oracle, text, words, capsys):
    path = _setup(home, srv, "bad.yaml", text)
    assert main(["eval", "run", str(path)]) == 2
    err = capsys.readouterr().err
    assert words in err and "bad.yaml" in err and sum(oracle.calls.values()) == 0
    with pytest.raises(UserFacingError, match=words):
        load_dataset(home / "workspace" / "pf" / "bad.yaml")


CONTEXT_TESTS = """\
tests:
  - description: a text context
    vars: {question: "Extract as JSON: Ada is 36 years old.", context: stale context the transform replaces}
    assert:
      - {type: context-faithfulness, contextTransform: "'Ada is ' + JSON.parse(output).age + ' years old.'"}
  - description: a list of texts
    vars: {question: "Extract as JSON: Bob is 41 years old."}
    assert:
      - type: context-recall
        value: Bob is 41.
        contextTransform: |
          const data = JSON.parse(output);
          return [data.name + ' is 40 years old.', 'asked: ' + context.vars.question.slice(0, 16)];
  - description: a transform that throws
    vars: {question: "Extract as JSON: Cy is 7 years old."}
    assert:
      - {type: context-relevance, contextTransform: "output.citations.join('\\\\n')"}
"""


@needs_js
def test_context_transform_gives_the_context_types_their_context_from_the_output(home, srv, oracle: Oracle, capsys):
    asked: list[str] = []

    def respond(kind: str, body: Any) -> Any:
        system = next((m.get("content") for m in body.get("messages", []) if m.get("role") == "system"), "")
        if isinstance(system, str) and "retrieved context" in system:
            asked.append(last_user(body))
            supported = "36 years" in asked[-1] or "41 years" in asked[-1]
            return Turn(text=json.dumps({"total": 1, "count": int(supported), "reason": "read"}), usage=(40, 10))
        return oracle(kind, body)

    srv.responder = respond
    path = _setup(home, srv, "context.yaml", CONTEXT_TESTS)
    cases = {c.id: c for c in load_dataset(home / "workspace" / "pf" / "context.yaml").cases}
    assert cases["a text context"].assertions[0].context_transform == "'Ada is ' + JSON.parse(output).age + ' years old.'"

    assert main(["eval", "run", str(path)]) == 2, capsys.readouterr().err  # 2: the throwing transform is an error

    assert len(asked) == 2  # the throwing transform asks no judge
    ada = next(p for p in asked if "Ada" in p)
    assert "[Context]: Ada is 36 years old." in ada and "stale context" not in ada
    bob = next(p for p in asked if "Bob" in p)
    assert "[Context]: Bob is 40 years old.\n\nasked: Extract as JSON:\n" in bob
    rows = _rows(home)
    assert rows["a text context"]["status"] == "pass"
    assert rows["a list of texts"]["status"] == "fail"  # the context says 40, the reference 41
    assert rows["a transform that throws"]["status"] == "error"
    assert "the contextTransform raised TypeError" in json.dumps(rows["a transform that throws"])


def test_context_transform_on_a_type_without_a_context_is_refused_naming_the_key(home, srv, oracle, capsys):
    text = "tests:\n  - vars: {question: hi}\n    assert:\n      - {type: factuality, value: ok, contextTransform: output}\n"
    with pytest.raises(UserFacingError, match="`contextTransform` on 'factuality' is not run"):
        load_dataset(_setup(home, srv, "bad.yaml", text).parent / "pf" / "bad.yaml")
