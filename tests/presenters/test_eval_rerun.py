"""Running an evaluation again, with no display, against a loopback model server: a second
evaluation file of a thread is named `<stem>.eval-2.yaml` (not `<stem>-2.eval.yaml`, which reads
as thread `<stem>-2`'s); a results folder or an evaluation file gives the form to run again; a
re-run marks the cells answered from the response cache; fresh answers call the models; and a
re-run after the thread changed runs it as it is now and says so."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from llmspace.app import App
from llmspace.evals.spec import eval_name, is_eval_file
from llmspace.presenters.eval_form import NewEvalForm
from llmspace.presenters.eval_grid import CACHED_NOTE, EvalGrid
from llmspace.presenters.evaluations import Evaluations, EvaluationSession, eval_file_for
from tests.evals.support import Oracle, last_user, write_thread
from tests.support.llm_server import LoopbackLLM, configure_provider


class Forgetful(Oracle):
    """Answers every question wrong (what a model asked afresh may well do)."""

    def answer(self, model: str, prompt: str) -> str:
        return "I do not know."


def _setup(home: Path, srv: LoopbackLLM, n: int = 3) -> Path:
    configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
    write_thread(home)
    path = home / "workspace" / "sums.jsonl"
    rows = [{"id": f"add-{i}", "question": f"What is {i} + {i + 1}?", "expected": str(2 * i + 1)} for i in range(1, n + 1)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(session: EvaluationSession) -> EvalGrid:
    session.prepare()
    records: list[Any] = []
    outcome = session.run(records.append)
    assert not outcome.interrupted
    session.grid.add_records(records)
    session.grid.refresh()
    return session.grid


def _posts(srv: LoopbackLLM) -> int:
    return sum(1 for r in srv.requests if r.method == "POST")


def test_a_second_evaluation_file_of_a_thread_is_named_so_that_it_reads_as_that_threads(tmp_path: Path) -> None:
    thread = tmp_path / "upper.json"
    assert eval_file_for(thread) == tmp_path / "upper.eval.yaml"
    (tmp_path / "upper.eval.yaml").write_text("x", encoding="utf-8")
    assert eval_file_for(thread) == tmp_path / "upper.eval-2.yaml"
    (tmp_path / "upper.eval-2.yaml").write_text("x", encoding="utf-8")
    assert eval_file_for(thread) == tmp_path / "upper.eval-3.yaml"
    assert is_eval_file("upper.eval-3.yaml") and eval_name(tmp_path / "upper.eval-3.yaml") == "upper"


def test_an_evaluation_files_form_is_the_form_it_was_written_from(home: Path, app: App) -> None:
    with LoopbackLLM() as srv:
        dataset = _setup(home, srv)
        form = NewEvalForm("quiz.json", str(dataset), "loop/good, loop/bad", "contains\nregex: ^\\d+$\nllm-rubric: correct",
                           "loop/judge", 2)
        evaluations = Evaluations(app.workspace, app.runner)
        session = evaluations.start(form)
        session.prepare()
        session.started.prepared.release()
        assert session.eval_file is not None
        rerun = evaluations.open_eval_file(session.eval_file)
    assert rerun.form == form and rerun.eval_file == session.eval_file and rerun.note == ""


def test_running_again_marks_the_cached_cells_and_fresh_answers_ask_the_models_again(home: Path, app: App) -> None:
    with LoopbackLLM() as srv:
        srv.responder = Oracle()
        dataset = _setup(home, srv)
        evaluations = Evaluations(app.workspace, app.runner)
        first = evaluations.start(NewEvalForm("quiz.json", str(dataset), "loop/good"))
        grid = _run(first)
        assert grid.cached_cells() == 0 and all("ms" in c.label for c in grid.cells.values())
        calls = _posts(srv)

        srv.responder = Forgetful()  # a model asked again now answers otherwise
        rerun = evaluations.again(first.folder)
        assert rerun.eval_file == first.eval_file and rerun.note == ""
        again = evaluations.start(rerun.form, rerun)
        grid = _run(again)
        assert again.eval_file == first.eval_file  # unchanged: the same file, no new one
        assert again.folder != first.folder
        assert _posts(srv) == calls  # every answer came from the cache
        assert grid.cached_cells() == 3 and grid.counts()["pass"] == 3
        assert grid.progress_text() == "3/3 cells · pass 100% · 0 fail · 0 error · 3 from the cache"
        cell = grid.cells[("add-1", "loop/good")]
        assert cell.label == "✓ pass  · cached" and CACHED_NOTE in cell.detail().text()

        fresh = evaluations.start(replace(rerun.form, fresh=True), rerun)
        grid = _run(fresh)
        assert fresh.eval_file == first.eval_file and "with fresh answers" in fresh.status_line
        assert _posts(srv) == calls + 3
        assert grid.cached_cells() == 0 and grid.counts()["fail"] == 3  # the new answers, not the cached ones
        assert "from the cache" not in grid.progress_text()
        detail = grid.cells[("add-1", "loop/good")].detail()
        assert detail.output == "I do not know." and detail.latency_ms is not None and CACHED_NOTE not in detail.text()
        assert sorted(p.name for p in (home / "workspace").glob("*.eval*")) == ["quiz.eval.yaml"]


def test_running_again_after_the_thread_changed_runs_it_as_it_is_now_and_says_so(home: Path, app: App) -> None:
    with LoopbackLLM() as srv:
        srv.responder = Oracle()
        dataset = _setup(home, srv)
        evaluations = Evaluations(app.workspace, app.runner)
        first = evaluations.start(NewEvalForm("quiz.json", str(dataset), "loop/good"))
        _run(first)
        write_thread(home, text="Please answer: {{question}}")
        rerun = evaluations.again(first.folder)
        assert rerun.note == "The thread quiz.json changed since these results: it runs as it is now."
        again = evaluations.start(rerun.form, rerun)
        grid = _run(again)
        assert rerun.note in again.status_line
        assert grid.cached_cells() == 0  # another prompt: the cache has no answer for it
        assert last_user(srv.requests[-1].body_json).startswith("Please answer: What is")


def test_a_changed_form_of_a_rerun_is_written_as_a_new_file_beside_the_thread(home: Path, app: App) -> None:
    with LoopbackLLM() as srv:
        srv.responder = Oracle()
        dataset = _setup(home, srv)
        evaluations = Evaluations(app.workspace, app.runner)
        first = evaluations.start(NewEvalForm("quiz.json", str(dataset), "loop/good"))
        _run(first)
        rerun = evaluations.again(first.folder)
        changed = evaluations.start(replace(rerun.form, models="loop/good, loop/bad"), rerun)
        grid = _run(changed)
    assert changed.eval_file == home / "workspace" / "quiz.eval-2.yaml"
    assert grid.columns == ["loop/good", "loop/bad"]
    assert (home / "workspace" / "quiz.eval.yaml").read_text(encoding="utf-8").count("loop/bad") == 0
