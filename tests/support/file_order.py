"""The order the test files go to pytest-xdist's workers in (issue 37, CI's minutes): the
longest first, so the run does not end with one worker on a four-minute file while the other
waits. xdist's own order is by the number of tests, which puts a file of two long tests last.

Seconds per file come from tests/support/durations.json, a snapshot of a whole run written
with `LLMSPACE_TEST_DURATIONS_OUT=FILE make test` (tests/support/minutes.py); a file it does not
name counts one second per test. Only the order changes: every test still runs.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

SNAPSHOT = Path(__file__).with_name("durations.json")
UNKNOWN_SECONDS_PER_TEST = 1.0


class _Item(Protocol):
    nodeid: str


def snapshot(path: Path = SNAPSHOT) -> dict[str, float]:
    """File → seconds from the snapshot; empty when it is missing or not a JSON object of numbers."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, (int, float))}


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def longest_first(items: Sequence[_Item], seconds: dict[str, float]) -> list[_Item]:
    """`items` with the files in order of their expected seconds, longest first; a file's tests
    stay together and in their own order."""
    counts = Counter(file_of(item.nodeid) for item in items)
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        first_seen.setdefault(file_of(item.nodeid), index)

    def key(item: _Item) -> tuple[float, int]:
        name = file_of(item.nodeid)
        expected = seconds.get(name, UNKNOWN_SECONDS_PER_TEST * counts[name])
        return -expected, first_seen[name]

    return sorted(items, key=key)
