"""The JavaScript host under the app's lifecycle rules, as the Python host: a crash fails
the call cleanly and the next call starts a fresh host, a call that ignores its signal
past the timeout is abandoned, a polite one stops on cancel, and shutdown awaits dispose."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.cancel import CancelToken
from llmspace.core.model import ToolCallOutput
from llmspace.plugins.hosts.js_runtime import find_runtime

from ..builders import make_plugin
from ..code_plugins import call_tool as _call
from ..code_plugins import tool_thread as _thread
from ..conformance.conftest import BUN_CACHED, absent

EXITING = """
export default class Exiting {
  name = "exiting";
  description = "Ends its process mid-call unless told not to.";
  parameters = {type: "object", properties: {die: {type: "boolean"}, junk: {type: "boolean"}},
                additionalProperties: false};
  async execute(context, args) {
    if (args.die) process.exit(7);
    if (args.junk) {  // a raw write to fd 1, which the host cannot redirect
      const fs = await import("node:fs");
      fs.writeSync(1, "junk that is not JSON-RPC\\n");
      await new Promise((resolve) => setTimeout(resolve, 60000));
    }
    return "alive";
  }
}
"""

WAITING = """
export default class Waiting {
  name = "waiting";
  description = "Waits for its signal, or ignores it.";
  parameters = {type: "object", properties: {polite: {type: "boolean"}}, additionalProperties: false};
  async execute(context, args) {
    if (args.polite) {
      await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
      return "stopped";
    }
    await new Promise(() => {});
  }
  async dispose() {
    const fs = await import("node:fs");
    fs.appendFileSync(process.env.LLM_SPACE_HOME + "/js-disposed.txt", "disposed\\n");
  }
}
"""


@pytest.fixture
def js_app(app: App, home: Path) -> App:
    bun = shutil.which("bun") or (str(BUN_CACHED) if BUN_CACHED.exists() else None)
    if bun is None:
        absent("Bun is not installed (.ci/run installs it into .cache/js/bun)")
    runtime = find_runtime(None, {"PATH": str(Path(str(bun)).parent)})
    app.plugin_code.js_runtime = lambda: runtime
    make_plugin(home, "js-kit", engines=">=4.9.0", files={"tools/exiting.mjs": EXITING, "tools/waiting.mjs": WAITING})
    app.plugins.refresh()
    app.plugin_code.ensure_loaded()
    return app


def test_a_js_host_that_exits_mid_call_gives_a_clean_error_and_the_next_call_works(js_app: App) -> None:
    thread = _thread(js_app)
    out = _call(js_app, thread, "exiting", {"die": True})
    assert out.isError is True and "stopped unexpectedly (exit code 7)" in out.text()
    assert _call(js_app, thread, "exiting", {}).text() == "alive"


def test_a_js_call_that_ignores_its_signal_is_abandoned_and_a_polite_one_stops(js_app: App, home: Path) -> None:
    thread = _thread(js_app)
    out = _call(js_app, thread, "waiting", {}, timeout=1.0)
    assert out.isError is True and "timed out" in out.text()
    assert _call(js_app, thread, "exiting", {}).text() == "alive"
    cancel = CancelToken()
    box: dict[str, ToolCallOutput] = {}
    worker = threading.Thread(target=lambda: box.setdefault("out", _call(js_app, thread, "waiting", {"polite": True},
                                                                         cancel=cancel)))
    worker.start()
    host = js_app.plugin_code.hosts()[0]
    for _ in range(600):
        if host.busy:
            break
        threading.Event().wait(0.05)
    starts = host.starts
    cancel.cancel()
    worker.join(30)
    assert box["out"].text() == "Cancelled" and host.starts == starts
    assert js_app.plugin_code.close() == []
    assert (home / "js-disposed.txt").read_text() == "disposed\n"


def test_junk_on_the_protocol_stream_stops_that_host_cleanly_and_the_next_call_works(js_app: App) -> None:
    thread = _thread(js_app)
    out = _call(js_app, thread, "exiting", {"junk": True})
    assert out.isError is True and "not a protocol message" in out.text()
    assert _call(js_app, thread, "exiting", {}).text() == "alive"
