"""shutdown awaits every dispose() (each bounded to 3 s) and the host exits 0; the end of
stdin makes it exit at once, running calls or not; SIGINT does not end it."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from .client import WAIT


def disposing_tool(name: str, marker: str, *, body: str = "") -> str:
    return f"""
        import {{ writeFileSync }} from "node:fs";

        export default class Tool {{
          name = {name!r};
          description = "";
          parameters = {{ type: "object" }};

          execute(context, args) {{
            return "ok";
          }}

          async dispose() {{
            {body}
            writeFileSync({marker!r}, "disposed");
          }}
        }}
    """


def test_shutdown_awaits_dispose_then_the_host_exits_0(start_plugin, tmp_path):
    later, plain = tmp_path / "later.txt", tmp_path / "plain.txt"
    client, _ = start_plugin({
        "tools/later": disposing_tool("later", str(later), body="await new Promise((resolve) => setTimeout(resolve, 200));"),
        "tools/plain": disposing_tool("plain", str(plain)),
        "commands/none": 'export default class { displayName = "No dispose"; execute() {} }\n',
        "commands/failing": 'export default class { displayName = "Fails"; execute() {}\n'
                            '  dispose() { throw new Error("socket already closed"); } }\n',
        "commands/rejects": 'export default class { displayName = "Rejects"; execute() {}\n'
                            '  async dispose() { throw new TypeError(); } }\n',
        "tools/broken": 'export default class { dispose() {} }\n',  # fails its contract after the constructor ran
    })
    assert client.tool("later")["value"] == "ok"
    answer = client.result("shutdown")
    assert answer == {"disposed": ["tool:broken", "tool:later", "tool:plain"],
                      "failed": [{"id": "command:failing", "message": "socket already closed"},
                                 {"id": "command:rejects", "message": "TypeError"}]}
    assert client.wait_exit() == 0
    assert later.read_text() == "disposed" and plain.read_text() == "disposed"


def test_a_dispose_that_hangs_is_given_up_after_3_seconds_and_new_calls_are_refused(start_plugin, tmp_path):
    client, _ = start_plugin({
        "tools/hangs": disposing_tool("hangs", str(tmp_path / "never.txt"), body="await new Promise(() => {});"),
        "tools/quick": disposing_tool("quick", str(tmp_path / "quick.txt")),
    })
    started = time.monotonic()
    shutdown = client.request("shutdown")
    refused = client.execute("tool", "quick", {"arguments": {}})
    assert refused["error"]["code"] == -32002
    assert refused["error"]["data"] == {"reason": "the plugin host is shutting down"}
    answer = shutdown.result(WAIT)["result"]
    elapsed = time.monotonic() - started
    assert answer == {"disposed": ["tool:quick"], "failed": [{"id": "tool:hangs", "message": "dispose() did not finish within 3 s"}]}
    assert 2.5 < elapsed < 15
    assert client.wait_exit() == 0


def test_shutdown_before_initialize_answers_empty_lists(start_host):
    client = start_host()
    assert client.result("ping") == {}
    assert client.result("shutdown") == {"disposed": [], "failed": []}
    assert client.wait_exit() == 0


def test_the_end_of_stdin_exits_at_once_even_with_a_running_call(start_plugin):
    source = """
        export default class Forever {
          name = "forever"; description = ""; parameters = { type: "object" };
          async execute(context) {
            await context.notify("started");
            await new Promise(() => {});
          }
        }
    """
    started = threading.Event()
    client, _ = start_plugin({"tools/forever": source}, lambda m, p: started.set())
    future = client.execute_async("tool", "forever", {"arguments": {}})
    assert started.wait(WAIT)
    began = time.monotonic()
    client.close_stdin()
    assert client.wait_exit() == 0
    assert time.monotonic() - began < 10
    with pytest.raises(EOFError):
        future.result(WAIT)


def test_timers_and_servers_plugin_code_started_do_not_keep_the_host_alive(start_plugin):
    source = """
        import { createServer } from "node:net";

        setInterval(() => {}, 1000);
        createServer().listen(0, "127.0.0.1");

        export default class Busy {
          name = "busy"; description = ""; parameters = { type: "object" };
          execute() { return null; }
        }
    """
    client, _ = start_plugin({"tools/busy": source})
    assert client.result("shutdown") == {"disposed": [], "failed": []}
    assert client.wait_exit() == 0
    other, _ = start_plugin({"tools/busy": source})
    other.close_stdin()
    assert other.wait_exit() == 0


def test_sigint_does_not_end_the_host(start_plugin):
    client, _ = start_plugin({"tools/t": 'export default class { name = "t"; description = ""; parameters = { type: "object" }; execute() { return 1; } }\n'})
    client.proc.send_signal(signal.SIGINT)
    assert client.tool("t")["value"] == 1
    assert client.proc.poll() is None
