"""Running an evaluation: prepare (read, validate, render, plan), pick the results folder (resume or new), run the cells, write the results.

    prepared = prepare(runner, spec)                       # everything checked before any call
    folder, journal, notes = open_results(prepared, out=None, fresh=False)
    outcome = run_cells(prepared, folder, journal, concurrency=4, budget=None, cache=…, on_progress=…)

Results live in `$LLM_SPACE_HOME/evals/<name>/<YYYYMMDD-HHMMSS>/` (or `--out DIR`): `journal.jsonl` (`evals/journal.py`),
then `summary.json`, `junit.xml`, `results.csv` and `results.jsonl` (`evals/results.py`). A run resumes the newest
unfinished folder of its name whose journal header (hashes of the evaluation file, dataset, thread and run settings)
matches, and otherwise says what changed and starts a new folder; `fresh` always starts over. A journaled cell is never
requested again: its record is reused, and only its missing judges run (a conversation resumes at its last journaled turn).

The pool (`evals/pool.py`): `concurrency` daemon threads run `cell.run_cell`, or with `executor: ray` tasks on a Ray cluster
do (`evals/ray_pool.py`); the driver (the calling thread) alone launches cells, journals what the executor hands back,
counts the budget, then checks select-best and max-score over each case's outputs (`evals/compare_outputs.py`). Budget: a
cell's cost (judges included) is estimated as the mean of the cells finished so far; no cell is launched when spent + what
the cells in flight are still expected to cost + one more estimate would exceed it (until a cell has finished, one runs).
Ctrl-C cancels every call; what finished is journaled and the results are written within about a second.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

from ..cancel import CancelToken
from ..core.threadio import thread_to_data
from ..errors import UserFacingError
from ..jsonio import open_regular_file
from ..paths import safe_component
from .assertion_types import skipped_assertions, unsupported_text
from .cache import ResponseCache
from .cell import ExecContext, ProviderGate, Target
from .code_assertions import CodeAssertions
from .compare_outputs import run_compare
from .conversation import attach_conversation, check_conversation_run
from .dataset import scan_dataset
from .embeddings import evaluation_embedder
from .journal import NAME as JOURNAL
from .journal import VERSION, JournalWriter, RunLock, choosing, read_journal
from .judge import Judge, judge_key
from .plan import build_plan
from .pool import CellPool, CellTask, LocalPool
from .prepared import Prepared
from .records import CellRecord, End, Header, JournalRecord, JudgeRecord, TurnRecord, spent_now
from .results import write_results
from .traced import observed

if TYPE_CHECKING:
    from ..agent.runner import Runner
    from ..core.model import Thread
    from .spec import EvalSpec

log = logging.getLogger("llmspace.evals")
CHANGED = {"evalFile": "the evaluation file", "dataset": "the dataset", "thread": "the thread",
           "settings": "the models, variants, repeats, assertions or judge"}


@dataclass
class Outcome:
    summary: dict[str, Any]
    folder: Path
    interrupted: bool = False
    stopped_for_budget: bool = False
    spent: float = 0.0
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 130 if self.interrupted else int(self.summary["exitCode"])


@dataclass
class Progress:
    done: int
    total: int
    passed: int
    decided: int
    cost: float
    elapsed: float

    done_now: int = 0  # cells done by this invocation (a resumed run's earlier cells aside)

    @property
    def eta(self) -> float | None:
        return self.elapsed / self.done_now * (self.total - self.done) if self.done_now else None


def results_root(runner: Runner) -> Path:
    return runner.services.root.root / "evals"


def cache_folder(runner: Runner) -> Path:
    return runner.services.root.cache / "eval"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_sha(path: Path) -> str:
    """The sha256 of a file, read in chunks (a dataset may be large)."""
    try:
        digest = hashlib.sha256()
        with open_regular_file(path) as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
        return digest.hexdigest()
    except OSError as exc:
        raise UserFacingError(f"Could not read {path}: {exc.strerror or exc}.") from None


def thread_hash(thread: Thread) -> str:
    """A hash of what a run sends (history and evaluations of runs left out)."""
    data = thread_to_data(thread)
    for key in ("runHistory", "evaluations"):
        data.pop(key, None)
    return _sha(json.dumps(data, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8"))


def resolve_thread(runner: Runner, spec: EvalSpec) -> str:
    """The workspace path of the spec's thread: beside the evaluation file, else a workspace path."""
    ws = runner.services.workspace
    root = Path(os.path.realpath(ws.root))
    beside = Path(os.path.realpath(spec.folder / spec.thread))
    if beside.is_file():
        try:
            return beside.relative_to(root).as_posix()
        except ValueError:
            if (mounted := ws.thread_rel(beside)) is not None:  # a trace workbench: trace/<project>/<key>/workbench.json
                return mounted
            raise UserFacingError(f"The thread {beside} is not inside the workspace ({ws.root}).",
                                  hint="Keep the evaluation file beside its thread in the workspace.") from None
    rel = spec.thread.replace("\\", "/").strip("/")
    if not ws.exists(rel):
        raise UserFacingError(f"The thread {spec.thread!r} of {spec.path.name} does not exist (looked beside the file and in the workspace).",
                              hint="Fix `thread:` in the evaluation file.")
    return rel


