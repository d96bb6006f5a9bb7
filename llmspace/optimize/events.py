"""What an optimization reports while it runs (the app's Optimize view draws them live).

    optimize(runner, options, on_event=lambda e: ...)   # engine.py; any thread may receive them

- `Phase`: the baseline, the search or the held-out gate started (`original_validation` is the
  original prompt's pass rate on the validation part, known once the search starts).
- `Progress`: after every batch of cells — step, rollouts used of the limit, the best
  validated candidate's validation pass rate, the cost so far and the time left.
- `CandidateSeen`: a candidate's fate (`evals/records.Candidate`: rejected, lost on its
  minibatch, or validated with its validation pass rate), once per step, a resumed run's
  replayed steps included.

Pure data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..evals.records import Candidate


@dataclass(frozen=True)
class Phase:
    name: str  # "baseline", "search" or "gate"
    text: str
    original_validation: float | None = None


@dataclass(frozen=True)
class Progress:
    step: int
    rollouts_used: int
    rollout_limit: int
    best_validation: float | None
    spent: float
    seconds_left: float | None


@dataclass(frozen=True)
class CandidateSeen:
    candidate: Candidate


Event = Phase | Progress | CandidateSeen
OnEvent = Callable[[Event], None]
