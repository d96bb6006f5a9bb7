"""`llmspace eval` against a loopback server: the acceptance run (40 cases, two models, 3
repeats, contains/regex/json-schema and an llm-rubric judge) killed with kill -9 halfway and
run again without requesting a journaled cell again; Ctrl-C; and `eval new`, `eval list`,
`eval cache clear`. The runs that are killed, interrupted or hold a results folder are real
subprocesses (`_start`); the others run through the command line's `main` in the test's
process (`_run`: a subprocess costs a second of start-up on a loaded machine)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import xmlschema

from llmspace.evals.journal import read_journal
from tests.evals.support import Oracle, arithmetic_and_extraction, journal_lines, write_eval
from tests.support.cli import cli_in_process
from tests.support.llm_server import LoopbackLLM

ROOT = Path(__file__).resolve().parents[2]
XSD = Path(__file__).with_name("JUnit.xsd")
SCHEMA = {"type": "object", "required": ["name", "age"], "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}
EXIT_BOUND_S = 5.0  # generous for a loaded 2-core machine


class CountingOracle(Oracle):
    """An oracle that sets `reached` once it has answered `target` requests."""

    def __init__(self, target: int) -> None:
        super().__init__()
        self.target = target
        self.reached = threading.Event()

    def __call__(self, kind: str, body: Any) -> Any:
        answer = super().__call__(kind, body)
        if sum(self.calls.values()) >= self.target:
            self.reached.set()
        return answer


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}


def _start(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "llmspace", "eval", *args], cwd=ROOT, env=_env(home),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli_in_process(["eval", *args], env={"LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}, cwd=ROOT)


def _wait_running(proc: subprocess.Popen[str], event: threading.Event, bound: float, what: str) -> None:
    """Wait for `event` while `proc` runs; a process that ended first fails with its stderr."""
    deadline = time.monotonic() + bound
    while not event.wait(0.2):
        if proc.poll() is not None:
            _out, err = proc.communicate()
            pytest.fail(f"{what}: the run ended with {proc.returncode}: {err[-2000:]}")
        assert time.monotonic() < deadline, what


def _acceptance_rows() -> list[dict[str, Any]]:
    rows = arithmetic_and_extraction(40)
    for row in rows:
        if row["kind"] == "arithmetic":
            row["assert"] = [{"type": "regex", "value": "^\\d+$"}]
        else:
            row["assert"] = [{"type": "json-schema", "value": SCHEMA}]
    return rows


def test_acceptance_40_cases_two_models_3_repeats_killed_halfway_resume_without_repeating_a_journaled_cell(home):
    oracle = CountingOracle(target=200)  # of 480 requests: 240 cells + 240 judge calls
    oracle.delay_per_chunk = 0.005
    rows = _acceptance_rows()
    question = {r["id"]: r["question"] for r in rows}
    with LoopbackLLM() as srv:
        srv.responder = oracle
        path = write_eval(home, srv, rows, models=("loop/good", "loop/bad"), repeat=3, judge="loop/judge", threshold=0.9,
                          assertions=[{"type": "contains"}, {"type": "llm-rubric", "value": "correct\nconcise"}])
        proc = _start(home, "run", str(path), "--no-cache")
        try:
            _wait_running(proc, oracle.reached, 240, "the run never got halfway")
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.wait(60)
        assert proc.returncode == -signal.SIGKILL
        first_calls = Counter(oracle.calls)
        (folder,) = (home / "evals" / "quiz").iterdir()
        journal = read_journal(folder / "journal.jsonl")
        assert not journal.finished and not (folder / "summary.json").exists()
        cells = [r for r in journal_lines(journal) if r["type"] == "cell"]
        judges = [r for r in journal_lines(journal) if r["type"] == "judge"]
        assert 0 < len(cells) < 240
        oracle.calls.clear()

        done = _run(home, "run", str(path), "--no-cache")

        assert done.returncode == 1, done.stderr  # `bad` is below the 0.9 threshold
        assert f"Resuming {folder}" in done.stderr
        # every cell not journaled before the kill was requested once; no journaled cell again
        assert oracle.model_calls("good") + oracle.model_calls("bad") == 240 - len(cells)
        assert oracle.judge_calls() == 240 - len(judges)
        journaled = Counter((c["model"].split("/")[1], question[c["case"]]) for c in cells)
        for (model, prompt), n in oracle.calls.items():
            if model != "judge":
                assert n == 3 - journaled[(model, prompt)], (model, prompt)
        in_flight_sent_twice = sum(first_calls.values()) - len(cells) - len(judges)
        assert in_flight_sent_twice <= 2 * 4  # at most the cells (and their judges) in flight at the kill

    summary = json.loads((folder / "summary.json").read_text("utf-8"))
    groups = {g["model"]: g for g in summary["groups"]}
    assert summary["complete"] and summary["exitCode"] == 1 and summary["cells"] == 240
    assert groups["loop/good"]["passRate"] == 1.0 and groups["loop/good"]["thresholdMet"]
    assert groups["loop/bad"]["passed"] == 35 and not groups["loop/bad"]["thresholdMet"]
    assert groups["loop/good"]["rubricScores"]["correct"]["n"] == 120
    xmlschema.XMLSchema(str(XSD)).validate(str(folder / "junit.xml"))
    assert read_journal(folder / "journal.jsonl").finished
    keys = [r["key"] for r in journal_lines(read_journal(folder / "journal.jsonl")) if r["type"] in ("cell", "judge")]
    assert len(keys) == len(set(keys)) == 480


def test_ctrl_c_stops_the_run_promptly_keeps_what_finished_and_the_next_run_resumes(home):
    oracle = CountingOracle(target=6)
    oracle.delay_per_chunk = 0.2  # each answer takes a while, so cells are in flight at Ctrl-C
    with LoopbackLLM() as srv:
        srv.responder = oracle
        path = write_eval(home, srv, arithmetic_and_extraction(20))
        proc = _start(home, "run", str(path), "--no-cache", "--concurrency", "2")
        try:
            _wait_running(proc, oracle.reached, 120, "no cell started")
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            _out, err = proc.communicate(timeout=60)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 130, err
        print(f"Ctrl-C to exit: {took:.2f} s")
        assert took < EXIT_BOUND_S, f"took {took:.1f} s to stop"
        (folder,) = (home / "evals" / "quiz").iterdir()
        summary = json.loads((folder / "summary.json").read_text("utf-8"))
        assert summary["interrupted"] and not summary["complete"]
        kept = [r for r in journal_lines(read_journal(folder / "journal.jsonl")) if r["type"] == "cell"]
        oracle.delay_per_chunk = 0.0
        oracle.calls.clear()

        again = _run(home, "run", str(path), "--no-cache")

        assert again.returncode == 0, again.stderr
        assert oracle.model_calls("good") == 20 - len(kept)


def test_eval_new_writes_a_file_beside_the_thread_that_runs_and_list_and_cache_clear_report(home):
    with LoopbackLLM() as srv:
        srv.responder = Oracle()
        write_eval(home, srv, arithmetic_and_extraction(4))
        (home / "workspace" / "quiz.eval.yaml").unlink()
        csv_path = home / "workspace" / "data" / "cases.csv"  # a dataset outside the workspace is refused
        csv_path.parent.mkdir()
        csv_path.write_text("id,question,expected\nq1,What is 2 + 2?,4\nq2,What is 3 + 3?,6\n", encoding="utf-8")

        made = _run(home, "new", "quiz.json", "--dataset", str(csv_path), "--models", "loop/good,loop/bad", "--repeat", "2")
        assert made.returncode == 0, made.stderr
        spec_path = home / "workspace" / "quiz.eval.yaml"
        text = spec_path.read_text("utf-8")
        assert "thread: quiz.json" in text and "dataset: data/cases.csv" in text and "- loop/bad" in text
        assert "type: contains" in text

        ran = _run(home, "run", str(spec_path))
        assert ran.returncode == 1, ran.stderr  # `bad` answers 5 to 2 + 2
        assert "loop/good: 2/2 cases pass" in ran.stdout

        listed = _run(home, "list")
        assert listed.returncode == 0 and "quiz/" in listed.stdout and "finished" in listed.stdout
        assert "loop/good 100%" in listed.stdout

        cleared = _run(home, "cache", "clear")
        assert cleared.returncode == 0 and "Removed 8 cached answers" in cleared.stdout


def test_eval_run_help_and_the_evaluate_compare_help_say_how_they_differ(home):
    from llmspace.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    choices = sub.choices  # type: ignore[attr-defined]
    assert "two runs" in choices["eval"].description
    assert "eval" in choices["evaluate"].description and "eval" in choices["compare"].description
    run_help = _run(home, "run", "--help").stdout
    for flag in ("--dataset", "--models", "--variants", "--repeat", "--judge", "--budget", "--concurrency", "--react",
                 "--max-turns", "--no-cache", "--fresh", "--out"):
        assert flag in run_help


@pytest.mark.parametrize("args", [["run", "missing.eval.yaml"], ["new", "nope.json", "--dataset", "x.csv"]])
def test_errors_of_eval_exit_2(home, args):
    proc = _run(home, *args)
    assert proc.returncode == 2 and proc.stderr.startswith("error:")


class GatedOracle(Oracle):
    """An oracle that holds its first request until `gate` is set; `first` is set once it arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.first = threading.Event()
        self.gate = threading.Event()
        self._seen = 0
        self._count_lock = threading.Lock()

    def __call__(self, kind: str, body: Any) -> Any:
        with self._count_lock:
            self._seen += 1
            first = self._seen == 1
        if first:
            self.first.set()
            self.gate.wait(300)
        return super().__call__(kind, body)


def test_a_second_run_on_a_results_folder_in_use_says_a_run_is_in_progress_and_no_cell_is_paid_twice(home):
    oracle = GatedOracle()
    with LoopbackLLM() as srv:
        srv.responder = oracle
        path = write_eval(home, srv, arithmetic_and_extraction(8))
        first = _start(home, "run", str(path), "--no-cache", "--concurrency", "1")
        try:
            _wait_running(first, oracle.first, 240, "the first run sent no request")
            (folder,) = (home / "evals" / "quiz").iterdir()

            second = _run(home, "run", str(path), "--no-cache")  # the first run holds its first cell meanwhile

            oracle.gate.set()
            _out, err = first.communicate(timeout=240)
        finally:
            oracle.gate.set()
            if first.poll() is None:
                first.kill()
        assert second.returncode == 2, second.stderr
        assert "in progress" in second.stderr and str(folder) in second.stderr, second.stderr
        assert first.returncode == 0, err
        assert oracle.model_calls("good") == 8  # 8 cells, each paid once
        assert read_journal(folder / "journal.jsonl").finished
