"""Plugin host benchmarks: a plugin tool's round trip through the Python host (the app's
executor → host → plugin → back; median and p95 over 1,000 calls; budget 3 ms median),
and host cold start to the first answered call (median of 10 starts; budget 300 ms).

Uses a real plugin folder in a temporary LLM_SPACE_HOME and the app's own services
(`App.plugin_code`, the tool router). Run with `python -m bench plugins`.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

CALLS = 1000
WARMUP = 30
STARTS = 10
TOOL = '''
class Echo:
    name = "echo"
    description = "Echo the text."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
                  "additionalProperties": False}

    def execute(self, context, args):
        return args["text"]
'''


def _plugin(home: Path) -> None:
    root = home / "plugins" / "bench-kit"
    (root / "tools").mkdir(parents=True)
    (root / "package.json").write_text(json.dumps({"name": "bench-kit", "version": "1.0.0",
                                                   "engines": {"llm-space": ">=4.9.0"}}))
    (root / "tools" / "echo.py").write_text(TOOL)


def run() -> list[tuple[str, float, str, float | None]]:
    from llmspace.agent.services import tool_context
    from llmspace.app import App
    from llmspace.core.model import ThreadContext, ToolCall, ToolCallInput
    from llmspace.core.threadio import thread_from_data
    from llmspace.paths import DataRoot
    from llmspace.plugins.code_calls import plugin_tool_entry_for

    rows: list[tuple[str, float, str, float | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        _plugin(home)
        app = App(DataRoot(home))
        try:
            app.plugin_code.ensure_loaded()
            spec = app.plugin_code.tool_specs()[0]
            tool = plugin_tool_entry_for(spec)
            thread = thread_from_data({"title": "bench"})
            thread.context = ThreadContext(tools=[tool])
            ctx = tool_context(app.run_services, thread)
            call = ToolCall(id="c", input=ToolCallInput(name="echo", arguments={"text": "ping"}))
            for _ in range(WARMUP):
                app.tools.execute(tool, call, ctx, None, 30)
            times = []
            for _ in range(CALLS):
                t0 = time.perf_counter()
                out = app.tools.execute(tool, call, ctx, None, 30)
                times.append((time.perf_counter() - t0) * 1000)
                assert out.text() == "ping"
            times.sort()
            rows.append(("plugin tool round trip, Python host (median)", statistics.median(times), "ms", 3.0))
            rows.append(("plugin tool round trip, Python host (p95)", times[int(len(times) * 0.95)], "ms", None))
            starts = []
            for _ in range(STARTS):
                for host in app.plugin_code.hosts():
                    host.stop("bench", final=False)
                t0 = time.perf_counter()
                app.tools.execute(tool, call, ctx, None, 30)
                starts.append((time.perf_counter() - t0) * 1000)
            rows.append(("plugin host cold start to first call, Python (median)", statistics.median(starts), "ms", 300.0))
        finally:
            app.close()
    return rows
