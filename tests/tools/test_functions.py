"""Custom function tool definitions: name rules, unique names, valid JSON Schema."""

from __future__ import annotations

from llmspace.core.model import Tool
from llmspace.tools.functions import validate_function_tool


def _tool(**data) -> Tool:
    return Tool.model_validate({"type": "function", **data})


GOOD_SCHEMA = {"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]}


def test_a_well_formed_tool_has_no_problems() -> None:
    tool = _tool(name="lookup_order", description="Look up an order.", parameters=GOOD_SCHEMA)
    assert validate_function_tool(tool, [_tool(name="other-tool"), tool]) == []


def test_names_must_match_the_pattern() -> None:
    for bad in ("", "has space", "dots.no", "ünï", "x" * 65):
        problems = validate_function_tool({"type": "function", "name": bad}, [])
        assert problems and "name" in problems[0], bad
    assert validate_function_tool(_tool(name="A-b_9" + "x" * 59), []) == []


def test_names_must_be_unique_in_the_thread() -> None:
    problems = validate_function_tool(_tool(name="lookup_order"), [_tool(name="lookup_order")])
    assert problems == ['A tool named "lookup_order" already exists in this thread; tool names must be unique.']
    builtin = Tool.model_validate({"type": "builtin", "name": "read"})
    assert validate_function_tool(_tool(name="read"), [builtin])


def test_parameters_must_be_a_valid_object_schema() -> None:
    bad_type = validate_function_tool(_tool(name="t", parameters={"type": "object", "properties": {"a": {"type": "strng"}}}), [])
    assert len(bad_type) == 1 and "not a valid JSON Schema at properties/a/type" in bad_type[0]
    not_object = validate_function_tool(_tool(name="t", parameters={"type": "array"}), [])
    assert not_object == ["parameters must describe an object (type \"object\"), not 'array'."]
    assert validate_function_tool({"name": "t", "parameters": "nope"}, []) == ["parameters must be a JSON object (a JSON Schema)."]
    assert validate_function_tool(_tool(name="t", parameters={"type": "object", "required": "orderId"}), [])


def test_a_tool_without_parameters_is_allowed() -> None:
    assert validate_function_tool(_tool(name="ping"), []) == []
