"""The evaluation results grid (Evaluations › New Evaluation…'s window): 10,000 cells
(2,500 cases × 4 models, every cell with a result) scrolled from the first row to the last,
one wheel step (a row) per frame through real `<Button-5>` events, then back up a page at a
time; the worst frame (event handled and the canvas redrawn) has a budget of 50 ms. The
frame is measured twice: wall time (what the user sees; on a machine whose other processes
keep every core busy it includes waiting for a core, and Xvfb's share) and the UI thread's
own CPU time (`time.thread_time`: the grid's work alone). Also the time to open the window and
draw its first screen. Needs a display ($DISPLAY, else its own Xvfb).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
Row = tuple[str, Any, str, Any]
CASES, MODELS = 2_500, 4


def _grid() -> Any:
    from llmspace.evals.assertions import Assertion
    from llmspace.evals.plan import Cell, Plan, cell_key
    from llmspace.evals.records import parse_record
    from llmspace.presenters.eval_grid import EvalGrid

    models = [f"loop/model-{m}" for m in range(MODELS)]
    ids = [f"case-{i:05d}" for i in range(CASES)]
    cells = [Cell(cell_key(c, m, "default", 1), c, m, "default", 1, {"messages": []}, (Assertion("contains"),), expected="x")
             for c in ids for m in models]
    grid = EvalGrid.from_plan(Plan(cells, ids, models, ["default"], 1, False))
    records = []
    for n, cell in enumerate(cells):
        ok = n % 7 != 0
        records.append(parse_record({"type": "cell", "key": cell.key, "output": "x" if ok else "y", "cost": 0.0001, "latencyMs": 100 + n % 300,
                        "checks": [{"assertion": "contains", "pass": ok, "score": 1.0 if ok else 0.0, "reason": ""}]}))
    grid.add_records([r for r in records if r is not None])
    return grid


def run() -> list[Row]:
    from bench.bench_ui import _ensure_display

    xvfb = _ensure_display()
    try:
        import ttkbootstrap as tb

        from llmspace.ui.evals.results_window import ResultsWindow

        grid = _grid()
        root = tb.Window(theme="bootstrap-light")
        root.withdraw()
        t0 = time.perf_counter()
        window = ResultsWindow(root, "bench", grid)
        window.geometry("1100x640+0+0")
        window.update()
        opened = time.perf_counter() - t0
        canvas = window.grid_view.canvas
        canvas.focus_force()
        worst = worst_cpu = 0.0
        frames = 0
        for _ in range(CASES):
            t, c = time.perf_counter(), time.thread_time()
            canvas.event_generate("<Button-5>", x=300, y=200)
            window.update_idletasks()
            worst = max(worst, time.perf_counter() - t)
            worst_cpu = max(worst_cpu, time.thread_time() - c)
            frames += 1
        assert window.grid_view.first >= CASES - window.grid_view.visible_rows, window.grid_view.first
        while window.grid_view.first > 0:
            t, c = time.perf_counter(), time.thread_time()
            canvas.event_generate("<Prior>")
            window.update_idletasks()
            worst = max(worst, time.perf_counter() - t)
            worst_cpu = max(worst_cpu, time.thread_time() - c)
            frames += 1
        window.update()
        root.destroy()
        return [("eval grid: open 10,000 cells and draw the first screen", opened * 1000, "ms", 300),
                (f"eval grid: scroll 10,000 cells, worst frame of {frames} (wall)", worst * 1000, "ms", 50),
                (f"eval grid: scroll 10,000 cells, worst frame of {frames} (UI thread CPU)", worst_cpu * 1000, "ms", 50)]
    finally:
        if xvfb is not None:
            xvfb.terminate()
            xvfb.wait(timeout=10)


if __name__ == "__main__":
    for row in run():
        print(row)
