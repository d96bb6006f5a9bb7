"""promptfoo's `select-best` and `max-score` (issue 42, item 3): checked over all outputs of one
test once its cells are done, against a loopback model (`good` answers 1 + 3 = 4, `bad` 5) and a
loopback judge that reads the numbered answers it is shown. The verdicts are journaled as judge
records, so a resumed run does not ask the judge again; a file with one output per test is
refused before anything runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from llmspace.cli import main
from llmspace.evals.assertions import Assertion, Check
from llmspace.evals.compare_outputs import SYSTEM, check_score, max_score_picks, read_verdict
from llmspace.evals.journal import read_journal
from tests.evals.support import Oracle, _text, last_user, write_eval
from tests.support.llm_server import LoopbackLLM, Turn

ANSWER = re.compile(r'<answer index="(\d+)">\n(.*?)\n</answer>', re.DOTALL)
MODELS = ("loop/good", "loop/bad")


class Judge:
    """The loopback judge of select-best: the index of the largest number among the answers shown."""

    def __init__(self, oracle: Oracle) -> None:
        self.oracle = oracle
        self.prompts: list[str] = []
        self.answer: str | None = None  # a scripted answer instead of the index of the largest number

    def __call__(self, kind: str, body: Any) -> Any:
        body = body if isinstance(body, dict) else {}
        if any(m.get("role") == "system" and _text(m.get("content")) == SYSTEM for m in body.get("messages") or []):
            prompt = last_user(body)
            self.prompts.append(prompt)
            shown = {int(i): float(t) for i, t in ANSWER.findall(prompt)}
            return Turn(text=self.answer or f"Index: {max(shown, key=lambda i: shown[i])}", usage=(40, 2))
        return self.oracle(kind, body)


@pytest.fixture
def judge(srv: LoopbackLLM, oracle: Oracle) -> Judge:
    srv.responder = Judge(oracle)
    return srv.responder


def _eval(home: Path, srv: LoopbackLLM, tests: list[dict[str, Any]], models: tuple[str, ...] = MODELS) -> Path:
    path = write_eval(home, srv, [], models=models, assertions=[], judge="loop/judge")
    (home / "workspace" / "tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")
    return path


def _run(home: Path, path: Path, *flags: str) -> int:
    return main(["eval", "run", str(path), "--dataset", str(home / "workspace" / "tests.yaml"), *flags])


def _folder(home: Path) -> Path:
    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    return folder


def _rows(home: Path) -> dict[tuple[str, str], dict[str, Any]]:
    lines = (_folder(home) / "results.jsonl").read_text("utf-8").splitlines()
    return {(r["case"], r["model"]): r for r in map(json.loads, lines)}


def _check(row: dict[str, Any], kind: str) -> dict[str, Any]:
    (found,) = [c for c in row["checks"] if c["assertion"].startswith(kind)]
    return found


SELECT = [{"description": "bigger", "vars": {"question": "What is 1 + 3?"},
           "assert": [{"type": "contains", "value": "4"}, {"type": "select-best", "value": "the larger number"}]}]


def test_select_best_shows_the_judge_every_output_and_passes_only_the_one_it_picks(home, srv, oracle, judge, capsys):
    path = _eval(home, srv, SELECT)

    assert _run(home, path) == 1, capsys.readouterr().err

    (prompt,) = judge.prompts  # one call for the test, not one per output
    assert ANSWER.findall(prompt) == [("0", "4"), ("1", "5")] and "the larger number" in prompt
    rows = _rows(home)
    good, bad = rows[("bigger", "loop/good")], rows[("bigger", "loop/bad")]
    assert (_check(bad, "select-best")["pass"], _check(good, "select-best")["pass"]) == (True, False)
    assert "not selected as the best of 2 outputs" in _check(good, "select-best")["reason"]
    # the case's verdict takes it in: good passes `contains 4` but loses select-best; bad the other way round
    assert good["status"] == bad["status"] == "fail"
    assert _check(bad, "contains")["pass"] is False and _check(good, "contains")["pass"] is True
    summary = json.loads((_folder(home) / "summary.json").read_text("utf-8"))
    scores = {g["model"]: g["rubricScores"]["select-best"]["mean"] for g in summary["groups"]}
    assert scores == {"loop/good": 0.0, "loop/bad": 1.0}  # the share of tests each model won
    assert summary["complete"] and read_journal(_folder(home) / "journal.jsonl").finished


def test_a_resumed_run_does_not_ask_the_judge_again_from_the_journal_or_the_cache(home, srv, oracle, judge):
    path = _eval(home, srv, SELECT)
    assert _run(home, path) == 1
    assert len(judge.prompts) == 1
    journal = _folder(home) / "journal.jsonl"
    lines = journal.read_text("utf-8").splitlines()
    assert json.loads(lines[-1])["type"] == "end"
    # killed before the end was written: the verdicts are journaled; nothing is asked again, not even without the cache
    journal.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    (_folder(home) / "results.jsonl").unlink()
    assert _run(home, path, "--no-cache") == 1
    assert len(judge.prompts) == 1 and ("bigger", "loop/bad") in _rows(home)
    assert _check(_rows(home)[("bigger", "loop/bad")], "select-best")["pass"] is True
    # killed after the judge answered, before its verdicts were journaled: the response cache answers
    lines = journal.read_text("utf-8").splitlines()
    kept = [x for x in lines if not (json.loads(x)["type"] == "judge" or json.loads(x)["type"] == "end")]
    assert len(kept) == len(lines) - 3  # two verdicts and the end
    journal.write_text("\n".join(kept) + "\n", encoding="utf-8")
    assert _run(home, path) == 1
    assert len(judge.prompts) == 1
    assert _check(_rows(home)[("bigger", "loop/bad")], "select-best")["pass"] is True


def test_a_judge_answer_without_an_index_in_range_is_an_error_for_every_output_of_the_test(home, srv, oracle, judge):
    judge.answer = "I pick answer 9."
    path = _eval(home, srv, SELECT)

    assert _run(home, path) == 2  # errors: neither passed nor failed

    rows = _rows(home)
    for model in MODELS:
        row = rows[("bigger", model)]
        assert row["status"] == "error"
        assert "could not be read (it chose 9, and the outputs are numbered 0 to 1)" in row["error"]


def test_max_score_passes_the_output_whose_other_assertions_score_highest(home, srv, oracle, capsys):
    asserts = [{"type": "contains", "value": "4"}, {"type": "regex", "value": "^5$"}]
    tests = [{"description": "weighted", "vars": {"question": "What is 1 + 3?"},
              "assert": [*asserts, {"type": "max-score", "value": {"weights": {"regex": 3}}}]},
             {"description": "tie", "vars": {"question": "What is 1 + 3?"}, "assert": [*asserts, {"type": "max-score"}]},
             {"description": "summed", "vars": {"question": "What is 1 + 3?"},
              "assert": [*asserts, {"type": "max-score", "value": {"method": "sum", "weights": {"contains": 2.5}}}]},
             {"description": "too low", "vars": {"question": "What is 1 + 3?"},
              "assert": [*asserts, {"type": "max-score", "value": {"weights": {"regex": 3}, "threshold": 0.9}}]}]
    path = _eval(home, srv, tests)

    assert _run(home, path) == 1, capsys.readouterr().err

    rows = _rows(home)
    won = {case: [m for m in MODELS if _check(rows[(case, m)], "max-score")["pass"]]
           for case in ("weighted", "tie", "summed", "too low")}
    # weighted: good (1·1 + 0·3)/4 = 0.25, bad 0.75; tie: 0.5 each, the first output wins; summed: 2.5 against 1
    assert won == {"weighted": ["loop/bad"], "tie": ["loop/good"], "summed": ["loop/good"], "too low": []}
    assert "score 0.250, highest 0.750" in _check(rows[("weighted", "loop/good")], "max-score")["reason"]
    assert "below the threshold 0.9" in _check(rows[("too low", "loop/bad")], "max-score")["reason"]
    assert not [r for r in srv.requests if (r.body_json or {}).get("model") == "judge"]  # max-score asks no one


def test_one_output_per_test_is_refused_before_anything_runs(home, srv, oracle, judge, capsys):
    path = _eval(home, srv, SELECT, models=("loop/good",))

    assert _run(home, path) == 2

    err = capsys.readouterr().err
    assert "select-best compares the outputs of one case across models and variants" in err
    assert "one output per case (loop/good)" in err and "two models or more" in err
    assert not [r for r in srv.requests if r.method == "POST"]


def test_the_judges_verdict_is_the_first_integer_of_its_answer_in_range():
    assert read_verdict("The best is 1.", 2) == 1 and read_verdict("0", 3) == 0
    for bad in ("none of them", "2", "index 7"):
        with pytest.raises(ValueError):
            read_verdict(bad, 2)


def test_max_score_reads_each_check_on_zero_to_one():
    rubric = Assertion("llm-rubric", "clear")
    assert check_score(rubric, Check("r", True, score=4.0)) == 0.75  # llmspace's judge: 1–5
    assert check_score(Assertion("llm-rubric", "x", grader="factuality"), Check("f", True, score=1.0)) == 1.0
    assert check_score(Assertion("contains", "x"), Check("c", False)) == 0.0
    picks = max_score_picks(None, [[("contains", 1.0)], [("contains", 1.0)], [("contains", 0.0)]])
    assert [p[0] for p in picks] == [True, False, False]
    # promptfoo's `latency` weight is max-latency's (the type promptfoo's latency is read as)
    picks = max_score_picks({"weights": {"latency": 3.0}}, [[("contains", 1.0), ("max-latency", 0.0)],
                                                            [("contains", 0.0), ("max-latency", 1.0)]])
    assert [round(p[1], 2) for p in picks] == [0.25, 0.75] and [p[0] for p in picks] == [False, True]
