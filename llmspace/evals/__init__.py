"""Dataset evaluations (`llmspace eval`): a thread run for every test case of a dataset
on models × variants × repeats, checked by assertions and model judges, journaled so a run
resumes after a crash, summarised as pass rates with intervals and JUnit for CI.

Modules: `spec` (the `.eval.yaml` file), `dataset` (CSV, JSON Lines, JSON, YAML, promptfoo),
`plan` (cells rendered on the driver), `cell` (one cell: call, assertions, judges — the
unit of work, `run_cell`), `judge` (llm-rubric), `cache` (response cache), `journal` (JSONL journal),
`run` (results folder, resume, `run_cells` on the pool, budget, Ctrl-C), `results` (summary.json,
junit.xml, CSV/JSONL). The pure assertion checks and statistics are `assertions`
(regexes time-limited by `timed_regex`) and `stats`; the command line is `commands/eval.py`.
"""
