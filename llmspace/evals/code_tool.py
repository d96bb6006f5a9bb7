"""Runs one promptfoo `python` assertion inside a confined Python plugin host: the host loads
this file as a tool extension (`llmspace/evals/code_assertions.py` starts the host with no
capabilities), and each call runs the assertion's code on one output.

The call's arguments are `{"code"?, "file"?, "function"?, "output", "context"}`. Inline code
of one line is an expression; code of several lines is the body of a function of `output`
and `context` that returns the result (promptfoo's rule). A file (a path inside the
evaluation's folder, which is the host's root) is imported and its `function` (default
`get_assert`) is called with `output` and `context`. `math`, `json` and `re` are there for
inline code. The answer is `{"result": value}` (the value made plain JSON) or
`{"error": "Type: message"}` when the code raised, MemoryError included. Standard library
only: it runs in the host process, never in the app.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import sys
import textwrap
import traceback
from typing import Any

_MODULES: dict[tuple[str, float], Any] = {}


def _inline(code: str) -> Any:
    namespace: dict[str, Any] = {"math": math, "json": json, "re": re}
    text = code.strip()
    if "\n" not in text:
        expression = compile(text, "<assertion>", "eval")
        return lambda output, context: eval(expression, {**namespace, "output": output, "context": context})
    body = textwrap.indent(textwrap.dedent(code.strip("\n")), "    ")
    exec(compile(f"def __assertion__(output, context):\n{body}\n", "<assertion>", "exec"), namespace)
    return namespace["__assertion__"]


def _from_file(path: str, function: str | None) -> Any:
    stamp = os.stat(path).st_mtime
    module = _MODULES.get((path, stamp))
    if module is None:
        spec = importlib.util.spec_from_file_location(f"llmspace_assertion_{len(_MODULES)}", path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {os.path.basename(path)}")
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, os.path.dirname(path))
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(os.path.dirname(path))
        _MODULES[(path, stamp)] = module
    name = function or "get_assert"
    found = getattr(module, name, None)
    if not callable(found):
        raise AttributeError(f"{os.path.basename(path)} has no function {name}")
    return found


def _plain(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return str(value)


class CodeAssertion:
    name = "assertion"
    description = "Runs one python assertion of an evaluation on one output."
    parameters = {"type": "object"}  # noqa: RUF012 - the tool contract reads a class attribute

    def execute(self, _ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
        try:
            if isinstance(args.get("file"), str):
                function = _from_file(args["file"], args.get("function"))
            else:
                function = _inline(str(args.get("code") or ""))
            return {"result": _plain(function(args.get("output"), args.get("context") or {}))}
        except MemoryError:
            return {"error": "MemoryError: the assertion ran out of memory (its limit is the host's)"}
        except RecursionError as exc:
            return {"error": f"RecursionError: {exc}"}
        except (Exception, SystemExit) as exc:  # the assertion's own failure: the check fails with it
            last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
            where = f" (line {last[0].lineno})" if last and last[0].filename in ("<assertion>", args.get("file")) else ""
            return {"error": f"{type(exc).__name__}: {exc}{where}"}


default = CodeAssertion