def prepare(runner: Runner, spec: EvalSpec) -> Prepared:
    """Read and check everything; nothing is called and nothing is written."""
    spec.validate()
    rel = resolve_thread(runner, spec)
    thread = runner.services.workspace.open(rel)
    dataset = scan_dataset(spec.dataset_path(runner.services.workspace.root))  # confined to its folder and the workspace
    if dataset.unsupported and not spec.skip_unsupported:
        raise UserFacingError(unsupported_text(dataset.path.name, dataset.unsupported),
                              hint="Remove those assertions, or run the rest with --skip-unsupported (each skipped one is "
                                   "named in the summary and the report).")
    if not dataset.count:
        raise UserFacingError(f"The dataset {dataset.path} has no cases.")
    if spec.react:
        spec_react_check(thread)
    plan = build_plan(spec, dataset, thread, runner.services.skills)
    targets: dict[str, Target] = {}
    registry = runner.services.providers
    wanted = [*spec.models, *([spec.judge] if spec.judge and plan.has_judge else []), *plan.usable_judges(registry, spec.judge)]
    for provider, model in wanted:
        endpoint, info = registry.resolve(None, provider, model)  # refuses unknown models and missing keys now
        targets[f"{provider}/{model}"] = Target(endpoint.provider_id, info.id, endpoint, info, registry.model_api(endpoint.api))
    check_conversation_run(spec, thread, dataset, targets, registry)  # its simulators and judge added to targets
    embedder = evaluation_embedder(registry, spec.embedder, plan)  # similar assertions (and their own embedders)
    hashes = {"evalFile": spec.raw_hash, "dataset": _file_sha(dataset.path), "thread": thread_hash(thread),
              "settings": spec.settings_hash()}
    prepared = Prepared(spec, rel, thread, dataset, plan, targets, hashes, runner, embedder=embedder)
    if spec.executor == "ray":
        from .ray_pool import check_ray

        check_ray(prepared)  # Ray installed; no cell that needs this machine
    return prepared


def executor_setting(runner: Runner) -> dict[str, str]:
    """`settings/evals.json`: `{"executor": "local"|"ray", "rayAddress": …}`, the defaults of every evaluation."""
    from ..jsonio import read_json

    path = runner.services.root.settings_file("evals")
    if not path.exists():
        return {}
    data = read_json(path)
    if not isinstance(data, dict):
        raise UserFacingError(f"{path} must hold an object such as {{\"executor\": \"ray\", \"rayAddress\": \"auto\"}}.")
    return {k: str(v) for k, v in data.items() if k in ("executor", "rayAddress") and isinstance(v, str)}


def spec_react_check(thread: Thread) -> None:
    if not (thread.context and thread.context.tools):
        raise UserFacingError("--react runs the thread's tool loop, but the thread has no tools.",
                              hint="Leave out --react to run one model turn per cell.")


