"""Every host (Python; JavaScript under Bun and Node): shutdown disposes every instance
(plain and async, each bounded to 3 s) and the host exits 0; the end of stdin makes it exit
at once, running calls or not; what plugin code leaves running does not keep it alive;
SIGINT does not end it."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from .client import WAIT
from .conftest import Code


def disposing_tool(name: str, marker: str, *, is_async: bool = False, py_body: str = "", js_body: str = "") -> Code:
    return Code(py=f"""
        import asyncio
        import pathlib
        import time

        class Tool:
            name = {name!r}
            description = ""
            parameters = {{"type": "object"}}

            def execute(self, context, args):
                return "ok"

            {"async " if is_async else ""}def dispose(self):
                {py_body or "pass"}
                pathlib.Path({marker!r}).write_text("disposed")
    """, js=f"""
        import {{ writeFileSync }} from "node:fs";

        export default class Tool {{
          name = {name!r};
          description = "";
          parameters = {{ type: "object" }};

          execute(context, args) {{
            return "ok";
          }}

          {"async " if is_async else ""}dispose() {{
            {js_body}
            writeFileSync({marker!r}, "disposed");
          }}
        }}
    """)


NO_DISPOSE = Code(py='class C:\n    display_name = "No dispose"\n    def execute(self, context): ...\n',
                  js='export default class { displayName = "No dispose"; execute() {} }\n')
FAILING_DISPOSE = Code(py='class C:\n    display_name = "Fails"\n    def execute(self, context): ...\n'
                          '    def dispose(self):\n        raise OSError("socket already closed")\n',
                       js='export default class { displayName = "Fails"; execute() {}\n'
                          '  dispose() { throw new Error("socket already closed"); } }\n')


def test_shutdown_calls_dispose_plain_and_async_then_the_host_exits_0(start_any_plugin, tmp_path):
    plain, later = tmp_path / "plain.txt", tmp_path / "later.txt"
    client, _ = start_any_plugin({
        "tools/plain": disposing_tool("plain", str(plain)),
        "tools/later": disposing_tool("later", str(later), is_async=True, py_body="await asyncio.sleep(0.2)",
                                      js_body="await new Promise((resolve) => setTimeout(resolve, 200));"),
        "commands/none": NO_DISPOSE,
        "commands/failing": FAILING_DISPOSE,
    })
    assert client.tool("later")["value"] == "ok"
    answer = client.result("shutdown")
    assert sorted(answer["disposed"]) == ["tool:later", "tool:plain"]
    assert answer["failed"] == [{"id": "command:failing", "message": "socket already closed"}]
    assert client.wait_exit() == 0
    assert plain.read_text() == "disposed" and later.read_text() == "disposed"


def test_a_dispose_that_hangs_is_given_up_after_3_seconds(start_any_plugin, any_host, tmp_path):
    client, _ = start_any_plugin({
        "tools/hangs": disposing_tool("hangs", str(tmp_path / "never.txt"), py_body="time.sleep(600)",
                                      js_body="await new Promise(() => {});", is_async=any_host.is_js),
        "tools/quick": disposing_tool("quick", str(tmp_path / "quick.txt")),
    })
    started = time.monotonic()
    shutdown = client.request("shutdown")
    if any_host.is_js:  # the JavaScript host reads on while it disposes: new calls are refused
        refused = client.execute("tool", "quick", {"arguments": {}})
        assert refused["error"]["code"] == -32002
        assert refused["error"]["data"] == {"reason": "the plugin host is shutting down"}
    answer = shutdown.result(WAIT)["result"]
    elapsed = time.monotonic() - started
    assert answer == {"disposed": ["tool:quick"],
                      "failed": [{"id": "tool:hangs", "message": "dispose() did not finish within 3 s"}]}
    assert 2.5 < elapsed < 15
    assert client.wait_exit() == 0


@pytest.mark.parametrize("any_host", [("bun", ".ts"), ("node", ".mjs")], indirect=True, ids=["bun-ts", "node-mjs"])
def test_a_rejected_dispose_is_named_by_its_error_and_an_instance_that_failed_its_contract_is_disposed(
        start_any_plugin, tmp_path):
    client, _ = start_any_plugin({
        "commands/rejects": 'export default class { displayName = "Rejects"; execute() {}\n'
                            '  async dispose() { throw new TypeError(); } }\n',
        "tools/broken": 'export default class { dispose() {} }\n',  # fails its contract after the constructor ran
    })
    answer = client.result("shutdown")
    assert answer == {"disposed": ["tool:broken"], "failed": [{"id": "command:rejects", "message": "TypeError"}]}
    assert client.wait_exit() == 0


def test_shutdown_before_initialize_answers_empty_lists_and_exits_0(start_any_host):
    client = start_any_host()
    assert client.result("ping") == {}
    assert client.result("shutdown") == {"disposed": [], "failed": []}
    assert client.wait_exit() == 0


BLOCKS = Code(py="""
    class Blocks:
        name = "blocks"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            context.notify("started")
            context.signal.wait(600)
""", js="""
    export default class Blocks {
      name = "blocks"; description = ""; parameters = { type: "object" };
      async execute(context) {
        await context.notify("started");
        await new Promise(() => {});
      }
    }
""")


def test_the_end_of_stdin_makes_the_host_exit_at_once_even_with_a_call_running(start_any_plugin):
    started = threading.Event()
    client, _ = start_any_plugin({"tools/blocks": BLOCKS}, lambda m, p: started.set())
    future = client.execute_async("tool", "blocks", {"arguments": {}})
    assert started.wait(WAIT)
    began = time.monotonic()
    client.close_stdin()
    assert client.wait_exit() == 0
    assert time.monotonic() - began < 10
    with pytest.raises(EOFError):
        future.result(WAIT)


LEAVES_RUNNING = Code(py="""
    import socket
    import threading

    threading.Thread(target=threading.Event().wait).start()  # not a daemon
    server = socket.create_server(("127.0.0.1", 0))

    class Busy:
        name = "busy"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            return None
""", js="""
    import { createServer } from "node:net";

    setInterval(() => {}, 1000);
    createServer().listen(0, "127.0.0.1");

    export default class Busy {
      name = "busy"; description = ""; parameters = { type: "object" };
      execute() { return null; }
    }
""")


def test_threads_timers_and_servers_plugin_code_started_do_not_keep_the_host_alive(start_any_plugin):
    client, _ = start_any_plugin({"tools/busy": LEAVES_RUNNING})
    assert client.result("shutdown") == {"disposed": [], "failed": []}
    assert client.wait_exit() == 0
    other, _ = start_any_plugin({"tools/busy": LEAVES_RUNNING})
    other.close_stdin()
    assert other.wait_exit() == 0


def test_sigint_does_not_end_the_host(start_any_plugin):
    client, _ = start_any_plugin({"tools/t": Code(
        py='class T:\n    name = "t"\n    description = ""\n    parameters = {"type": "object"}\n'
           '    def execute(self, context, args):\n        return 1\n',
        js='export default class { name = "t"; description = ""; parameters = { type: "object" }; execute() { return 1; } }\n')})
    client.proc.send_signal(signal.SIGINT)
    assert client.tool("t")["value"] == 1
    assert client.proc.poll() is None
