"""Evaluation cells as tasks on a Ray cluster: `llmspace eval run FILE --executor ray` (docs/scale-out.md).

    check_ray(prepared)                 # before anything runs: Ray installed, cells that may leave this machine
    pool = RayPool(prepared, ctx, concurrency, limits)   # connects; evals/pool.py's executor interface

Ray is an optional extra (`pip install 'llmspace[ray]'`), imported lazily here and in
`evals/ray_tasks.py` (what runs on the workers) only, and never in the single-file executable. Usage statistics are switched off (`RAY_USAGE_STATS_ENABLED=0`).

What a task receives (`ray_tasks.cell_task`): the cell (its rendered request, assertions, expected
value and variables), its journaled record and judge keys when only judges are missing,
each target as provider, model, API, base URL and the *name* of the environment variable
holding the key — never a key: workers read keys from their node's environment (on
Kubernetes, a Secret) — cached answers the driver found for it, and the handles of the
slot actors. Never the workspace: the judge gets a thread holding only the rubrics.

Cluster-wide limits: one small actor per provider (`ProviderSlots`, on the head node) hands
out `--concurrency`/`providerConcurrency` slots to the calls of every worker, and a 429 (or
Retry-After) pauses that provider's calls everywhere. A node-local provider (`nodeLocal` in
the evaluation file: provider -> Ray resources such as `{GPU: 1}`) has its cells scheduled
with those resources; its base URL may use `${env:VAR}`, resolved on the worker
(`cell.node_url`).

The driver keeps `concurrency` tasks in flight, waits on them (`ray.wait`) and hands their
records to the one journal writer as they finish. A task whose worker or node died is run
again (at most MAX_ATTEMPTS times; the cost its calls reported to the slot actors before
dying is added to the cell's `cost` as `lostCost`); its records only ever come back with a
finished task, so a cell is recorded once. Ctrl-C cancels every outstanding task.
"""

from __future__ import annotations

import importlib.util
import itertools
import logging
import os
import platform
import time
from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError
from .cache import CacheEntry, cache_key
from .cell import ExecContext
from .judge import JUDGE_REPEAT
from .ray_tasks import ProviderSlots, cell_task, quiet_ray, target_data
from .records import CellRecord, JudgeRecord, parse_reply, spent_now

if TYPE_CHECKING:
    from .plan import Cell
    from .pool import CellTask, Event
    from .prepared import Prepared

log = logging.getLogger("llmspace.evals")
INSTALL_HINT = "Install it with: pip install 'llmspace[ray]' (on this machine, with the Ray version the cluster runs)."
MAX_ATTEMPTS = 3  # runs of one cell whose worker or node died before it is given up (not recorded)
LOCAL_BUILTINS = frozenset(["read", "write", "skill", "edit", "ls", "tree", "grep", "glob", "bash", "present_files"])
NAMESPACE = "llmspace-evals"


def ray_installed() -> bool:
    try:
        return importlib.util.find_spec("ray") is not None
    except ValueError:  # a module entry without a spec (sys.modules["ray"] = None): not usable
        return False


def import_ray() -> Any:
    quiet_ray()
    try:
        import ray
    except ImportError:
        raise UserFacingError("--executor ray needs Ray, which is not installed here.", hint=INSTALL_HINT) from None
    return ray


# -- what may run on a cluster ---------------------------------------------------------------


def local_only_tools(p: Prepared) -> list[str]:
    """The thread's tools that need this machine: MCP, plugin, and the file/shell built-ins."""
    tools = p.thread.context.tools if p.thread.context and p.thread.context.tools else []
    out = []
    for t in tools:
        if t.type in ("mcp", "plugin") or (t.type == "builtin" and t.name in LOCAL_BUILTINS):
            out.append(f"{t.name} ({t.type})")
    return out


