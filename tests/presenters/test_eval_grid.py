"""The evaluation grid's logic without a display: live records, filter, sort, the visible window,
a cell's detail, the chart figures and a case opened as a thread."""

from __future__ import annotations

from typing import Any

from llmspace.core.threadio import thread_from_data
from llmspace.evals.assertions import Assertion
from llmspace.evals.plan import Cell, Plan, cell_key
from llmspace.evals.records import JournalRecord, parse_record, parse_row
from llmspace.presenters.eval_grid import EvalGrid, open_as_thread


def _plan(cases: int = 4, models: tuple[str, ...] = ("p/good", "p/bad"), repeat: int = 1) -> Plan:
    cells = []
    ids = [f"c{i}" for i in range(cases)]
    for cid in ids:
        for m in models:
            for r in range(1, repeat + 1):
                cells.append(Cell(cell_key(cid, m, "default", r), cid, m, "default", r, {"messages": []},
                                  (Assertion("contains"),), expected="4", vars={"question": f"q of {cid}"}))
    return Plan(cells, ids, list(models), ["default"], repeat, False)


def _parsed(data: dict[str, Any]) -> JournalRecord:
    record = parse_record(data)
    assert record is not None
    return record


def _record(case: str, model: str, ok: bool, repeat: int = 1, **extra: Any) -> JournalRecord:
    return _parsed({"type": "cell", "key": cell_key(case, model, "default", repeat), "output": "4" if ok else "5",
            "checks": [{"assertion": "contains", "pass": ok, "score": 1.0 if ok else 0.0,
                        "reason": "" if ok else "expected '4' in the output"}],
            "cost": 0.001, "latencyMs": 100 if ok else 300, **extra})


def test_records_fill_cells_live_and_fold_repeats():
    grid = EvalGrid.from_plan(_plan(repeat=2))
    assert grid.counts() == {"pass": 0, "fail": 0, "error": 0, "pending": 8}
    grid.add_records([_record("c0", "p/good", True)])
    assert grid.cells[("c0", "p/good")].status == "pending"  # one repeat of two
    grid.add_records([_record("c0", "p/good", True, repeat=2), _record("c0", "p/bad", True), _record("c0", "p/bad", False, repeat=2)])
    assert grid.cells[("c0", "p/good")].status == "pass"
    assert grid.cells[("c0", "p/bad")].status == "fail"  # passK defaults to every repeat
    grid.add_records([_parsed({"type": "cell", "key": cell_key("c1", "p/good", "default", 1), "error": "HTTP 500"})])
    assert grid.cells[("c1", "p/good")].status == "error"


def test_filter_by_status_and_text_and_sort_failures_first():
    grid = EvalGrid.from_plan(_plan(cases=4))
    for cid in ("c0", "c1", "c2", "c3"):
        grid.add_records([_record(cid, "p/good", True), _record(cid, "p/bad", cid in ("c0", "c2"))])
    grid.set_filter(status="fail")
    assert grid.rows == ["c1", "c3"]
    grid.set_filter(text="of c3")  # a variable's value matches too
    assert grid.rows == ["c3"]
    grid.set_filter(text="", status="all")
    grid.sort_by("failures")
    assert grid.rows[:2] == ["c1", "c3"]
    grid.sort_by("p/bad")  # a column: fails first; the same key again reverses
    assert grid.rows[:2] == ["c1", "c3"]
    grid.sort_by("p/bad")
    assert grid.rows[-2:] == ["c3", "c1"]
    grid.sort_by("case")
    assert grid.rows == ["c0", "c1", "c2", "c3"]


def test_window_returns_only_the_visible_rows_of_a_large_grid():
    grid = EvalGrid.from_plan(_plan(cases=2500, models=("a/1", "a/2", "a/3", "a/4")))
    assert len(grid.cells) == 10_000
    window = grid.window(1200, 30)
    assert [case for case, _ in window] == [f"c{i}" for i in range(1200, 1230)]
    assert all(len(cells) == 4 for _, cells in window)
    assert grid.window(2490, 30)[-1][0] == "c2499" and len(grid.window(2490, 30)) == 10
    assert grid.cell_at(0, 3) is grid.cells[("c0", "a/4")] and grid.cell_at(2500, 0) is None