# -- the results folder --------------------------------------------------------------------


def _header(p: Prepared) -> Header:
    return Header(VERSION, p.spec.name, str(p.spec.path), p.thread_rel, str(p.dataset.path), p.hashes, int(time.time() * 1000))


def _changes(old: Header | None, new: dict[str, str]) -> list[str]:
    if old is None or old.version != VERSION:
        return ["the journal's format"]
    return [CHANGED[k] for k in CHANGED if old.hashes.get(k) != new.get(k)]


def _new_folder(base: Path) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = base / stamp
    n = 2
    while True:
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            folder = base / f"{stamp}-{n}"
            n += 1


def open_results(p: Prepared, out: Path | None = None, fresh: bool = False) -> tuple[Path, list[JournalRecord], list[str]]:
    """(folder, journaled records to reuse, notes to print). Writes the header of a new journal.
    Takes the folder's lock (`p.lock`, released by `run_cells`): a folder another run holds is
    refused with a UserFacingError."""
    try:
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            p.lock = RunLock.take(out)
            return _open_results(p, out, fresh, out)
        base = results_root(p.runner) / safe_component(p.spec.name)
        base.mkdir(parents=True, exist_ok=True)
        with choosing(base):
            return _open_results(p, out, fresh, base)
    except BaseException:
        p.release()
        raise


def _open_results(p: Prepared, out: Path | None, fresh: bool, base: Path) -> tuple[Path, list[JournalRecord], list[str]]:
    notes: list[str] = []
    if out is not None:
        candidates = [out] if (out / JOURNAL).exists() else []
    else:
        candidates = sorted((d for d in base.iterdir() if d.is_dir() and (d / JOURNAL).exists()), key=lambda d: d.name, reverse=True)
    if not fresh:
        for folder in candidates:
            read = read_journal(folder / JOURNAL)
            if read.finished:
                if out is not None:
                    notes.append(f"{folder} holds a finished run; starting over in it.")
                    break
                continue
            if out is None:
                p.lock = RunLock.take(folder)  # an unfinished folder another run holds: "in progress"
                read = read_journal(folder / JOURNAL)  # again, under the lock
            changed = _changes(read.header, p.hashes)
            if not changed:
                if read.torn:
                    notes.append("The journal's last line was cut off by a crash; that cell runs again.")
                records = read.records[1:]
                notes.append(f"Resuming {folder} ({sum(isinstance(r, CellRecord) for r in records)} cells done).")
                return folder, records, notes
            if out is None:
                p.release()
            notes.append(f"Not resuming {folder}: " + ", ".join(changed) + " changed since it started. Starting a new run.")
            break
    if out is not None:
        folder = out
        for name in (JOURNAL, "summary.json", "junit.xml", "results.csv", "results.jsonl", "report.html"):
            (folder / name).unlink(missing_ok=True)
    else:
        folder = _new_folder(base)
        p.lock = RunLock.take(folder)
    writer = JournalWriter(folder / JOURNAL)
    writer.append(_header(p))
    writer.close()
    return folder, [], notes


# -- running -------------------------------------------------------------------------------


def _tasks(p: Prepared, records: list[JournalRecord]) -> Iterator[CellTask]:
    """What is left to run, in plan order, streamed from the dataset as the driver launches it."""
    done: dict[str, CellRecord] = {}
    judged: set[str] = set()
    for r in records:
        match r:
            case CellRecord():
                done[r.key] = r
            case JudgeRecord():
                judged.add(r.key)
            case Header() | End() | TurnRecord():
                pass
            case _:
                assert_never(r)
    judge = Judge("/".join(p.spec.judge or ()), p.thread) if (p.spec.judge or p.plan.judges) and p.spec.conversation is None else None

    def wanted(key: str) -> bool:
        prior = done.get(key)
        return prior is None or (judge is not None and not prior.error)

    for cell in p.plan.iter_cells(wanted):
        prior = done.get(cell.key)
        if prior is None:
            yield CellTask(cell, None, judged)
            continue
        assert judge is not None
        missing = [a for a in cell.assertions if a.type == "llm-rubric"
                   and judge_key(cell.key, judge.model_for(a), judge.plan(cell, a, prior.reply.output)[1]) not in judged]
        if missing:
            yield CellTask(cell, prior, judged)


