"""promptfoo's per-assertion judge (`provider` / `options.provider`) and custom judge prompt
(`rubricPrompt`), issue 42 item 1: the assertion is graded by the model its provider names
(promptfoo ids read as llmspace's PROVIDER/MODEL), asked with its own prompt rendered once with
`{{output}}`, `{{rubric}}` and the case's variables, and an llm-rubric asked that way is graded
by promptfoo's `{pass, score, reason}` answer on its 0–1 threshold. Two loopback servers, two
providers: each judge call lands on the server its assertion names."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from llmspace.cli import main
from llmspace.errors import UserFacingError
from llmspace.evals.rubric_prompt import grade_rubric, judge_model, read_rubric_prompt, render
from tests.evals.support import is_judge, last_user, write_eval
from tests.support.llm_server import LoopbackLLM, Turn, configure_provider

RUBRIC = [{"role": "system", "content": "You grade answers. Reply with JSON: pass, score, reason."},
          {"role": "user", "content": "Answer: {{output}}\nRubric: {{rubric}}\nNote: {{note}}"}]


@pytest.fixture
def second() -> Iterator[LoopbackLLM]:
    """The second judge's server: it passes an answer of 7 (score 0.9) and scores others 0.2."""
    with LoopbackLLM(models=["grader"]) as server:
        server.responder = lambda kind, body: Turn(text=json.dumps(
            {"pass": True, "score": 0.9 if "Answer: 7\n" in last_user(body) else 0.2, "reason": "checked"}))
        yield server


def _run(home: Path, srv: LoopbackLLM, second: LoopbackLLM, tests: list[dict[str, Any]], **fields: Any) -> int:
    path = write_eval(home, srv, [], assertions=[], **fields)
    configure_provider(home, second, provider_id="second", model_id="grader", make_default=False)
    ws = home / "workspace"
    (ws / "tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")
    return main(["eval", "run", str(path), "--dataset", str(ws / "tests.yaml")])


def _checks(home: Path) -> dict[str, dict[str, Any]]:
    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text("utf-8").splitlines()]
    return {r["output"]: {c["assertion"]: c for c in r["checks"]} for r in rows}


def _judge_requests(server: LoopbackLLM) -> list[Any]:
    return [r.body_json for r in server.requests if r.body_json.get("model") in ("judge", "grader")]


def test_promptfoo_provider_ids_map_to_llmspace_models_and_code_providers_are_refused_by_name():
    assert judge_model("openai:gpt-4.1-mini", "t") == "openai/gpt-4.1-mini"
    assert judge_model("openai:chat:gpt-4.1-mini", "t") == "openai/gpt-4.1-mini"
    assert judge_model({"id": "anthropic:messages:claude-sonnet-4-5", "config": {}}, "t") == "anthropic/claude-sonnet-4-5"
    assert judge_model("ollama:chat:llama3.1:8b", "t") == "ollama/llama3.1:8b"
    assert judge_model("loop/judge", "t") == "loop/judge"
    for bad in ("exec:./grade.sh", "file://grader.py", "python:grade.py", {"config": {}}):
        with pytest.raises(UserFacingError, match="judge `provider`") as err:
            judge_model(bad, "t")
        assert not isinstance(bad, str) or repr(bad) in str(err.value)


def test_a_rubric_prompt_is_read_as_text_chat_list_json_text_or_file_and_rendered_once(tmp_path):
    assert read_rubric_prompt("Grade {{output}}", tmp_path, "t") == (("user", "Grade {{output}}"),)
    chat = read_rubric_prompt(json.dumps(RUBRIC), tmp_path, "t")
    assert chat == read_rubric_prompt(RUBRIC, tmp_path, "t") and [r for r, _ in chat] == ["system", "user"]
    (tmp_path / "rubric.json").write_text(json.dumps(RUBRIC), encoding="utf-8")
    assert read_rubric_prompt("file://rubric.json", tmp_path, "t") == chat
    (tmp_path / "rubric.txt").write_text("Is {{output}} right?", encoding="utf-8")
    assert read_rubric_prompt("file://rubric.txt", tmp_path, "t") == (("user", "Is {{output}} right?"),)
    # values are someone else's text: a value holding a placeholder is inserted as it is
    assert render((("user", "{{output}} / {{note}} / {{nothing}}"),), {"output": "{{note}}", "note": "n"}) == \
        [("user", "{{note}} / n / ")]
    for bad in ("{% include 'x' %}", "{{ output | upper }}", "{{@include ./x}}"):
        with pytest.raises(UserFacingError, match="template tag"):
            read_rubric_prompt(bad, tmp_path, "t")
    with pytest.raises(UserFacingError, match="outside"):
        read_rubric_prompt("file://../secret.txt", tmp_path, "t")
    with pytest.raises(UserFacingError, match="no user message"):
        read_rubric_prompt([{"role": "system", "content": "x"}], tmp_path, "t")


def test_promptfoo_rubric_answers_pass_on_pass_and_the_zero_to_one_threshold():
    assert grade_rubric('{"pass": true, "score": 0.9, "reason": "ok"}', 0.5) == (True, 0.9, "ok")
    assert grade_rubric('{"pass": true, "score": 0.2}', 0.5)[0] is False
    assert grade_rubric('{"pass": false, "score": 1}', None)[0] is False
    assert grade_rubric('Sure: {"pass": true}', None) == (True, 1.0, "")
    with pytest.raises(ValueError):
        grade_rubric('{"scores": {"x": 5}}', None)


