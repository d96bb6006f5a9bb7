"""Traces (secrets removed, capped, pruned oldest first) and usage/cost nodes."""

from __future__ import annotations

import json
from pathlib import Path

from llmspace.cancel import CancelToken
from llmspace.paths import DataRoot
from llmspace.providers.base import ModelInfo
from llmspace.providers.events import Finish, TextDelta, UsageEvent
from llmspace.providers.openai_completions import OpenAICompletionsAdapter
from llmspace.providers.traces import TraceWriter
from llmspace.providers.usage import cost_of, merge_usage, usage_node
from tests.providers.helpers import SECRET, make_request
from tests.support.llm_server import Turn


def test_a_traced_call_has_request_events_and_timing_and_no_secrets(srv, home: Path):
    req = make_request(srv, "openai-completions", system=f"my key is {SECRET}", headers={"X-Api-Key": "hdr-secret-value"})
    srv.push(Turn(text="Hello", chunk_size=1))
    writer = TraceWriter(DataRoot(home))
    with writer.call(req) as trace:
        for event in OpenAICompletionsAdapter().stream(req, CancelToken()):
            trace.add(event)
    raw = trace.path.read_text("utf-8")
    assert trace.path.parent == home / "traces" / "calls"
    assert SECRET not in raw and "hdr-secret-value" not in raw
    doc = json.loads(raw)
    assert doc["provider"] == "loop" and doc["api"] == "openai-completions" and doc["model"] == "loopback-model"
    assert doc["request"]["messages"][1] == {"role": "user", "content": "Hi"}
    assert doc["headers"]["Authorization"] == "***"
    assert doc["events"][0] == {"type": "TextDelta", "text": "Hello"}  # deltas merged
    assert doc["events"][-1]["type"] == "Finish"
    assert doc["timing"]["durationMs"] >= doc["timing"]["firstTokenMs"] >= 0


def test_each_trace_is_capped_and_old_traces_are_pruned_first(srv, home: Path):
    req = make_request(srv, "anthropic-messages")
    writer = TraceWriter(DataRoot(home), max_total_bytes=6000, max_trace_bytes=2500)
    many = [TextDelta("x" * 50), Finish("stop")] * 200  # not mergeable: alternating types
    big = writer.record(req, many, {"durationMs": 1})
    doc = json.loads(big.read_text())
    assert big.stat().st_size <= 2500 and doc["eventsDropped"] > 0
    paths = [writer.record(req, [TextDelta("hi"), Finish("stop")], {"durationMs": 1}) for _ in range(8)]
    left = sorted(p.name for p in (home / "traces" / "calls").glob("*.json"))
    assert sum((home / "traces" / "calls" / n).stat().st_size for n in left) <= 6000
    assert paths[-1].name in left and big.name not in left  # oldest went first


def test_usage_node_has_cost_from_the_price_table_and_total_fallback():
    model = ModelInfo(id="m", cost_input=3.0, cost_output=15.0, cost_cache_read=0.3, cost_cache_write=3.75)
    node = usage_node(UsageEvent(input=1_000_000, output=2_000, cache_read=10_000, cache_write=0), model)
    dumped = node.model_dump(exclude_unset=True)
    assert dumped["totalTokens"] == 1_012_000 and "reasoning" not in dumped
    assert dumped["cost"]["input"] == 3.0 and abs(dumped["cost"]["output"] - 0.03) < 1e-12
    assert abs(dumped["cost"]["total"] - (3.0 + 0.03 + 0.003)) < 1e-12
    assert cost_of(model, 0, 0)["total"] == 0
    assert usage_node(UsageEvent(input=-5, output=1, reasoning=3, total=9), model).model_dump()["reasoning"] == 3


def test_split_usage_reports_are_merged():
    merged = merge_usage([UsageEvent(input=10, cache_read=2), UsageEvent(output=7)])
    assert merged == UsageEvent(input=10, output=7, cache_read=2)
