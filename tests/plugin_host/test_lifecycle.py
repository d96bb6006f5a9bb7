"""shutdown disposes every instance (plain and async, each bounded) and the host exits 0;
the end of stdin makes it exit at once, running calls or not."""

from __future__ import annotations

import threading
import time

from .client import WAIT, HostClient, write_plugin


def disposing_tool(name: str, marker: str, *, is_async: bool = False, body: str = "") -> str:
    return f"""
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
                {body or "pass"}
                pathlib.Path({marker!r}).write_text("disposed")
    """


def test_shutdown_calls_dispose_plain_and_async_then_the_host_exits_0(start_plugin, tmp_path):
    sync_marker, async_marker = tmp_path / "sync.txt", tmp_path / "async.txt"
    client, _ = start_plugin({
        "tools/plain.py": disposing_tool("plain", str(sync_marker)),
        "tools/later.py": disposing_tool("later", str(async_marker), is_async=True, body="await asyncio.sleep(0.01)"),
        "commands/none.py": 'class C:\n    display_name = "No dispose"\n    def execute(self, context): ...\n',
        "commands/failing.py": 'class C:\n    display_name = "Fails"\n    def execute(self, context): ...\n'
                               '    def dispose(self):\n        raise OSError("socket already closed")\n',
    })
    answer = client.result("shutdown")
    assert sorted(answer["disposed"]) == ["tool:later", "tool:plain"]
    assert answer["failed"] == [{"id": "command:failing", "message": "socket already closed"}]
    assert client.wait_exit() == 0
    assert sync_marker.read_text() == "disposed" and async_marker.read_text() == "disposed"


def test_a_dispose_that_hangs_is_given_up_after_3_seconds(start_plugin, tmp_path):
    client, _ = start_plugin({
        "tools/hangs.py": disposing_tool("hangs", str(tmp_path / "never.txt"), body="time.sleep(600)"),
        "tools/quick.py": disposing_tool("quick", str(tmp_path / "quick.txt")),
    })
    started = time.monotonic()
    answer = client.result("shutdown")
    elapsed = time.monotonic() - started
    assert answer == {"disposed": ["tool:quick"], "failed": [{"id": "tool:hangs", "message": "dispose() did not finish within 3 s"}]}
    assert 2.5 < elapsed < 15
    assert client.wait_exit() == 0


def test_shutdown_before_initialize_answers_and_exits_0(tmp_path):
    client = HostClient(tmp_path)
    try:
        assert client.result("shutdown") == {"disposed": [], "failed": []}
        assert client.wait_exit() == 0
    finally:
        client.close()


def test_the_end_of_stdin_makes_the_host_exit_at_once_even_with_a_call_running(start_plugin):
    source = """
        class Blocks:
            name = "blocks"
            description = ""
            parameters = {"type": "object"}

            def execute(self, context, args):
                context.notify("started")
                context.signal.wait(600)
    """
    started = threading.Event()
    client, _ = start_plugin({"tools/blocks.py": source}, lambda m, p: started.set())
    client.execute_async("tool", "blocks", {"arguments": {}})
    assert started.wait(WAIT)
    began = time.monotonic()
    client.close_stdin()
    assert client.wait_exit() == 0
    assert time.monotonic() - began < 10


def test_a_plugin_that_starts_a_non_daemon_thread_does_not_keep_the_host_alive(tmp_path):
    root = write_plugin(tmp_path / "p", {"tools/spawns.py": """
        import threading

        threading.Thread(target=threading.Event().wait).start()

        class Spawns:
            name = "spawns"
            description = ""
            parameters = {"type": "object"}

            def execute(self, context, args):
                return None
    """})
    client = HostClient(tmp_path)
    try:
        client.initialize(root)
        assert client.result("shutdown") == {"disposed": [], "failed": []}
        assert client.wait_exit() == 0
    finally:
        client.close()
