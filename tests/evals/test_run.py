"""`llmspace eval run` in process against a loopback server: results files, pass rates, exit
codes, judges, cache, budget, 429 backoff, resume of a journal and errors found before any call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import xmlschema

from llmspace.cli import main
from llmspace.evals.journal import read_journal
from tests.evals.support import arithmetic_and_extraction, journal_lines, write_eval

XSD = Path(__file__).with_name("JUnit.xsd")


def _run(*args: str) -> int:
    return main(["eval", "run", *args])


def _only_folder(home: Path) -> Path:
    folders = sorted((home / "evals" / "quiz").iterdir())
    assert len(folders) == 1, folders
    return folders[0]


def _summary(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "summary.json").read_text("utf-8"))


def test_a_passing_evaluation_writes_summary_junit_csv_and_jsonl_and_exits_0(home, srv, oracle, capsys):
    path = write_eval(home, srv, arithmetic_and_extraction(6), models=("loop/good",), repeat=2)

    code = _run(str(path))

    assert code == 0, capsys.readouterr().err
    folder = _only_folder(home)
    s = _summary(folder)
    (g,) = s["groups"]
    assert (g["cases"], g["passed"], g["passRate"], g["passHatK"], g["cells"]) == (6, 6, 1.0, 1.0, 12)
    assert g["passRateCI95"][1] == 1.0 and 0.5 < g["passRateCI95"][0] < 1.0
    assert g["tokens"] == {"input": 240, "output": 36, "total": 276}
    assert g["cost"] == pytest.approx(12 * (20 * 1.0 + 3 * 2.0) / 1e6)
    assert g["latencyMs"]["p50"] is not None and g["latencyMs"]["p95"] >= g["latencyMs"]["p50"]
    assert s["complete"] and s["exitCode"] == 0
    xmlschema.XMLSchema(str(XSD)).validate(str(folder / "junit.xml"))
    assert len((folder / "results.jsonl").read_text("utf-8").splitlines()) == 12
    assert (folder / "results.csv").read_text("utf-8").startswith("key,case,model,variant,repeat,status")
    assert read_journal(folder / "journal.jsonl").finished
    assert oracle.model_calls("good") == 12  # repeats are real repeats, never one cached answer


def test_a_model_below_the_threshold_exits_1_and_junit_names_the_failed_assertion(home, srv, capsys):
    path = write_eval(home, srv, arithmetic_and_extraction(8), models=("loop/good", "loop/bad"),
                      assertions=[{"type": "contains"}, {"type": "regex", "value": "^[^\\n]+$"}])

    code = _run(str(path))

    assert code == 1
    folder = _only_folder(home)
    groups = {g["model"]: g for g in _summary(folder)["groups"]}
    assert groups["loop/good"]["thresholdMet"] and not groups["loop/bad"]["thresholdMet"]
    # sums 4 and 16 (cases add-1: 1+3, add-4: 4+9=13 no; see the oracle) are wrong for `bad`
    wrong = [c for c in arithmetic_and_extraction(8)[:4] if int(c["expected"]) % 4 == 0]
    assert groups["loop/bad"]["failed"] == len(wrong) > 0
    xmlschema.XMLSchema(str(XSD)).validate(str(folder / "junit.xml"))
    junit = (folder / "junit.xml").read_text("utf-8")
    assert f'name="{wrong[0]["id"]} [loop/bad]"' in junit
    assert "contains failed in 1 of 1 repeats" in junit
    assert "Results:" in capsys.readouterr().out


def test_a_judge_scores_each_cell_and_its_prompt_answer_and_reason_are_journaled(home, srv, oracle):
    path = write_eval(home, srv, arithmetic_and_extraction(4), judge="loop/judge",
                      assertions=[{"type": "llm-rubric", "value": "correct\nconcise", "threshold": 4}])

    assert _run(str(path)) == 0

    folder = _only_folder(home)
    judges = [r for r in journal_lines(read_journal(folder / "journal.jsonl")) if r["type"] == "judge"]
    assert len(judges) == 4 and oracle.judge_calls() == 4
    j = judges[0]
    assert j["judgeModel"] == "loop/judge" and len(j["promptHash"]) == 16 and j["repeat"] == 1
    assert j["scores"] == {"correct": 5, "concise": 4} and j["reason"] == "Right and short."
    assert "## The model's answer" in j["prompt"] and j["raw"] == oracle.judge_answer
    assert j["key"].startswith(j["cell"] + "|judge:loop/judge|")
    g = _summary(folder)["groups"][0]
    assert g["rubricScores"]["correct"] == {"mean": 5.0, "ci95": [5.0, 5.0], "n": 4}
    assert g["judgeCost"] == pytest.approx(4 * (50 * 1.0 + 10 * 2.0) / 1e6)


@pytest.mark.parametrize(("answer", "correct", "code"), [('{"score": 2, "reason": "meh"}', 2.0, 1), ("4", 4.0, 0),
                                                          ('```json\n{"scores": {"correct": 3, "concise": 5}}\n```', 3.0, 0)])
def test_a_judge_answer_with_one_score_a_bare_number_or_a_fence_is_read(home, srv, oracle, answer, correct, code):
    oracle.judge_answer = answer
    path = write_eval(home, srv, arithmetic_and_extraction(2), judge="loop/judge",
                      assertions=[{"type": "llm-rubric", "value": "correct\nconcise"}])

    assert _run(str(path)) == code

    g = _summary(_only_folder(home))["groups"][0]
    assert g["rubricScores"]["correct"]["mean"] == correct


def test_an_unreadable_judge_answer_is_an_error_for_the_cell_not_a_pass_or_fail(home, srv, oracle):
    oracle.judge_answer = "I think it is quite good overall."
    path = write_eval(home, srv, arithmetic_and_extraction(2), judge="loop/judge",
                      assertions=[{"type": "llm-rubric", "value": "correct"}])

    assert _run(str(path)) == 2

    folder = _only_folder(home)
    g = _summary(folder)["groups"][0]
    assert (g["passed"], g["failed"], g["errors"]) == (0, 0, 2)
    assert "could not be read" in (folder / "junit.xml").read_text("utf-8")
    xmlschema.XMLSchema(str(XSD)).validate(str(folder / "junit.xml"))


def test_a_second_run_answers_from_the_cache_and_no_cache_calls_the_model_again(home, srv, oracle):
    path = write_eval(home, srv, arithmetic_and_extraction(3), repeat=2)
    assert _run(str(path)) == 0
    assert oracle.model_calls("good") == 6

    assert _run(str(path), "--fresh") == 0
    assert oracle.model_calls("good") == 6  # every answer came from the cache
    newest = sorted((home / "evals" / "quiz").iterdir())[-1]
    assert _summary(newest)["cacheHits"] == 6 and _summary(newest)["groups"][0]["cachedCells"] == 6

    assert _run(str(path), "--fresh", "--no-cache") == 0
    assert oracle.model_calls("good") == 12

    assert main(["eval", "cache", "clear"]) == 0
    assert _run(str(path), "--fresh") == 0
    assert oracle.model_calls("good") == 18


def test_the_budget_stops_new_cells_and_the_next_run_resumes_the_rest(home, srv, oracle, capsys):
    per_cell = (20 * 1.0 + 3 * 2.0) / 1e6
    path = write_eval(home, srv, arithmetic_and_extraction(10))

    code = _run(str(path), "--budget", str(per_cell * 3.5), "--no-cache", "--concurrency", "2")

    assert code == 2
    folder = _only_folder(home)
    s = _summary(folder)
    assert s["stoppedForBudget"] and not s["complete"]
    assert oracle.model_calls("good") == 3
    assert s["spentThisRun"] <= per_cell * 3.5
    assert "Stopped by the budget" in capsys.readouterr().out

    assert _run(str(path), "--no-cache") == 0  # resumes the same folder, runs only the 7 left
    assert oracle.model_calls("good") == 10
    assert _only_folder(home) == folder and _summary(folder)["complete"]


def test_429_with_retry_after_is_retried_and_the_cell_passes(home, srv, oracle):
    oracle.fail_first["good"] = 2
    path = write_eval(home, srv, arithmetic_and_extraction(2))

    assert _run(str(path), "--no-cache") == 0
    assert sum(1 for r in srv.requests if r.method == "POST") == 4


def test_a_missing_variable_is_reported_with_its_row_before_any_request(home, srv, capsys):
    rows = [{"id": "a", "question": "What is 1 + 2?"}, {"id": "b", "topic": "no question here"}]
    path = write_eval(home, srv, rows)

    assert _run(str(path)) == 2

    err = capsys.readouterr().err
    assert "case b (row 2)" in err and "question" in err
    assert not [r for r in srv.requests if r.method == "POST"]


def test_a_bad_dataset_path_exits_2(home, srv, capsys):
    path = write_eval(home, srv, arithmetic_and_extraction(2))
    assert _run(str(path), "--dataset", str(home / "nope.csv")) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_changed_dataset_is_not_resumed_and_the_run_says_what_changed(home, srv, capsys):
    path = write_eval(home, srv, arithmetic_and_extraction(4))
    assert _run(str(path), "--budget", "0.00003", "--no-cache") == 2  # unfinished: one cell ran
    (home / "workspace" / "cases.jsonl").write_text(json.dumps({"id": "x", "question": "What is 2 + 2?", "expected": "4"}) + "\n")
    capsys.readouterr()

    assert _run(str(path), "--no-cache") == 0

    assert "the dataset changed" in capsys.readouterr().err
    assert len(list((home / "evals" / "quiz").iterdir())) == 2


def test_a_torn_last_journal_line_is_dropped_and_that_cell_runs_again(home, srv, oracle):
    path = write_eval(home, srv, arithmetic_and_extraction(4))
    assert _run(str(path), "--budget", "0.00006", "--no-cache", "--concurrency", "1") == 2
    folder = _only_folder(home)
    journal = folder / "journal.jsonl"
    done = [r for r in journal_lines(read_journal(journal)) if r["type"] == "cell"]
    assert len(done) == 2
    journal.write_bytes(journal.read_bytes()[:-20])  # the last record cut mid-line, as by a crash
    read = read_journal(journal)
    assert read.torn and len([r for r in journal_lines(read) if r["type"] == "cell"]) == 1

    assert _run(str(path), "--no-cache") == 0

    assert oracle.model_calls("good") == 2 + 3
    assert read_journal(journal).finished and not read_journal(journal).torn


def test_variants_give_one_group_each_and_the_variant_value_reaches_the_request(home, srv, oracle):
    path = write_eval(home, srv, arithmetic_and_extraction(2), variants={"terse": {"style": "terse"}, "kind": {"style": "kind"}})
    (home / "workspace" / "quiz.json").unlink()
    from tests.evals.support import write_thread

    write_thread(home, system="Answer in a {{style}} way.")

    assert _run(str(path)) == 0

    groups = _summary(_only_folder(home))["groups"]
    assert [(g["variant"], g["label"], g["passed"]) for g in groups] == [("terse", "loop/good [terse]", 2), ("kind", "loop/good [kind]", 2)]
    systems = {m["content"] for r in srv.requests if r.method == "POST" for m in r.body_json["messages"] if m["role"] == "system"}
    assert systems == {"Answer in a terse way.", "Answer in a kind way."}


def test_the_provider_limit_bounds_concurrent_requests(home, srv, oracle):
    import threading
    import time

    lock = threading.Lock()
    active = [0, 0]  # now, most

    def responder(kind: str, body: Any) -> Any:
        with lock:
            active[0] += 1
            active[1] = max(active)
        time.sleep(0.05)  # the server "thinks" while the client waits for the headers
        with lock:
            active[0] -= 1
        return oracle(kind, body)

    srv.responder = responder
    path = write_eval(home, srv, arithmetic_and_extraction(12), providerConcurrency={"loop": 2})

    assert _run(str(path), "--concurrency", "8", "--no-cache") == 0

    assert active[1] == 2


def test_a_stalled_server_fails_its_cell_within_the_retry_deadline_and_the_others_pass(home, srv, oracle):
    from tests.support.llm_server import _Hang

    path = write_eval(home, srv, arithmetic_and_extraction(4))
    settings = home / "settings" / "models.json"
    data = json.loads(settings.read_text("utf-8"))
    data["providers"][0].update({"readTimeout": 0.5, "retryDeadline": 2})
    settings.write_text(json.dumps(data), encoding="utf-8")
    stalled = arithmetic_and_extraction(4)[1]["question"]
    plain = oracle.__call__

    def responder(kind: str, body: Any) -> Any:
        from tests.evals.support import last_user

        if last_user(body) == stalled:
            return _Hang(silent=True)
        return plain(kind, body)

    srv.responder = responder

    assert _run(str(path), "--no-cache") == 2

    g = _summary(_only_folder(home))["groups"][0]
    assert (g["passed"], g["errors"]) == (3, 1)
    junit = (_only_folder(home) / "junit.xml").read_text("utf-8")
    assert "sent no data" in junit and oracle.model_calls("good") == 3


def test_a_one_turn_cell_records_tool_calls_for_tool_called_assertions(home, srv):
    from tests.support.llm_server import ToolCallSpec, Turn

    srv.responder = lambda kind, body: Turn(tool_calls=[ToolCallSpec("call_1", "lookup", {"word": "cat", "lang": "en"})])
    path = write_eval(home, srv, [{"id": "t1", "question": "Look up cat"}],
                      assertions=[{"type": "tool-called", "value": {"name": "lookup", "arguments": {"word": "cat"}}},
                                  {"type": "not-tool-called", "value": "delete"}])

    assert _run(str(path)) == 0

    (row,) = [json.loads(line) for line in (_only_folder(home) / "results.jsonl").read_text("utf-8").splitlines()]
    assert row["toolCalls"] == [{"name": "lookup", "arguments": {"word": "cat", "lang": "en"}}]


def test_react_runs_the_tool_loop_on_a_copy_and_never_touches_the_threads_history(home, srv):
    from llmspace.tools.builtins import builtin_tool
    from tests.evals.support import write_thread
    from tests.support.llm_server import ToolCallSpec, Turn

    def responder(kind: str, body: Any) -> Any:
        if any(m.get("role") == "tool" for m in body.get("messages") or []):
            return Turn(text="done: listed")
        return Turn(tool_calls=[ToolCallSpec("call_1", "ls", {"path": "."})])

    srv.responder = responder
    path = write_eval(home, srv, [{"id": "r1", "question": "List the files"}],
                      assertions=[{"type": "tool-called", "value": "ls"}, {"type": "contains", "value": "done"}])
    thread_file = write_thread(home, tools=[builtin_tool("ls").model_dump(exclude_none=True, by_alias=True)])
    before = thread_file.read_bytes()

    assert _run(str(path), "--react", "--max-turns", "3") == 0

    assert thread_file.read_bytes() == before
    (row,) = [json.loads(line) for line in (_only_folder(home) / "results.jsonl").read_text("utf-8").splitlines()]
    assert row["status"] == "pass" and row["output"] == "done: listed"
    assert sum(1 for r in srv.requests if r.method == "POST") == 2


def test_out_writes_the_results_to_the_given_folder_and_resumes_there(home, srv, oracle, tmp_path):
    path = write_eval(home, srv, arithmetic_and_extraction(4))
    out = tmp_path / "ci-results"

    assert _run(str(path), "--out", str(out), "--budget", "0.00003", "--no-cache") == 2
    assert _run(str(path), "--out", str(out), "--no-cache") == 0

    assert oracle.model_calls("good") == 4
    assert _summary(out)["complete"] and not (home / "evals").exists()
    xmlschema.XMLSchema(str(XSD)).validate(str(out / "junit.xml"))


def test_a_promptfoo_test_file_runs_and_unsupported_assertion_types_stop_it_before_any_request(home, srv, capsys):
    path = write_eval(home, srv, arithmetic_and_extraction(2), assertions=[])
    ws = home / "workspace"
    (ws / "tests.yaml").write_text("- vars: {question: 'What is 2 + 5?'}\n  assert: [{type: equals, value: '7'}]\n"
                                   "- vars: {question: 'What is 1 + 1?'}\n  assert: [{type: icontains, value: '2'}]\n", encoding="utf-8")
    assert _run(str(path), "--dataset", str(ws / "tests.yaml")) == 0
    requests_before = len(srv.requests)

    (ws / "bad.yaml").write_text("- vars: {question: 'x'}\n  assert: [{type: classifier, value: 'x'}, {type: cost, threshold: 1}]\n",
                                 encoding="utf-8")
    assert _run(str(path), "--dataset", str(ws / "bad.yaml")) == 2

    err = capsys.readouterr().err
    assert "assertion types llmspace does not run: classifier" in err
    assert len(srv.requests) == requests_before


def test_eval_new_takes_the_default_model_and_writes_json_when_asked(home, srv, oracle, capsys):
    write_eval(home, srv, arithmetic_and_extraction(2))
    (home / "workspace" / "quiz.eval.yaml").unlink()
    rows = home / "workspace" / "cases.jsonl"
    out = home / "workspace" / "quiz.eval.json"

    assert main(["eval", "new", "quiz.json", "--dataset", str(rows), "--judge", "loop/judge", "-o", str(out)]) == 0

    data = json.loads(out.read_text("utf-8"))
    assert data["models"] == ["loop/good"] and data["judge"] == "loop/judge" and data["dataset"] == "cases.jsonl"
    assert data["assert"] == [{"type": "contains"}]
    assert _run(str(out)) == 0
    assert main(["eval", "new", "quiz.json", "--dataset", str(rows), "-o", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_passk_decides_a_case_over_its_repeats_and_pass_hat_k_counts_cases_that_passed_all(home, srv, oracle):
    plain = oracle.__call__

    def flaky(kind: str, body: Any) -> Any:
        from tests.evals.support import last_user
        from tests.support.llm_server import Turn

        turn = plain(kind, body)
        if oracle.calls[(body.get("model"), last_user(body))] == 3:  # the third call of each prompt is wrong
            return Turn(text="wrong")
        return turn

    srv.responder = flaky
    path = write_eval(home, srv, arithmetic_and_extraction(4), repeat=3, passK=2)

    assert _run(str(path), "--no-cache") == 0

    g = _summary(_only_folder(home))["groups"][0]
    assert (g["passed"], g["passRate"], g["passHatK"], g["cellPassRate"]) == (4, 1.0, 0.0, pytest.approx(2 / 3))

    assert _run(str(path), "--fresh", "--models", "loop/good,loop/bad", "--repeat", "2") == 1  # flags override the file
    groups = _summary(sorted((home / "evals" / "quiz").iterdir())[-1])["groups"]
    assert [(g["model"], g["cells"], g["k"]) for g in groups] == [("loop/good", 8, 2), ("loop/bad", 8, 2)]
    assert _run(str(path), "--repeat", "1") == 2  # passK 2 of the file cannot hold with one repeat


def test_a_results_folder_in_use_is_refused_to_a_second_preparation_as_the_apps_action_opens_it(home, srv, app, tmp_path):
    from llmspace.errors import UserFacingError
    from llmspace.evals import run as runmod
    from llmspace.evals.spec import load_spec

    path = write_eval(home, srv, arithmetic_and_extraction(2))
    first = runmod.prepare(app.runner, load_spec(path))
    folder, records, _notes = runmod.open_results(first)
    second = runmod.prepare(app.runner, load_spec(path))
    with pytest.raises(UserFacingError, match="in progress") as refused:
        runmod.open_results(second)  # what the app's New Evaluation does on a worker thread
    assert str(folder) in refused.value.message
    out = tmp_path / "out"
    holder = runmod.prepare(app.runner, load_spec(path))
    runmod.open_results(holder, out)
    with pytest.raises(UserFacingError, match="in progress"):
        runmod.open_results(runmod.prepare(app.runner, load_spec(path)), out)
    holder.release()

    outcome = runmod.run_cells(first, folder, records, concurrency=1, budget=None)

    assert outcome.summary["complete"]
    again = runmod.prepare(app.runner, load_spec(path))
    later, _records, _notes = runmod.open_results(again)  # the lock went with the run; a finished folder is not resumed
    assert later != folder
