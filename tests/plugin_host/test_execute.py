"""execute: plain values, create_result, concurrency, unknown extensions and bad lines under
every host (Python; JavaScript under Bun and Node); then the Python host's own cases: values
that are not JSON, exceptions, async methods, JSON-RPC errors."""

from __future__ import annotations

import base64

import pytest

from .client import WAIT
from .conftest import Code
from .js.client import js_tool


def tool(name: str, body: str, *, prelude: str = "", is_async: bool = False) -> str:
    """A tool file whose execute(context, args) has `body` (indented by 8)."""
    return (f"{prelude}\n"
            f"class Tool:\n"
            f"    name = {name!r}\n"
            f"    description = ''\n"
            f"    parameters = {{'type': 'object'}}\n\n"
            f"    {'async ' if is_async else ''}def execute(self, context, args):\n"
            + "".join(f"        {line}\n" for line in body.strip("\n").splitlines()))

# -- every host (Python; JavaScript under Bun and Node) ----------------------------------------

def any_tool(name: str, py_body: str, js_body: str, *, py_prelude: str = "", js_prelude: str = "") -> Code:
    """One tool in both languages: `execute(context, args)` with each language's body."""
    return Code(py=tool(name, py_body, prelude=py_prelude), js=js_tool(name, js_body, prelude=js_prelude))


@pytest.mark.parametrize(("py_body", "js_body", "value"), [
    ("return {'path': 'a.md', 'lines': [1, 2.5], 'ok': True, 'none': None}",
     "return { path: 'a.md', lines: [1, 2.5], ok: true, none: null };",
     {"path": "a.md", "lines": [1, 2.5], "ok": True, "none": None}),
    ("return 'plain text'", "return 'plain text';", "plain text"),
    ("return None", "return undefined;", None),
    ("pass", "", None),
    ("return args", "return args;", {"x": 1}),
    ("return context.settings", "return context.settings;", {"endpoint": "https://example.com"}),
], ids=["object", "string", "none", "nothing", "args", "settings"])
def test_a_plain_return_value_is_answered_as_a_value(start_any_plugin, py_body, js_body, value):
    client, _ = start_any_plugin({"tools/t": any_tool("t", py_body, js_body)})
    assert client.tool("t", {"x": 1}, {"settings": {"endpoint": "https://example.com"}}) == {"type": "value", "value": value}


def test_create_result_with_text_and_image_parts_is_answered_as_a_result(start_any_plugin):
    png = base64.b64encode(b"\x89PNG fake bytes").decode()
    client, _ = start_any_plugin({"tools/t": any_tool("t", f"""
return context.create_result([
    {{"type": "text", "text": "Rendered."}},
    {{"type": "image", "mimeType": "image/png", "data": {png!r}}},
])
""", f"""
    const result = context.createResult([
      {{ type: "text", text: "Rendered." }},
      {{ type: "image", mimeType: "image/png", data: {png!r} }},
    ]);
    if (!Object.isFrozen(result)) throw new Error("the result should be frozen");
    return result;
""")})
    assert client.tool("t") == {"type": "result", "result": {"content": [
        {"type": "text", "text": "Rendered."}, {"type": "image", "mimeType": "image/png", "data": png}]}}


GATE = Code(py="""
    import threading

    BARRIER = threading.Barrier(20, timeout=20)

    class Gate:
        name = "gate"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            BARRIER.wait()
            context.notify(f"done {args['i']}")
            return args["i"] * 2
""", js="""
    let started = 0;
    let release;
    const allStarted = new Promise((resolve) => { release = resolve; });

    export default class Gate {
      name = "gate";
      description = "";
      parameters = { type: "object" };

      async execute(context, args) {
        started += 1;
        if (started === 20) release();
        await allStarted;
        await context.notify(`done ${args.i}`);
        return args.i * 2;
      }
    }
""")


def test_twenty_concurrent_calls_on_one_instance_all_run_at_once_and_are_all_answered(start_any_plugin):
    client, _ = start_any_plugin({"tools/gate": GATE})
    futures = [client.execute_async("tool", "gate", {"arguments": {"i": i}}, call_id=f"c{i}") for i in range(20)]
    answers = [future.result(WAIT) for future in futures]
    assert [a["result"]["value"] for a in answers] == [i * 2 for i in range(20)]
    assert sorted(p["message"] for _, p in client.callbacks) == sorted(f"done {i}" for i in range(20))
    assert {p["callId"] for _, p in client.callbacks} == {f"c{i}" for i in range(20)}


