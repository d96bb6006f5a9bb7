"""A run read and checked, ready to start: `Prepared`, made by `evals/run.py::prepare` and
handed to the executors (`evals/pool.py` threads here, `evals/ray_pool.py` on a Ray cluster).

It holds the evaluation file, the thread, the dataset scan, the plan, the resolved model
targets, the hashes a resumed run must match, and the results folder's lock once
`open_results` took it. It sits below the driver and the executors, so both can name it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..agent.runner import Runner
    from ..core.model import Thread
    from .cell import Target
    from .dataset import DatasetScan
    from .embeddings import Embedder
    from .journal import RunLock
    from .plan import Plan
    from .spec import EvalSpec


@dataclass
class Prepared:
    spec: EvalSpec
    thread_rel: str
    thread: Thread
    dataset: DatasetScan
    plan: Plan
    targets: dict[str, Target]
    hashes: dict[str, str]
    runner: Runner
    lock: RunLock | None = None  # the results folder's, from open_results until run_cells ends
    embedder: Embedder | None = None  # the embedding model of `similar` assertions

    def release(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None
