"""The one mapping from spans to a thread, over every source (llmspace/traces/mapping.py)."""

from __future__ import annotations

import json
from datetime import datetime

from llmspace.traces import langfuse, otel
from llmspace.traces.files import parse_trace_bytes, spans_of
from llmspace.traces.mapping import map_spans

from . import shapes


def _thread(source: str, rows: list[dict], resolve=None):
    return map_spans(spans_of(source, rows), title="weather agent", trace_id=shapes.TRACE_ID, timestamp=shapes.T0,
                     resolve_model=resolve)


def _resolve(model_id: str):
    return {"provider": "loop", "id": model_id}


EXPECTED = {
    "system": shapes.SYSTEM,
    "messages": [
        {"role": "user", "text": shapes.QUESTION},
        {"role": "assistant", "text": "", "tokens": (50, 20),
         "calls": [(cid, name, args, result, False) for cid, name, args, result in shapes.CALLS]},
        {"role": "assistant", "text": shapes.ANSWER, "tokens": (120, 15), "calls": []},
    ],
    "model": {"provider": "loop", "id": shapes.MODEL, "params": None},
}


def test_a_langfuse_agent_trace_with_tools_under_agent_and_span_rows_gives_system_once_user_once_and_both_calls():
    mapped = _thread("langfuse", shapes.langfuse_rows(), _resolve)
    assert shapes.shape_of(mapped.thread) == EXPECTED


def test_the_same_trace_as_otlp_json_with_gen_ai_parts_messages_gives_the_same_thread():
    parsed = parse_trace_bytes(json.dumps(shapes.otlp_document(shapes.otlp_spans())).encode(), "t.json")
    assert parsed.source == "otlp" and len(parsed.traces) == 1
    mapped = _thread("otlp", parsed.traces[0].rows, _resolve)
    assert shapes.shape_of(mapped.thread) == EXPECTED


def test_the_same_trace_as_a_phoenix_listing_with_openinference_attributes_gives_the_same_thread():
    parsed = parse_trace_bytes(json.dumps(shapes.phoenix_listing()).encode(), "spans.json")
    assert parsed.source == "phoenix"
    mapped = _thread("phoenix", parsed.traces[0].rows, _resolve)
    assert shapes.shape_of(mapped.thread) == EXPECTED


def test_imported_user_turns_and_tool_results_are_marked_literal_and_one_run_history_entry_is_written():
    thread = _thread("langfuse", shapes.langfuse_rows()).thread
    user = thread.messages[0]
    assert user.extras().get("literal") is True
    outputs = [c.output for c in thread.messages[1].toolCalls]
    assert all(o.extras().get("literal") is True for o in outputs)
    assert len(thread.runHistory) == 1
    run = thread.runHistory[0]
    assert run.id.startswith("imported-") and run.timestamp == shapes.T0
    assert run.usage.input == 170 and run.usage.output == 35


def test_a_repeated_system_prompt_full_history_inputs_parts_and_a_second_user_turn_each_appear_once():
    rows = []
    history = []
    for i, (question, answer) in enumerate([("first question", "first answer"), ("second question", "second answer")]):
        history.append({"role": "user", "parts": [{"type": "text", "content": question}]})
        rows.append({"id": f"g{i}", "traceId": "t1", "type": "GENERATION", "startTime": shapes.iso(shapes.T0 + i * 1000),
                     "input": {"messages": [{"role": "system", "content": "Be kind."}, {"role": "developer", "content": "Be brief."},
                                            *history]},
                     "output": [{"role": "assistant", "parts": [{"type": "reasoning", "content": f"thinking {i}"},
                                                                {"type": "text", "content": answer}]}]})
        history.append({"role": "assistant", "parts": [{"type": "text", "content": answer}]})
    thread = _thread("langfuse", rows).thread
    assert thread.context.systemPrompt == "Be kind.\n\nBe brief."
    assert [(m.role, m.text()) for m in thread.messages] == [
        ("user", "first question"), ("assistant", "first answer"), ("user", "second question"), ("assistant", "second answer")]
    assert thread.messages[1].thinking == "thinking 0"