def test_a_cells_detail_has_its_output_assertion_reasons_and_judge_reason():
    grid = EvalGrid.from_plan(_plan())
    grid.add_records([_record("c0", "p/bad", False),
                      _parsed({"type": "judge", "cell": cell_key("c0", "p/bad", "default", 1), "assertion": 5,
                                    "judgeModel": "p/judge", "reason": "Wrong sum.", "scores": {"correct": 1},
                                    "check": {"assertion": "llm-rubric", "pass": False}})])
    detail = grid.cells[("c0", "p/bad")].detail()
    assert detail.output == "5" and detail.status == "fail"
    assert ("contains", False, "expected '4' in the output") in detail.checks
    text = detail.text()
    assert "expected '4' in the output" in text and "Output:\n5" in text


def test_chart_gives_pass_rate_cost_and_latency_per_model():
    grid = EvalGrid.from_plan(_plan(cases=4))
    for cid in ("c0", "c1", "c2", "c3"):
        grid.add_records([_record(cid, "p/good", True), _record(cid, "p/bad", cid == "c0")])
    bars = {b.column: b for b in grid.chart()}
    assert bars["p/good"].pass_rate == 1.0 and bars["p/bad"].pass_rate == 0.25
    assert abs(bars["p/bad"].cost - 0.004) < 1e-9
    assert bars["p/good"].latency_ms == 100 and bars["p/bad"].latency_ms == 250


def test_finished_results_rows_build_the_same_grid():
    rows = [{"case": "x", "model": "p/m", "variant": "default", "repeat": 1, "status": "fail", "output": "no",
             "checks": [{"assertion": "equals", "pass": False, "reason": "differs"}], "judges": [], "cost": 0.0}]
    grid = EvalGrid.from_rows([parse_row(r) for r in rows])
    assert grid.columns == ["p/m"] and grid.cells[("x", "p/m")].status == "fail"


def test_open_as_thread_fills_the_cases_variables_and_adds_the_reply_without_touching_the_original():
    thread = thread_from_data({"title": "quiz", "context": {"messages": [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "{{question}}"}]}]},
        "runHistory": [{"id": "r1", "thread": {"title": "quiz"}, "timestamp": 1}]})
    grid = EvalGrid.from_plan(_plan())
    grid.add_records([_record("c2", "p/good", True)])
    new = open_as_thread(thread, grid.cells[("c2", "p/good")])
    assert new.runHistory is None
    assert new.context.variableVariants.variants["default"]["question"] == "q of c2"
    assert new.messages[-1].role == "assistant" and new.messages[-1].content[0].text == "4"
    assert len(thread.messages) == 1 and thread.runHistory and thread.context.variableVariants is None


def test_every_repeat_of_a_cell_has_its_detail():
    grid = EvalGrid.from_plan(_plan(cases=1, models=("p/good",), repeat=2))
    grid.add_records([_record("c0", "p/good", True), _record("c0", "p/good", False, repeat=2)])
    cell = grid.cells[("c0", "p/good")]
    assert cell.repeat_numbers == [1, 2]
    second = cell.detail(repeat=2)
    assert (second.repeat, second.repeats, second.output) == (2, 2, "5")
    assert "(repeat 2 of 2)" in second.text() and "Output:\n5" in second.text()
    assert cell.detail(repeat=1).output == "4"
    assert cell.detail().repeat == 2  # by default the first repeat that failed


def test_the_grid_counts_cells_as_cases_times_models_times_repeats_as_the_plan_does():
    plan = _plan(cases=5, models=("p/good",), repeat=2)
    grid = EvalGrid.from_plan(plan)
    assert grid.progress_text().startswith(f"0/{len(plan.cells)} cells")  # 10, as the status line says
    grid.add_records([_record("c0", "p/good", True)])
    assert grid.progress_text().startswith("1/10 cells")
    grid.add_records([_record("c0", "p/good", True, repeat=2)])
    assert grid.progress_text("stopped").startswith("2/10 cells · pass 100% · 0 fail · 0 error")
    assert grid.progress_text("stopped").endswith(" · stopped")
