"""One optimization from an evaluation file to a verdict (`llmspace optimize`).

    result = optimize(runner, Options(eval_file=…, reflector=…, rollouts=150, …), on_progress=print)
    result.exit_code        # 0 promoted, 1 not promoted, 130 interrupted

Results live in `$LLM_SPACE_HOME/optimize/<name>/<YYYYMMDD-HHMMSS>/` (or `out`): `journal.jsonl`
(a header with the hashes a resumed run must match, every reflector answer and every candidate),
`runs/<candidate>/` (each candidate's cells: an evaluation results folder, `optimize/cells.py`),
then `summary.json`, `comparison.md`/`.html` and `prompt.diff`. A run resumes the newest
unfinished folder whose evaluation file, dataset, thread, settings, target, reflector, split,
seed, field and reflector instructions are unchanged (`fresh` starts over); its lock is
`evals/journal.py`'s `RunLock`.

The original prompt first runs on every case (the baseline; its training and validation cells
count as rollouts, the held-out ones are the gate's original side); the cases are split
stratified by its outcome; the search runs (`optimize/search.py`); then the best validated
candidate runs on the held-out cases and `optimize/gate.py` decides. The budget and the time
limit stop the search, never the gate.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent.services import redactor_for
from ..cancel import CancelToken
from ..errors import UserFacingError
from ..evals.cache import ResponseCache
from ..evals.cell import ExecContext, ProviderGate, Target
from ..evals.compare import ResultSet, compare, read_results
from ..evals.journal import NAME as JOURNAL
from ..evals.journal import VERSION, JournalWriter, RunLock, read_journal, read_optimize_journal
from ..evals.records import CellRecord, End, Header, JudgeRecord, OptimizeRecord, Reflection
from ..evals.run import cache_folder, prepare
from ..evals.spec import load_spec
from ..paths import safe_component
from . import reflector as R
from .candidates import DEFAULT_CAP, field_text, with_field
from .cells import CandidateRuns
from .events import CandidateSeen, OnEvent, Phase, Progress
from .gate import Verdict, decide
from .results import write_comparison, write_diff, write_optimized, write_summary
from .search import Cand, Limits, Search
from .split import DEFAULT, Split, split_cases

if TYPE_CHECKING:
    from ..agent.runner import Runner
    from ..evals.prepared import Prepared


@dataclass
class Options:
    eval_file: Path
    reflector: tuple[str, str] | None = None
    target: tuple[str, str] | None = None
    rollouts: int = 150
    budget: float | None = None
    max_minutes: float | None = None
    seed: int = 0
    split: tuple[float, float, float] = DEFAULT
    field: str = "system"
    out: Path | None = None
    fresh: bool = False
    use_cache: bool = True
    cap: float = DEFAULT_CAP
    minibatch: int = 4
    baseline: Path | None = None  # --from: a results folder of this evaluation whose target cells are the baseline


@dataclass
class Result:
    folder: Path
    verdict: Verdict | None
    interrupted: bool
    summary: dict[str, Any] = field(default_factory=dict)
    optimized: Path | None = None

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 0 if self.verdict is not None and self.verdict.promoted else 1


def _settings_hash(o: Options, target: str, reflector: str, instructions_hash: str) -> str:
    data = {"target": target, "reflector": reflector, "split": list(o.split), "seed": o.seed, "field": o.field,
            "cap": o.cap, "minibatch": o.minibatch, "instructions": instructions_hash}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _open_folder(root: Path, o: Options, hashes: dict[str, str]) -> tuple[Path, RunLock, list[OptimizeRecord]]:
    if o.out is not None:
        candidates = [o.out] if (o.out / JOURNAL).exists() else []
    else:
        root.mkdir(parents=True, exist_ok=True)
        candidates = sorted((d for d in root.iterdir() if (d / JOURNAL).exists()), key=lambda d: d.name, reverse=True)
    if not o.fresh:
        for folder in candidates:
            records = read_optimize_journal(folder / JOURNAL)
            header = records[0] if records else None
            if any(isinstance(r, End) for r in records) or not isinstance(header, Header) or header.hashes != hashes:
                continue
            lock = RunLock.take(folder)
            return folder, lock, records[1:]
    if o.out is not None:
        if o.out.exists() and any(o.out.iterdir()):
            raise UserFacingError(f"--out {o.out} is not empty and holds no unfinished optimization of these settings.",
                                  hint="Pass a new or empty folder.")
        folder = o.out
        folder.mkdir(parents=True, exist_ok=True)
    else:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        folder, n = root / stamp, 2
        while folder.exists():
            folder, n = root / f"{stamp}-{n}", n + 1
        folder.mkdir(parents=True)
    return folder, RunLock.take(folder), []


def _resolve(p: Prepared, model: tuple[str, str]) -> Target:
    registry = p.runner.services.providers
    endpoint, info = registry.resolve(None, model[0], model[1])
    return Target(endpoint.provider_id, info.id, endpoint, info, registry.model_api(endpoint.api))


def optimize(runner: Runner, o: Options, *, on_progress: Callable[[str], None] | None = None,
             on_note: Callable[[str], None] | None = None, stop: threading.Event | None = None,
             on_event: OnEvent | None = None) -> Result:
    """`on_progress` takes the progress line, `on_note` the other lines, `on_event` the typed
    events (`optimize/events.py`); `stop` set ends it as Ctrl-C does (interrupted, resumable)."""
    note = on_note or (lambda _s: None)
    spec = load_spec(o.eval_file)
    target = o.target or spec.models[0]
    if target not in spec.models:
        raise UserFacingError(f"--target {'/'.join(target)} is not one of the models of {spec.path.name}.",
                              hint="Pass one of: " + ", ".join("/".join(m) for m in spec.models))
    spec = spec.override(models=[target])
    reflector_model = o.reflector or spec.judge or target
    p = prepare(runner, spec)
    reflector_target = _resolve(p, reflector_model)
    instructions, instructions_hash = R.instructions()
    original = field_text(p.thread, o.field)
    hashes = {**p.hashes, "optimize": _settings_hash(o, "/".join(target), "/".join(reflector_model), instructions_hash)}
    root = runner.services.root.root / "optimize" / safe_component(spec.name)
    folder, lock, prior = _open_folder(root, o, hashes)
    try:
        return _optimize(p, o, folder, prior, hashes, original, reflector_target, instructions, instructions_hash,
                         on_progress, note, stop, on_event or (lambda _e: None))
    finally:
        lock.release()


def _optimize(p: Prepared, o: Options, folder: Path, prior: list[OptimizeRecord], hashes: dict[str, str], original: str,
              reflector_target: Target, instructions: str, instructions_hash: str,
              on_progress: Callable[[str], None] | None, note: Callable[[str], None],
              stop: threading.Event | None, emit: OnEvent) -> Result:
    started = time.monotonic()
    deadline = started + o.max_minutes * 60 if o.max_minutes is not None else None
    journal, _torn = JournalWriter.open(folder / JOURNAL)
    if not prior:
        journal.append(Header(VERSION, p.spec.name, str(p.spec.path), p.thread_rel, str(p.dataset.path), hashes,
                              int(time.time() * 1000)))
    else:
        note(f"Resuming {folder}.")
    try:
        runs = CandidateRuns(p, folder / "runs", o.field, use_cache=o.use_cache)
        case_ids = list(p.plan.case_ids)
        imported = _import_baseline(p, o.baseline, runs.folder / "c0") if o.baseline is not None else set()
        if imported:
            note(f"Baseline: {len(imported)} cells from {o.baseline}")
        note(f"Baseline: the original prompt on {len(case_ids)} cases → {folder}")
        emit(Phase("baseline", f"The original prompt on {len(case_ids)} cases"))
        base = runs.run("c0", original, set(case_ids), budget=o.budget, stop=stop)
        if base.interrupted:
            return Result(folder, None, True)
        if len(base.cases) < len(case_ids):
            raise UserFacingError("The budget ran out before the baseline (the original prompt on every case) finished.",
                                  hint="Raise --budget; the next run resumes.")
        failing = {c for c, r in base.cases.items() if r.status != "pass"}
        split = split_cases(case_ids, failing, o.split, o.seed)
        orig = Cand("c0", original, None, 0, {c: r.status == "pass" for c, r in base.cases.items()})
        for c, r in base.cases.items():
            if r.status != "pass":
                orig.failures[c] = R.Failure(c, {}, r.output or r.error or "", r.failed)
        variables = {c.id: {k: str(v) for k, v in c.values.items()} for c in p.dataset.cases()}
        ctx = ExecContext(targets={reflector_target.label: reflector_target},
                          gates={reflector_target.provider: ProviderGate(1)}, cancel=CancelToken(),
                          cache=ResponseCache(cache_folder(p.runner)) if o.use_cache else None)
        redactor = redactor_for(reflector_target.endpoint) + redactor_for(next(iter(p.targets.values())).endpoint)

        def reflect(step: int, parent: Cand, failed: list[R.Failure]) -> Reflection | None:
            shown = [R.Failure(f.case, variables.get(f.case, {}), f.output, f.reasons) for f in failed]
            request = R.reflection_request(instructions, R.reflection_prompt(parent.text, shown, redactor))
            reply = R.ask(reflector_target, request, step, ctx)
            if reply is None:
                return None
            return Reflection(step, parent.id, tuple(f.case for f in failed), instructions_hash, reply.output,
                              0.0 if reply.cached else reply.cost, int(time.time() * 1000), reply.error)

        limits = Limits(o.rollouts, o.budget, deadline, o.minibatch, o.cap)
        per_case = p.spec.repeat * len(p.plan.variants)

        def progress(s: Search) -> None:
            best = s.best
            seconds_left = None if deadline is None else max(0.0, deadline - time.monotonic())
            emit(Progress(s.step, s.rollouts_used, o.rollouts, None if best is None else best.score(split.validation),
                          s.spent, seconds_left))
            if on_progress is None:
                return
            score = "–" if best is None else f"{best.score(split.validation):.0%}"
            left = "" if seconds_left is None else f" · {seconds_left / 60:.1f} min left"
            on_progress(f"step {s.step} · rollouts {s.rollouts_used}/{o.rollouts} · best validation {score} · "
                        f"${s.spent:.4f}{left}")

        timer = None
        search_stop = threading.Event()
        if deadline is not None:
            timer = threading.Timer(max(0.0, deadline - time.monotonic()), search_stop.set)
            timer.daemon = True
            timer.start()
        searched = threading.Event()  # the search ended: the relay below ends too
        if stop is not None:
            def relay(outer: threading.Event = stop) -> None:
                while not searched.is_set():
                    if outer.wait(0.25):
                        search_stop.set()
                        ctx.cancel.cancel()  # a reflector call in flight is cut off too
                        return

            threading.Thread(target=relay, daemon=True, name="optimize-stop").start()
        search = Search(runs, split, orig, reflect, journal, prior, limits, o.seed, spent=base.spent, per_case=per_case,
                        stop=search_stop, on_progress=progress, free=imported,
                        on_candidate=lambda c: emit(CandidateSeen(c)))
        emit(Phase("search", f"Searching: {len(split.train)} training, {len(split.validation)} validation, "
                             f"{len(split.holdout)} held-out cases", orig.score(split.validation)))
        progress(search)
        try:
            search.run()
        finally:
            searched.set()
        if timer is not None:
            timer.cancel()
        if search.interrupted or (stop is not None and stop.is_set()):
            return Result(folder, None, True)
        if search.stopped_because == "stopped" and deadline is not None and time.monotonic() >= deadline:
            search.stopped_because = "the time limit (--max-minutes) was reached"
        note(f"Search ended: {search.stopped_because}.")
        emit(Phase("gate", f"Search ended: {search.stopped_because}. The held-out gate runs."))
        return _gate(p, o, folder, journal, runs, split, orig, search, started, stop)
    finally:
        journal.close()


def _import_baseline(p: Prepared, source: Path, c0: Path) -> set[str]:
    """Journal the target's cells (and their judges) of the results folder `source` as the
    original prompt's (`runs/c0/`), once; the keys of the cells imported. The folder must be a
    run of this evaluation file, dataset and thread."""
    target = next(iter(p.targets))
    if (c0 / JOURNAL).exists():  # imported by the run this one resumes
        return {r.key for r in read_journal(source / JOURNAL).records if isinstance(r, CellRecord) and r.model == target
                and not r.error}
    read = read_journal(source / JOURNAL)
    header = read.header
    if header is None:
        raise UserFacingError(f"--from {source} is not an evaluation results folder (it has no journal.jsonl).",
                              hint="Pass a results folder of `llmspace eval run` (`llmspace eval list`).")
    changed = [k for k in ("evalFile", "dataset", "thread") if header.hashes.get(k) != p.hashes.get(k)]
    if changed:
        raise UserFacingError(f"--from {source}: its " + ", ".join(changed) + " differ from the evaluation's now.",
                              hint="Pass a results folder of this evaluation as it is, or leave out --from.")
    cells = [r for r in read.records if isinstance(r, CellRecord) and r.model == target and not r.error]
    keys = {r.key for r in cells}
    judges = [r for r in read.records if isinstance(r, JudgeRecord) and r.cell in keys]
    c0.mkdir(parents=True, exist_ok=True)
    writer = JournalWriter(c0 / JOURNAL)
    writer.append(Header(VERSION, f"{p.spec.name} c0", str(p.spec.path), p.thread_rel, str(p.dataset.path), p.hashes,
                         int(time.time() * 1000)))
    for cell in cells:
        writer.append(cell)
    for judge in judges:
        writer.append(judge)
    writer.close()
    return keys


def _holdout(rs: ResultSet, split: Split) -> ResultSet:
    return ResultSet(rs.folder, rs.summary, {k: v for k, v in rs.cases.items() if k[0] in split.holdout})


def _gate(p: Prepared, o: Options, folder: Path, journal: JournalWriter, runs: CandidateRuns, split: Split,
          orig: Cand, search: Search, started: float, stop: threading.Event | None) -> Result:
    best = search.best
    summary: dict[str, Any] = {
        "evalFile": str(p.spec.path), "thread": p.thread_rel, "field": o.field, "target": next(iter(p.targets)),
        "split": {"train": list(split.train), "validation": list(split.validation), "holdout": list(split.holdout)},
        "rollouts": search.rollouts_used, "rolloutLimit": o.rollouts, "reflectorCalls": len(search.reflections),
        "steps": search.step, "stoppedBecause": search.stopped_because, "spent": round(search.spent, 8),
        "originalValidation": orig.score(split.validation),
        "candidates": [{"id": c.id, "parent": c.parent, "step": c.step, "validation": c.score(split.validation)}
                       for c in search.validated],
        "best": None if best is None else {"id": best.id, "text": best.text, "validation": best.score(split.validation)},
    }
    verdict: Verdict | None = None
    optimized: Path | None = None
    if best is None:
        summary["verdict"] = {"promoted": False, "reason": "no significant improvement: no candidate beat the original on a minibatch"}
    else:
        result = runs.run(best.id, best.text, set(split.holdout), budget=None, stop=stop)
        if result.interrupted:
            return Result(folder, None, True)
        comparison = compare(_holdout(read_results(runs.folder / "c0"), split), _holdout(read_results(runs.folder / best.id), split))
        verdict = decide(comparison)
        write_comparison(folder, comparison)
        write_diff(folder / "prompt.diff", orig.text, best.text, o.field)
        summary["verdict"] = verdict.data()
        if verdict.promoted:
            thread_path = p.runner.services.workspace.root / p.thread_rel
            optimized = write_optimized(thread_path, with_field(p.thread, o.field, best.text),
                                        f"optimized by llmspace optimize, {folder.name}, {best.id}")
            summary["optimizedThread"] = str(optimized)
    summary["seconds"] = round(time.monotonic() - started, 1)
    write_summary(folder, summary)
    journal.append(End(int(time.time() * 1000)))
    return Result(folder, verdict, False, summary, optimized)
