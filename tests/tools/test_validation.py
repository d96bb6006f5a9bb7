"""Argument checks against a tool's JSON Schema (llmspace/tools/validation.py): each schema's
validator is built once, and a schema changed after its validator was built is never checked
in its old form (nor another schema in its changed one)."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

from llmspace.core.model import Tool
from llmspace.tools import validation
from llmspace.tools.validation import check_arguments

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
                          "additionalProperties": False}


def _tool(parameters: dict[str, Any]) -> Tool:
    tool = Tool.model_validate({"type": "function", "name": "echo", "parameters": {"type": "object"}})
    tool.parameters = parameters  # the very dict, as a tool keeps the one it was given
    return tool


def test_a_schema_is_checked_and_compiled_once_however_many_calls_use_it(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = copy.deepcopy(SCHEMA)
    schema["properties"]["once"] = {"type": "integer"}  # a schema no other test built
    checked: list[Any] = []
    original = jsonschema.Draft202012Validator.check_schema

    def counting(candidate: Any, **kw: Any) -> None:
        checked.append(candidate)
        original(candidate, **kw)

    monkeypatch.setattr(jsonschema.Draft202012Validator, "check_schema", counting)
    tool = _tool(schema)
    for _ in range(50):
        assert check_arguments(tool, {"text": "ping"}) is None
    assert check_arguments(tool, {"text": 7}) == "Invalid arguments for echo: text: 7 is not of type 'string'"
    assert check_arguments(_tool(copy.deepcopy(schema)), {"text": "ping"}) is None  # equal text: same validator
    assert len(checked) == 1


def test_a_schema_changed_in_place_is_checked_in_its_new_form() -> None:
    schema = copy.deepcopy(SCHEMA)
    tool = _tool(schema)
    assert check_arguments(tool, {"text": "a long text"}) is None
    schema["properties"]["text"]["maxLength"] = 3
    assert check_arguments(tool, {"text": "a long text"}) == (
        "Invalid arguments for echo: text: 'a long text' is too long")
    del schema["properties"]["text"]["maxLength"]
    assert check_arguments(tool, {"text": "a long text"}) is None


def test_changing_a_schema_does_not_change_how_an_equal_schema_is_checked() -> None:
    first, second = copy.deepcopy(SCHEMA), copy.deepcopy(SCHEMA)
    first["properties"]["text"]["minLength"] = 2
    second["properties"]["text"]["minLength"] = 2
    assert check_arguments(_tool(first), {"text": "ok"}) is None
    first["properties"]["text"]["minLength"] = 50  # after its validator was built
    assert check_arguments(_tool(second), {"text": "ok"}) is None  # still the schema it says


def test_identity_entries_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validation, "CACHE_SIZE", 8)
    for n in range(40):
        schema = copy.deepcopy(SCHEMA)
        schema["properties"]["text"]["maxLength"] = 1000 + n
        assert check_arguments(_tool(schema), {"text": "ping"}) is None
    assert len(validation._by_identity) <= 9
