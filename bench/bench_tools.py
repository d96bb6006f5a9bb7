"""Tool router and built-in figures: router overhead per call, 8 parallel calls, read of a
large file (256 KiB cap), grep over a small tree with ripgrep and with the Python fallback."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llmspace.core.model import ToolCall
from llmspace.tools.base import ToolContext
from llmspace.tools.builtins import builtin_tool
from llmspace.tools.router import ToolRouter


def _median_ms(fn: Callable[[], Any], n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall.model_validate({"id": "c", "input": {"name": name, "arguments": arguments}})


def run() -> list[tuple[str, float, str, float | None]]:
    rows: list[tuple[str, float, str, float | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ctx = ToolContext(working_directory=tmp)
        router = ToolRouter(None)
        fast = ToolRouter(None, settings={"grep_fallback": True})
        todo = builtin_tool("todo_write")
        todo_call = _call("todo_write", todos=[{"content": "a", "status": "pending"}])
        rows.append(("router: todo_write call (median)", _median_ms(lambda: router.execute(todo, todo_call, ctx), 500), "ms", 1.0))
        calls = [_call("todo_write", todos=[]) for _ in range(8)]
        rows.append(("router: 8 parallel calls (median)", _median_ms(lambda: router.execute_calls([todo], calls, ctx), 100), "ms", 10.0))
        (root / "big.txt").write_text("x" * 120 + "\n" * 1 + ("y" * 120 + "\n") * 80_000)
        read, read_call = builtin_tool("read"), _call("read", path="big.txt")
        rows.append(("read: 9.7 MB file, capped (median)", _median_ms(lambda: router.execute(read, read_call, ctx), 20), "ms", 200.0))
        for i in range(200):
            d = root / "src" / f"pkg{i % 20}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"m{i}.py").write_text("import os\n" * 200 + f"needle_{i} = 1\n")
        grep, grep_call = builtin_tool("grep"), _call("grep", pattern="needle_1[0-9]", path="src")
        rows.append(("grep: 200 files with rg (median)", _median_ms(lambda: router.execute(grep, grep_call, ctx), 20), "ms", None))
        rows.append(("grep: 200 files, Python fallback (median)", _median_ms(lambda: fast.execute(grep, grep_call, ctx), 20), "ms", None))
    return rows
