"""Inspect AI datasets (JSON Lines and CSV) against a loopback model and judge: a chat-list
`input` goes out as messages, `target` (a text or a list) is checked by the scorer `eval new
--scorer` chose (includes by default, match, model), `choices` are listed lettered and the
answer letter is checked, `files` stay inside the dataset's folder, `sandbox` is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llmspace.cli import main
from llmspace.core.threadio import serialize_thread, thread_from_data
from tests.evals.support import Oracle, is_judge, last_user
from tests.support.llm_server import LoopbackLLM, Turn, configure_provider


class ChoiceOracle(Oracle):
    """Answers a multiple-choice prompt with `ANSWER: B`, anything else as the Oracle does."""

    def __call__(self, kind: str, body: Any) -> Any:
        if isinstance(body, dict) and not is_judge(body) and "multiple choice" in last_user(body):
            self.calls[(str(body.get("model")), last_user(body))] += 1
            return Turn(text="ANSWER: B", usage=(20, 3))
        return super().__call__(kind, body)


@pytest.fixture
def oracle() -> Oracle:
    return ChoiceOracle()


def _workspace(home: Path, srv: LoopbackLLM, name: str, text: str, thread_messages: list[dict[str, Any]] | None = None) -> Path:
    configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["judge"])
    ws = home / "workspace"
    ws.mkdir(parents=True, exist_ok=True)
    data = {"title": "quiz", "context": {"systemPrompt": "Answer briefly.", "messages": thread_messages or []}}
    (ws / "quiz.json").write_bytes(serialize_thread(thread_from_data(data)))
    (ws / name).write_text(text, encoding="utf-8")
    return ws / name


def _new_and_run(home: Path, dataset: Path, *extra: str) -> tuple[int, int, dict[str, str]]:
    made = main(["eval", "new", "quiz.json", "--dataset", str(dataset), "--models", "loop/good", *extra])
    if made != 0:
        return made, -1, {}
    ran = main(["eval", "run", str(home / "workspace" / "quiz.eval.yaml")])
    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text("utf-8").splitlines()]
    return made, ran, {r["case"]: r["status"] for r in rows}


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def test_a_chat_list_input_goes_out_as_messages_and_list_targets_are_checked(home, srv, oracle, capsys):
    chat = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello"}, {"role": "user", "content": [{"type": "text", "text": "What is 2 + 2?"}]}]
    dataset = _workspace(home, srv, "samples.jsonl", _jsonl([
        {"id": "chat", "input": chat, "target": "4"},
        {"id": "wrong", "input": "What is 2 + 3?", "target": ["6", "six"]},
        {"id": "list", "input": "What is 3 + 3?", "target": ["six", "6"], "metadata": {"topic": "sums"}},
    ]))
    made, ran, status = _new_and_run(home, dataset)
    assert made == 0 and ran == 1, capsys.readouterr().err
    assert status == {"chat": "pass", "wrong": "fail", "list": "pass"}
    assert "scorer: includes" in (home / "workspace" / "quiz.eval.yaml").read_text("utf-8")
    bodies = [r.body_json for r in srv.requests if isinstance(r.body_json, dict)]
    (body,) = [b for b in bodies if last_user(b) == "What is 2 + 2?"]
    sent = [(m["role"], m["content"] if isinstance(m["content"], str) else "".join(p["text"] for p in m["content"]))
            for m in body["messages"]]
    assert sent == [("system", "Answer briefly.\n\nBe terse."), ("user", "Hi"), ("assistant", "Hello"), ("user", "What is 2 + 2?")]


@pytest.mark.parametrize("scorer, expected", [
    ("includes", {"ends": "pass", "inside": "pass", "absent": "fail"}),
    ("match", {"ends": "pass", "inside": "fail", "absent": "fail"}),
])
def test_the_scorer_chosen_at_eval_new_checks_the_target_as_inspects_does(home, srv, oracle, scorer, expected, capsys):
    dataset = _workspace(home, srv, "samples.csv", "id,input,target\nends,What is 4 + 6?,0\ninside,What is 4 + 6?,1\n"
                                                   "absent,What is 4 + 6?,7\n")
    made, ran, status = _new_and_run(home, dataset, "--scorer", scorer)
    assert made == 0 and ran == 1, capsys.readouterr().err
    assert status == expected


def test_choices_are_listed_lettered_and_the_answer_letter_is_checked(home, srv, oracle, capsys):
    dataset = _workspace(home, srv, "mc.csv", 'id,input,choices,target\nright,Which is blue?,"[""red"", ""blue""]",B\n'
                                              'wrong,Which is red?,"[""red"", ""blue""]",A\n')
    made, ran, status = _new_and_run(home, dataset)
    assert made == 0 and ran == 1, capsys.readouterr().err
    assert status == {"right": "pass", "wrong": "fail"}
    prompts = [p for (_m, p) in oracle.calls]
    assert any("Which is blue?\n\nA) red\nB) blue" in p and "ANSWER: $LETTER" in p for p in prompts)


def test_the_model_scorer_asks_the_judge_with_the_target_as_the_reference(home, srv, oracle, capsys):
    oracle.judge_answer = '{"score": 5, "reason": "Right."}'
    dataset = _workspace(home, srv, "samples.jsonl", _jsonl([{"id": "q", "input": "What is 1 + 1?", "target": "2"}]))
    made, ran, status = _new_and_run(home, dataset, "--scorer", "model", "--judge", "loop/judge")
    assert made == 0 and ran == 0, capsys.readouterr().err
    assert status == {"q": "pass"}
    judged = [p for (m, p), _n in oracle.calls.items() if m == "judge"]
    assert judged and "## Expected answer (reference)\n\n2" in judged[0]


def test_a_string_input_fills_the_threads_input_variable_instead_of_a_second_message(home, srv, oracle, capsys):
    user = [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "Question: {{input}}"}]}]
    dataset = _workspace(home, srv, "samples.jsonl", _jsonl([{"id": "q", "input": "What is 1 + 1?", "target": "2"}]), user)
    made, ran, status = _new_and_run(home, dataset)
    assert (made, ran, status) == (0, 0, {"q": "pass"}), capsys.readouterr().err
    (body,) = [r.body_json for r in srv.requests if isinstance(r.body_json, dict)]
    assert [m["role"] for m in body["messages"]] == ["system", "user"] and last_user(body) == "Question: What is 1 + 1?"


@pytest.mark.parametrize("row, message", [
    ({"input": "hi", "target": "x", "files": {"notes": "../secret.txt"}}, "outside"),
    ({"input": "hi", "target": "x", "sandbox": "docker"}, "sandbox"),
])
def test_files_outside_the_folder_and_a_sandbox_are_refused_before_any_call(home, srv, oracle, row, message, capsys):
    (home / "workspace" / "data").mkdir(parents=True)
    (home / "workspace" / "secret.txt").write_text("s3cret", encoding="utf-8")
    configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["judge"])
    _workspace(home, srv, "data/samples.jsonl", _jsonl([row]))
    code = main(["eval", "new", "quiz.json", "--dataset", str(home / "workspace" / "data" / "samples.jsonl"),
                 "--models", "loop/good"])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (home / "workspace" / "quiz.eval.yaml").exists() and not srv.requests
