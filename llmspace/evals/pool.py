"""Where evaluation cells run: the executors the driver loop of `evals/run.py` hands cells to.

    pool = LocalPool(ctx, concurrency)          # threads of this process (the default)
    pool = RayPool(…)                           # tasks on a Ray cluster (`evals/ray_pool.py`)
    pool.submit(task)                           # a CellTask: run what is missing of one cell
    event = pool.get(timeout)                   # ("record", key, record) | ("done", key, None)
                                                # | ("crash", key, None) | None (nothing yet)
    pool.cancel()                               # Ctrl-C: stop every call now
    pool.close()

An executor runs `cell.run_cell` (a conversation's cell: `conversation.run_conversation`, local
threads only) for each task it is given and hands every record back as
soon as it is complete, then one "done" per task ("crash" first when the task failed; its
cell stays unrecorded and a re-run does it). Only the driver journals records and counts
the budget; an executor never writes anything.
"""

from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from .cell import ExecContext, run_cell
from .conversation import run_conversation
from .plan import Cell
from .records import CellRecord, JudgeRecord, TurnRecord

log = logging.getLogger("llmspace.evals")
Event = tuple[str, str, Any]


@dataclass
class CellTask:
    cell: Cell
    prior: CellRecord | None  # the cell's journaled record (then only its missing judges run)
    judged: set[str]  # keys of the judge records already journaled


class CellPool(Protocol):
    def submit(self, task: CellTask) -> None: ...

    def get(self, timeout: float) -> Event | None: ...

    def cancel(self) -> None: ...

    def close(self) -> None: ...


class LocalPool:
    """`concurrency` daemon threads of this process run the cells."""

    def __init__(self, ctx: ExecContext, concurrency: int) -> None:
        self.ctx = ctx
        self._results: queue.Queue[Event] = queue.Queue()
        self._work: queue.Queue[CellTask | None] = queue.Queue()
        self._workers = [threading.Thread(target=self._worker, name=f"eval-cell-{i}", daemon=True) for i in range(concurrency)]
        for t in self._workers:
            t.start()

    def _worker(self) -> None:
        while True:
            task = self._work.get()
            if task is None:
                return
            key = task.cell.key

            def emit(r: CellRecord | JudgeRecord | TurnRecord, key: str = key) -> None:
                self._results.put(("record", key, r))

            try:
                if self.ctx.conversation is not None:  # mode: conversation (evals/conversation.py)
                    run_conversation(task.cell, self.ctx, task.prior, emit)
                else:
                    run_cell(task.cell, self.ctx, task.prior, task.judged, emit)
            except Exception:
                log.exception("evaluation cell %s", key)
                self._results.put(("crash", key, None))
            finally:
                self._results.put(("done", key, None))

    def submit(self, task: CellTask) -> None:
        self._work.put(task)

    def get(self, timeout: float) -> Event | None:
        try:
            return self._results.get(timeout=timeout)
        except queue.Empty:
            return None

    def cancel(self) -> None:
        self.ctx.cancel.cancel()

    def close(self) -> None:
        for _ in self._workers:
            self._work.put(None)
