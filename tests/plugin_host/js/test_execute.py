"""execute under the JavaScript host only: what JavaScript values and errors become, storages,
the host's RPC errors, messages during initialize, stray errors, large answers (what every
host does alike is tests/plugin_host/test_execute.py)."""

from __future__ import annotations

import pytest

from ..client import write_plugin
from .client import WAIT
from .client import js_tool as tool


@pytest.mark.parametrize(("body", "value"), [
    ("return { kept: 1, dropped: undefined, list: [undefined, 2] };", {"kept": 1, "list": [None, 2]}),
    ("return Object.freeze([new String('boxed'), new Number(3)]);", ["boxed", 3]),
    ("return Object.assign(Object.create(null), { bare: true });", {"bare": True}),
    ("return JSON.parse('{\"__proto__\": 1}');", {"__proto__": 1}),
])
def test_javascript_values_are_answered_as_json_stringify_would_write_them(start_plugin, body, value):
    client, _ = start_plugin({"tools/t": tool("t", body)})
    assert client.tool("t") == {"type": "value", "value": value}


def test_a_synchronous_execute_and_a_thenable_work_too(start_plugin):
    source = """
        export default class Sync {
          name = "sync";
          description = "";
          parameters = { type: "object" };
          execute(context, args) {
            return args.thenable ? { then: (resolve) => resolve("from a thenable") } : "at once";
          }
        }
    """
    client, _ = start_plugin({"tools/sync": source})
    assert client.tool("sync")["value"] == "at once"
    assert client.tool("sync", {"thenable": True})["value"] == "from a thenable"


def test_a_command_outcome_from_create_result_and_the_arguments(start_plugin):
    source = """
        export default class Outcome {
          displayName = "Outcome";

          async execute(context, args) {
            const errors = [];
            for (const bad of [{ level: "fine", message: "x" }, { level: "success" }, "success"]) {
              try {
                context.createResult(bad);
              } catch (error) {
                errors.push(error.name);
              }
            }
            await context.report({ phase: "checked", message: errors.join(", ") });
            if (args !== context.arguments || !Object.isFrozen(args)) throw new Error("one frozen array, twice");
            if (context.activeTab === null) {
              return context.createResult({ level: "warning", message: `Open a Thread first (${args.join(" ")}).` });
            }
            return context.createResult({ level: "success", message: `Synced ${context.activeTab.filename}.` });
          }
        }
    """
    client, _ = start_plugin({"commands/outcome": source})
    no_tab = client.execute("command", "outcome", {"arguments": ["a", "b c"]}, {"settings": {}, "activeTab": None})
    assert no_tab["result"] == {"type": "result", "result": {"level": "warning", "message": "Open a Thread first (a b c)."}}
    tab = {"activeTab": {"filename": "a.thread.json", "thread": {}}}
    assert client.execute("command", "outcome", {"arguments": []}, tab)["result"]["result"] == {
        "level": "success", "message": "Synced a.thread.json."}
    assert client.callbacks[0][1]["message"] == "RangeError, TypeError, TypeError"


@pytest.mark.parametrize(("body", "kind", "where"), [
    ("return () => 1;", "function", "$"),
    ("return { n: NaN };", "NaN", "$.n"),
    ("return [1, Infinity];", "Infinity", "$[1]"),
    ("return { big: 10n };", "BigInt", "$.big"),
    ("return { s: Symbol('x') };", "symbol", "$.s"),
    ("const a = { name: 'a' }; a.self = a; return a;", "cycle", "$.self"),
    ("return { when: new Date(0) };", "Date", "$.when"),
    ("return new Map([[1, 2]]);", "Map", "$"),
    ("class Point { x = 1 } return { p: new Point() };", "Point", "$.p"),
    ("return { bytes: new Uint8Array(2) };", "Uint8Array", "$.bytes"),
])
def test_a_value_that_is_not_json_is_answered_32003(start_plugin, body, kind, where):
    client, _ = start_plugin({"tools/t": tool("t", body)})
    error = client.execute("tool", "t", {"arguments": {}})["error"]
    assert error["code"] == -32003, error
    assert error["data"] == {"type": kind, "where": where}
    assert error["message"].startswith("the return value is not JSON: ")


def test_a_shared_object_that_is_not_a_cycle_is_fine(start_plugin):
    client, _ = start_plugin({"tools/t": tool("t", "const shared = { x: 1 }; return [shared, { again: shared }];")})
    assert client.tool("t")["value"] == [{"x": 1}, {"again": {"x": 1}}]


def test_a_thrown_error_is_answered_32000_with_name_message_and_the_plugins_stack(start_plugin):
    body = """
    if (args.kind === "plain") throw new Error("path is required.");
    if (args.kind === "type") throw new TypeError("maxChars must be a positive integer.");
    if (args.kind === "empty") throw new RangeError();
    if (args.kind === "string") throw "a bare string";
    class QuotaError extends Error { name = "QuotaError"; }
    throw new QuotaError("over quota");
    """
    client, _ = start_plugin({"tools/fails": tool("fails", body)})
    answers = {kind: client.execute("tool", "fails", {"arguments": {"kind": kind}})["error"]
               for kind in ("plain", "type", "empty", "string", "custom")}
    assert {k: (a["code"], a["message"], a["data"]["name"], a["data"]["message"]) for k, a in answers.items()} == {
        "plain": (-32000, "path is required.", "Error", "path is required."),
        "type": (-32000, "maxChars must be a positive integer.", "TypeError", "maxChars must be a positive integer."),
        "empty": (-32000, "RangeError", "RangeError", "RangeError"),
        "string": (-32000, "a bare string", "Error", "a bare string"),
        "custom": (-32000, "over quota", "QuotaError", "over quota"),
    }
    stack = answers["plain"]["data"]["stack"]
    assert "fails" in stack and "path is required." in stack
    assert "calls.mjs" not in stack and "host.mjs" not in stack
    assert answers["string"]["data"]["stack"] == ""