HELD = Code(py="""
    import threading

    GATE = threading.Event()

    class Held:
        name = "held"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            if args.get("open"):
                GATE.set()
                return "opened"
            GATE.wait(60)
            return "done"
""", js="""
    let open;
    const gate = new Promise((resolve) => { open = resolve; });
    export default class Held {
      name = "held"; description = ""; parameters = { type: "object" };
      async execute(context, args) {
        if (args.open) { open(); return "opened"; }
        await gate;
        return "done";
      }
    }
""")


def test_a_running_call_id_cannot_be_reused_and_a_blocked_call_holds_up_no_other(start_any_plugin):
    client, _ = start_any_plugin({"tools/held": HELD})
    first = client.execute_async("tool", "held", {"arguments": {}}, call_id="same")
    assert client.result("ping") == {}
    again = client.execute("tool", "held", {"arguments": {}}, call_id="same")
    assert again["error"]["code"] == -32602
    assert not first.done()
    assert client.execute("tool", "held", {"arguments": {"open": True}}, call_id="other")["result"]["value"] == "opened"
    assert first.result(WAIT)["result"]["value"] == "done"


def test_an_unknown_extension_or_method_is_error_32002(start_any_plugin):
    client, _ = start_any_plugin({"tools/t": any_tool("t", "return 1", "return 1;")})
    unknown = client.execute("tool", "nope", {"arguments": {}})["error"]
    assert unknown["code"] == -32002 and "nope" in unknown["data"]["reason"]
    assert client.execute("tool", "t", {"arguments": {}}, method="read")["error"]["code"] == -32002
    assert client.execute("command", "t", {"arguments": []})["error"]["code"] == -32002


def test_a_line_that_is_not_json_is_answered_with_a_parse_error_and_the_host_serves_on(start_any_plugin):
    client, _ = start_any_plugin({"tools/t": any_tool("t", "return 1", "return 1;")})
    client.send_raw(b"this is not json\n")
    client.send_raw(b"\n")
    client.send_raw(b'{"id": 5}\n')
    assert client.result("ping") == {}
    assert client.tool("t")["value"] == 1
    assert client.bad_lines == []
    assert [(o["id"], o["error"]["code"]) for o in client.orphans] == [(None, -32700), (5, -32600)]


def test_ping_answers_an_empty_object_before_and_after_initialize(start_any_host, start_any_plugin):
    assert start_any_host().result("ping") == {}
    client, _ = start_any_plugin({"tools/t": any_tool("t", "return 1", "return 1;")})
    assert client.result("ping") == {}


def test_create_result_refuses_malformed_parts_where_the_plugin_calls_it(start_any_plugin, any_host):
    py_body = """
errors = []
for parts in ("text", [{"type": "text"}], [{"type": "video"}], [{"type": "image", "mimeType": "image/png", "data": "%%%"}],
              [{"type": "image", "data": "aGk="}], [42]):
    try:
        context.createResult(parts)
    except (TypeError, ValueError) as exc:
        errors.append(type(exc).__name__)
return errors
"""
    js_body = """
    const errors = [];
    for (const parts of ["text", [{ type: "text" }], [{ type: "video" }],
                         [{ type: "image", mimeType: "image/png", data: "%%%" }],
                         [{ type: "image", data: "aGk=" }], [42], { content: [] }]) {
      try {
        context.createResult(parts);
        errors.push("accepted");
      } catch (error) {
        errors.push(error.name);
      }
    }
    const forged = { type: "result", content: [{ type: "text", text: "not made by createResult" }] };
    return { errors, forged };
    """
    client, _ = start_any_plugin({"tools/t": any_tool("t", py_body, js_body)})
    if any_host.is_js:
        assert client.tool("t")["value"] == {
            "errors": ["TypeError"] * 7,
            "forged": {"type": "result", "content": [{"type": "text", "text": "not made by createResult"}]},
        }
    else:
        assert client.tool("t")["value"] == ["TypeError", "TypeError", "ValueError", "ValueError", "TypeError", "TypeError"]


# -- the Python host ---------------------------------------------------------------------------
@pytest.mark.parametrize(("expression", "type_name"), [
    ("{1, 2}", "set"),
    ("b'bytes'", "bytes"),
    ("object()", "object"),
    ("float('nan')", "NaN"),
    ("{'x': [float('inf')]}", "Infinity"),
    ("lambda: 1", "function"),
    ("{1: 'int key'}", "int key"),
])
def test_a_return_value_that_is_not_json_is_error_32003_naming_its_type(start_plugin, expression, type_name):
    client, _ = start_plugin({"tools/t.py": tool("t", f"return {expression}")})
    answer = client.execute("tool", "t", {"arguments": {}})
    assert answer["error"]["code"] == -32003
    assert answer["error"]["data"]["type"] == type_name


