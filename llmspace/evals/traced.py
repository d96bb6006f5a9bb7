"""An evaluation's events for the trace observers of the run services' trace writer
(`providers/trace_observers.py`; the OpenTelemetry exporter is one): the evaluation's start and
end, and each cell and judge record as the driver journals it, as plain dicts — so with the Ray
executor the driver reports every cell as its record returns, as it does with local threads.

    with observed(prepared, folder, on_record) as heard:   # heard: on_record, also telling the observers
        run the cells, calling heard(record) for each journaled cell or judge record

A cell record becomes `{"kind": "cell", "key", "case", "model", "variant", "repeat", "finishedAt"
(epoch ms), "latencyMs", "error", "usage": {"input", "output"}, "checks": [{"assertion", "pass",
"score", "reason"}]}`; a judge record `{"kind": "judge", "key", "cell", "judgeModel", "finishedAt",
"error", "check": {…} | None}`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .assertions import Check
from .prepared import Prepared
from .records import CellRecord, JudgeRecord

OnRecord = Callable[[CellRecord | JudgeRecord], None]


def _check(c: Check) -> dict[str, Any]:
    return {"assertion": c.assertion, "pass": c.passed, "score": c.score, "reason": c.reason}


def record_data(record: CellRecord | JudgeRecord) -> dict[str, Any]:
    """The dict an observer gets for `record` (see the module docstring)."""
    if isinstance(record, JudgeRecord):
        return {"kind": "judge", "key": record.key, "cell": record.cell, "judgeModel": record.judge_model,
                "finishedAt": record.finished_at, "error": record.error,
                "check": _check(record.check) if record.check is not None else None}
    usage = record.reply.usage
    return {"kind": "cell", "key": record.key, "case": record.case, "model": record.model, "variant": record.variant,
            "repeat": record.repeat, "finishedAt": record.finished_at, "latencyMs": record.reply.latency_ms,
            "error": record.reply.error, "usage": {"input": usage.input, "output": usage.output} if usage else None,
            "checks": [_check(c) for c in record.checks]}


@contextlib.contextmanager
def observed(p: Prepared, folder: Path, on_record: OnRecord | None) -> Iterator[OnRecord | None]:
    """`on_record`, also telling the trace observers (unchanged when there are none)."""
    observers = p.runner.services.traces.observers
    if not observers:
        yield on_record
        return
    eval_id = str(folder)
    observers.evaluation_started(eval_id, p.spec.name)

    def heard(record: CellRecord | JudgeRecord) -> None:
        observers.cell_finished(eval_id, record_data(record))
        if on_record is not None:
            on_record(record)

    try:
        yield heard
    finally:
        observers.evaluation_ended(eval_id)