def check_ray(p: Prepared) -> None:
    """Refuse, before anything runs, what cannot run on Ray (naming the cells), and a missing Ray."""
    first = [c.key for c in itertools.islice(p.plan.iter_cells(), 5)]  # streamed: a million cells are not built for a message
    shown = ", ".join(first) + (f", … ({p.plan.cell_count} cells)" if p.plan.cell_count > 5 else "")
    if p.spec.react:
        raise UserFacingError(f"These cells run the tool loop (--react), which needs this machine: {shown}.",
                              hint="Run them with --executor local, or leave out --react to run one model turn per cell.")
    tools = local_only_tools(p)
    if tools:
        raise UserFacingError(f"The thread {p.thread_rel} uses tools that need this machine ({', '.join(tools)}), "
                              f"so its cells cannot run on Ray: {shown}.",
                              hint="Run it with --executor local, or remove those tools from the thread.")
    from ..providers.registry import BUILTIN_APIS

    for label, t in p.targets.items():
        if t.endpoint.api not in BUILTIN_APIS:
            raise UserFacingError(f"{label} is served by a plugin API ({t.endpoint.api}), which only this machine has.",
                                  hint="Run it with --executor local.")
        if t.endpoint.headers:
            raise UserFacingError(f"The provider {t.provider} sends headers from models.json; they may hold credentials, "
                                  "which are never sent to a cluster.",
                                  hint="Run it with --executor local, or use a provider without headers.")
    if not ray_installed():
        raise UserFacingError("--executor ray needs Ray, which is not installed here.", hint=INSTALL_HINT)


# -- versions ------------------------------------------------------------------------------


def local_versions() -> dict[str, str]:
    import ray

    from .. import __version__

    return {"ray": ray.__version__, "python": platform.python_version(), "llmspace": __version__}


def node_versions() -> dict[str, str]:
    """Runs on a worker: what it has (proves llmspace imports there, too)."""
    return local_versions()


def version_problem(address: str, here: dict[str, str], there: dict[str, str]) -> str | None:
    """What differs between this machine and the cluster, as a sentence; None when nothing that matters."""
    py_here, py_there = here["python"].split(".")[:2], there["python"].split(".")[:2]
    strict = address.startswith("ray://")  # Ray Client needs the same Ray and Python versions
    diffs = []
    if here["ray"] != there["ray"]:
        diffs.append(f"Ray {there['ray']} there, {here['ray']} here")
    if py_here != py_there or (strict and here["python"] != there["python"]):
        diffs.append(f"Python {there['python']} there, {here['python']} here")
    if here.get("llmspace") != there.get("llmspace"):
        diffs.append(f"llmspace {there.get('llmspace')} there, {here.get('llmspace')} here")
    if not diffs:
        return None
    return f"The Ray cluster at {address} does not match this machine: " + "; ".join(diffs) + "."


CLIENT_ATTEMPTS = 3


def _init(ray: Any, address: str) -> None:
    """`ray.init`; a Ray Client connection is tried again when the server failed to start its
    side (the head starts one process per client, which fails now and then on a busy head)."""
    for attempt in range(1, CLIENT_ATTEMPTS + 1):
        try:
            ray.init(address=address, namespace=NAMESPACE, logging_level=logging.ERROR, log_to_driver=False)
            return
        except ConnectionError as exc:
            if not address.startswith("ray://") or attempt == CLIENT_ATTEMPTS or "Initialization failure" not in str(exc):
                raise
            log.warning("Ray Client at %s: %s; trying again", address, str(exc).strip().splitlines()[0])
            ray.shutdown()
            time.sleep(attempt)


def connect(ray: Any, address: str | None) -> None:
    """Join the cluster at `address` (None: `auto`, a cluster already running on this machine)
    and check versions. Never starts a cluster: a new local Ray instance would also turn on
    Ray's token authentication for every later cluster of this user (`~/.ray/auth_token`)."""
    address = address or "auto"
    shown = address
    if not ray.is_initialized():
        try:
            _init(ray, address)
        except Exception as exc:
            text = str(exc)
            if "Version mismatch" in text or "version mismatch" in text:
                raise UserFacingError(f"The Ray cluster at {shown} runs other versions: {text.strip()}",
                                      hint="ray:// needs the same Ray and Python versions on both ends: install the "
                                           "cluster's Ray version in a Python of the cluster's version.") from None
            lines = [line.strip() for line in text.splitlines() if line.strip()] or [type(exc).__name__]
            detail = lines[0] if len(lines) == 1 else f"{lines[0]} … {lines[-1]}"
            raise UserFacingError(f"Could not join the Ray cluster at {shown}: {detail}",
                                  hint="Pass --ray-address auto (a cluster on this machine), HOST:PORT (the head's GCS port, "
                                       "6379) or ray://HOST:10001 (Ray Client), and check the cluster runs.") from None
    try:
        there = ray.get(ray.remote(node_versions).options(num_cpus=0).remote(), timeout=300)
    except Exception as exc:
        raise UserFacingError(f"The Ray cluster at {shown} could not run llmspace: {str(exc).strip().splitlines()[-1]}",
                              hint="Install the same version of llmspace ('llmspace[ray]') on every node "
                                   "(in the image of a KubeRay cluster).") from None
    problem = version_problem(address, local_versions(), there)
    if problem:
        raise UserFacingError(problem, hint="Install the same versions on both ends (pip install 'ray==VERSION' "
                                            "'llmspace==VERSION' in a Python of the cluster's minor version).")


