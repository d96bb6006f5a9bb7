"""Checks for a closed set of dataclasses (a union such as `agent/events.RunEvent` or
`presenters/view_updates.EditorUpdate`) and the `match` statements that consume it:

    dataclasses_of(module)                  # every dataclass defined in the module
    matched_names(function)                 # the class names its `case` patterns name
    sample(cls, by_name, by_type)           # one instance with plausible field values

Used by tests/agent/test_events_consumed.py and tests/ui/editor/test_view_updates.py.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
import types
from typing import Any


def dataclasses_of(module: types.ModuleType) -> set[type]:
    """The dataclasses defined in `module` itself (not imported into it)."""
    return {obj for _name, obj in vars(module).items()
            if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and obj.__module__ == module.__name__}


def matched_names(function: Any) -> set[str]:
    """The class names in the `case` patterns of `function`'s `match` statements."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.MatchClass):
            cls = node.cls
            names.add(cls.attr if isinstance(cls, ast.Attribute) else getattr(cls, "id", ""))
    return names


def sample(cls: type, by_name: dict[str, Any], by_type: dict[str, Any]) -> Any:
    """An instance of the dataclass `cls`: each field's value by its name, else by its type's
    name; a field neither gives fails, saying what to add to the test."""
    kwargs = {}
    for field in dataclasses.fields(cls):
        if field.name in by_name:
            kwargs[field.name] = by_name[field.name]
        elif str(field.type) in by_type:
            kwargs[field.name] = by_type[str(field.type)]
        else:
            raise AssertionError(f"add a sample value for {cls.__name__}.{field.name} ({field.type}) to this test")
    return cls(**kwargs)
