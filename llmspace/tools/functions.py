"""Custom function tools: checking a definition before it is added to a thread.

    validate_function_tool(tool, existing_tools) -> list[str]   # empty when valid

Rules: name matches `^[a-zA-Z0-9_-]{1,64}$`; names are unique within
a thread; `parameters` (when present) is a JSON object schema that passes `jsonschema`'s
meta-schema check. Function tools have no executor: the run pauses at their calls and a
human supplies the result (see `agent/`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import jsonschema

from ..core.model import Tool

NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def name_problem(name: Any) -> str | None:
    """Why `name` is not a valid tool name, or None."""
    if not isinstance(name, str) or not name:
        return "The tool name must not be empty."
    if len(name) > 64:
        return f"The tool name {name[:64]}… is longer than 64 characters."
    if not NAME_RE.match(name):
        return f"The tool name {name!r} may only contain letters, digits, underscores and hyphens."
    return None


def schema_problems(parameters: Any) -> list[str]:
    """Why `parameters` is not a usable JSON Schema for tool arguments (empty when fine)."""
    if parameters is None:
        return []
    if not isinstance(parameters, dict):
        return ["parameters must be a JSON object (a JSON Schema)."]
    cls = jsonschema.validators.validator_for(parameters, default=jsonschema.Draft202012Validator)
    problems: list[str] = []
    try:
        cls.check_schema(parameters)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        problems.append(f"parameters is not a valid JSON Schema at {where}: {exc.message}")
    kind = parameters.get("type")
    if kind is not None and kind != "object":
        problems.append(f'parameters must describe an object (type "object"), not {kind!r}.')
    return problems


def validate_function_tool(tool: Tool | dict[str, Any], existing_tools: Iterable[Tool | dict[str, Any]]) -> list[str]:
    """Every problem with `tool` as a new or edited tool of a thread holding `existing_tools`.

    `existing_tools` may include `tool` itself (the same object is skipped when checking
    for duplicate names)."""
    data = tool.model_dump(exclude_unset=True) if isinstance(tool, Tool) else dict(tool)
    problems: list[str] = []
    name = data.get("name")
    bad_name = name_problem(name)
    if bad_name:
        problems.append(bad_name)
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        problems.append("description must be a string.")
    problems.extend(schema_problems(data.get("parameters")))
    if isinstance(name, str) and name:
        for other in existing_tools:
            if other is tool:
                continue
            other_name = other.name if isinstance(other, Tool) else (other.get("name") if isinstance(other, dict) else None)
            if other_name == name:
                problems.append(f'A tool named "{name}" already exists in this thread; tool names must be unique.')
                break
    return problems
