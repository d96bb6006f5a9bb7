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
and reports go through `jsonio`.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.history import append_run, normalize_history, snapshot_of
from ..core.model import AssistantMessage, Thread
from ..core.timing import run_latency_ms
from ..core.usage import cost_of, is_zero, normalize_usage, run_usage
from ..errors import UserFacingError
from ..jsonio import loads_located, read_file_bytes, write_bytes_atomic, write_json_atomic

if TYPE_CHECKING:
    from ..core.workspace import Workspace
    from .run_types import RunResult
    from .runner import Runner

log = logging.getLogger("llmspace.matrix")

RESULTS_VERSION = 1
DEFAULT_VARIANT = "default"


@dataclass
class MatrixSpec:
    models: list[tuple[str, str]]  # (provider id, model id)
    variants: dict[str, dict[str, str]] = field(default_factory=lambda: {DEFAULT_VARIANT: {}})
    repeat: int = 1
    budget: float | None = None  # USD for this invocation; None = no limit
    concurrency: int = 2
    react: bool = False
    auto_tools: bool = False
    max_turns: int = 50

    def validate(self) -> None:
        if not self.models:
            raise UserFacingError("A matrix needs at least one model.", hint="Pass --models PROVIDER/MODEL[,PROVIDER/MODEL…].")
        if not self.variants:
            self.variants = {DEFAULT_VARIANT: {}}
        if self.repeat < 1 or self.repeat > 100:
            raise UserFacingError(f"--repeat must be from 1 to 100, not {self.repeat}.")
        if self.concurrency < 1 or self.concurrency > 32:
            raise UserFacingError(f"--concurrency must be from 1 to 32, not {self.concurrency}.")
        if self.budget is not None and not self.budget > 0:
            raise UserFacingError(f"--budget must be a positive amount in USD, not {self.budget}.",
                                  hint="Leave --budget out to run without a limit.")


@dataclass
class MatrixCell:
    model: str  # "provider/model"
    variant: str
    repeat: int  # 1-based
    status: str = "pending"  # pending | completed | stopped | paused | failed | skipped
    run_id: str | None = None
    error: str | None = None
    output: str = ""
    usage: dict[str, Any] | None = None
    cost: float = 0.0
    first_token_ms: float | None = None
    duration_ms: float | None = None
    wall_ms: float | None = None
    finished_at: int | None = None

    @property
    def key(self) -> str:
        return f"{self.model} | {self.variant} | #{self.repeat}"

    @property
    def finished(self) -> bool:
        return self.status in ("completed", "stopped", "paused", "failed")


@dataclass
class MatrixResult:
    thread: str
    spec: MatrixSpec
    cells: list[MatrixCell]
    matrix_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created_at: int = field(default_factory=lambda: int(time.time() * 1000))
    updated_at: int = 0
    spent: float = 0.0  # this invocation
    stopped_for_budget: bool = False

    @property
    def failed(self) -> list[MatrixCell]:
        return [c for c in self.cells if c.status == "failed"]

    def to_data(self) -> dict[str, Any]:
        spec = asdict(self.spec)
        spec["models"] = [f"{p}/{m}" for p, m in self.spec.models]
        return {"version": RESULTS_VERSION, "matrixId": self.matrix_id, "thread": self.thread,
                "createdAt": self.created_at, "updatedAt": self.updated_at, "spec": spec,
                "spent": self.spent, "stoppedForBudget": self.stopped_for_budget,
                "cells": [asdict(c) for c in self.cells]}

    @classmethod
    def from_data(cls, data: Any, source: str) -> MatrixResult:
        try:
            raw_spec = dict(data["spec"])
            raw_spec["models"] = [parse_model(m) for m in raw_spec["models"]]
            spec = MatrixSpec(**{k: v for k, v in raw_spec.items() if k in MatrixSpec.__dataclass_fields__})
            cells = [MatrixCell(**{k: v for k, v in c.items() if k in MatrixCell.__dataclass_fields__}) for c in data["cells"]]
            return cls(thread=data["thread"], spec=spec, cells=cells, matrix_id=data.get("matrixId", ""),
                       created_at=data.get("createdAt", 0), updated_at=data.get("updatedAt", 0),
                       spent=float(data.get("spent", 0.0)), stopped_for_budget=bool(data.get("stoppedForBudget")))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UserFacingError(f"{source} is not a matrix results file this version understands ({exc}).",
                                  hint="Run the matrix again without --rerun-failed.") from None


# -- parsing ----------------------------------------------------------------------------------


def parse_model(text: str) -> tuple[str, str]:
    provider, sep, model = text.strip().partition("/")
    if not sep or not provider.strip() or not model.strip():
        raise UserFacingError(f"{text!r} is not PROVIDER/MODEL.", hint="Example: --models openai/gpt-4.1,anthropic/claude-sonnet-4-5")
    return provider.strip(), model.strip()


def parse_models(text: str) -> list[tuple[str, str]]:
    models = [parse_model(part) for part in text.split(",") if part.strip()]
    if len(set(models)) != len(models):
        raise UserFacingError("A model is listed twice in --models.")
    return models


def _variant_set(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in text.split(";"))):
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UserFacingError(f"{pair!r} in --variants is not NAME=VALUE.", hint='Example: --variants "tone=formal;lang=en"')
        out[name.strip()] = value
    return out


def parse_variants(items: list[str], base: Path | None = None) -> dict[str, dict[str, str]]:
    """Variants from `--variants` values: each a JSON file, or one set `NAME=V;NAME=V`.

    A JSON file holds `{"variant name": {"VAR": "value", …}, …}` or a list of
    `{"name": …, "variables": {…}}` objects (or of plain variable objects)."""
    variants: dict[str, dict[str, str]] = {}
    for item in items:
        path = Path(item).expanduser()
        if base is not None and not path.is_absolute() and not path.exists():
            path = base / path
        if "=" not in item and not path.is_file():
            raise UserFacingError(f"--variants {item!r} is neither a JSON file nor NAME=VALUE pairs.")
        if "=" not in item or path.is_file():
            variants.update(_variants_from_file(path))
        else:
            variants[item.strip()] = _variant_set(item)
    return variants or {DEFAULT_VARIANT: {}}


def _variants_from_file(path: Path) -> dict[str, dict[str, str]]:
    try:
        data = loads_located(read_file_bytes(path), path)
    except OSError as exc:
        raise UserFacingError(f"Could not read {path}: {exc.strerror or exc}.") from None
    out: dict[str, dict[str, str]] = {}
    if isinstance(data, dict):
        items = list(data.items())
    elif isinstance(data, list):
        items = []
        for i, entry in enumerate(data, 1):
            if isinstance(entry, dict) and isinstance(entry.get("variables"), dict):
                items.append((str(entry.get("name") or f"variant {i}"), entry["variables"]))
            else:
                items.append((f"variant {i}", entry))
    else:
        items = []
    for name, values in items:
        if not isinstance(values, dict) or not all(isinstance(k, str) for k in values):
            raise UserFacingError(f"{path}: variant {name!r} must be an object of NAME: VALUE.")
        out[str(name)] = {k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for k, v in values.items()}
    if not out:
        raise UserFacingError(f"{path} holds no variants.", hint='Write {"name": {"VAR": "value"}, …}.')
    return out


def plan_cells(spec: MatrixSpec) -> list[MatrixCell]:
    return [MatrixCell(model=f"{p}/{m}", variant=v, repeat=r)
            for p, m in spec.models for v in spec.variants for r in range(1, spec.repeat + 1)]


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
    from .report import render_html, render_markdown

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
