"""docs/promptfoo-compat.md says what llmspace does with every promptfoo and Inspect AI key:
each table of the page equals the readers' own table (llmspace/evals/promptfoo_keys.py) —
the same keys, each with the same status (run, run differently, refuse)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from llmspace.evals import promptfoo_keys as keys

DOC = Path(__file__).resolve().parents[2] / "docs" / "promptfoo-compat.md"
STATUS = {"run": keys.RUN, "run differently": keys.DIFFERENT, "refuse": keys.REFUSE}
SECTIONS = {"Configuration keys": keys.CONFIG_KEYS, "Test keys": keys.TEST_KEYS, "Test options": keys.OPTION_KEYS,
            "Assertion keys": keys.ASSERT_KEYS, "CSV columns": keys.CSV_COLUMNS, "Inspect AI fields": keys.INSPECT_FIELDS}
ROW = re.compile(r"^\| `([^`]+)` \| ([a-z ]+) \| (.+) \|$")


def _section(title: str) -> str:
    text = DOC.read_text("utf-8")
    assert f"\n## {title}\n" in text, f"docs/promptfoo-compat.md has no section '## {title}'"
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _table(title: str) -> dict[str, str]:
    rows: dict[str, str] = {}
    for line in _section(title).splitlines():
        m = ROW.match(line.strip())
        if m:
            assert m.group(2) in STATUS, f"{title}: `{m.group(1)}` has the status {m.group(2)!r}"
            assert m.group(1) not in rows, f"{title}: `{m.group(1)}` is listed twice"
            rows[m.group(1)] = STATUS[m.group(2)]
    return rows


@pytest.mark.parametrize("title", list(SECTIONS))
def test_each_table_of_the_compatibility_page_lists_the_keys_the_reader_knows_with_their_status(title):
    code = {key: status for key, (status, _what) in SECTIONS[title].items()}
    assert _table(title) == code


def test_the_page_keeps_a_section_for_the_assertion_types():
    assert "| Type | llmspace | What it does |" in _section("Assertion types")
