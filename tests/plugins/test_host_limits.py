"""A plugin host's stderr and memory are bounded: a stderr line is cut at 64 KiB, at most
64 KiB a second is kept (the rest is logged as `[N bytes dropped]`), the Python host runs
under `RLIMIT_AS`, every host's process tree is stopped above `hostMemoryMB`
(settings/plugin-hosts.json) and Node gets `--max-old-space-size`."""

from __future__ import annotations

import json
import re
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from llmspace.agent.services import tool_context
from llmspace.app import App
from llmspace.core.model import ThreadContext, ToolCall, ToolCallInput, ToolCallOutput
from llmspace.core.threadio import thread_from_data
from llmspace.plugins.code.calls import plugin_tool_entry_for
from llmspace.plugins.hosts.connection import HostConnection
from llmspace.plugins.hosts.js_runtime import find_runtime
from llmspace.plugins.hosts.stderr import LINE_CAP, RATE

from .builders import make_plugin
from .code_plugins import code_plugin
from .conformance.conftest import BUN_CACHED, NODE22_CACHED, absent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the limits use Linux's /proc")


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.changed = threading.Condition()

    def add(self, text: str) -> None:
        with self.changed:
            self.lines.append(text)
            self.changed.notify_all()

    def wait_for(self, text: str, seconds: float = 60.0) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: any(text in line for line in self.lines), seconds)


def _connection(tmp_path: Path, program: str, lines: _Lines) -> HostConnection:
    conn = HostConnection([sys.executable, "-c", program], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
                          label="noisy (python)", on_request=lambda m, p: None, on_output=lines.add)
    conn.start()
    return conn


def test_a_stderr_line_without_end_is_cut_at_64_kib_and_the_rest_counted_as_dropped(tmp_path: Path) -> None:
    program = ("import os, sys\nchunk = b'x' * (1 << 20)\nfor _ in range(40):\n    os.write(2, chunk)\n"
               "os.write(2, b'\\nafter\\n')\nsys.stdin.read()\n")
    lines = _Lines()
    conn = _connection(tmp_path, program, lines)
    try:
        assert lines.wait_for("after")
    finally:
        conn.close(shutdown_wait=0.1)
    assert max(len(line) for line in lines.lines) <= LINE_CAP + 1
    dropped = [int(m.group(1)) for line in lines.lines if (m := re.search(r"\[(\d+) bytes dropped\]", line))]
    assert sum(dropped) >= 40 * (1 << 20) - LINE_CAP


def test_stderr_keeps_at_most_64_kib_a_second_and_logs_what_it_dropped(tmp_path: Path) -> None:
    program = ("import os, sys\nline = b'y' * 1023 + b'\\n'\nfor _ in range(4096):\n    os.write(2, line)\n"
               "os.write(2, b'done\\n')\nsys.stdin.read()\n")
    lines = _Lines()
    started = time.monotonic()
    conn = _connection(tmp_path, program, lines)
    try:
        assert lines.wait_for("bytes dropped") or lines.wait_for("done")
        elapsed = time.monotonic() - started
    finally:
        conn.close(shutdown_wait=0.1)
    kept = sum(len(line) for line in lines.lines if line.startswith("y"))
    assert kept <= RATE * (elapsed + 1) + LINE_CAP, f"{kept} bytes kept in {elapsed:.1f} s"
    assert any("bytes dropped" in line for line in lines.lines)


def _call(app: App, name: str, args: dict[str, Any]) -> ToolCallOutput:
    app.plugin_code.ensure_loaded()
    thread = thread_from_data({"title": "t"})
    thread.context = ThreadContext(tools=[plugin_tool_entry_for(s) for s in app.plugin_code.tool_specs()])
    tool = next(t for t in thread.context.tools if t.name == name)
    return app.tools.execute(tool, ToolCall(id="c", input=ToolCallInput(name=name, arguments=args)),
                             tool_context(app.run_services, thread), None, 60)


def _limit(home: Path, mb: int) -> None:
    (home / "settings").mkdir(exist_ok=True)
    (home / "settings" / "plugin-hosts.json").write_text(json.dumps({"hostMemoryMB": mb}))


HOG = '''
class Hog:
    name = "hog"
    description = "Allocates 400 MB at once."
    parameters = {"type": "object"}
    def execute(self, context, args):
        return len(bytearray(400 * 1024 * 1024))
'''

JS_HOG = '''
export default class Hog {
  name = "js_hog";
  description = "Keeps allocating until it is stopped.";
  parameters = {type: "object"};
  async execute(context, args) {
    if (args.flags) return process.execArgv;
    const keep = [];
    for (;;) {
      keep.push(Buffer.alloc(16 * 1024 * 1024, 1));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
'''


def test_the_python_host_runs_under_rlimit_as_of_the_memory_setting(app: App, home: Path) -> None:
    _limit(home, 256)
    code_plugin(home, tools={"hog": HOG})
    app.plugins.refresh()
    out = _call(app, "hog", {})
    assert out.isError is True and "MemoryError" in out.text()


def _js_app(app: App, exe: Path | str | None, what: str) -> App:
    if exe is None or not Path(exe).exists():
        absent(f"{what} is not installed (.ci/run installs it into .cache/js)")
    runtime = find_runtime(None, {"PATH": str(Path(str(exe)).parent)})
    app.plugin_code.js_runtime = lambda: runtime
    return app


def test_a_js_host_whose_process_tree_passes_the_limit_is_stopped_naming_it(app: App, home: Path) -> None:
    _js_app(app, shutil.which("bun") or BUN_CACHED, "Bun")
    _limit(home, 256)
    make_plugin(home, "js-kit", engines=">=4.9.0", files={"tools/hog.mjs": JS_HOG})
    app.plugins.refresh()
    out = _call(app, "js_hog", {})
    assert out.isError is True and "plugin host exceeded 256 MB" in out.text()


def test_node_hosts_get_max_old_space_size_of_the_memory_setting(app: App, home: Path) -> None:
    _js_app(app, NODE22_CACHED, "Node 22")
    _limit(home, 300)
    make_plugin(home, "js-kit", engines=">=4.9.0", files={"tools/hog.mjs": JS_HOG})
    app.plugins.refresh()
    assert "--max-old-space-size=300" in json.loads(_call(app, "js_hog", {"flags": True}).text())
