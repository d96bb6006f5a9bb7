"""cancel: the call's AbortSignal aborts (listeners run, `aborted`, `reason`), and a call that
ends after it is answered as cancelled (-32001)."""

from __future__ import annotations

import json
import threading

from .client import WAIT

SIGNAL_TOOL = """
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
"""


def test_cancel_aborts_the_signal_and_the_call_that_ends_after_it_answers_32001(start_plugin):
    started = threading.Event()
    seen: list[dict[str, object]] = []

    def handler(method, params):
        if params["message"] == "started":
            started.set()
        else:
            seen.append(json.loads(params["message"]))

    client, _ = start_plugin({"tools/waits": SIGNAL_TOOL}, handler)
    future = client.execute_async("tool", "waits", {"arguments": {}}, call_id="c17")
    assert started.wait(WAIT)
    client.notify("cancel", {"callId": "c17", "reason": "Cancelled by the user"})
    answer = future.result(WAIT)
    assert answer["error"]["code"] == -32001
    assert answer["error"]["message"] == "Cancelled by the user"
    assert answer["error"]["data"] == {"reason": "Cancelled by the user"}
    assert seen == [{
        "before": {"isAbortSignal": True, "aborted": False}, "listener": "listener ran", "onabort": "onabort ran",
        "thrown": True, "aborted": True,
        "reason": {"name": "AbortError", "message": "Cancelled by the user", "isError": True},
    }]


def test_a_call_that_throws_when_aborted_is_answered_32001_and_a_cancel_without_reason_says_cancelled(start_plugin):
    source = """
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
    """
    started = threading.Event()
    client, _ = start_plugin({"tools/sleeps": source}, lambda m, p: started.set())
    future = client.execute_async("tool", "sleeps", {"arguments": {}}, call_id="c1")
    assert started.wait(WAIT)
    client.notify("cancel", {"callId": "c1"})
    assert future.result(WAIT)["error"] == {"code": -32001, "message": "Cancelled", "data": {"reason": "Cancelled"}}


def test_a_cancel_as_a_request_is_answered_and_unknown_call_ids_are_ignored(start_plugin):
    source = """
        export default class Quick {
          name = "quick"; description = ""; parameters = { type: "object" };
          execute(context) { return context.signal.aborted; }
        }
    """
    client, _ = start_plugin({"tools/quick": source})
    client.notify("cancel", {"callId": "nobody", "reason": "x"})
    client.notify("cancel", {"reason": "no call id"})
    assert client.call("cancel", {"callId": "nobody"})["result"] is None
    assert client.tool("quick")["value"] is False
    client.notify("cancel", {"callId": "c1"})  # finished already
    assert client.result("ping") == {}


def test_cancelling_one_call_leaves_the_others_alone(start_plugin):
    source = """
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
    """
    started = threading.Event()
    client, _ = start_plugin({"tools/pair": source}, lambda m, p: started.set() if p["message"] == "started 1" else None)
    first = client.execute_async("tool", "pair", {"arguments": {"n": 1}}, call_id="one")
    assert started.wait(WAIT)
    second = client.execute_async("tool", "pair", {"arguments": {"n": 2}}, call_id="two")
    assert second.result(WAIT)["result"]["value"] == "2: false"
    client.notify("cancel", {"callId": "one", "reason": "stop one"})
    assert first.result(WAIT)["error"]["code"] == -32001
