"""promptfoo's `answer-relevance` and `conversation-relevance` (issue 42, item 3), against a
loopback model, judge and embedder (the loopback embedding is the counts of the letters a–z):
answer-relevance scores the mean cosine of the judge's questions with the query (the `query`
variable, else the prompt) at promptfoo's default threshold 0, and needs an embedder before
anything runs; conversation-relevance slides windows of 5 turns over `_conversation` (never
expanded into cases) or judges the one turn, passing on the share of relevant windows at 0.5.
(`select-best` and `max-score` run: tests/evals/test_compare_outputs.py.)"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from llmspace.cli import main
from llmspace.evals.assertions import JUDGED, parse_assertion
from llmspace.evals.model_graded import grade, prompt
from llmspace.evals.relevance import questions, turns, windows
from tests.evals.support import last_user, write_eval
from tests.support.llm_server import Turn

_RELEVANCE = "You judge whether answers are relevant."
QUESTIONS = {"7": "What is 3 + 4?", "4": "zzz yyy", "10": "Name the capital of France"}


def _system(body: Any) -> str:
    return next((str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system"), "")


def _judge(oracle):
    def respond(kind: str, body: Any) -> Any:
        if not _system(body).startswith(_RELEVANCE):
            return oracle(kind, body)
        text = last_user(body)
        answer = re.search(r"^\[Answer\]: (.*)$", text, re.MULTILINE)
        if answer:  # answer-relevance: the questions the answer answers
            return Turn(text=json.dumps({"questions": [QUESTIONS.get(answer.group(1), "zzz")] * 3}), usage=(30, 10))
        verdicts = []  # conversation-relevance: a window whose last reply names Paris is off topic
        for n, window in enumerate(re.split(r"^### Window \d+$", text, flags=re.MULTILINE)[1:], 1):
            last = re.findall(r"^Assistant: (.*)$", window, re.MULTILINE)[-1]
            verdicts.append({"window": n, "verdict": "no" if "Paris" in last else "yes", "reason": f"last: {last}"})
        return Turn(text=json.dumps({"verdicts": verdicts}), usage=(30, 10))

    return respond


def _rows(folder) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "results.jsonl").read_text("utf-8").splitlines()]


def test_relevance_types_are_judged_take_no_value_and_keep_their_name():
    for kind in ("answer-relevance", "conversation-relevance"):
        a = parse_assertion({"type": kind, "threshold": 0.8}, "t")
        assert (a.type, a.grader, a.value, a.to_data()["type"]) == (JUDGED, kind, None, kind)


def test_conversation_windows_slide_over_five_turns_and_a_short_conversation_is_one_window():
    six = [{"input": f"q{n}", "output": f"a{n}"} for n in range(1, 7)]
    assert turns("p", "o", {"_conversation": six})[0] == ("q1", "a1")
    assert [[i for i, _o in w] for w in windows(turns("p", "o", {"_conversation": six}))] == [
        ["q1", "q2", "q3", "q4", "q5"], ["q2", "q3", "q4", "q5", "q6"]]
    assert windows(turns("p", "o", {"_conversation": six[:3]})) == [[("q1", "a1"), ("q2", "a2"), ("q3", "a3")]]
    assert windows(turns("the prompt", "the output", {})) == [[("the prompt", "the output")]]
    assert prompt("conversation-relevance", None, "the prompt", "the output", None, {})[1].startswith(
        "### Window 1\nUser: the prompt\nAssistant: the output")


def test_conversation_relevance_scores_the_share_of_relevant_windows_against_half_by_default():
    half = '{"verdicts": [{"verdict": "yes"}, {"verdict": "no", "reason": "off topic"}]}'
    assert grade("conversation-relevance", half, None)[:2] == (True, 0.5)
    passed, score, why = grade("conversation-relevance", half, 0.8)
    assert (passed, score) == (False, 0.5) and "1 of 2 windows" in why and "off topic" in why
    for broken in ('{"verdicts": []}', '{"verdicts": [{"verdict": "maybe"}]}', "yes"):
        with pytest.raises(ValueError):
            grade("conversation-relevance", broken, None)


def test_answer_relevance_reads_the_judges_questions():
    assert questions('Sure: {"questions": ["a?", "b?", "c?", "d?"]}') == ["a?", "b?", "c?"]
    with pytest.raises(ValueError):
        questions('{"questions": "a?"}')
    assert "[Answer]: Paris." in prompt("answer-relevance", None, "Q", "Paris.", None)[1]


def test_an_evaluation_grades_answer_relevance_with_the_judges_questions_and_the_embedder(home, srv, oracle, capsys):
    srv.responder = _judge(oracle)
    path = write_eval(home, srv, [], assertions=[], judge="loop/judge", embedder="loop/embed")
    ws = home / "workspace"
    tests = [{"vars": {"question": "What is 3 + 4?"}, "assert": [{"type": "answer-relevance", "threshold": 0.8}]},
             {"vars": {"question": "What is 2 + 2?"}, "assert": [{"type": "answer-relevance", "threshold": 0.8}]},
             {"vars": {"question": "What is 2 + 2?"}, "assert": [{"type": "answer-relevance"}]},  # default 0
             {"vars": {"question": "What is 5 + 5?", "query": "Name the capital of France"},
              "assert": [{"type": "answer-relevance", "threshold": 0.99}]}]
    (ws / "tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")

    assert main(["eval", "run", str(path), "--dataset", str(ws / "tests.yaml")]) == 1, capsys.readouterr().err

    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    checks = [(r["output"], r["checks"][0]) for r in _rows(folder)]
    by = {(out, c["assertion"]): c for out, c in checks}
    assert by[("7", "answer-relevance")]["pass"] and by[("7", "answer-relevance")]["score"] == pytest.approx(1.0)
    four = [c for out, c in checks if out == "4"]
    assert sorted(c["pass"] for c in four) == [False, True]  # 0 fails at 0.8, passes at promptfoo's default 0
    assert any("relevance 0.00 < 0.8" in c["reason"] for c in four)
    assert by[("10", "answer-relevance")]["pass"]  # compared with the `query` variable, not the prompt
    embedded = {t for r in srv.requests if r.path.endswith("/embeddings") for t in r.body_json["input"]}
    assert {"What is 3 + 4?", "zzz yyy", "Name the capital of France"} <= embedded and "What is 5 + 5?" not in embedded


def test_answer_relevance_without_an_embedder_is_refused_before_any_request(home, srv, capsys):
    path = write_eval(home, srv, [], assertions=[], judge="loop/judge")
    ws = home / "workspace"
    (ws / "tests.yaml").write_text(yaml.safe_dump([{"vars": {"question": "What is 3 + 4?"},
                                                    "assert": [{"type": "answer-relevance"}]}]), encoding="utf-8")

    assert main(["eval", "run", str(path), "--dataset", str(ws / "tests.yaml")]) == 2

    assert "answer-relevance assertion needs an embedding model" in capsys.readouterr().err
    assert srv.requests == []


def test_an_evaluation_grades_conversation_relevance_over_the_conversation_variable(home, srv, oracle, capsys):
    srv.responder = _judge(oracle)
    path = write_eval(home, srv, [], assertions=[], judge="loop/judge")
    ws = home / "workspace"
    conversation = [{"input": f"What is {n} + {n}?", "output": str(2 * n)} for n in range(1, 6)]
    conversation.append({"input": "What is 6 + 6?", "output": "The capital of France is Paris."})
    tests = [{"description": "off at the end", "vars": {"question": "What is 3 + 4?", "_conversation": conversation},
              "assert": [{"type": "conversation-relevance"}]},
             {"description": "off at the end, strict", "vars": {"question": "What is 3 + 4?", "_conversation": conversation},
              "assert": [{"type": "conversation-relevance", "threshold": 0.8}]},
             {"description": "one turn", "vars": {"question": "What is 3 + 4?"}, "assert": [{"type": "conversation-relevance"}]}]
    (ws / "tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")

    assert main(["eval", "run", str(path), "--dataset", str(ws / "tests.yaml")]) == 1, capsys.readouterr().err

    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    rows = _rows(folder)
    assert len(rows) == 3  # the `_conversation` list is one variable, not a case per turn
    checks = sorted((c["pass"], c.get("score")) for r in rows for c in r["checks"])
    assert checks == [(False, 0.5), (True, 0.5), (True, 1.0)]  # 1 of 2 windows; the one turn is relevant
    judged = [last_user(r.body_json) for r in srv.requests if _system(r.body_json or {}).startswith(_RELEVANCE)]
    assert any("### Window 2\nUser: What is 2 + 2?" in t for t in judged)
    assert any(t.startswith("### Window 1\nUser: What is 3 + 4?\nAssistant: 7\n\n") for t in judged)

