"""The built-in tools: `builtin_tools()` (definitions as `Tool` models, in the order of `definitions.py`),
`builtin_groups()` and `get_implementation(name)`.

Implementations live in `fs.py`, `grep.py`, `bash.py`, `misc.py` and `web.py`; each is
`fn(arguments: dict, env: CallEnv) -> str | JSON value` and raises on failure.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable
from typing import Any

from ...core.model import Tool
from .definitions import DEFINITIONS, GROUPS

# name -> (module, function)
_IMPLEMENTATIONS: dict[str, tuple[str, str]] = {
    "web_fetch": ("web", "web_fetch"),
    "web_search": ("web", "web_search"),
    "weather_report": ("web", "weather_report"),
    "read": ("fs", "read"),
    "write": ("fs", "write"),
    "skill": ("misc", "skill"),
    "edit": ("fs", "edit"),
    "ls": ("fs", "ls"),
    "tree": ("fs", "tree"),
    "grep": ("grep", "grep"),
    "glob": ("fs", "glob"),
    "bash": ("bash", "bash"),
    "present_files": ("fs", "present_files"),
    "todo_write": ("misc", "todo_write"),
    "sleep": ("misc", "sleep"),
    "ask_user_question": ("misc", "ask_user_question"),
}


def builtin_tools() -> list[Tool]:
    """Fresh `Tool` models of every built-in, in the order of `definitions.py` (key order: type, name, description,
    parameters, strict, icon[, terminate])."""
    tools = []
    for d in DEFINITIONS:
        data: dict[str, Any] = {
            "type": "builtin",
            "name": d["name"],
            "description": d["description"],
            "parameters": copy.deepcopy(d["parameters"]),
            "strict": True,
            "icon": d["icon"],
        }
        if d.get("terminate"):
            data["terminate"] = True
        tools.append(Tool.model_validate(data))
    return tools


def builtin_tool(name: str) -> Tool | None:
    """The definition of one built-in, or None."""
    return next((t for t in builtin_tools() if t.name == name), None)


def builtin_groups() -> dict[str, list[str]]:
    """UI groups: fileSystem / web / misc -> tool names (in listing order)."""
    return {k: list(v) for k, v in GROUPS.items()}


def get_implementation(name: str) -> Callable[..., Any] | None:
    """The implementation of built-in `name`, or None when there is no such built-in."""
    target = _IMPLEMENTATIONS.get(name)
    if target is None:
        return None
    module = importlib.import_module(f"{__name__}.{target[0]}")
    return getattr(module, target[1], None)
