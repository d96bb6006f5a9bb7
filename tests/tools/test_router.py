"""The tool router: resolution by type, argument checks, concurrency, errors, timeout,
cancellation and the auto-run pause rules."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from llmspace.cancel import CancelToken
from llmspace.core.model import TextContent, Tool, ToolCall, ToolCallOutput
from llmspace.registry import BUILTIN, plugin_source
from llmspace.tools.base import ToolContext
from llmspace.tools.builtins import builtin_tool, builtin_tools
from llmspace.tools.router import ToolPause, ToolRouter


def _call(name: str, cid: str = "c1", **arguments: Any) -> ToolCall:
    return ToolCall.model_validate({"id": cid, "input": {"name": name, "arguments": arguments}})


def _plugin_tool(name: str = "ptool", parameters: dict | None = None, extension_id: str | None = None) -> Tool:
    data: dict[str, Any] = {"type": "function", "name": name, "parameters": parameters or {"type": "object"}}
    if extension_id:
        data["extensionId"] = extension_id  # a plugin tool keeps its canonical ID
    tool = Tool.model_validate(data)
    object.__setattr__(tool, "type", "plugin")  # plugin tools arrive with their own type
    return tool


def _ctx(tmp_path: Path, **kw: Any) -> ToolContext:
    return ToolContext(working_directory=str(tmp_path), **kw)


def test_parallel_calls_run_concurrently_and_keep_their_order(tmp_path: Path) -> None:
    router = ToolRouter()
    n = 4
    barrier = threading.Barrier(n, timeout=10)

    def executor(tool, arguments, ctx, cancel, timeout):
        barrier.wait()  # only returns when all calls are running at the same time
        return f"result {arguments['i']}"

    router.register_executor("plugin", executor)
    tool = _plugin_tool()
    calls = [_call("ptool", f"c{i}", i=i) for i in range(n)]
    outs = router.execute_calls([tool], calls, _ctx(tmp_path))
    assert [o.text() for o in outs] == [f"result {i}" for i in range(n)]
    assert all(o.isError is False for o in outs)


def test_a_schema_mismatch_becomes_an_error_naming_the_field(tmp_path: Path) -> None:
    router = ToolRouter()
    (tmp_path / "f").write_text("x")
    read = builtin_tool("read")
    out = router.execute(read, _call("read", description="d", path="f", limit="ten"), _ctx(tmp_path))
    assert out.isError is True
    assert out.text().startswith("Invalid arguments for read: limit: 'ten' is not of type 'integer'")
    out = router.execute(read, _call("read", description="d"), _ctx(tmp_path))
    assert out.isError is True and "read: path: 'path' is a required property" in out.text()
    out = router.execute(read, _call("read", description="d", path="f", colour="red"), _ctx(tmp_path))
    assert out.isError is True and "'colour' was unexpected" in out.text()


def test_a_missing_description_parameter_alone_is_tolerated(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    out = ToolRouter().execute(builtin_tool("read"), _call("read", path="f"), _ctx(tmp_path))
    assert out.isError is False and out.text() == "1\tx"


def test_an_exception_becomes_an_error_result(tmp_path: Path) -> None:
    router = ToolRouter()

    def boom(*a: Any) -> Any:
        raise RuntimeError("the disk is on fire")

    router.register_executor("plugin", boom)
    out = router.execute(_plugin_tool(), _call("ptool"), _ctx(tmp_path))
    assert out.isError is True and out.text() == "the disk is on fire"
    assert out.model_dump(exclude_unset=True) == {"content": [{"type": "text", "text": "the disk is on fire"}], "isError": True}


def test_non_string_results_are_pretty_json_and_successes_are_not_errors(tmp_path: Path) -> None:
    router = ToolRouter()
    router.register_executor("plugin", lambda *a: {"b": [1, 2], "a": "é"})
    out = router.execute(_plugin_tool(), _call("ptool"), _ctx(tmp_path))
    assert out.isError is False
    assert out.text() == '{\n  "b": [\n    1,\n    2\n  ],\n  "a": "é"\n}'


def test_a_slow_call_times_out_and_its_tool_is_told_to_stop(tmp_path: Path) -> None:
    router = ToolRouter()
    stopped = threading.Event()

    def slow(tool, arguments, ctx, cancel, timeout):
        cancel.wait(30)
        stopped.set()
        return "late"

    router.register_executor("plugin", slow)
    out = router.execute(_plugin_tool(), _call("ptool"), _ctx(tmp_path), timeout=0.05)
    assert out.isError is True and out.text() == "Tool call timed out after 0.05s"
    assert stopped.wait(10)


def test_cancel_returns_cancelled_for_running_and_not_yet_started_calls(tmp_path: Path) -> None:
    router = ToolRouter()
    started = threading.Event()

    def wait_forever(tool, arguments, ctx, cancel, timeout):
        started.set()
        cancel.wait(30)
        return "never"

    router.register_executor("plugin", wait_forever)
    cancel = CancelToken()
    box: list = []
    worker = threading.Thread(target=lambda: box.append(router.execute_calls([_plugin_tool()], [_call("ptool", "a"), _call("ptool", "b")], _ctx(tmp_path), cancel)))
    worker.start()
    assert started.wait(10)
    cancel.cancel()
    worker.join(10)
    assert [o.text() for o in box[0]] == ["Cancelled", "Cancelled"]
    assert all(o.isError for o in box[0])
    # already cancelled: nothing runs
    out = router.execute(_plugin_tool(), _call("ptool"), _ctx(tmp_path), cancel)
    assert out.text() == "Cancelled"


def test_unknown_tools_and_unknown_builtins_are_errors(tmp_path: Path) -> None:
    router = ToolRouter()
    out = router.execute(None, _call("nope"), _ctx(tmp_path))
    assert out.isError is True and out.text() == "Built-in tool not found: nope"
    fake = Tool.model_validate({"type": "builtin", "name": "teleport"})
    outs = router.execute_calls([fake], [_call("teleport"), _call("missing", "c2")], _ctx(tmp_path))
    assert [o.text() for o in outs] == ["Built-in tool not found: teleport", "Built-in tool not found: missing"]


def test_function_tools_have_no_executor(tmp_path: Path) -> None:
    tool = Tool.model_validate({"type": "function", "name": "lookup_order", "parameters": {"type": "object"}})
    out = ToolRouter().execute(tool, _call("lookup_order"), _ctx(tmp_path))
    assert out.isError is True and "needs a result supplied by a human" in out.text()


def test_unparsed_arguments_are_reported(tmp_path: Path) -> None:
    call = ToolCall.model_validate({"id": "c", "input": {"name": "read", "arguments": {}, "partialArguments": '{"path": "a'}})
    out = ToolRouter().execute(builtin_tool("read"), call, _ctx(tmp_path))
    assert out.isError is True and "not valid JSON" in out.text()


class FakeHub:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def call_tool(self, server_id, tool_name, arguments, timeout=None, cancel=None):
        self.calls.append((server_id, tool_name, arguments, timeout, cancel is not None))
        return ToolCallOutput(content=[TextContent(type="text", text="from mcp")], isError=False)


def test_mcp_calls_go_to_the_hub_with_server_id_and_raw_tool_name(tmp_path: Path) -> None:
    hub = FakeHub()
    tool = Tool.model_validate({"type": "mcp", "name": "mcp__demo__get_sum", "serverId": "srv1", "serverName": "demo", "toolName": "get-sum",
                                "parameters": {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}})
    out = ToolRouter().execute(tool, _call("mcp__demo__get_sum", a=1), _ctx(tmp_path, mcp=hub), timeout=5)
    assert out.text() == "from mcp" and out.isError is False
    assert hub.calls == [("srv1", "get-sum", {"a": 1}, 5, True)]
    bad = ToolRouter().execute(tool, _call("mcp__demo__get_sum", a="x"), _ctx(tmp_path, mcp=hub))
    assert bad.isError is True and "a: 'x' is not of type 'number'" in bad.text()
    assert len(hub.calls) == 1


def test_mcp_without_a_hub_is_an_error(tmp_path: Path) -> None:
    tool = Tool.model_validate({"type": "mcp", "name": "mcp__s__t", "serverId": "s", "toolName": "t"})
    out = ToolRouter().execute(tool, _call("mcp__s__t"), _ctx(tmp_path))
    assert out.isError is True and "MCP is not available" in out.text()


def test_auto_run_pauses_for_humans_and_for_risky_bash_only() -> None:
    router = ToolRouter(None)
    tools = [*builtin_tools(), Tool.model_validate({"type": "function", "name": "lookup_order"}),
             Tool.model_validate({"type": "builtin", "name": "finish", "terminate": True}),
             Tool.model_validate({"type": "mcp", "name": "mcp__s__t", "serverId": "s", "toolName": "t"})]
    assert router.pause_for(tools, [_call("read", path="x"), _call("mcp__s__t"), _call("bash", command="ls -la")]) is None
    for calls in ([_call("read"), _call("lookup_order")], [_call("ask_user_question", questions=[])], [_call("finish")]):
        pause = router.pause_for(tools, calls)
        assert pause is not None and pause.risky is False
    assert router.pause_for(tools, [_call("bash", command="rm -rf build")]) == ToolPause("Auto-run paused for a risky command.", risky=True)
    assert router.pause_for(tools, []) is None
    answered = _call("lookup_order")
    answered.output = ToolCallOutput(content=[TextContent(type="text", text="done")])
    assert router.pause_for(tools, [answered]) is None


def test_a_batch_with_a_risky_call_and_a_human_answer_is_not_risky() -> None:
    tools = [*builtin_tools(), Tool.model_validate({"type": "function", "name": "lookup_order"})]
    pause = ToolRouter(None).pause_for(tools, [_call("bash", "c1", command="sudo ls"), _call("lookup_order", "c2")])
    assert pause is not None and not pause.risky and "lookup_order" in pause.reason


def test_the_app_router_is_built_by_the_composition_root(app) -> None:
    assert isinstance(app.tools, ToolRouter)
    assert app.tools.executors is app.registries.tools


def test_pauses_are_given_per_call() -> None:
    tools = [*builtin_tools(), Tool.model_validate({"type": "function", "name": "lookup_order"})]
    pauses = ToolRouter(None).pauses(tools, [_call("read"), _call("lookup_order", "c2"), _call("bash", "c3", command="sudo ls")])
    assert pauses[0] is None
    assert pauses[1] is not None and "lookup_order" in pauses[1].reason and not pauses[1].risky
    assert pauses[2] == ToolPause("Auto-run paused for a risky command.", risky=True)


def test_null_optional_builtin_parameters_count_as_absent(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("a\nb")
    out = ToolRouter().execute(builtin_tool("read"), _call("read", description="d", path="f", offset=None, limit=None), _ctx(tmp_path))
    assert out.isError is False and out.text() == "1\ta\n2\tb"
    out = ToolRouter().execute(builtin_tool("read"), _call("read", description="d", path=None), _ctx(tmp_path))
    assert out.isError is True and "path: None is not of type 'string'" in out.text()


def test_a_plugin_tool_runs_through_the_executor_registered_under_its_canonical_id(tmp_path) -> None:
    router = ToolRouter()
    seen: list[dict] = []

    def execute(tool, arguments, ctx, cancel, timeout):
        seen.append(arguments)
        return {"echo": arguments["word"]}

    router.register_executor("plugin:acme:tool:echo", execute, source=plugin_source("acme"))
    tool = _plugin_tool("echo", {"type": "object", "properties": {"word": {"type": "string"}}}, "plugin:acme:tool:echo")
    out = router.execute(tool, _call("echo", word="hi"), _ctx(tmp_path))
    assert out.isError is False and '"echo": "hi"' in out.text() and seen == [{"word": "hi"}]


def test_two_sources_registering_one_tool_id_make_both_inactive_and_the_call_names_both(tmp_path) -> None:
    router = ToolRouter()
    router.register_executor("plugin:acme:tool:echo", lambda *a: "one", source=plugin_source("acme"))
    router.register_executor("plugin:acme:tool:echo", lambda *a: "two", source="user")
    tool = _plugin_tool("echo", None, "plugin:acme:tool:echo")
    out = router.execute(tool, _call("echo"), _ctx(tmp_path))
    assert out.isError is True and "plugin:acme" in out.text() and "user" in out.text()


def test_built_in_executors_are_registrations_with_source_built_in() -> None:
    router = ToolRouter()
    assert router.executors.registration("builtin:tool:read").source == BUILTIN
    assert router.executors.registration("mcp").source == BUILTIN
    assert router.executors.registration("function").source == BUILTIN


class _SelfBounded:
    """An executor that honours its cancel token and timeout itself (as a plugin tool's host call does)."""

    self_bounded = True

    def __init__(self) -> None:
        self.seen: list[tuple[threading.Thread, CancelToken, float | None]] = []

    def __call__(self, tool, arguments, ctx, cancel, timeout):
        self.seen.append((threading.current_thread(), cancel, timeout))
        if arguments.get("fail"):
            raise RuntimeError("the plugin failed")
        return "done"


def test_a_self_bounded_executor_runs_on_the_callers_thread_with_its_token_and_timeout(tmp_path: Path) -> None:
    router = ToolRouter()
    executor = _SelfBounded()
    router.register_executor("plugin", executor)
    token = CancelToken()
    out = router.execute(_plugin_tool(), _call("ptool"), _ctx(tmp_path), token, timeout=7.0)
    assert out.isError is False and out.text() == "done"
    assert executor.seen == [(threading.current_thread(), token, 7.0)]
    failed = router.execute(_plugin_tool(), _call("ptool", fail=True), _ctx(tmp_path), token, timeout=7.0)
    assert failed.isError is True and failed.text() == "the plugin failed"