def test_storage_methods_get_their_input_and_context(start_plugin):
    source = """
        export default class Library {
          displayName = "Library";
          capabilities = { read: true, write: true };

          async resolveLatest(id, context) {
            return { id, version: "3", filename: `${context.settings.prefix}${id}.json` };
          }
          async read(locator, context) {
            return { title: `Thread ${locator.id}@${locator.version}` };
          }
          async write(thread, id, context) {
            thread.title = thread.title + " (mutable copy)";
            return { id: id === undefined ? "new-id" : id, version: thread.title, filename: String(arguments.length) };
          }
        }
    """
    client, _ = start_plugin({"thread-storages/library": source})
    settings = {"settings": {"prefix": "lib-"}}
    latest = client.value("thread-storage", "library", {"id": "project/alpha?revision=latest"}, settings, method="resolveLatest")
    assert latest == {"id": "project/alpha?revision=latest", "version": "3", "filename": "lib-project/alpha?revision=latest.json"}
    assert client.value("thread-storage", "library", {"locator": latest}, settings, method="read") == {
        "title": "Thread project/alpha?revision=latest@3"}
    assert client.value("thread-storage", "library", {"thread": {"title": "T"}, "id": None}, settings, method="write") == {
        "id": "new-id", "version": "T (mutable copy)", "filename": "3"}
    assert client.value("thread-storage", "library", {"thread": {"title": "T"}, "id": "x"}, settings, method="write")["id"] == "x"


def test_the_rpc_errors_of_the_host(start_plugin):
    client, _ = start_plugin({"tools/t": tool("t", "return 1;")})
    assert client.call("nope")["error"]["code"] == -32601
    assert client.call("ping", None)["result"] == {}
    bad = [
        {"kind": "tool", "id": "t", "method": "execute", "input": {"arguments": {}}},
        {"callId": "c", "kind": "skill", "id": "t", "method": "execute"},
        {"callId": "c", "kind": "tool", "id": "t", "method": "execute", "input": {"arguments": [1]}},
        {"callId": "c", "kind": "tool", "id": "t", "method": "execute", "input": []},
    ]
    for params in bad:
        assert client.call("execute", params)["error"]["code"] == -32602, params
    unknown = client.call("execute", {"callId": "c", "kind": "tool", "id": "other", "method": "execute"})["error"]
    assert unknown["code"] == -32002 and unknown["data"] == {"reason": 'no active tool "other" in this plugin'}
    no_method = client.call("execute", {"callId": "c", "kind": "tool", "id": "t", "method": "read"})["error"]
    assert no_method["code"] == -32002
    assert client.call("initialize", {"protocolVersion": 1, "plugin": {"root": "/"}, "files": []})["error"]["code"] == -32600
    assert client.call("shutdown", [])["error"]["code"] == -32602

    client.send_raw(b"not json\n")
    client.send_raw(b'{"id": 7, "method": "ping"}\n')
    client.send_raw(b"[1, 2]\n")
    client.send_raw(b'{"jsonrpc": "2.0", "id": 8}\n')
    client.send_raw(b"\n")
    assert client.result("ping") == {}
    assert [(o["id"], o["error"]["code"]) for o in client.orphans] == [(None, -32700), (7, -32600), (None, -32600), (8, -32600)]
    assert client.bad_lines == []


def test_messages_sent_while_initialize_runs_are_answered_after_it(start_host, variant, tmp_path):
    slow = "await new Promise((resolve) => setTimeout(resolve, 300));\n" + tool("slow", "return 'ready';")
    root = write_plugin(tmp_path / "plugin", {f"tools/slow{variant.suffix}": slow})
    client = start_host()
    init = client.request("initialize", {"protocolVersion": 1, "plugin": {"root": str(root)}, "workspace": str(tmp_path),
                                         "files": [{"kind": "tool", "id": "slow", "path": str(root / f"tools/slow{variant.suffix}")}]})
    call = client.execute_async("tool", "slow", {"arguments": {}})
    assert call.result(WAIT)["result"]["value"] == "ready"
    assert init.done() and init.result()["result"]["extensions"][0]["status"] == "active"


def test_stray_errors_in_plugin_code_are_logged_and_the_host_keeps_serving(start_plugin):
    body = """
    setTimeout(() => { throw new Error("thrown in a timer"); }, 0);
    Promise.reject(new Error("rejected and never handled"));
    await new Promise((resolve) => setTimeout(resolve, 50));
    return "still here";
    """
    client, _ = start_plugin({"tools/t": tool("t", body)})
    assert client.tool("t")["value"] == "still here"
    assert client.wait_stderr("thrown in a timer") and client.wait_stderr("rejected and never handled")
    assert client.result("ping") == {}


def test_large_answers_arrive_whole_and_one_over_64_mib_is_answered_32000(start_plugin):
    client, _ = start_plugin({"tools/big": tool("big", "return 'x'.repeat(args.n);")})
    futures = [client.execute_async("tool", "big", {"arguments": {"n": 4_000_000 + i}}, call_id=f"c{i}") for i in range(3)]
    assert [len(f.result(WAIT)["result"]["value"]) for f in futures] == [4_000_000, 4_000_001, 4_000_002]
    error = client.execute("tool", "big", {"arguments": {"n": 65 * 1024 * 1024}})["error"]
    assert error["code"] == -32000
    assert error["message"] == "the message is 65 MiB; the protocol carries at most 64 MiB a line"
    assert client.bad_lines == []
    assert client.result("ping") == {}
