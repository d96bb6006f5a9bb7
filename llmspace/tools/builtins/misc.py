"""The misc built-ins todo_write, sleep and ask_user_question, and the `skill` built-in
(listed in the fileSystem group, see `definitions.py`).
"""

from __future__ import annotations

import math
from typing import Any

from ..base import CallEnv, FoundSkill, ToolError


def todo_write(args: dict[str, Any], env: CallEnv) -> str:
    """The UI renders the list from the arguments; the result is just `OK`."""
    return "OK"


def sleep(args: dict[str, Any], env: CallEnv) -> str:
    duration = args.get("duration_ms")
    if isinstance(duration, bool) or not isinstance(duration, (int, float)) or not math.isfinite(duration) or duration < 0:
        raise ToolError("duration_ms must be a non-negative finite number.")
    if env.cancel.wait(duration / 1000.0):
        raise ToolError("Cancelled")
    return "OK"


def ask_user_question(args: dict[str, Any], env: CallEnv) -> str:
    raise ToolError("ask_user_question needs a human answer and cannot be executed automatically.")


def _find_skill(env: CallEnv, name: str) -> FoundSkill | None:
    skills = env.ctx.skills
    if skills is None:
        return None
    return skills.find_enabled(name)


def skill(args: dict[str, Any], env: CallEnv) -> str:
    """`Base directory for this skill: <abs dir>\\n\\n<SKILL.md body>` of an enabled skill."""
    name = str(args.get("name", ""))
    found = _find_skill(env, name)
    if found is None:
        raise ToolError(f'Skill "{name}" not found.')
    base = found.path.absolute() if hasattr(found.path, "absolute") else found.path
    return f"Base directory for this skill: {base}\n\n{found.body()}"
