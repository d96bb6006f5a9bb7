"""The Evaluations menu's views: New Evaluation… (`new_dialog.py`), the live results window
with its virtualised grid and chart (`results_window.py`, `grid_view.py`, `chart_view.py`), a
cell's detail (`cell_window.py`), Compare Two Results… (`compare_window.py`), and the
actions that run an evaluation on the worker pool (`actions.py`). The logic is in
`presenters/evaluations.py` (start, stop, open, compare), `presenters/eval_grid.py`,
`presenters/eval_form.py` and `presenters/eval_compare.py`; nothing here imports `evals/`.
"""
