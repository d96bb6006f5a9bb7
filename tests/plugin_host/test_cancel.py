"""Every host (Python; JavaScript under Bun and Node): cancel fires the call's signal
(Python: aborted, reason, listeners, wait; JavaScript: an AbortSignal with an AbortError
reason), and a call that ends after it is answered as cancelled (-32001); cancels of unknown
or finished calls are ignored, and a cancel touches only its own call."""

from __future__ import annotations

import json
import threading

from .client import WAIT
from .conftest import Code

SIGNAL_TOOL = Code(py="""
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
""", js="""
    export default class Waits {
      name = "waits";
      description = "";
      parameters = { type: "object" };

      async execute(context, args) {
        const { signal } = context;
        const before = { isAbortSignal: signal instanceof AbortSignal, aborted: signal.aborted };
        const heard = new Promise((resolve) => signal.addEventListener("abort", () => resolve("listener ran"), { once: true }));
        let onabort = null;
        signal.onabort = () => { onabort = "onabort ran"; };
        await context.notify("started");
        const listener = await heard;
        let thrown = null;
        try {
          signal.throwIfAborted();
        } catch (error) {
          thrown = error === signal.reason;
        }
        await context.notify(JSON.stringify({
          before, listener, onabort, thrown, aborted: signal.aborted,
          reason: { name: signal.reason.name, message: signal.reason.message, isError: signal.reason instanceof Error },
        }));
        return "finished anyway";
      }
    }
""")
SEEN = {
    "py": {"woke": True, "aborted": True, "reason": "Cancelled by the user", "listener": True, "late": ["ran at once"]},
    "js": {"before": {"isAbortSignal": True, "aborted": False}, "listener": "listener ran", "onabort": "onabort ran",
           "thrown": True, "aborted": True,
           "reason": {"name": "AbortError", "message": "Cancelled by the user", "isError": True}},
}


def test_cancel_fires_the_signal_and_the_call_that_ends_after_it_answers_32001(start_any_plugin, any_host):
    started = threading.Event()
    seen: list[dict[str, object]] = []

    def handler(method, params):
        if params["message"] == "started":
            started.set()
        else:
            seen.append(json.loads(params["message"]))

    client, _ = start_any_plugin({"tools/waits": SIGNAL_TOOL}, handler)
    future = client.execute_async("tool", "waits", {"arguments": {}}, call_id="c17")
    assert started.wait(WAIT)
    client.notify("cancel", {"callId": "c17", "reason": "Cancelled by the user"})
    answer = future.result(WAIT)
    assert answer["error"] == {"code": -32001, "message": "Cancelled by the user", "data": {"reason": "Cancelled by the user"}}
    assert seen == [SEEN["js" if any_host.is_js else "py"]]


STOPS_WHEN_ABORTED = Code(py="""
    class Sleeps:
        name = "sleeps"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            context.notify("started")
            context.signal.wait(600)
            context.signal.raise_if_aborted()
            return "never"
""", js="""
        export default class Sleeps {
          name = "sleeps";
          description = "";
          parameters = { type: "object" };

          async execute(context, args) {
            const sleep = new Promise((resolve, reject) => {
              const timer = setTimeout(resolve, 600000);
              context.signal.addEventListener("abort", () => {
                clearTimeout(timer);
                reject(context.signal.reason);
              });
            });
            await context.notify("started");
            await sleep;
            return "never";
          }
        }
    """)


def test_a_call_that_stops_when_aborted_is_answered_32001_and_a_cancel_without_reason_says_cancelled(start_any_plugin):
    started = threading.Event()
    client, _ = start_any_plugin({"tools/sleeps": STOPS_WHEN_ABORTED}, lambda m, p: started.set())
    future = client.execute_async("tool", "sleeps", {"arguments": {}}, call_id="c1")
    assert started.wait(WAIT)
    client.notify("cancel", {"callId": "c1"})
    assert future.result(WAIT)["error"] == {"code": -32001, "message": "Cancelled", "data": {"reason": "Cancelled"}}


PEEKS = Code(py="""
    class Peeks:
        name = "peeks"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            context.signal.raise_if_aborted()
            return [context.signal.aborted, context.signal.reason, context.signal.wait(0.01)]
""", js="""
    export default class Peeks {
      name = "peeks"; description = ""; parameters = { type: "object" };
      execute(context) {
        context.signal.throwIfAborted();
        return [context.signal.aborted, context.signal.reason ?? null, false];
      }
    }
""")


def test_a_cancel_for_an_unknown_or_finished_call_is_ignored_and_a_call_without_one_sees_an_unfired_signal(
        start_any_plugin):
    client, _ = start_any_plugin({"tools/peeks": PEEKS})
    client.notify("cancel", {"callId": "nobody", "reason": "x"})
    client.notify("cancel", {"reason": "no call id"})
    assert client.call("cancel", {"callId": "nobody"})["result"] is None  # as a request it is answered
    assert client.execute("tool", "peeks", {"arguments": {}}, call_id="c1")["result"]["value"] == [False, None, False]
    client.notify("cancel", {"callId": "c1", "reason": "late"})  # finished already
    assert client.result("ping") == {}
    assert client.execute("tool", "peeks", {"arguments": {}}, call_id="c1")["result"]["value"] == [False, None, False]


PAIR = Code(py="""
    class Pair:
        name = "pair"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            context.notify(f"started {args['n']}")
            context.signal.wait(0.01 if args["n"] == 2 else 600)
            return f"{args['n']}: {str(context.signal.aborted).lower()}"
""", js="""
    export default class Pair {
      name = "pair"; description = ""; parameters = { type: "object" };
      async execute(context, args) {
        await context.notify(`started ${args.n}`);
        await new Promise((resolve) => {
          if (context.signal.aborted) resolve();
          context.signal.addEventListener("abort", resolve);
          if (args.n === 2) setTimeout(resolve, 10);
        });
        return `${args.n}: ${context.signal.aborted}`;
      }
    }
""")


def test_cancelling_one_call_leaves_the_others_alone(start_any_plugin):
    started = threading.Event()
    client, _ = start_any_plugin({"tools/pair": PAIR},
                                 lambda m, p: started.set() if p["message"] == "started 1" else None)
    first = client.execute_async("tool", "pair", {"arguments": {"n": 1}}, call_id="one")
    assert started.wait(WAIT)
    second = client.execute_async("tool", "pair", {"arguments": {"n": 2}}, call_id="two")
    assert second.result(WAIT)["result"]["value"] == "2: false"
    client.notify("cancel", {"callId": "one", "reason": "stop one"})
    assert first.result(WAIT)["error"]["code"] == -32001


# -- Python only ------------------------------------------------------------------------------

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
