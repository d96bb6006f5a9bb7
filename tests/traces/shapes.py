"""Trace files built from the shapes in platform-notes.md "Trace back-ends" and original-app.md §14:
one agent run (a system prompt, a user question, a generation that calls two tools, the tools'
rows hanging under an AGENT span and under a SPAN, a final generation given the whole history)
written as a Langfuse export, an OTLP JSON document with `gen_ai.*` attributes and a Phoenix
span listing with OpenInference attributes."""

from __future__ import annotations

import json
from typing import Any

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
SYSTEM = "You are a weather agent. Answer briefly."
QUESTION = "What is the weather in Paris and in Rome?"
ANSWER = "Paris is sunny (21 C); Rome has rain (15 C)."
MODEL = "gpt-4o-mini"
CALLS = [("call_paris", "get_weather", {"city": "Paris"}, "sunny, 21 C"),
         ("call_rome", "get_weather", {"city": "Rome"}, "rain, 15 C")]
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z in ms


def iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _openai_history() -> list[dict[str, Any]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for cid, name, args, _r in CALLS]},
            *({"role": "tool", "tool_call_id": cid, "content": result} for cid, _n, _a, result in CALLS)]


def langfuse_rows(trace_id: str = TRACE_ID, project_id: str = "lf-proj-1") -> list[dict[str, Any]]:
    """OpenAI Agents style: tool rows under the AGENT span and under a SPAN, not the generation."""
    base = {"traceId": trace_id, "projectId": project_id, "environment": "default", "traceName": "weather agent"}
    return [
        {**base, "id": "agent-1", "type": "AGENT", "name": "Weather agent", "startTime": iso(T0), "endTime": iso(T0 + 5000),
         "level": "DEFAULT", "parentObservationId": None, "input": QUESTION, "output": ANSWER},
        {**base, "id": "gen-1", "type": "GENERATION", "name": "chat", "parentObservationId": "agent-1",
         "startTime": iso(T0 + 100), "endTime": iso(T0 + 1100), "completionStartTime": iso(T0 + 400), "model": MODEL,
         "level": "DEFAULT", "input": json.dumps(_openai_history()[:2]),
         "output": json.dumps(_openai_history()[2]),
         "usageDetails": {"input": 50, "output": 20, "total": 70}, "costDetails": {"total": 0.0001}},
        {**base, "id": "tool-1", "type": "TOOL", "name": "get_weather", "parentObservationId": "agent-1",
         "startTime": iso(T0 + 1200), "endTime": iso(T0 + 1300), "level": "DEFAULT",
         "input": json.dumps(CALLS[0][2]), "output": CALLS[0][3]},
        {**base, "id": "span-tools", "type": "SPAN", "name": "tools", "parentObservationId": "agent-1",
         "startTime": iso(T0 + 1250), "endTime": iso(T0 + 1500), "level": "DEFAULT"},
        {**base, "id": "tool-2", "type": "TOOL", "name": "get_weather", "parentObservationId": "span-tools",
         "startTime": iso(T0 + 1300), "endTime": iso(T0 + 1400), "level": "DEFAULT",
         "input": json.dumps(CALLS[1][2]), "output": CALLS[1][3]},
        {**base, "id": "gen-2", "type": "GENERATION", "name": "chat", "parentObservationId": "agent-1",
         "startTime": iso(T0 + 1600), "endTime": iso(T0 + 2600), "model": MODEL, "level": "DEFAULT",
         "input": json.dumps(_openai_history()), "output": json.dumps({"role": "assistant", "content": ANSWER}),
         "usageDetails": {"input": 120, "output": 15, "total": 135}},
    ]


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value if isinstance(value, str) else json.dumps(value)}}


def _span(span_id: str, parent: str | None, name: str, start: int, end: int, attrs: dict[str, Any],
          trace_id: str = TRACE_ID, error: str | None = None) -> dict[str, Any]:
    span: dict[str, Any] = {"traceId": trace_id, "spanId": span_id, "name": name, "kind": 1,
                            "startTimeUnixNano": str(start * 1_000_000), "endTimeUnixNano": str(end * 1_000_000),
                            "attributes": [_attr(k, v) for k, v in attrs.items()], "status": {}}
    if parent:
        span["parentSpanId"] = parent
    if error is not None:
        span["status"] = {"code": 2, "message": error}
    return span


