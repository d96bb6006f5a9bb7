"""The GenAI attribute names the exporter writes are kept in one module (`llmspace/traces/genai_names.py`)
and are the names of the OpenTelemetry semantic conventions package (a golden test: a renamed
attribute in a new conventions version fails here); the mapping module writes no `gen_ai.` name of
its own (they import the names module); the span mapping of a recorded model call and tool call gives the conventions' names."""

from __future__ import annotations

import re
from pathlib import Path

from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as semconv

from llmspace.traces import genai_names as N
from llmspace.traces.genai_spans import call_span, evaluation_event, server_attributes

ROOT = Path(__file__).resolve().parents[2]
CONVENTION_NAMES = {getattr(semconv, n) for n in dir(semconv) if n.startswith("GEN_AI_")}
EVENT_NAMES = {N.EVALUATION_RESULT_EVENT}  # events are not generated into the Python package


def ours() -> dict[str, str]:
    return {k: v for k, v in vars(N).items() if k.isupper() and isinstance(v, str) and v.startswith("gen_ai.")}


def test_every_gen_ai_name_of_the_names_module_is_a_name_of_the_conventions_package():
    names = ours()
    assert len(names) >= 35
    unknown = {k: v for k, v in names.items() if v not in CONVENTION_NAMES | EVENT_NAMES}
    assert unknown == {}


def test_the_names_match_the_conventions_constants_of_the_same_name():
    for key, value in ours().items():
        constant = getattr(semconv, "GEN_AI_" + key, None)
        if constant is not None:
            assert constant == value, key


def test_the_modules_that_write_spans_spell_no_gen_ai_attribute_name_of_their_own():
    pattern = re.compile(r"[\"']gen_ai\.[a-z_.]+[\"']")
    writers = [ROOT / "llmspace" / "traces" / n for n in ("genai_spans.py", "otel_export.py", "otel_settings.py", "otel_start.py")]
    writers += list((ROOT / "llmspace" / "agent").glob("*.py")) + list((ROOT / "llmspace" / "evals").glob("*.py"))
    assert [p.name for p in writers if pattern.search(p.read_text("utf-8"))] == []


def test_a_recorded_model_call_and_tool_call_map_to_chat_and_execute_tool_spans():
    model = {"kind": "model", "runId": "r1", "step": 1, "startedAt": "2026-12-07T10:00:01.000+00:00",
             "provider": "openai", "model": "gpt-4o", "baseUrl": "https://u:***@api.example.com:8443/v1?key=***",
             "request": {"model": "gpt-4o", "temperature": 0.2, "max_tokens": 100, "stream": True,
                         "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]},
             "timing": {"firstTokenMs": 120.0, "durationMs": 500.0},
             "events": [{"type": "TextDelta", "text": "Hello"}, {"type": "UsageEvent", "input": 7, "output": 2, "cache_read": 3},
                        {"type": "Finish", "reason": "stop", "raw": {"id": "resp_1"}}]}
    spec = call_span(model, capture=True)
    assert spec is not None and spec.name == "chat gpt-4o" and spec.kind == "client"
    assert spec.end_ns - spec.start_ns == 500_000_000
    a = spec.attributes
    assert a["gen_ai.provider.name"] == "openai" and a["gen_ai.request.temperature"] == 0.2
    assert a["gen_ai.request.max_tokens"] == 100 and a["gen_ai.response.id"] == "resp_1"
    assert a["gen_ai.usage.cache_read.input_tokens"] == 3 and a["gen_ai.response.time_to_first_chunk"] == 0.12
    assert a["server.address"] == "api.example.com" and a["server.port"] == 8443
    assert a["gen_ai.system_instructions"] == '[{"type":"text","content":"Be brief."}]'
    assert a["gen_ai.input.messages"] == '[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]'
    off = call_span(model, capture=False)
    assert off is not None and not set(off.attributes) & N.CONTENT_ATTRIBUTES
    tool = {"kind": "tool", "runId": "r1", "step": 2, "startedAt": "2026-12-07T10:00:02.000+00:00", "tool": "read",
            "callId": "c1", "arguments": {"path": "x"}, "result": {"text": "boom", "isError": True},
            "timing": {"durationMs": 10.0}}
    t = call_span(tool, capture=False)
    assert t is not None and t.name == "execute_tool read" and t.error and t.attributes["error.type"] == "tool_error"
    assert "boom" not in repr(t)


def test_server_attributes_keep_host_and_port_only_and_a_judge_explanation_needs_capture():
    assert server_attributes("http://alice:pw@127.0.0.1:9/v1?token=t") == {"server.address": "127.0.0.1", "server.port": 9}
    name, attrs = evaluation_event("contains", 1.0, "pass", "because", capture=False)
    assert name == "gen_ai.evaluation.result" and "gen_ai.evaluation.explanation" not in attrs
    assert evaluation_event("judge", 0.5, "fail", "because", capture=True)[1]["gen_ai.evaluation.explanation"] == "because"
