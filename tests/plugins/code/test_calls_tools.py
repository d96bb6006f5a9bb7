"""Plugin tools run in a real Python host process: results, errors, crashes, timeouts,
cancellation, concurrency, and saved threads whose plugin is gone."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from llmspace.agent.services import tool_context
from llmspace.app import App
from llmspace.cancel import CancelToken
from llmspace.core.model import ToolCall, ToolCallInput, ToolCallOutput
from llmspace.core.threadio import thread_from_data
from llmspace.paths import DataRoot
from llmspace.plugins.code.calls import plugin_tool_entry_for

from ..code_plugins import (
    BARRIER_TOOL,
    BROKEN_CONSTRUCTOR,
    ECHO_TOOL,
    EXITING_TOOL,
    HANGING_TOOL,
    IMAGE_TOOL,
    NON_JSON_TOOL,
    PRINTING_TOOL,
    RAISING_TOOL,
    SCHEMA,
    TEXT_TOOL,
    code_plugin,
)
from ..code_plugins import call_tool as _call


def _thread(app: App, *stems: str, plugin: str = "kit") -> Any:
    app.plugin_code.ensure_loaded()
    specs = {s.ref.id: s for s in app.plugin_code.tool_specs() if s.ref.plugin == plugin}
    thread = thread_from_data({"title": "owner", "context": {"variables": {
        "current_working_directory": {"type": "workingDirectory", "value": "/srv/project"}}}})
    assert thread.context is not None
    thread.context.tools = [plugin_tool_entry_for(specs[s]) for s in stems]
    return thread


def test_a_plugin_tool_gets_its_arguments_settings_owning_thread_and_resolved_variables(app: App, home: Path) -> None:
    code_plugin(home, tools={"echo": ECHO_TOOL}, schema=SCHEMA)
    thread = _thread(app, "echo")
    out = _call(app, thread, "echo_args", {"text": "hi"})
    assert out.isError is False
    assert json.loads(out.text()) == {"text": "hi", "title": "owner", "cwd": "/srv/project", "greeting": "Hello"}
    assert out.text().startswith('{\n  "text": "hi"')  # 2-space JSON text


def test_a_returned_string_is_stored_as_it_is(app: App, home: Path) -> None:
    code_plugin(home, tools={"plain": TEXT_TOOL})
    assert _call(app, _thread(app, "plain"), "plain_text", {}).text() == "just text"


def test_create_result_parts_become_text_and_image_content(app: App, home: Path) -> None:
    code_plugin(home, tools={"picture": IMAGE_TOOL})
    out = _call(app, _thread(app, "picture"), "picture", {})
    assert out.isError is False
    kinds = [getattr(p, "type", None) for p in out.content]
    assert kinds == ["text", "image"]
    assert out.content[1].mimeType == "image/png"  # type: ignore[union-attr]


def test_a_raised_exception_is_an_error_result_with_the_message_and_the_traceback_goes_to_the_log(
        app: App, home: Path) -> None:
    code_plugin(home, tools={"failing": RAISING_TOOL})
    out = _call(app, _thread(app, "failing"), "failing", {})
    assert out.isError is True
    assert out.text() == "the backend said no"
    log = app.plugin_code.output_log("kit").read_text(encoding="utf-8")
    assert "Traceback" in log and "ValueError" in log


def test_a_non_json_return_value_is_a_clear_tool_error(app: App, home: Path) -> None:
    code_plugin(home, tools={"odd": NON_JSON_TOOL})
    out = _call(app, _thread(app, "odd"), "odd", {})
    assert out.isError is True
    assert "not JSON" in out.text()


def test_arguments_are_validated_against_the_parameters_before_the_call(app: App, home: Path) -> None:
    code_plugin(home, tools={"echo": ECHO_TOOL})
    out = _call(app, _thread(app, "echo"), "echo_args", {"text": 3})
    assert out.isError is True
    assert app.plugin_code.hosts() == [] or all(not h.busy for h in app.plugin_code.hosts())


def test_what_a_plugin_prints_goes_to_its_log_and_the_protocol_stream_stays_intact(app: App, home: Path) -> None:
    code_plugin(home, tools={"chatty": PRINTING_TOOL, "plain": TEXT_TOOL})
    thread = _thread(app, "chatty", "plain")
    assert _call(app, thread, "chatty", {}).text() == "printed"
    assert _call(app, thread, "plain_text", {}).text() == "just text"
    app.plugin_code.close()
    log = app.plugin_code.output_log("kit").read_text(encoding="utf-8")
    assert "hello from print" in log and "raw bytes on fd 1" in log


def test_a_host_that_exits_mid_call_gives_a_clean_error_and_the_next_call_works(app: App, home: Path) -> None:
    code_plugin(home, tools={"exiting": EXITING_TOOL})
    thread = _thread(app, "exiting")
    out = _call(app, thread, "exiting", {"die": True})
    assert out.isError is True
    assert "stopped unexpectedly" in out.text() and "exit code 3" in out.text()
    assert _call(app, thread, "exiting", {}).text() == "alive"
    logs = list((home / "logs" / "plugins" / "kit").glob("*-host-*.log"))
    assert logs, "the crash has an error-id log"


def test_a_call_that_outlives_its_timeout_is_abandoned_and_the_host_restarted(app: App, home: Path) -> None:
    code_plugin(home, tools={"hanging": HANGING_TOOL, "plain": TEXT_TOOL})
    thread = _thread(app, "hanging", "plain")
    out = _call(app, thread, "hanging", {}, timeout=1.0)
    assert out.isError is True and "timed out" in out.text()
    assert _call(app, thread, "plain_text", {}).text() == "just text"


def test_cancelling_fires_the_plugins_signal(app: App, home: Path) -> None:
    code_plugin(home, tools={"hanging": HANGING_TOOL})
    thread = _thread(app, "hanging")
    _call(app, thread, "hanging", {"polite": True}, timeout=0.01)  # warm the host
    cancel = CancelToken()
    box: dict[str, ToolCallOutput] = {}
    worker = threading.Thread(target=lambda: box.setdefault("out", _call(app, thread, "hanging", {"polite": True},
                                                                          cancel=cancel)))
    worker.start()
    host = app.plugin_code.hosts()[0]
    for _ in range(400):  # the call reached the host
        if host.busy:
            break
        threading.Event().wait(0.05)
    starts = host.starts
    cancel.cancel()
    worker.join(30)
    assert box["out"].isError is True and box["out"].text() == "Cancelled"
    assert host.starts == starts  # a polite plugin stops in time: no restart


def test_a_waiting_call_is_woken_by_its_cancel_and_does_not_poll(app: App, home: Path) -> None:
    code_plugin(home, tools={"hanging": HANGING_TOOL})
    thread = _thread(app, "hanging")
    _call(app, thread, "hanging", {"polite": True}, timeout=0.01)  # warm the host
    host = app.plugin_code.hosts()[0]
    reads: list[float] = []
    clock = host.clock
    host.clock = lambda: reads.append(0.0) or clock()  # type: ignore[func-returns-value]
    cancel = CancelToken()
    box: dict[str, ToolCallOutput] = {}
    worker = threading.Thread(target=lambda: box.setdefault("out", _call(app, thread, "hanging", {"polite": True},
                                                                          cancel=cancel, timeout=600.0)))
    worker.start()
    for _ in range(400):  # the call reached the host
        if host.busy:
            break
        threading.Event().wait(0.05)
    before = len(reads)
    threading.Event().wait(1.0)  # one second of waiting: a 0.05 s poll reads the clock 20 times (the
    # wait reads it for its deadline and once per wake; the idle reaper may read it too)
    waiting = len(reads) - before
    cancel.cancel()
    worker.join(30)
    assert box["out"].text() == "Cancelled"
    assert waiting <= 5


def test_parallel_calls_of_one_batch_run_concurrently_on_one_instance(app: App, home: Path) -> None:
    code_plugin(home, tools={"together": BARRIER_TOOL})
    thread = _thread(app, "together")
    tool = thread.context.tools[0]
    calls = [ToolCall(id=f"c{i}", input=ToolCallInput(name="together", arguments={"n": i})) for i in range(6)]
    outs = app.tools.execute_calls([tool], calls, tool_context(app.run_services, thread), None, 60)
    results = [json.loads(o.text()) for o in outs]
    assert [r["n"] for r in results] == list(range(6))
    assert len({r["instance"] for r in results}) == 1


def test_a_constructor_error_fails_only_that_tool_and_the_plugin_is_degraded(app: App, home: Path) -> None:
    code_plugin(home, tools={"broken": BROKEN_CONSTRUCTOR, "plain": TEXT_TOOL})
    app.plugin_code.ensure_loaded()
    record = app.plugins.get("kit")
    assert record.status == "degraded"
    broken = next(e for e in record.extensions if e.id == "broken")
    assert broken.status == "failed" and "no token configured" in broken.reason and broken.error_id
    assert _call(app, _thread(app, "plain"), "plain_text", {}).text() == "just text"


def test_a_saved_thread_whose_plugin_is_gone_fails_that_call_as_unavailable(app: App, home: Path) -> None:
    code_plugin(home, tools={"plain": TEXT_TOOL})
    thread = _thread(app, "plain")
    app.plugins.disable("kit")
    out = _call(app, thread, "plain_text", {})
    assert out.isError is True
    assert out.text().startswith("plain_text is unavailable (plugin kit is disabled")


def test_metadata_is_cached_so_listing_tools_again_starts_no_host(home: Path) -> None:
    code_plugin(home, tools={"plain": TEXT_TOOL})
    first = App(DataRoot(home))
    try:
        first.plugin_code.ensure_loaded()
        assert [s.name for s in first.plugin_code.tool_specs()] == ["plain_text"]
    finally:
        first.close()
    second = App(DataRoot(home))
    try:
        second.plugins.records()
        assert second.plugin_code.pending() == []
        assert [s.name for s in second.plugin_code.tool_specs()] == ["plain_text"]
        assert second.plugin_code.hosts() == []
        (home / "plugins" / "kit" / "tools" / "plain.py").write_text(TEXT_TOOL.replace("plain_text", "plain_two"))
        second.plugins.reload("kit")
        assert second.plugin_code.pending() == ["kit"]
        second.plugin_code.ensure_loaded()
        assert [s.name for s in second.plugin_code.tool_specs()] == ["plain_two"]
    finally:
        second.close()


def test_shutdown_calls_dispose(app: App, home: Path) -> None:
    from ..code_plugins import DISPOSE_TOOL

    code_plugin(home, tools={"disposing": DISPOSE_TOOL})
    _call(app, _thread(app, "disposing"), "disposing", {})
    assert app.plugin_code.close() == []
    assert (home / "disposed.txt").read_text() == "disposed\n"

