"""The train / validation / held-out split of an evaluation's cases, stratified by the original
prompt's outcome so each part holds failing cases.

    parts = split_cases(case_ids, failing, (0.4, 0.3, 0.3), seed)

Failing and passing cases are each shuffled with `seed` and dealt to the parts in proportion
(largest remainder), so the same cases, outcomes and seed always give the same split. Pure.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import UserFacingError

DEFAULT = (0.4, 0.3, 0.3)


@dataclass(frozen=True)
class Split:
    train: tuple[str, ...]
    validation: tuple[str, ...]
    holdout: tuple[str, ...]

    def part_of(self, case: str) -> str:
        if case in self.train:
            return "train"
        return "validation" if case in self.validation else "holdout"


def parse_split(value: str) -> tuple[float, float, float]:
    """`40/30/30` (percent) → fractions; anything else is a UserFacingError."""
    try:
        parts = [float(p) for p in value.split("/")]
    except ValueError:
        parts = []
    if len(parts) != 3 or any(p <= 0 for p in parts):
        raise UserFacingError(f"--split {value!r} must be three positive percentages such as 40/30/30.")
    total = sum(parts)
    return parts[0] / total, parts[1] / total, parts[2] / total


def _deal(cases: list[str], fractions: Sequence[float]) -> list[list[str]]:
    """`cases` cut into len(fractions) runs, sizes by largest remainder."""
    n = len(cases)
    exact = [f * n for f in fractions]
    sizes = [int(e) for e in exact]
    for i in sorted(range(len(exact)), key=lambda i: exact[i] - sizes[i], reverse=True)[: n - sum(sizes)]:
        sizes[i] += 1
    out, start = [], 0
    for size in sizes:
        out.append(cases[start:start + size])
        start += size
    return out


def split_cases(case_ids: Sequence[str], failing: set[str], fractions: Sequence[float] = DEFAULT, seed: int = 0) -> Split:
    rng = random.Random(f"split-{seed}")
    fail = [c for c in case_ids if c in failing]
    ok = [c for c in case_ids if c not in failing]
    rng.shuffle(fail)
    rng.shuffle(ok)
    parts: list[list[str]] = [[], [], []]
    for group in (fail, ok):
        for i, dealt in enumerate(_deal(group, fractions)):
            parts[i].extend(dealt)
    order = {c: i for i, c in enumerate(case_ids)}
    train, val, hold = (tuple(sorted(p, key=order.__getitem__)) for p in parts)
    if not train or not val or not hold:
        raise UserFacingError(f"{len(case_ids)} cases are too few to split into training, validation and held-out parts.",
                              hint="Add cases to the dataset (70 or more give a held-out part of 20).")
    return Split(train, val, hold)
