"""cancel: the call's signal fires (aborted, reason, listeners, wait), and a call that
ends after it is answered as cancelled (-32001)."""

from __future__ import annotations

import json
import threading

from .client import WAIT

SIGNAL_TOOL = """
    import json
    import threading

    class Waits:
        name = "waits"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            heard = threading.Event()
            context.signal.add_listener(heard.set)
            context.notify("started")
            woke = context.signal.wait(20)
            late = []
            context.signal.add_listener(lambda: late.append("ran at once"))
            context.notify(json.dumps({
                "woke": woke, "aborted": context.signal.aborted, "reason": context.signal.reason,
                "listener": heard.wait(20), "late": late,
            }))
            return "finished anyway"
"""


def test_cancel_fires_the_signal_and_the_call_that_ends_after_it_answers_32001(start_plugin):
    started = threading.Event()
    seen: list[dict[str, object]] = []

    def handler(method, params):
        if params["message"] == "started":
            started.set()
        else:
            seen.append(json.loads(params["message"]))

    client, _ = start_plugin({"tools/waits.py": SIGNAL_TOOL}, handler)
    future = client.execute_async("tool", "waits", {"arguments": {}}, call_id="c17")
    assert started.wait(WAIT)
    client.notify("cancel", {"callId": "c17", "reason": "Cancelled by the user"})
    answer = future.result(WAIT)
    assert answer["error"]["code"] == -32001
    assert answer["error"]["data"] == {"reason": "Cancelled by the user"}
    assert seen == [{"woke": True, "aborted": True, "reason": "Cancelled by the user", "listener": True,
                     "late": ["ran at once"]}]


def test_a_call_that_is_not_cancelled_sees_an_unfired_signal(start_plugin):
    source = """
        class Peeks:
            name = "peeks"
            description = ""
            parameters = {"type": "object"}

            def execute(self, context, args):
                context.signal.raise_if_aborted()
                return [context.signal.aborted, context.signal.reason, context.signal.wait(0.01)]
    """
    client, _ = start_plugin({"tools/peeks.py": source})
    assert client.tool("peeks")["value"] == [False, None, False]


def test_a_cancel_for_an_unknown_or_finished_call_is_ignored(start_plugin):
    source = """
        class Quick:
            name = "quick"
            description = ""
            parameters = {"type": "object"}

            def execute(self, context, args):
                return "done"
    """
    client, _ = start_plugin({"tools/quick.py": source})
    assert client.execute("tool", "quick", {"arguments": {}}, call_id="c1")["result"]["value"] == "done"
    client.notify("cancel", {"callId": "c1", "reason": "late"})
    client.notify("cancel", {"callId": "never-started"})
    client.notify("cancel", {"reason": "no call id"})
    assert client.result("ping") == {}
    assert client.execute("tool", "quick", {"arguments": {}}, call_id="c1")["result"]["value"] == "done"


def test_cancel_cancels_the_task_of_an_async_execute(start_plugin):
    source = """
        import asyncio

        class Sleeps:
            name = "sleeps"
            description = ""
            parameters = {"type": "object"}

            async def execute(self, context, args):
                context.notify("started")
                try:
                    await asyncio.sleep(600)
                except asyncio.CancelledError:
                    context.notify("task cancelled")
                    raise
                return "slept"
    """
    started = threading.Event()
    client, _ = start_plugin({"tools/sleeps.py": source}, lambda m, p: started.set() if p["message"] == "started" else None)
    future = client.execute_async("tool", "sleeps", {"arguments": {}}, call_id="c9")
    assert started.wait(WAIT)
    client.notify("cancel", {"callId": "c9"})
    answer = future.result(WAIT)
    assert answer["error"]["code"] == -32001
    assert answer["error"]["data"]["reason"] == "Cancelled"
    assert [p["message"] for m, p in client.callbacks] == ["started", "task cancelled"]


def test_raise_if_aborted_after_cancel_ends_the_call_as_cancelled(start_plugin):
    source = """
        class Checks:
            name = "checks"
            description = ""
            parameters = {"type": "object"}

            def execute(self, context, args):
                context.notify("started")
                context.signal.wait(20)
                context.signal.raise_if_aborted()
                return "not reached"
    """
    started = threading.Event()
    client, _ = start_plugin({"tools/checks.py": source}, lambda m, p: started.set())
    future = client.execute_async("tool", "checks", {"arguments": {}}, call_id="c3")
    assert started.wait(WAIT)
    client.notify("cancel", {"callId": "c3", "reason": "stop"})
    assert future.result(WAIT)["error"] == {"code": -32001, "message": "stop", "data": {"reason": "stop"}}
