"""Matrix runs: one thread over models × variable variants × repeats, on the worker pool.

    spec = MatrixSpec(models=[("openai", "gpt-4.1"), ("loop", "m")], variants={"formal": {"tone": "formal"}},
                      repeat=2, budget=0.50, concurrency=2)
    result = run_matrix(app.runner, "demo.json", spec)          # or rerun_failed(app.runner, "demo.json")

- Each cell runs a fresh copy of the thread's title/model/context through `runner.submit`
  with `RunOptions(provider=, model=, variables=)`; at most `concurrency` cells are in flight.
- Budget (USD, this invocation): before launching a cell, the cost of one cell is estimated as
  the mean cost of the cells finished so far; no cell is launched when
  spent + (in flight + 1) × estimate > budget. Until a cell has finished, only one runs at a
  time, so the first estimate comes from a real cell. Cells not launched are `skipped`.
- Every recorded cell is appended to the thread's run history (which keeps the newest 20 runs;
  older ones drop off as usual). So that no cell is ever lost, every cell — output, usage,
  latency, cost, run id, error — is also kept in the hidden results file `.<stem>.matrix.json`
  beside the thread (hidden so the workspace tree does not list it as a thread), and the
  reports `<stem>.matrix.md` and `<stem>.matrix.html` are written beside the thread.
- `rerun_failed` re-runs only the cells of the last matrix whose status is `failed`.

The thread is saved through `runner.services.workspace.save` after every finished cell; the results file
and reports go through `jsonio`. The spec, the cells and the results record, and the parsing of
`--models`/`--variants`, are `agent/matrix_spec.py`.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.history import append_run, normalize_history, snapshot_of
from ..core.model import AssistantMessage, Thread
from ..core.timing import run_latency_ms
from ..core.usage import cost_of, is_zero, normalize_usage, run_usage
from ..errors import UserFacingError
from ..jsonio import loads_located, read_file_bytes, write_bytes_atomic, write_json_atomic
from .matrix_spec import MatrixCell, MatrixResult, MatrixSpec, plan_cells

if TYPE_CHECKING:
    from ..core.workspace import Workspace
    from .run_types import RunResult
    from .runner import Runner

log = logging.getLogger("llmspace.matrix")

# -- files ------------------------------------------------------------------------------------


def sibling_paths(workspace: Workspace, rel: str) -> dict[str, Path]:
    """Where the results file and the reports of the thread `rel` live."""
    path = workspace.resolve(rel)
    stem = path.name[:-5] if path.name.endswith(".json") else path.name
    return {"results": path.with_name(f".{stem}.matrix.json"), "md": path.with_name(f"{stem}.matrix.md"),
            "html": path.with_name(f"{stem}.matrix.html")}


def load_results(workspace: Workspace, rel: str) -> MatrixResult:
    path = sibling_paths(workspace, rel)["results"]
    if not path.exists():
        raise UserFacingError(f"No matrix has been run on {rel} yet.", hint="Run `llmspace matrix THREAD --models …` first.")
    return MatrixResult.from_data(loads_located(read_file_bytes(path), path), str(path))


def write_outputs(workspace: Workspace, result: MatrixResult) -> dict[str, Path]:
    from .report import render_html, render_markdown  # here: Jinja2 loads only when reports are written

    paths = sibling_paths(workspace, result.thread)
    result.updated_at = int(time.time() * 1000)
    write_json_atomic(paths["results"], result.to_data(), trailing_newline=True)
    write_bytes_atomic(paths["md"], render_markdown(result).encode("utf-8"))
    write_bytes_atomic(paths["html"], render_html(result).encode("utf-8"))
    return paths


# -- running ----------------------------------------------------------------------------------


def _check_models(runner: Runner, spec: MatrixSpec) -> None:
    """Refuse unknown providers/models and missing keys before any money is spent."""
    for provider, model in spec.models:
        runner.services.providers.resolve(None, provider, model)


def _cell_thread(base: Thread) -> Thread:
    from ..core.threadio import thread_from_data

    snap = snapshot_of(base)
    return thread_from_data(snap.model_dump(exclude_unset=True, by_alias=True))


def _fill(cell: MatrixCell, result: RunResult, thread: Thread) -> None:
    """Copy a run's outcome into its cell and its run into `thread`'s history."""
    cell.status = result.status
    cell.error = result.error
    cell.finished_at = int(time.time() * 1000)
    new_ids = set(result.new_message_ids or [])
    new = [m for m in result.thread.messages if m.id in new_ids and isinstance(m, AssistantMessage)]
    usage = run_usage(new)
    cell.usage = None if is_zero(usage) else usage.model_dump()
    cell.cost = cost_of(usage)
    cell.first_token_ms, cell.duration_ms = run_latency_ms(new)
    cell.output = "\n\n".join(_message_text(m) for m in new if _message_text(m))
    if result.run_id:
        entry = next((r for r in result.thread.runHistory or [] if r.id == result.run_id), None)
        if entry is not None:
            append_run(thread, normalize_usage(entry.usage) if entry.usage is not None else None,
                       timestamp_ms=int(entry.timestamp), run_id=entry.id, snapshot=entry.thread)
            cell.run_id = entry.id


def _message_text(m: AssistantMessage) -> str:
    parts = [m.text().strip()] if m.text().strip() else []
    for call in m.toolCalls or []:
        parts.append(f"{call.input.name}({json.dumps(call.input.arguments, ensure_ascii=False)})")
    return "\n".join(parts)


def execute(runner: Runner, rel: str, result: MatrixResult, todo: list[MatrixCell],
            on_cell: Callable[[MatrixCell], None] | None = None) -> MatrixResult:
    """Run the `todo` cells of `result` (in order) and write the thread, results and reports."""
    from ..cancel import CancelToken
    from .run_types import RunOptions

    spec = result.spec
    spec.validate()
    _check_models(runner, spec)
    workspace = runner.services.workspace
    thread = workspace.open(rel)
    normalize_history(thread)
    base = _cell_thread(thread)
    queue = list(todo)
    for cell in queue:
        cell.status, cell.error, cell.run_id, cell.output, cell.usage, cell.cost = "pending", None, None, "", None, 0.0
    running: dict[cf.Future[RunResult], tuple[MatrixCell, CancelToken, float]] = {}
    costs: list[float] = []
    result.spent = 0.0
    result.stopped_for_budget = False

    def may_launch() -> bool:
        if spec.budget is None:
            return True
        if not costs:
            return not running and result.spent <= spec.budget
        estimate = sum(costs) / len(costs)
        return result.spent + (len(running) + 1) * estimate <= spec.budget

    try:
        while queue or running:
            while queue and len(running) < spec.concurrency and not result.stopped_for_budget:
                if not may_launch():
                    if not running:
                        result.stopped_for_budget = True
                    break
                cell = queue.pop(0)
                provider, model = cell.model.split("/", 1)
                opts = RunOptions(provider=provider, model=model, variables=dict(spec.variants.get(cell.variant, {})),
                                  max_turns=spec.max_turns, auto_tools=spec.auto_tools, react=spec.react)
                token = CancelToken()
                cell.status = "running"
                fut = runner.submit(_cell_thread(base), opts, cancel=token)
                running[fut] = (cell, token, time.perf_counter())
            if not running:
                if queue and spec.budget is not None:
                    result.stopped_for_budget = True
                break
            done, _ = cf.wait(list(running), return_when=cf.FIRST_COMPLETED)
            for fut in done:
                cell, _token, started = running.pop(fut)
                cell.wall_ms = round((time.perf_counter() - started) * 1000, 1)
                try:
                    _fill(cell, fut.result(), thread)
                except Exception as exc:  # a bug guard: never lose the other cells
                    log.exception("matrix cell %s", cell.key)
                    cell.status, cell.error = "failed", f"Internal error: {type(exc).__name__}"
                result.spent += cell.cost
                if cell.status != "failed" or cell.cost:
                    costs.append(cell.cost)
                workspace.save(rel, thread)
                if on_cell is not None:
                    on_cell(cell)
    except KeyboardInterrupt:
        for _cell, token, _started in running.values():
            token.cancel()
        for fut, (cell, _token, _started) in list(running.items()):
            try:
                _fill(cell, fut.result(timeout=10), thread)
            except Exception:
                cell.status, cell.error = "failed", "Interrupted."
        workspace.save(rel, thread)
        _mark_skipped(queue, "Interrupted before it started.")
        write_outputs(workspace, result)
        raise
    _mark_skipped(queue, "Not started: the budget would have been exceeded.")
    write_outputs(workspace, result)
    return result


def _mark_skipped(cells: list[MatrixCell], reason: str) -> None:
    for cell in cells:
        cell.status, cell.error = "skipped", reason


def run_matrix(runner: Runner, rel: str, spec: MatrixSpec,
               on_cell: Callable[[MatrixCell], None] | None = None) -> MatrixResult:
    """Plan and run a new matrix over the thread `rel`."""
    spec.validate()
    result = MatrixResult(thread=rel, spec=spec, cells=plan_cells(spec))
    return execute(runner, rel, result, list(result.cells), on_cell)


def rerun_failed(runner: Runner, rel: str, *, budget: float | None = None, concurrency: int | None = None,
                 on_cell: Callable[[MatrixCell], None] | None = None) -> MatrixResult:
    """Re-run only the failed cells of the last matrix of `rel` (others are left as they are)."""
    result = load_results(runner.services.workspace, rel)
    result.thread = rel
    failed = result.failed
    if not failed:
        raise UserFacingError(f"The last matrix of {rel} has no failed cells.", hint="Nothing to re-run.")
    result.spec.budget = budget
    if concurrency is not None:
        result.spec.concurrency = concurrency
    return execute(runner, rel, result, failed, on_cell)