def test_each_assertion_is_graded_by_the_judge_its_provider_names_with_its_rubric_prompt(home, srv, second, oracle, capsys):
    tests = [{"vars": {"question": "What is 3 + 4?", "note": "{{output}}"}, "assert": [
                 {"type": "llm-rubric", "value": "is {{question}} answered", "provider": "second:chat:grader",
                  "rubricPrompt": RUBRIC, "threshold": 0.5},
                 {"type": "llm-rubric", "value": "correct"}]},
             {"vars": {"question": "What is 2 + 2?", "note": "plain"},
              "options": {"provider": {"id": "second:grader"}, "rubricPrompt": RUBRIC},
              "assert": [{"type": "llm-rubric", "value": "is right", "threshold": 0.5}]}]
    assert _run(home, srv, second, tests, judge="loop/judge") == 1, capsys.readouterr().err

    seen = [last_user(b) for b in _judge_requests(second)]
    assert sorted(seen) == ["Answer: 4\nRubric: is right\nNote: plain",
                            "Answer: 7\nRubric: is What is 3 + 4? answered\nNote: {{output}}"]  # rendered once
    assert all(b["messages"][0] == {"role": "system", "content": RUBRIC[0]["content"]} for b in _judge_requests(second))
    own = [b for b in _judge_requests(srv) if is_judge(b)]
    assert len(own) == 1 and "correct" in last_user(own[0])  # only the assertion without a provider
    checks = _checks(home)
    seven = checks["7"]
    assert seven["llm-rubric 'is What is 3 + 4? answered'"]["pass"] and seven["llm-rubric 'is What is 3 + 4? answered'"]["score"] == 0.9
    assert seven["llm-rubric 'correct'"]["pass"]
    four = checks["4"]["llm-rubric 'is right'"]
    assert not four["pass"] and four["score"] == 0.2  # 0.2 < 0.5 on promptfoo's scale
    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    journal = [json.loads(line) for line in (folder / "journal.jsonl").read_text("utf-8").splitlines()]
    assert sorted(r["judgeModel"] for r in journal if r.get("type") == "judge") == ["loop/judge", "second/grader", "second/grader"]


def test_a_file_whose_judged_assertions_all_name_a_provider_runs_without_an_evaluation_judge(home, srv, second, capsys):
    tests = [{"vars": {"question": "What is 3 + 4?"},
              "assert": [{"type": "llm-rubric", "value": "right", "provider": "second:grader", "rubricPrompt": "{{output}}"}]}]
    assert _run(home, srv, second, tests) == 0, capsys.readouterr().err
    assert len(_judge_requests(second)) == 1 and not [b for b in _judge_requests(srv) if is_judge(b)]


def test_a_judge_provider_llmspace_cannot_call_or_a_rubric_prompt_on_g_eval_stops_the_run_naming_it(home, srv, second, capsys):
    tests = [{"vars": {"question": "What is 3 + 4?"}, "assert": [{"type": "llm-rubric", "value": "x", "provider": "exec:./grade.sh"}]}]
    assert _run(home, srv, second, tests, judge="loop/judge") == 2
    assert "'exec:./grade.sh'" in capsys.readouterr().err
    tests = [{"vars": {"question": "What is 3 + 4?"}, "assert": [{"type": "g-eval", "value": "x", "rubricPrompt": "{{output}}"}]}]
    assert _run(home, srv, second, tests, judge="loop/judge") == 2
    assert "`rubricPrompt` on 'g-eval'" in capsys.readouterr().err
    assert not srv.requests and not second.requests  # nothing ran


def test_a_per_kind_provider_map_grades_with_its_text_model_and_embeds_similar_with_its_embedding_model(home, srv, second, oracle,
                                                                                                        capsys):
    kinds = {"text": {"id": "second:grader", "label": "Demo judge"}, "embedding": {"id": "second:embedding:grader"}}
    tests = [{"vars": {"question": "What is 3 + 4?"}, "options": {"provider": kinds},
              "assert": [{"type": "llm-rubric", "value": "right", "rubricPrompt": "{{output}}"},
                         {"type": "similar", "value": "seven", "threshold": 0.1}]},
             {"vars": {"question": "What is 2 + 2?"},  # a map without `text`: the evaluation's judge grades
              "assert": [{"type": "llm-rubric", "value": "correct", "provider": {"embedding": "second:grader"}}]}]
    code = _run(home, srv, second, tests, judge="loop/judge")
    assert code in (0, 1), capsys.readouterr().err

    assert len([b for b in _judge_requests(second) if "messages" in b]) == 1
    assert len([b for b in _judge_requests(srv) if is_judge(b)]) == 1
    embedded = [r.body_json for r in second.requests if r.path.endswith("/embeddings")]
    assert embedded and all(b["model"] == "grader" for b in embedded)  # no --embedder: the map's embedding model
    assert not [r for r in srv.requests if r.path.endswith("/embeddings")]
    similar = _checks(home)["7"]["similar 'seven'"]
    assert "embedding model" not in similar.get("reason", "")