class _Pending:
    """The tasks not launched yet: an iterator that can say whether one is left."""

    def __init__(self, tasks: Iterator[CellTask]) -> None:
        self._tasks = tasks
        self._next: CellTask | None = None
        self._ended = False

    def __bool__(self) -> bool:
        if self._next is None and not self._ended:
            self._next = next(self._tasks, None)
            self._ended = self._next is None
        return self._next is not None

    def popleft(self) -> CellTask:
        if not self:
            raise IndexError("no task left")
        task, self._next = self._next, None
        assert task is not None
        return task


def open_pool(p: Prepared, ctx: ExecContext, concurrency: int, limits: dict[str, int]) -> CellPool:
    """The executor of `p.spec.executor`: threads here, or tasks on a Ray cluster."""
    if p.spec.executor == "ray":
        from .ray_pool import RayPool

        return RayPool(p, ctx, concurrency, limits)
    return LocalPool(ctx, concurrency)


def run_cells(p: Prepared, folder: Path, records: list[JournalRecord], *, concurrency: int, budget: float | None,
            use_cache: bool = True, on_progress: Callable[[Progress], None] | None = None,
            on_record: Callable[[CellRecord | JudgeRecord], None] | None = None, stop: threading.Event | None = None) -> Outcome:
    """Run the cells not journaled yet on the spec's executor (the local pool, or Ray: `evals/ray_pool.py`), journal what
    comes back, write the results, release the folder's lock. `on_record(record)` and the trace observers (`evals/traced.py`)
    see each cell and judge record as it is journaled (on the driver thread). `stop` (the app's Stop) acts as Ctrl-C does."""
    try:
        with observed(p, folder, on_record) as heard:
            return _run_cells(p, folder, records, concurrency=concurrency, budget=budget, use_cache=use_cache,
                              on_progress=on_progress, on_record=heard, stop=stop)
    finally:
        p.release()