def test_a_cycle_in_the_return_value_is_error_32003(start_plugin):
    client, _ = start_plugin({"tools/t.py": tool("t", "a = []\na.append({'a': a})\nreturn a")})
    answer = client.execute("tool", "t", {"arguments": {}})
    assert answer["error"]["code"] == -32003
    assert answer["error"]["data"]["type"] == "cycle"


def test_an_exception_is_error_32000_with_its_name_message_and_stack(start_plugin):
    body = "raise ValueError('path is required.')"
    client, _ = start_plugin({"tools/fails.py": tool("fails", body, prelude="def helper():\n    pass")})
    error = client.execute("tool", "fails", {"arguments": {}})["error"]
    assert error["code"] == -32000
    assert error["message"] == "path is required."
    assert error["data"]["name"] == "ValueError"
    assert error["data"]["message"] == "path is required."
    stack = error["data"]["stack"]
    assert stack.startswith("Traceback") and "fails.py" in stack and "ValueError: path is required." in stack
    assert "plugin_host" not in stack, "the host's own frames are left out"


def test_an_exception_without_a_message_is_shown_by_its_name_and_system_exit_is_answered_too(start_plugin):
    client, _ = start_plugin({"tools/a.py": tool("a", "raise KeyError"), "tools/b.py": tool("b", "raise SystemExit(2)")})
    assert client.execute("tool", "a", {"arguments": {}})["error"]["message"] == "KeyError"
    assert client.execute("tool", "b", {"arguments": {}})["error"]["data"]["name"] == "SystemExit"
    assert client.result("ping") == {}, "the host lives on"


def test_an_async_execute_runs_to_its_end(start_plugin):
    body = """
await asyncio.sleep(0.01)
inner = await asyncio.gather(*(asyncio.sleep(0, result=i) for i in range(3)))
return context.create_result([{"type": "text", "text": f"async {inner}"}])
"""
    client, _ = start_plugin({"tools/t.py": tool("t", body, prelude="import asyncio", is_async=True)})
    assert client.tool("t") == {"type": "result", "result": {"content": [{"type": "text", "text": "async [0, 1, 2]"}]}}


def test_a_plain_execute_that_returns_a_coroutine_is_awaited(start_plugin):
    prelude = "async def later():\n    return 'awaited'"
    client, _ = start_plugin({"tools/t.py": tool("t", "return later()", prelude=prelude)})
    assert client.tool("t")["value"] == "awaited"


def test_malformed_execute_params_are_error_32602_and_unknown_methods_32601(start_plugin):
    client, _ = start_plugin({"tools/t.py": tool("t", "return 1")})
    assert client.execute("tool", "t", {"arguments": [1]})["error"]["code"] == -32602
    assert client.call("execute", {"kind": "tool", "id": "t", "method": "execute"})["error"]["code"] == -32602
    assert client.call("execute", {"callId": "c", "kind": "widget", "id": "t", "method": "x"})["error"]["code"] == -32602
    assert client.call("frobnicate", {})["error"]["code"] == -32601
    assert client.call("ping", [1])["error"]["code"] == -32602  # type: ignore[arg-type]


def test_execute_before_initialize_is_error_32002(tmp_path):
    from .client import HostClient

    client = HostClient(tmp_path)
    try:
        assert client.execute("tool", "t", {"arguments": {}})["error"]["code"] == -32002
    finally:
        client.close()


@pytest.mark.parametrize("expression", [
    "10 ** 5000",  # over Python's 4,300-digit int-to-str limit: json.dumps raises ValueError
    "{'deep': [10 ** 5000]}",
])
def test_an_answer_the_host_cannot_encode_is_an_immediate_32003_for_that_call_only(start_plugin, expression):
    client, _ = start_plugin({"tools/t.py": tool("t", f"return {expression}"),
                              "tools/ok.py": tool("ok", "return 'fine'")})
    answer = client.execute("tool", "t", {"arguments": {}})
    assert answer["error"]["code"] == -32003
    assert "not JSON" in answer["error"]["message"]
    assert client.execute("tool", "ok", {"arguments": {}})["result"] == {"type": "value", "value": "fine"}



def test_calls_in_a_row_reuse_the_host_threads_and_never_run_on_the_main_thread(start_plugin):
    client, _ = start_plugin({"tools/t.py": tool("t", "return [threading.current_thread().name, "
                                                      "threading.current_thread() is threading.main_thread()]",
                                                 prelude="import threading")})
    answers = [client.tool("t")["value"] for _ in range(20)]
    assert not any(on_main for _, on_main in answers)
    assert len({name for name, _ in answers}) <= 3  # a thread per call before: 20 names
