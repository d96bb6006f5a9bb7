"""The "Assertion types" table of docs/promptfoo-compat.md stays true: it lists every promptfoo
assertion type the readers know (llmspace/evals/promptfoo_config.py), once, and a type is
`run` or `run differently` exactly when llmspace runs it (itself, or the type it is read as)."""

from __future__ import annotations

import re
from pathlib import Path

from llmspace.evals.assertion_types import refusal_reason
from llmspace.evals.assertions import TYPES
from llmspace.evals.promptfoo_config import PROMPTFOO_TYPES
from llmspace.evals.promptfoo_tests import RENAMED

DOC = Path(__file__).resolve().parents[2] / "docs" / "promptfoo-compat.md"
ROW = re.compile(r"^\| `([^`]+)` \| (run|run differently|refuse) \| (.+) \|$")


def _table() -> dict[str, tuple[str, str]]:
    section = DOC.read_text("utf-8").split("\n## Assertion types\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        m = ROW.match(line.strip())
        if m:
            assert m.group(1) not in rows, f"`{m.group(1)}` is listed twice"
            rows[m.group(1)] = (m.group(2), m.group(3))
    return rows


def test_the_table_lists_every_promptfoo_assertion_type_once():
    assert sorted(_table()) == sorted(PROMPTFOO_TYPES)


def test_a_type_is_marked_run_exactly_when_llmspace_runs_it():
    wrong = [kind for kind, (status, _what) in _table().items() if (status != "refuse") != (RENAMED.get(kind, kind) in TYPES)]
    assert wrong == []


def test_the_types_that_need_a_service_say_which_in_the_table_and_in_the_refusal():
    table = _table()
    for kind in ("moderation", "classifier", "trace-span-count"):
        assert table[kind][0] == "refuse"
        assert refusal_reason(kind) != "llmspace does not run this type"
