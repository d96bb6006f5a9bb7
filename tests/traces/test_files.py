"""Which trace file a file is, and each refused shape with its reason (llmspace/traces/files.py)."""

from __future__ import annotations

import json

import pytest

from llmspace.traces.files import parse_trace_bytes, read_trace_file

from . import shapes


def test_the_three_langfuse_shapes_are_read_and_grouped_by_trace_id():
    rows = shapes.langfuse_rows() + shapes.langfuse_rows(trace_id="other-trace")
    for value in (rows, {"data": rows}, {"trace": {"id": shapes.TRACE_ID, "name": "weather agent"}, "observations": rows}):
        parsed = parse_trace_bytes(json.dumps(value).encode(), "x.json")
        assert parsed.source == "langfuse" and not parsed.refused
        assert [t.trace_id for t in parsed.traces] == [shapes.TRACE_ID, "other-trace"]
        assert parsed.project_ids == {"lf-proj-1"}


def test_otlp_json_lines_one_document_per_line_are_read_as_one_trace():
    spans = shapes.otlp_spans()
    text = "\n".join(json.dumps(shapes.otlp_document(spans[i:i + 2])) for i in range(0, len(spans), 2))
    parsed = parse_trace_bytes(text.encode(), "collector.jsonl")
    assert parsed.source == "otlp" and len(parsed.traces) == 1 and len(parsed.traces[0].rows) == len(spans)


def test_base64_trace_ids_of_some_exporters_are_read_as_hex():
    spans = shapes.otlp_spans()
    import base64

    for s in spans:
        s["traceId"] = base64.b64encode(bytes.fromhex(shapes.TRACE_ID)).decode()
    parsed = parse_trace_bytes(json.dumps(shapes.otlp_document(spans)).encode(), "t.json")
    assert [t.trace_id for t in parsed.traces] == [shapes.TRACE_ID]


@pytest.mark.parametrize(("data", "reason"), [
    (b"", "the file is empty"),
    (b"{not json", "malformed JSON at line 1, column 2"),
    (b'{"hello": "world"}', "unsupported trace JSON shape; expected a Langfuse export"),
    (b'[{"id": 1, "name": "x"}]', "no traceId values found"),
    (b'{"resourceSpans": []}', "the OTLP document holds no spans"),
    (b'{"resourceSpans": []}\n{"foo": 1}\n', "line 2 is not an OTLP JSON document"),
    (b'{"resourceSpans": [{"scopeSpans": [{"spans": []}]}]}\n[1,\n', "line 2 is not JSON"),
])
def test_each_refused_shape_is_named_with_its_reason(data, reason):
    parsed = parse_trace_bytes(data, "bad.json")
    assert parsed.traces == [] and reason in parsed.refused


def test_a_file_over_the_size_cap_is_refused_with_the_limit(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(shapes.langfuse_rows()) + " " * 2 * 1024 * 1024)
    parsed = read_trace_file(path, max_bytes=1024 * 1024)
    assert "larger than 1 MB" in parsed.refused and "export fewer traces per file" in parsed.refused


def test_a_named_pipe_is_refused_without_blocking(tmp_path):
    import os

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    assert "not a regular file" in read_trace_file(fifo).refused
