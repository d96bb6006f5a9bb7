"""Runs out as OpenTelemetry GenAI traces, checked at a loopback OTLP/HTTP receiver (protobuf):
a ReAct run with two tool calls gives an `invoke_agent` span with a `chat` span per model call and
an `execute_tool` span per tool call under it, with the exact GenAI attribute sets; content
attributes only with capture on; no key, header value or URL secret in any attribute; our own
`traces/calls/` files are written as before; a receiver that never answers does not fail the
run, closing the app is bounded, and the failure is reported once."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmspace.agent.run_types import RunOptions
from llmspace.app import App
from llmspace.core.history import run_traces
from llmspace.paths import DataRoot
from llmspace.secrets import SecretStore
from llmspace.tools.builtins import builtin_tool
from llmspace.traces import otel_export
from llmspace.traces.otel_settings import header_secret_name
from tests.agent.conftest import make_thread, save_thread, user
from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider

from .otlp_receiver import OtlpReceiver, RxSpan

CHAT_KEYS = {"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.request.stream",
             "gen_ai.response.model", "gen_ai.response.finish_reasons", "gen_ai.usage.input_tokens",
             "gen_ai.usage.output_tokens", "gen_ai.response.time_to_first_chunk", "server.address", "server.port",
             "llmspace.run.step"}
CHAT_CONTENT = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions", "gen_ai.system_instructions"}
TOOL_KEYS = {"gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.type", "llmspace.run.step"}
TOOL_CONTENT = {"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}
AGENT_KEYS = {"gen_ai.operation.name", "gen_ai.conversation.id", "gen_ai.provider.name", "gen_ai.request.model",
              "llmspace.run.status"}


@pytest.fixture
def srv() -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_reports() -> Iterator[None]:
    otel_export._reported.clear()  # "once per process": each test is its own process here
    yield
    otel_export._reported.clear()


def enable_tracing(home: Path, url: str, *, capture: bool, headers: dict[str, str] | None = None) -> None:
    settings = home / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "tracing.json").write_text(json.dumps({
        "enabled": True, "endpoint": url, "protocol": "http/protobuf", "captureContent": capture,
        "serviceName": "llmspace-test", "headers": list(headers or {})}), "utf-8")
    store = SecretStore(settings)
    for name, value in (headers or {}).items():
        store.set(header_secret_name(name), value)


def two_tool_run(app: App, srv: LoopbackLLM, tmp_path: Path, secret: str = "") -> Any:
    """A ReAct run: the model reads two files (two tool calls in two turns), then answers."""
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("alpha file", "utf-8")
    b.write_text(f"beta file {secret}", "utf-8")
    srv.push(Turn(text="Reading a.", tool_calls=[ToolCallSpec(id="c1", name="read", arguments={"description": "d", "path": str(a)})], usage=(11, 3)),
             Turn(tool_calls=[ToolCallSpec(id="c2", name="read", arguments={"description": "d", "path": str(b)})], usage=(21, 4)),
             Turn(text="Both files are read.", usage=(31, 5)))
    read = builtin_tool("read")
    assert read is not None
    thread = make_thread([user("Read a.txt and b.txt")], context={"tools": [read.model_dump(exclude_unset=True)]})
    thread.title = "Two reads"
    save_thread(app, "two.json", thread)
    result = app.runner.run(thread, RunOptions(react=True, thread_path="two.json"))
    assert result.status == "completed", result.error
    return thread, result


def by_name(spans: list[RxSpan]) -> dict[str, list[RxSpan]]:
    out: dict[str, list[RxSpan]] = {}
    for s in spans:
        out.setdefault(s.name, []).append(s)
    return out


def run_spans_at(rx: OtlpReceiver) -> list[RxSpan]:
    return rx.wait_for(lambda spans: sum(s.name.startswith(("chat", "execute_tool", "invoke_agent")) for s in spans) >= 6)


def test_a_react_run_becomes_an_agent_span_with_chat_and_tool_spans_under_it_with_the_exact_attribute_sets(home, srv, tmp_path):
    configure_provider(home, srv)
    with OtlpReceiver() as rx:
        enable_tracing(home, rx.url, capture=False)
        app = App(DataRoot(home))
        try:
            thread, result = two_tool_run(app, srv, tmp_path)
            spans = run_spans_at(rx)
        finally:
            app.close()
    named = by_name(spans)
    [agent] = named[f"invoke_agent {result.thread.title}"]
    chats, tools = named["chat loopback-model"], named["execute_tool read"]
    assert len(chats) == 3 and len(tools) == 2
    assert agent.kind == "INTERNAL" and agent.parent_id == ""
    assert set(agent.attributes) == AGENT_KEYS | {"llmspace.thread.path"}
    assert agent.attributes["gen_ai.conversation.id"] == result.run_id == thread.runHistory[-1].id
    assert agent.attributes["llmspace.thread.path"] == "two.json"
    assert agent.resource["service.name"] == "llmspace-test"
    assert agent.resource["openinference.project.name"] == "llmspace-test"
    for s in chats + tools:
        assert s.parent_id == agent.span_id and s.trace_id == agent.trace_id
    for c in chats:
        assert c.kind == "CLIENT"
        assert set(c.attributes) == CHAT_KEYS, set(c.attributes) ^ CHAT_KEYS
        assert c.attributes["gen_ai.provider.name"] == "loop" and c.attributes["server.address"] == "127.0.0.1"
        assert c.attributes["server.port"] == srv.port
    chats.sort(key=lambda s: s.attributes["llmspace.run.step"])
    assert [c.attributes["gen_ai.usage.input_tokens"] for c in chats] == [11, 21, 31]
    assert [c.attributes["gen_ai.response.finish_reasons"] for c in chats] == [["tool_calls"], ["tool_calls"], ["stop"]]
    for t in tools:
        assert set(t.attributes) == TOOL_KEYS
    assert sorted(t.attributes["gen_ai.tool.call.id"] for t in tools) == ["c1", "c2"]
    # our own trace files are written as before, one per step
    names = run_traces(thread.runHistory[-1])
    assert len(names) == 5 and all((home / "traces" / "calls" / n).is_file() for n in names)


def test_with_content_capture_on_the_messages_tool_definitions_arguments_and_results_are_sent(home, srv, tmp_path):
    configure_provider(home, srv)
    with OtlpReceiver() as rx:
        enable_tracing(home, rx.url, capture=True)
        app = App(DataRoot(home))
        try:
            two_tool_run(app, srv, tmp_path)
            spans = run_spans_at(rx)
        finally:
            app.close()
    named = by_name(spans)
    chats = sorted(named["chat loopback-model"], key=lambda s: s.attributes["llmspace.run.step"])
    assert set(chats[0].attributes) == CHAT_KEYS | (CHAT_CONTENT - {"gen_ai.system_instructions"})
    inputs = json.loads(chats[1].attributes["gen_ai.input.messages"])
    assert inputs[0] == {"role": "user", "parts": [{"type": "text", "content": "Read a.txt and b.txt"}]}
    assert inputs[1]["role"] == "assistant" and inputs[1]["parts"][-1]["type"] == "tool_call"
    assert inputs[2]["role"] == "tool" and "alpha file" in inputs[2]["parts"][0]["response"]
    out = json.loads(chats[2].attributes["gen_ai.output.messages"])
    assert out == [{"role": "assistant", "parts": [{"type": "text", "content": "Both files are read."}], "finish_reason": "stop"}]
    first = json.loads(chats[0].attributes["gen_ai.output.messages"])[0]["parts"]
    assert first[-1]["type"] == "tool_call" and first[-1]["name"] == "read" and first[-1]["arguments"]["path"].endswith("a.txt")
    assert json.loads(chats[0].attributes["gen_ai.tool.definitions"])[0]["function"]["name"] == "read"
    for t in named["execute_tool read"]:
        assert set(t.attributes) == TOOL_KEYS | TOOL_CONTENT
        assert json.loads(t.attributes["gen_ai.tool.call.arguments"])["path"].endswith(".txt")
        assert "file" in t.attributes["gen_ai.tool.call.result"]


def test_with_capture_off_no_message_text_is_sent_and_no_secret_is_in_any_attribute(home, srv, tmp_path):
    u = uuid.uuid4().hex
    header_value, api_key, file_secret = f"Bearer hv-{u[:24]}", f"gw-{u[4:28]}", f"fs-{u[2:26]}"
    configure_provider(home, srv, api_key=api_key)
    with OtlpReceiver() as rx:
        enable_tracing(home, rx.url, capture=False, headers={"Authorization": header_value})
        app = App(DataRoot(home))
        try:
            two_tool_run(app, srv, tmp_path, secret=file_secret)
            spans = run_spans_at(rx)
        finally:
            app.close()
        assert all({k.lower(): v for k, v in h.items()}.get("authorization") == header_value for _p, h in rx.requests)  # sent...
    sent = json.dumps([[s.attributes, s.events, s.resource, s.status_message] for s in spans])
    for text in ("Read a.txt", "alpha file", "beta file", "Both files are read", file_secret, api_key, header_value):
        assert text not in sent, text  # ...but is in no attribute, and no content is
    assert not any(set(s.attributes) & (CHAT_CONTENT | TOOL_CONTENT) for s in spans)


def test_a_receiver_that_never_answers_does_not_fail_the_run_closing_is_bounded_and_it_is_reported_once(home, srv, tmp_path, capfd):
    configure_provider(home, srv)
    with OtlpReceiver(hang=True) as rx:
        enable_tracing(home, rx.url, capture=True)
        app = App(DataRoot(home))
        reports: list[str] = []
        app.report_tracing = reports.append  # type: ignore[method-assign]
        run_started = time.monotonic()
        thread, _result = two_tool_run(app, srv, tmp_path)
        _thread2, _result2 = two_tool_run(app, srv, tmp_path)
        assert time.monotonic() - run_started < 60
        [exporter] = app.traces.observers._observers
        deadline = time.monotonic() + 90
        while exporter.failures < 2 and time.monotonic() < deadline:  # each failed export takes its 5 s timeout
            time.sleep(0.2)
        assert exporter.failures >= 2
        two_tool_run(app, srv, tmp_path)  # spans still queued at exit
        started = time.monotonic()
        app.close()
        took = time.monotonic() - started
    assert took < 8.0, took  # the exporter waits at most 5 s at exit (plus the other services)
    names = run_traces(thread.runHistory[-1])
    assert len(names) == 5
    for n in names:
        json.loads((home / "traces" / "calls" / n).read_text("utf-8"))  # whole files
    assert len(reports) == 1, reports
    assert rx.url.split("//")[1] in reports[0] and "Settings › Tracing" in reports[0]
    log = "".join(p.read_text("utf-8", errors="replace") for p in (home / "logs").glob("*.log"))
    assert log.count("Tracing: could not send spans") <= 1


def test_spans_beyond_the_bounded_queue_are_dropped_and_counted_without_blocking(tmp_path):
    from llmspace.traces.genai_spans import SpanSpec
    from llmspace.traces.otel_export import MAX_QUEUE, OtelExporter
    from llmspace.traces.otel_settings import ExportTarget

    with OtlpReceiver(hang=True) as rx:
        exporter = OtelExporter(ExportTarget(rx.url + "/v1/traces", {}, "svc", "p", False), schedule_delay_ms=60_000)
        try:
            started = time.monotonic()
            now = time.time_ns()
            for i in range(MAX_QUEUE + 1500):
                exporter.emit(SpanSpec(f"chat m{i}", "client", now, now + 1000, {"gen_ai.operation.name": "chat"}))
            took = time.monotonic() - started
            assert took < 30, took  # emitting never waits for the (silent) receiver
            # the export thread takes a batch of 512 and waits on the silent receiver: the rest overflows
            assert exporter.dropped > 0
        finally:
            exporter.close(0.5)


def test_llmspace_run_exports_the_run_with_its_thread_path_before_the_command_exits(home, srv, tmp_path):
    from tests.support.cli import cli_in_process

    configure_provider(home, srv)
    app = App(DataRoot(home))
    try:
        two_tool_run(app, srv, tmp_path)  # makes two.json (tracing off)
    finally:
        app.close()
    srv.push(Turn(text="Again."))
    with OtlpReceiver() as rx:
        enable_tracing(home, rx.url, capture=False)
        done = cli_in_process(["run", "two.json"], env={"LLM_SPACE_HOME": str(home)})
        assert done.returncode == 0, done.stderr
        spans = rx.wait_for(lambda got: any(s.name.startswith("invoke_agent") for s in got), timeout=30)
    [agent] = [s for s in spans if s.name.startswith("invoke_agent")]
    assert agent.attributes["llmspace.thread.path"] == "two.json"
    assert [s.name for s in spans if s.parent_id == agent.span_id] == ["chat loopback-model"]