def test_inline_images_become_image_parts_and_an_image_link_is_kept_as_text_and_noted():
    rows = [{"id": "g", "traceId": "t1", "type": "GENERATION", "startTime": shapes.iso(shapes.T0),
             "input": [{"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}],
             "output": "A cat."}]
    thread = _thread("langfuse", rows).thread
    parts = thread.messages[0].content
    assert parts[0].text == "What is this?"
    assert parts[1].type == "image_data" and parts[1].mimeType == "image/png" and parts[1].data == "iVBORw0KGgo="
    assert thread.messages[1].text() == "A cat."


def test_errors_mark_the_tool_result_and_a_status_message_at_default_level_alone_is_not_an_error():
    rows = shapes.langfuse_rows()
    rows[2] = {**rows[2], "level": "ERROR", "statusMessage": "weather service timed out", "output": None}
    rows[1] = {**rows[1], "statusMessage": "finish_reason=tool_calls"}  # DEFAULT level: informational
    assert langfuse.row_error(rows[1]) == (False, "")
    assert langfuse.row_error({"level": "WARNING", "statusMessage": "slow"})[0] is True  # the original's rule otherwise
    thread = _thread("langfuse", rows).thread
    paris = thread.messages[1].toolCalls[0]
    assert paris.output.isError is True and paris.output.text() == "weather service timed out"
    assert thread.messages[1].toolCalls[1].output.isError is None


def test_a_failed_llm_span_and_rows_that_cannot_be_mapped_are_named_in_the_threads_notes():
    spans = shapes.otlp_spans()
    spans[5]["status"] = {"code": 2, "message": "rate limited"}
    spans.append(shapes._span("e1e1e1e1e1e1e1e1", "a1a1a1a1a1a1a1a1", "search docs", shapes.T0 + 3000, shapes.T0 + 3100,
                              {"openinference.span.kind": "RETRIEVER"}))
    mapped = _thread("otlp", otel.otlp_rows(shapes.otlp_document(spans)))
    notes = mapped.thread.extras()["importNotes"]
    assert any("rate limited" in n for n in notes)
    assert any("1 retriever row(s) were not mapped" in n for n in notes)
    assert any(shapes.MODEL in n and "not one of your configured models" in n for n in notes) is False  # no resolver given


def test_a_model_no_provider_offers_is_named_in_the_notes_and_the_thread_gets_no_model():
    mapped = _thread("langfuse", shapes.langfuse_rows(), lambda _m: None)
    assert mapped.thread.model is None
    assert any(f"model {shapes.MODEL}" in n for n in mapped.notes)


def test_a_trace_without_generations_reads_every_row_as_one_and_says_so():
    rows = [{"id": "s1", "traceId": "t", "type": "SPAN", "name": "step", "input": "hello", "output": "world"}]
    mapped = _thread("langfuse", rows)
    assert [(m.role, m.text()) for m in mapped.thread.messages] == [("user", "hello"), ("assistant", "world")]
    assert any("no generation" in n for n in mapped.notes)


def _otlp_openinference_spans() -> list[dict]:
    """The Phoenix listing's spans (OpenInference's flat attributes) as an OpenTelemetry
    collector writes them: OTLP JSON, hex span ids, times in nanoseconds."""
    ids = {"a1": "a1a1a1a1a1a1a1a1", "c1": "c1c1c1c1c1c1c1c1", "d1": "d1d1d1d1d1d1d1d1", "t": "b2b2b2b2b2b2b2b2",
           "d2": "d2d2d2d2d2d2d2d2", "c2": "c2c2c2c2c2c2c2c2"}
    spans = []
    for row in shapes.phoenix_listing()["data"]:
        start, end = (round(datetime.fromisoformat(row[k]).timestamp() * 1000) for k in ("start_time", "end_time"))
        spans.append(shapes._span(ids[row["context"]["span_id"]], ids.get(row["parent_id"] or ""), row["name"], start, end,
                                  row["attributes"]))
    return spans


def test_the_same_trace_as_otlp_json_lines_with_openinference_attributes_gives_the_same_thread():
    spans = _otlp_openinference_spans()
    text = "\n".join(json.dumps(shapes.otlp_document(spans[i:i + 3])) for i in range(0, len(spans), 3))
    parsed = parse_trace_bytes(text.encode(), "collector.jsonl")
    assert parsed.source == "otlp" and not parsed.refused and len(parsed.traces) == 1
    mapped = _thread("otlp", parsed.traces[0].rows, _resolve)
    assert shapes.shape_of(mapped.thread) == EXPECTED


def test_tool_rows_under_their_generation_are_matched_by_parent_even_when_they_start_after_the_next_one():
    rows = shapes.langfuse_rows()
    late = shapes.T0 + 1700  # after gen-2 started: time order alone would give them to the second generation
    for row in rows:
        if row["type"] == "TOOL":
            row.update(parentObservationId="gen-1", startTime=shapes.iso(late), endTime=shapes.iso(late + 50))
    thread = _thread("langfuse", rows).thread
    assert [c.input.name for c in thread.messages[1].toolCalls] == ["get_weather", "get_weather"]
    assert [c.output.text() for c in thread.messages[1].toolCalls] == [r for *_x, r in shapes.CALLS]
    assert not thread.messages[2].toolCalls


def test_assistant_messages_carry_the_generations_duration_and_time_to_first_token():
    thread = _thread("langfuse", shapes.langfuse_rows()).thread
    first, second = thread.messages[1], thread.messages[2]
    assert first.timing is not None and second.timing is not None
    assert (first.timing.durationMs, first.timing.firstTokenMs) == (1000, 300)  # completionStartTime - startTime
    assert second.timing.durationMs == 1000