# -- the driver's side -----------------------------------------------------------------------


@dataclass
class _Running:
    task: CellTask
    attempt: int
    holder: str


class RayPool:
    """`evals/pool.py`'s executor interface over Ray tasks (see the module docstring)."""

    def __init__(self, p: Prepared, ctx: ExecContext, concurrency: int, limits: dict[str, int]) -> None:
        ray = import_ray()
        self.ray = ray
        self.p = p
        self.ctx = ctx
        self.address = p.spec.ray_address
        connect(ray, self.address)
        models = p.runner.services.providers.models
        self.targets = {label: target_data(t, models.key_hint(t.provider)) for label, t in p.targets.items()}
        head = {"resources": {"node:__internal_head__": 0.001}}
        actor = ray.remote(ProviderSlots).options(num_cpus=0, **head)
        self.slots = {provider: actor.remote(limit) for provider, limit in limits.items()}
        self.remote = ray.remote(max_retries=0)(cell_task)
        self.rubrics = None
        if ctx.judge is not None:
            from ..core.model import Thread

            self.rubrics = Thread(evaluationRubrics=p.thread.evaluationRubrics)
        self.running: dict[Any, _Running] = {}
        self.events: deque[Event] = deque()
        self.lost: dict[str, float] = {}
        self.cancelled = False

    # -- submitting
    def _resources(self, cell: Cell) -> dict[str, Any]:
        wanted: dict[str, float] = {}
        providers = {cell.model.split("/", 1)[0]}
        if self.ctx.judge is not None:  # the evaluation's judge, or an assertion's own (promptfoo's `provider`)
            providers.update(m.split("/", 1)[0] for m in self._judges(cell))
        for provider in providers:
            for name, amount in self.p.spec.node_local.get(provider, {}).items():
                wanted[name] = max(wanted.get(name, 0.0), amount)
        options: dict[str, Any] = {}
        if "CPU" in wanted:
            options["num_cpus"] = wanted.pop("CPU")
        if "GPU" in wanted:
            options["num_gpus"] = wanted.pop("GPU")
        if wanted:
            options["resources"] = wanted
        return options

    def _judges(self, cell: Cell) -> set[str]:
        """The "provider/model" of each judge that grades one of the cell's assertions."""
        judge = self.ctx.judge
        return {judge.model_for(a) for a in cell.assertions if a.type == "llm-rubric"} - {""} if judge is not None else set()

    def _cached(self, task: CellTask) -> dict[str, CacheEntry]:
        """The cached answers this task will ask for: its call, and its judges' when the output is known."""
        cache = self.ctx.cache
        if cache is None:
            return {}
        hits: dict[str, CacheEntry] = {}
        cell = task.cell
        output: str | None = None
        if task.prior is None:
            t = self.ctx.targets[cell.model]
            key = cache_key(t.provider, t.model, t.endpoint.base_url, cell.request, cell.repeat)
            hit = cache.get(key)
            if hit is not None:
                hits[key] = hit
                output = parse_reply(hit).output
        else:
            output = task.prior.reply.output
        judge = self.ctx.judge
        if judge is not None and output is not None:
            for a in cell.assertions:
                jt = self.ctx.targets.get(judge.model_for(a)) if a.type == "llm-rubric" else None
                if jt is None:
                    continue
                _prompt, _phash, _criteria, data = judge.request(cell, a, output)
                key = cache_key(jt.provider, jt.model, jt.endpoint.base_url, data, JUDGE_REPEAT)
                hit = cache.get(key)
                if hit is not None:
                    hits[key] = hit
        return hits

    def _launch(self, task: CellTask, attempt: int) -> None:
        cell = task.cell
        holder = f"{cell.key}@{attempt}"
        judge = self.ctx.judge
        prefix = cell.key + "|judge:"
        payload = {"cell": cell, "prior": task.prior, "judged": sorted(k for k in task.judged if k.startswith(prefix)),
                   "holder": holder, "slots": self.slots, "cache": self._cached(task),
                   "targets": {label: d for label, d in self.targets.items()
                               if label == cell.model or label in self._judges(cell)},
                   "judge": judge.model if judge is not None else None, "rubrics": self.rubrics}
        ref = self.remote.options(name=f"eval cell {cell.key}", **self._resources(cell)).remote(payload)
        self.running[ref] = _Running(task, attempt, holder)

    def submit(self, task: CellTask) -> None:
        self._launch(task, 1)

    # -- results
    def get(self, timeout: float) -> Event | None:
        if not self.events and self.running:
            ready, _ = self.ray.wait(list(self.running), num_returns=1, timeout=timeout)
            for ref in ready:
                self._collect(ref)
        elif not self.events:
            time.sleep(min(timeout, 0.05))
        return self.events.popleft() if self.events else None

    def _collect(self, ref: Any) -> None:
        ray = self.ray
        run = self.running.pop(ref)
        key = run.task.cell.key
        errors = ray.exceptions
        died = (errors.WorkerCrashedError, errors.NodeDiedError, errors.ObjectLostError, errors.LocalRayletDiedError,
                errors.RaySystemError, errors.ActorDiedError)
        try:
            out = ray.get(ref)
        except errors.TaskCancelledError:
            self.events.append(("done", key, None))
            return
        except died as exc:
            lost = self._drop(run.holder)
            self.lost[key] = self.lost.get(key, 0.0) + lost
            if run.attempt < MAX_ATTEMPTS and not self.cancelled:
                log.warning("evaluation cell %s: its worker died (%s); running it again", key, type(exc).__name__)
                self._launch(run.task, run.attempt + 1)
                return
            log.error("evaluation cell %s: its worker died %d times; left for the next run", key, run.attempt)
            self.events.append(("crash", key, None))
            self.events.append(("done", key, None))
            return
        except Exception:
            log.exception("evaluation cell %s", key)
            self._drop(run.holder)
            self.events.append(("crash", key, None))
            self.events.append(("done", key, None))
            return
        lost = self.lost.pop(key, 0.0)
        records: list[CellRecord | JudgeRecord] = out["records"]
        first = records[0] if records else None
        if lost and isinstance(first, CellRecord):
            first = replace(first, reply=replace(first.reply, cost=first.reply.cost + lost), lost_cost=lost)
        if run.attempt > 1 and isinstance(first, CellRecord):
            first = replace(first, attempts=run.attempt)
        if first is not None:
            records[0] = first
        for name, n in out["stats"].items():
            self.ctx.stats[name] = self.ctx.stats.get(name, 0) + int(n)
        if self.ctx.cache is not None:
            for ckey, value in out["puts"].items():
                try:
                    self.ctx.cache.put(ckey, value)
                except OSError:
                    log.warning("could not write the evaluation cache", exc_info=True)
        for r in records:
            self.events.append(("record", key, r))
        self.events.append(("done", key, None))
        if any(spent_now(r) for r in records):
            for actor in self.slots.values():
                actor.forget.remote(run.holder)

    def _drop(self, holder: str) -> float:
        try:
            return float(sum(self.ray.get([a.drop.remote(holder) for a in self.slots.values()], timeout=60)))
        except Exception:
            log.warning("could not free the slots of %s", holder, exc_info=True)
            return 0.0

    def slot_stats(self) -> dict[str, dict[str, Any]]:
        return dict(zip(self.slots, self.ray.get([a.stats.remote() for a in self.slots.values()], timeout=60), strict=True))

    # -- stopping
    def cancel(self) -> None:
        self.cancelled = True
        self.ctx.cancel.cancel()
        for ref in list(self.running):
            try:
                self.ray.cancel(ref, force=True)
            except Exception:
                log.debug("could not cancel a task", exc_info=True)

    def close(self) -> None:
        if self.running:
            self.cancel()
        for actor in self.slots.values():
            try:
                self.ray.kill(actor)
            except Exception:
                log.debug("could not stop a slots actor", exc_info=True)
        self.ray.shutdown()


def default_address(flag: str | None, spec_value: str | None, setting: str | None) -> str | None:
    """A flag wins over the evaluation file, the file over the setting, the setting over RAY_ADDRESS."""
    for value in (flag, spec_value, setting, os.environ.get("RAY_ADDRESS")):
        if value and value.strip():
            return value.strip()
    return None

