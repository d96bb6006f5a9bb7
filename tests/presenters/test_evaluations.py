"""The Evaluations menu's workflows with no display, against a loopback model server: an
evaluation started from the New Evaluation form writes its file beside the thread, runs every
cell and hands each journaled record on; stop() ends a running one with what finished written;
a results folder opens as a grid with its dataset's variables; two folders compare with the
flips first."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from llmspace.app import App
from llmspace.evals.records import CellRecord
from llmspace.presenters.eval_form import NewEvalForm
from llmspace.presenters.evaluations import Evaluations
from tests.evals.support import Oracle, write_thread
from tests.evals.test_compare import _folder
from tests.support.llm_server import LoopbackLLM, configure_provider


def _dataset(home: Path, n: int) -> Path:
    path = home / "workspace" / "sums.jsonl"
    rows = [{"id": f"add-{i}", "question": f"What is {i} + {i + 1}?", "expected": str(2 * i + 1)} for i in range(1, n + 1)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _setup(home: Path, srv: LoopbackLLM, n: int) -> Path:
    configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
    write_thread(home)
    return _dataset(home, n)


def test_an_evaluation_started_from_the_form_writes_its_file_runs_every_cell_and_hands_each_record_on(
        home: Path, app: App) -> None:
    with LoopbackLLM() as srv:
        srv.responder = Oracle()
        dataset = _setup(home, srv, 4)
        evaluations = Evaluations(app.workspace, app.runner)
        session = evaluations.start(NewEvalForm("quiz.json", str(dataset), "loop/good, loop/bad"))
        session.prepare()
        assert session.eval_file == home / "workspace" / "quiz.eval.yaml" and session.eval_file.is_file()
        assert session.folder.is_relative_to(evaluations.results_root())
        assert session.grid.counts()["pending"] == 8
        assert session.title == f"Evaluation quiz · {session.folder.name}"
        records: list[Any] = []
        outcome = session.run(records.append)
        assert not outcome.interrupted and not session.stopped
        session.grid.add_records(records)
        session.grid.refresh()
        assert session.grid.counts()["pending"] == 0 and session.grid.counts()["pass"] >= 4
        assert session.finished_text(outcome) == f"results in {outcome.folder}"
        again = evaluations.start(NewEvalForm("quiz.json", str(dataset), "loop/good"))
        again.prepare()
        assert again.eval_file == home / "workspace" / "quiz.eval-2.yaml"  # a free name beside the first, read as quiz's


def test_stop_ends_a_running_evaluation_and_what_finished_stays_written(home: Path, app: App) -> None:
    with LoopbackLLM() as srv:
        oracle = Oracle()
        oracle.delay_per_chunk = 0.05
        srv.responder = oracle
        dataset = _setup(home, srv, 40)
        session = Evaluations(app.workspace, app.runner).start(NewEvalForm("quiz.json", str(dataset), "loop/good"))
        session.prepare()
        first = threading.Event()
        records: list[Any] = []

        def on_record(r: Any) -> None:
            records.append(r)
            first.set()

        with ThreadPoolExecutor(1) as pool:
            running = pool.submit(session.run, on_record)
            assert first.wait(120), "no record within 120 s"
            session.stop()
            outcome = running.result(timeout=120)
        assert session.stopped and outcome.interrupted
        assert session.finished_text(outcome).startswith("stopped; what finished is in ")
        assert (outcome.folder / "journal.jsonl").is_file()
        session.grid.add_records(records)
        session.grid.refresh()
        assert session.grid.counts()["pending"] > 0


def test_an_interrupted_folder_opens_as_interrupted_and_resumes_in_that_folder_without_its_finished_cells(
        home: Path, app: App) -> None:
    with LoopbackLLM() as srv:
        oracle = Oracle()
        oracle.delay_per_chunk = 0.05
        srv.responder = oracle
        dataset = _setup(home, srv, 40)
        evaluations = Evaluations(app.workspace, app.runner)
        session = evaluations.start(NewEvalForm("quiz.json", str(dataset), "loop/good"))
        session.prepare()
        first = threading.Event()
        with ThreadPoolExecutor(1) as pool:
            running = pool.submit(session.run, lambda r: first.set())
            assert first.wait(120), "no record within 120 s"
            session.stop()
            folder = running.result(timeout=120).folder
        opened = evaluations.open_results(folder)
        assert opened.interrupted and opened.text.startswith("interrupted")
        oracle.delay_per_chunk = 0.0
        resumed = evaluations.resume(folder)
        resumed.prepare()
        assert resumed.folder == folder and resumed.started.records
        assert resumed.grid.counts()["pending"] < 40  # the grid starts from what finished
        handed: list[Any] = []
        outcome = resumed.run(handed.append)
    assert outcome.folder == folder and not outcome.interrupted
    done_before = sum(isinstance(r, CellRecord) for r in resumed.started.records)
    assert sum(isinstance(r, CellRecord) for r in handed) == 40 - done_before  # only the cells not finished ran
    assert not evaluations.open_results(folder).interrupted


def test_a_results_folder_opens_as_a_grid_with_its_thread_and_its_datasets_variables(home: Path, app: App) -> None:
    with LoopbackLLM() as srv:
        srv.responder = Oracle()
        dataset = _setup(home, srv, 3)
        evaluations = Evaluations(app.workspace, app.runner)
        session = evaluations.start(NewEvalForm("quiz.json", str(dataset), "loop/good"))
        session.prepare()
        outcome = session.run(lambda r: None)
    opened = evaluations.open_results(outcome.folder)
    assert opened.thread_rel == "quiz.json" and opened.title == f"Evaluation quiz · {outcome.folder.name}"
    assert opened.grid.counts()["pending"] == 0 and len(opened.grid.cells) == 3
    (cell,) = [c for (case, _col), c in opened.grid.cells.items() if case == "add-2"]
    assert cell.vars["question"] == "What is 2 + 3?"  # "Open as thread" fills the case's variables


def test_two_results_folders_compare_with_the_flips_first(home: Path, app: App) -> None:
    base = home / "evals" / "quiz"
    a = _folder(base / "20260101-100000", [("c1", "p/m", "pass", 1.0), ("c2", "p/m", "fail", 0.0)])
    b = _folder(base / "20260102-100000", [("c1", "p/m", "fail", 0.0), ("c2", "p/m", "pass", 1.0)])
    view = Evaluations(app.workspace, app.runner).compare(a, b)
    assert [(r.change, r.case) for r in view.rows] == [("pass → fail", "c1"), ("fail → pass", "c2")]