def _parts_history() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    first_in = [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
    calls_out = [{"role": "assistant", "parts": [{"type": "tool_call", "id": cid, "name": name, "arguments": args}
                                                 for cid, name, args, _r in CALLS], "finish_reason": "tool_call"}]
    second_in = [*first_in, *calls_out,
                 {"role": "tool", "parts": [{"type": "tool_call_response", "id": cid, "response": result}
                                            for cid, _n, _a, result in CALLS]}]
    return first_in, calls_out, second_in


def otlp_spans(trace_id: str = TRACE_ID) -> list[dict[str, Any]]:
    """OpenTelemetry GenAI conventions (as pydantic-ai and Microsoft's agent framework write them)."""
    first_in, calls_out, second_in = _parts_history()
    system = [{"type": "text", "content": SYSTEM}]
    chat = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": MODEL,
            "gen_ai.response.model": MODEL, "gen_ai.system_instructions": system}
    a, t = "a1a1a1a1a1a1a1a1", "b2b2b2b2b2b2b2b2"
    return [
        _span(a, None, "invoke_agent Weather agent", T0, T0 + 5000,
              {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Weather agent"}, trace_id),
        _span("c1c1c1c1c1c1c1c1", a, f"chat {MODEL}", T0 + 100, T0 + 1100,
              {**chat, "gen_ai.input.messages": first_in, "gen_ai.output.messages": calls_out,
               "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 20}, trace_id),
        _span("d1d1d1d1d1d1d1d1", a, "execute_tool get_weather", T0 + 1200, T0 + 1300,
              {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
               "gen_ai.tool.call.id": CALLS[0][0], "gen_ai.tool.call.arguments": CALLS[0][2],
               "gen_ai.tool.call.result": CALLS[0][3]}, trace_id),
        _span(t, a, "running tools", T0 + 1250, T0 + 1500, {}, trace_id),
        _span("d2d2d2d2d2d2d2d2", t, "execute_tool get_weather", T0 + 1300, T0 + 1400,
              {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
               "gen_ai.tool.call.id": CALLS[1][0], "gen_ai.tool.call.arguments": CALLS[1][2],
               "gen_ai.tool.call.result": CALLS[1][3]}, trace_id),
        _span("c2c2c2c2c2c2c2c2", a, f"chat {MODEL}", T0 + 1600, T0 + 2600,
              {**chat, "gen_ai.input.messages": second_in,
               "gen_ai.output.messages": [{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}],
               "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 15}, trace_id),
    ]


def otlp_document(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {"attributes": [_attr("service.name", "weather")]},
                               "scopeSpans": [{"scope": {"name": "pydantic-ai"}, "spans": spans}]}]}


def phoenix_listing(trace_id: str = TRACE_ID) -> dict[str, Any]:
    """Phoenix's span listing with OpenInference attributes (flat dotted keys)."""
    def span(sid: str, parent: str | None, name: str, kind: str, start: int, end: int, attrs: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "context": {"trace_id": trace_id, "span_id": sid}, "span_kind": kind, "parent_id": parent,
                "start_time": iso(start), "end_time": iso(end), "status_code": "OK", "status_message": "",
                "attributes": attrs, "events": []}

    def messages(prefix: str, items: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, m in enumerate(items):
            out[f"{prefix}.{i}.message.role"] = m["role"]
            if m.get("content"):
                out[f"{prefix}.{i}.message.content"] = m["content"]
            for k, call in enumerate(m.get("tool_calls") or []):
                out[f"{prefix}.{i}.message.tool_calls.{k}.tool_call.id"] = call["id"]
                out[f"{prefix}.{i}.message.tool_calls.{k}.tool_call.function.name"] = call["function"]["name"]
                out[f"{prefix}.{i}.message.tool_calls.{k}.tool_call.function.arguments"] = call["function"]["arguments"]
            if m.get("tool_call_id"):
                out[f"{prefix}.{i}.message.tool_call_id"] = m["tool_call_id"]
        return out

    history = _openai_history()
    llm = {"openinference.span.kind": "LLM", "llm.model_name": MODEL}
    return {"data": [
        span("a1", None, "Weather agent", "AGENT", T0, T0 + 5000, {"openinference.span.kind": "AGENT"}),
        span("c1", "a1", "ChatCompletion", "LLM", T0 + 100, T0 + 1100,
             {**llm, **messages("llm.input_messages", history[:2]), **messages("llm.output_messages", [history[2]]),
              "llm.token_count.prompt": 50, "llm.token_count.completion": 20, "llm.token_count.total": 70}),
        span("d1", "a1", "get_weather", "TOOL", T0 + 1200, T0 + 1300,
             {"openinference.span.kind": "TOOL", "tool.name": "get_weather", "tool_call.id": CALLS[0][0],
              "input.value": json.dumps(CALLS[0][2]), "output.value": CALLS[0][3]}),
        span("t", "a1", "tools", "CHAIN", T0 + 1250, T0 + 1500, {"openinference.span.kind": "CHAIN"}),
        span("d2", "t", "get_weather", "TOOL", T0 + 1300, T0 + 1400,
             {"openinference.span.kind": "TOOL", "tool.name": "get_weather", "tool_call.id": CALLS[1][0],
              "input.value": json.dumps(CALLS[1][2]), "output.value": CALLS[1][3]}),
        span("c2", "a1", "ChatCompletion", "LLM", T0 + 1600, T0 + 2600,
             {**llm, **messages("llm.input_messages", history),
              **messages("llm.output_messages", [{"role": "assistant", "content": ANSWER}]),
              "llm.token_count.prompt": 120, "llm.token_count.completion": 15, "llm.token_count.total": 135}),
    ], "next_cursor": None}


def shape_of(thread: Any) -> dict[str, Any]:
    """What must be the same whatever the source: system prompt, messages, tool calls, usage, model."""
    messages = []
    for m in thread.messages:
        item: dict[str, Any] = {"role": m.role, "text": m.text()}
        if m.role == "assistant":
            item["calls"] = [(c.id, c.input.name, c.input.arguments, c.output.text() if c.output else None,
                              bool(c.output and c.output.isError)) for c in m.toolCalls or []]
            item["tokens"] = (m.usage.input, m.usage.output) if m.usage else None
        messages.append(item)
    return {"system": thread.context.systemPrompt, "messages": messages,
            "model": thread.model.model_dump() if thread.model else None}
