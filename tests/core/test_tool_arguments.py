"""The one lenient parser of tool-call argument text (`core/tool_arguments.py`), and that the
run's turn fold, the live view of a run and the importers all read arguments through it."""

from __future__ import annotations

import re
from pathlib import Path

import llmspace
from llmspace.core.tool_arguments import read_arguments, stored_arguments

PACKAGE = Path(llmspace.__file__).parent


def test_text_reads_as_complete_partial_or_unreadable():
    assert read_arguments('{"a": [1, 2]}') == ({"a": [1, 2]}, "complete")
    assert read_arguments("  ") == ({}, "complete")
    assert read_arguments('{"a": [1, 2') == ({"a": [1, 2]}, "partial")
    assert read_arguments('{"a": tru') == ({"a": True}, "partial")
    assert read_arguments("[1]") == ({}, "unreadable")
    assert read_arguments('{"a":1}}') == ({}, "unreadable")


def test_big_integers_stay_exact_and_nan_reads_complete():
    big = 123456789012345678901234567890
    assert read_arguments(f'{{"n": {big}}}') == ({"n": big}, "complete")
    arguments, reading = read_arguments('{"x": NaN}')
    assert reading == "complete" and arguments["x"] != arguments["x"]


def test_stored_arguments_keep_the_raw_text_only_when_no_object_could_be_read():
    assert stored_arguments('{"a": 1') == ({"a": 1}, None)
    assert stored_arguments("  ") == ({}, None)
    assert stored_arguments(None) == ({}, None)
    assert stored_arguments({"x": [1]}) == ({"x": [1]}, None)
    assert stored_arguments("[1, 2]") == ({}, "[1, 2]")
    assert stored_arguments('{"a":1}}') == ({}, '{"a":1}}')
    assert stored_arguments(7) == ({}, "7")


def test_no_other_module_parses_partial_json():
    users = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                   if re.search(r"^\s*(from|import) partial_json_parser", p.read_text(encoding="utf-8"), re.M))
    assert users == ["core/tool_arguments.py"]
