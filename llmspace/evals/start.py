"""Starting a dataset evaluation: the one path the command line (`llmspace eval run`) and the
app (Evaluations → New Evaluation…) both take.

    started = start_run(runner, spec, executor=None, ray_address=None, out=None, fresh=False)
    outcome = run_cells(started.prepared, started.folder, started.records, concurrency=…, budget=…)

`start_run` chooses the executor — the flag, else the evaluation file's `executor`, else
`settings/evals.json`, else the local pool; for Ray the address likewise, then RAY_ADDRESS —
reads and checks everything before any call (`run.prepare`), and opens the results folder,
resuming an unfinished run whose journal matches (`run.open_results`, which takes its lock).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .prepared import Prepared
from .records import JournalRecord
from .run import executor_setting, open_results, prepare

if TYPE_CHECKING:
    from ..agent.runner import Runner
    from .spec import EvalSpec


@dataclass
class Started:
    prepared: Prepared
    folder: Path
    records: list[JournalRecord]  # journaled by an earlier run of this folder (reused, not run again)
    notes: list[str] = field(default_factory=list)  # what to tell the user (resuming, not resuming and why)


def start_run(runner: Runner, spec: EvalSpec, *, executor: str | None = None, ray_address: str | None = None,
              out: Path | None = None, fresh: bool = False) -> Started:
    """The run of `spec` checked and its results folder open (nothing called yet)."""
    setting = executor_setting(runner)
    chosen = executor or spec.executor or setting.get("executor") or "local"
    if chosen == "ray":
        from .ray_pool import default_address

        spec = spec.override(executor=chosen, ray_address=default_address(ray_address, spec.ray_address, setting.get("rayAddress")))
    else:
        spec = spec.override(executor=chosen)
    prepared = prepare(runner, spec)
    folder, records, notes = open_results(prepared, out, fresh=fresh)
    return Started(prepared, folder, records, notes)