def _run_cells(p: Prepared, folder: Path, records: list[JournalRecord], *, concurrency: int, budget: float | None,
             use_cache: bool, on_progress: Callable[[Progress], None] | None,
             on_record: Callable[[CellRecord | JudgeRecord], None] | None, stop: threading.Event | None) -> Outcome:
    spec = p.spec
    cancel = CancelToken()
    limits = {t.provider: spec.provider_concurrency.get(t.provider, concurrency) for t in p.targets.values()}
    ctx = ExecContext(targets=p.targets, gates={k: ProviderGate(v) for k, v in limits.items()}, cancel=cancel,
                      cache=ResponseCache(cache_folder(p.runner)) if use_cache else None,
                      judge=Judge("/".join(spec.judge or ()), p.thread) if (spec.judge or p.plan.judges) and p.plan.has_judge else None,
                      react_thread=p.thread if spec.react else None, runner=p.runner, max_turns=spec.max_turns,
                      code=CodeAssertions(p.runner.services.root.root, p.dataset.path.parent), embedder=p.embedder)
    attach_conversation(ctx, p, records)  # mode: conversation: its turns journaled so far; its judges run in the cell
    records = list(records)
    pending = _Pending(_tasks(p, records))
    pool = open_pool(p, ctx, concurrency, limits)
    journal, _torn = JournalWriter.open(folder / JOURNAL)
    in_flight: dict[str, float] = {}
    finished_costs: list[float] = []
    spent = 0.0
    stopped_for_budget = interrupted = False
    started = time.monotonic()
    total = p.plan.cell_count
    done_cells = {r.key for r in records if isinstance(r, CellRecord)}
    tally: dict[str, Any] = {"passed": 0, "decided": 0, "cost": 0.0}
    for r in records:
        _tally(tally, r)
    base_done = len(done_cells)

    def progress() -> None:
        if on_progress is not None:
            on_progress(Progress(len(done_cells), total, tally["passed"], tally["decided"], tally["cost"],
                                 time.monotonic() - started, len(done_cells) - base_done))

    def estimate() -> float | None:
        return sum(finished_costs) / len(finished_costs) if finished_costs else None

    def may_launch() -> bool:
        if budget is None:
            return True
        est = estimate()
        if est is None:
            return not in_flight and spent <= budget
        still = sum(max(0.0, est - c) for c in in_flight.values())
        return spent + still + est <= budget

    def handle(kind: str, key: str, payload: Any) -> None:
        nonlocal spent
        if kind == "record":
            journal.append(payload)
            records.append(payload)
            if on_record is not None and not isinstance(payload, TurnRecord):
                on_record(payload)
            cost = spent_now(payload)
            spent += cost
            if key in in_flight:
                in_flight[key] += cost
            if isinstance(payload, CellRecord):
                done_cells.add(key)
            _tally(tally, payload)
            progress()
        elif kind == "done":
            finished_costs.append(in_flight.pop(key, 0.0))

    progress()
    try:
        while pending or in_flight:
            if stop is not None and stop.is_set():
                raise KeyboardInterrupt
            while pending and len(in_flight) < concurrency and not stopped_for_budget:
                if not may_launch():
                    if not in_flight:
                        stopped_for_budget = True
                    break
                task = pending.popleft()
                in_flight[task.cell.key] = 0.0
                pool.submit(task)
            if not in_flight:
                break
            event = pool.get(0.2)
            if event is None:
                progress()
                continue
            handle(*event)
        if p.plan.compare and not stopped_for_budget:  # select-best, max-score: over each case's finished cells
            run_compare(p.plan, ctx, records, lambda r: handle("record", r.cell, r), stop)
    except KeyboardInterrupt:
        interrupted = True
        pool.cancel()
        deadline = time.monotonic() + 0.8
        while in_flight and time.monotonic() < deadline:
            event = pool.get(0.05)
            if event is not None:
                handle(*event)
    if pending and budget is not None and not interrupted:
        stopped_for_budget = True
    pool.close()
    if ctx.code is not None:
        ctx.code.close()
    complete = not interrupted and not stopped_for_budget and len(done_cells) >= total
    finished_at = int(time.time() * 1000)
    meta = {"name": spec.name, "evalFile": str(spec.path), "thread": p.thread_rel, "dataset": str(p.dataset.path),
            "folder": str(folder), "hashes": p.hashes, "stoppedForBudget": stopped_for_budget, "interrupted": interrupted,
            "spentThisRun": round(spent, 8), "calls": ctx.stats["calls"], "cacheHits": ctx.stats["cacheHits"],
            "finishedAt": finished_at}
    if p.dataset.unsupported:  # --skip-unsupported: each skipped assertion named
        meta["skipped"] = skipped_assertions(p.dataset.unsupported)
    if p.dataset.notes or p.plan.notes:  # what ran differently from promptfoo or Inspect (undefined variables, …)
        meta["notes"] = [*p.dataset.notes, *p.plan.notes]
    summary = write_results(folder, p.plan, records, spec, meta)
    if complete and summary["complete"]:
        journal.append(End(finished_at))
    journal.close()
    if ctx.cache is not None:
        try:
            ctx.cache.prune()
        except OSError:
            log.warning("could not prune the evaluation cache", exc_info=True)
    return Outcome(summary, folder, interrupted, stopped_for_budget, spent, dict(ctx.stats))


def _tally(tally: dict[str, Any], r: JournalRecord) -> None:
    """Cost and pass rate so far, for progress: cells whose own checks (judges aside) all passed."""
    match r:
        case CellRecord():
            tally["cost"] += r.cost
            if not r.error:
                tally["decided"] += 1
                tally["passed"] += all(c.passed for c in r.checks)
        case JudgeRecord():
            tally["cost"] += r.cost
        case Header() | End() | TurnRecord():
            pass
        case _:
            assert_never(r)
