"""The trace view of a run (presenters/trace_view.py), without a display: a run against the
loopback server that calls a tool shows its model call, tool call and second model call in
step order with their timing, what was sent and answered, and no configured secret; a trace
pruned since shows as removed; a run recorded without traces says so."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from llmspace.core.threadio import thread_from_data
from llmspace.presenters.trace_view import LABEL_CHARS, NO_TRACES, JsonNode, fold_json, trace_view
from tests.agent.test_run_traces import run_reading_a_secret_file
from tests.support.llm_server import LoopbackLLM


@pytest.fixture
def srv() -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        yield server


def _labels(node: JsonNode | None) -> Iterator[str]:
    if node is None:
        return
    yield node.label
    yield node.text
    for child in node.children:
        yield from _labels(child)


def test_a_run_with_a_tool_call_shows_its_steps_with_timing_and_what_was_sent_and_answered(app, home, srv, tmp_path):
    thread, result, secrets = run_reading_a_secret_file(app, home, srv, tmp_path)

    view = trace_view(thread.runHistory[-1], app.traces.load)

    assert view.run_id == result.run_id and view.note is None
    assert [s.kind for s in view.steps] == ["model", "tool", "model"]
    first, tool, last = view.steps
    assert first.title == "1 · Model loop/loopback-model"
    assert tool.title == "2 · Tool read" and last.title.startswith("3 · Model loop")
    assert all(s.timing.endswith(" ms") or s.timing.endswith(" s") for s in view.steps)
    assert first.timing.startswith("first token ") and first.first_token.endswith("ms")
    assert tool.duration == tool.timing and tool.first_token == ""
    assert all(s.duration_ms is not None and s.duration_ms >= 0 for s in view.steps)
    assert first.offset == "+0.00 s" and all(s.started.count(":") == 2 for s in view.steps)
    assert "What is in notes.txt?" in first.request_text and "[tool call read c1]" in first.response_text
    assert "notes.txt" in tool.request_text and "key=***" in tool.response_text
    assert "The file holds credentials." in last.response_text
    assert view.summary.startswith("3 steps · ") and "removed" not in view.summary
    # folded JSON: the request body is a child of the top row, the headers masked
    body = next(c for c in first.request.children if c.label.startswith("body {"))
    assert any(c.label.startswith("messages [") for c in body.children)
    headers = next(c for c in first.request.children if c.label.startswith("headers {"))
    assert [c.label for c in headers.children] == ['Authorization: "***"']
    shown = [s.title + s.request_text + s.response_text for s in view.steps]
    shown += [x for s in view.steps for x in (*_labels(s.request), *_labels(s.response))]
    for name, value in secrets.items():
        assert not [x for x in shown if value in x], name


def test_a_pruned_trace_shows_as_removed_and_the_others_stay(app, home, srv, tmp_path):
    thread, _result, _s = run_reading_a_secret_file(app, home, srv, tmp_path)
    folder = home / "traces" / "calls"
    sizes = sorted((p.name, p.stat().st_size) for p in folder.glob("*.json"))
    app.traces.max_total_bytes = sum(size for _, size in sizes) - 1  # one trace too many: the oldest goes
    removed = app.traces.prune()
    assert [p.name for p in removed] == [sizes[0][0]]

    view = trace_view(thread.runHistory[-1], app.traces.load)

    assert [s.kind for s in view.steps] == ["removed", "tool", "model"]
    assert view.steps[0].title == "1 · removed" and "was removed" in view.steps[0].response_text
    assert view.steps[0].request is None and view.steps[0].timing == ""
    assert view.summary.endswith(" · 1 removed")
    assert view.steps[1].title == "2 · Tool read" and view.steps[1].offset == "+0.00 s"


def test_a_run_recorded_without_traces_says_why_nothing_shows():
    thread = thread_from_data({"title": "t", "runHistory": [{"id": "r1", "timestamp": 1, "thread": {"title": "t"}}]})
    view = trace_view(thread.runHistory[0], lambda name: pytest.fail(f"nothing to load, asked for {name}"))
    assert view.steps == () and view.note == NO_TRACES and view.summary == "No traces"


def test_folded_json_labels_containers_by_size_and_cuts_long_values_keeping_them_whole():
    long = "x" * (LABEL_CHARS * 2)
    node = fold_json({"model": "m", "messages": [{"role": "user", "content": long}], "n": 2, "ok": True})
    assert node.label == "{4 keys}"
    assert [c.label for c in node.children] == ['model: "m"', "messages [1 item]", "n: 2", "ok: true"]
    content = node.children[1].children[0].children[1]
    assert content.label.endswith("…") and len(content.label) <= LABEL_CHARS + len("content: ")
    assert content.text == long
    assert fold_json("two\nlines").label == '"two ⏎ lines"'
