"""A thread's prompt variables resolved to values, as plugin tools see them in
`context.variables` (plugin guide §9.1).

    resolve_variables(thread, RenderEnv(skills=manager))  # {"current_working_directory": "/x", "cfg": {...}}

Custom, working-directory and current-date variables are strings, skills variables the
formatted list, file variables the file's UTF-8 text, JSON variables the parsed value.
Variables that are empty or cannot be resolved are left out. Uses the same resolution as
rendering (llmspace/core/render.py); called by llmspace/agent/services.py.
"""

from __future__ import annotations

from typing import Any

from .model import Thread
from .render import RenderEnv, _Files, _parse_json, _Values, _VariableError


def resolve_variables(thread: Thread, env: RenderEnv | None = None) -> dict[str, Any]:
    env = env or RenderEnv()
    files = _Files(env.base_dir)
    try:
        values = _Values(thread, env, files)
    except Exception:  # invalid variable definitions: nothing resolvable
        return {}
    if env.base_dir is None:
        files.base = values.working_directory()
    out: dict[str, Any] = {}
    for name in [*values.typed, *(n for n in values.custom if n not in values.typed)]:
        typed = values.typed.get(name)
        if typed is not None and typed.type == "json":
            if typed.value.strip():
                try:
                    out[name] = _parse_json(typed.value)
                except ValueError:
                    pass
            continue
        try:
            value = values.simple(name)
        except _VariableError:
            continue
        if value:
            out[name] = value
    return out
