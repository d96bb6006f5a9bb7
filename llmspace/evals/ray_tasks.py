"""What runs on a Ray cluster for an evaluation (`--executor ray`; the driver's side is
`evals/ray_pool.py`, docs/scale-out.md).

    cell_task(payload) -> {"records", "stats", "puts"}   # one cell on a worker
    ProviderSlots(limit)                                  # a Ray actor per provider, on the head node

`cell_task` runs `cell.run_cell` with targets rebuilt on the worker (`worker_target`: the
key read from that node's environment under the variable the payload names — a payload
never holds a key), a `ClusterGate` per provider over its `ProviderSlots` actor (at most
`limit` calls at once across the cluster, a pause of every worker after a 429, and the cost
of each finished paid call reported so a task that dies does not lose it) and the cached
answers the driver sent (`PrefetchedCache`; new answers go back to the driver's cache).
Ray itself is imported only inside these functions, on the worker.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..cancel import CancelToken
from ..providers.base import Endpoint
from .cache import CacheEntry
from .cell import ExecContext, Target, run_cell
from .judge import Judge
from .records import CellRecord, JudgeRecord, called_model, spent_now


def quiet_ray() -> None:
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # the product works offline; never report usage


# -- cluster-wide provider limits ----------------------------------------------------------


class ProviderSlots:
    """A Ray actor per provider: at most `limit` calls at once across the cluster, a pause
    after a 429, and the cost each holder's calls reported (for a task that dies)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held: dict[str, int] = {}
        self.pause_until = 0.0
        self.costs: dict[str, float] = {}
        self.most = 0

    def acquire(self, holder: str) -> float:
        """0.0 when a slot is granted, else the seconds to wait before asking again."""
        wait = self.pause_until - time.monotonic()
        if wait > 0:
            return wait
        if sum(self.held.values()) >= self.limit:
            return 0.05
        self.held[holder] = self.held.get(holder, 0) + 1
        self.most = max(self.most, sum(self.held.values()))
        return 0.0

    def release(self, holder: str) -> None:
        n = self.held.get(holder, 0) - 1
        if n > 0:
            self.held[holder] = n
        else:
            self.held.pop(holder, None)

    def pause(self, seconds: float) -> None:
        self.pause_until = max(self.pause_until, time.monotonic() + seconds)

    def spent(self, holder: str, cost: float) -> None:
        self.costs[holder] = self.costs.get(holder, 0.0) + cost

    def drop(self, holder: str) -> float:
        """A dead holder: free its slots, return (and forget) the cost it reported."""
        self.held.pop(holder, None)
        return self.costs.pop(holder, 0.0)

    def forget(self, holder: str) -> None:
        self.costs.pop(holder, None)

    def stats(self) -> dict[str, Any]:
        return {"limit": self.limit, "held": sum(self.held.values()), "most": self.most}


class ClusterGate:
    """`cell.ProviderGate`'s interface over a `ProviderSlots` actor (used on workers)."""

    def __init__(self, slots: Any, holder: str) -> None:
        self.slots = slots
        self.holder = holder

    def acquire(self, cancel: CancelToken) -> bool:
        import ray

        while True:
            wait = float(ray.get(self.slots.acquire.remote(self.holder)))
            if wait <= 0:
                return True
            if cancel.wait(min(max(wait, 0.02), 0.25)):
                return False

    def release(self) -> None:
        self.slots.release.remote(self.holder)

    def on_retry(self, _attempt: int, delay: float, error: Any) -> None:
        if error.status == 429 or error.retry_after is not None:
            self.slots.pause.remote(delay)


class PrefetchedCache:
    """The response cache a task sees: the answers the driver found for it; new ones go back."""

    def __init__(self, hits: dict[str, CacheEntry]) -> None:
        self.hits = hits
        self.puts: dict[str, CacheEntry] = {}

    def get(self, key: str) -> CacheEntry | None:
        return self.hits.get(key)

    def put(self, key: str, value: CacheEntry) -> None:
        self.puts[key] = value


# -- the task ------------------------------------------------------------------------------


def target_data(t: Target, key_env: str) -> dict[str, Any]:
    """A target as a task receives it: no key, only the name of the variable that holds it."""
    e = t.endpoint
    return {"provider": t.provider, "model": t.model, "api": e.api, "baseUrl": e.base_url, "keyEnv": key_env, "info": t.info,
            "timeouts": {"connect_timeout": e.connect_timeout, "read_timeout": e.read_timeout,
                         "retry_deadline": e.retry_deadline, "progress_timeout": e.progress_timeout}}


def worker_target(d: dict[str, Any]) -> Target:
    """On the worker: the endpoint with the key of this node's environment."""
    from ..providers.registry import BUILTIN_APIS

    key = os.environ.get(d["keyEnv"], "").strip() or None
    endpoint = Endpoint(provider_id=d["provider"], api=d["api"], base_url=d["baseUrl"], api_key=key, **d["timeouts"])
    return Target(d["provider"], d["model"], endpoint, d["info"], BUILTIN_APIS[d["api"]])


def cell_task(payload: dict[str, Any]) -> dict[str, Any]:
    """One cell on a worker: its call (unless journaled), assertions and judges; returns its records."""
    quiet_ray()
    holder = payload["holder"]
    slots = payload["slots"]
    cache = PrefetchedCache(payload["cache"])
    ctx = ExecContext(targets={label: worker_target(d) for label, d in payload["targets"].items()},
                      gates={provider: ClusterGate(actor, holder) for provider, actor in slots.items()},  # type: ignore[misc]
                      cancel=CancelToken(), cache=cache,  # type: ignore[arg-type]
                      judge=Judge(payload["judge"], payload["rubrics"]) if payload["judge"] is not None else None)
    records: list[CellRecord | JudgeRecord] = []

    def emit(r: CellRecord | JudgeRecord) -> None:
        records.append(r)
        cost = spent_now(r)
        if cost:
            slots[called_model(r).split("/", 1)[0]].spent.remote(holder, cost)

    run_cell(payload["cell"], ctx, payload["prior"], set(payload["judged"]), emit)
    return {"records": records, "stats": dict(ctx.stats), "puts": cache.puts}
