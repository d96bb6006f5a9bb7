"""Property tests: any JSON value (or any bytes) fed to the importers gives threads or a
clean skip reason, never an exception; every thread produced can be written and read back."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmspace.core.importers import parse_import
from llmspace.core.model import Thread
from llmspace.core.threadio import parse_thread, serialize_thread

SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}

scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
json_values = st.recursive(scalars, lambda c: st.lists(c, max_size=5) | st.dictionaries(st.text(max_size=10), c, max_size=5),
                           max_leaves=30)

words = st.sampled_from(["text", "input_text", "output_text", "thinking", "redacted_thinking", "tool_use", "tool_result",
                         "image", "image_url", "input_image", "image_data", "function", "mcp", "builtin", "base64", "x"])
loose = st.one_of(json_values, words)


def mostly(strategy):
    """`strategy` most of the time, any JSON value sometimes."""
    return st.one_of(strategy, strategy, strategy, loose)


def block():
    return st.fixed_dictionaries(
        {"type": words},
        optional={"text": mostly(st.text(min_size=1, max_size=10)), "thinking": loose, "id": st.sampled_from(["a", "b", ""]) | loose,
                  "name": st.sampled_from(["f", "g", ""]) | loose, "input": loose, "tool_use_id": st.sampled_from(["a", "b"]) | loose,
                  "content": loose | st.lists(loose, max_size=3), "is_error": loose,
                  "source": st.fixed_dictionaries({"type": st.sampled_from(["base64", "url"]),
                                                   "media_type": st.sampled_from(["image/png", "image/svg+xml", "text/x"]) | loose,
                                                   "data": st.text(max_size=8) | loose}),
                  "image_url": st.sampled_from(["data:image/png;base64,AAAA", "data:image/png;base64,", "https://x/y.png"]) | loose,
                  "mimeType": st.sampled_from(["image/png", "bad"]) | loose, "data": loose},
    )


contents = st.one_of(st.none(), st.text(min_size=1, max_size=20), block(), st.lists(mostly(block()), max_size=4),
                     st.lists(mostly(block()), max_size=4), loose)
arguments = st.text(max_size=20) | st.sampled_from(['{"a": 1', '{"a":', "[1,", '{"a":1}}', "", "  "]) | loose
tool_calls = st.lists(st.fixed_dictionaries({}, optional={
    "id": st.sampled_from(["a", "b", ""]) | loose, "type": loose,
    "function": st.fixed_dictionaries({}, optional={"name": st.sampled_from(["f", ""]) | loose, "arguments": arguments}) | loose,
    "name": loose, "arguments": arguments}), max_size=3) | loose
messages = st.lists(mostly(st.fixed_dictionaries({
    "role": mostly(st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "Narrator", "USER"])),
    "content": contents}, optional={"tool_calls": tool_calls, "tool_call_id": st.sampled_from(["a", "b"]) | loose, "id": loose,
    "reasoning_content": loose, "reasoning": loose, "thinking": loose, "function_call": loose})), min_size=1, max_size=6)
tools = st.lists(st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["function", "mcp", "builtin"]) | loose, "name": st.sampled_from(["t", ""]) | loose,
    "function": loose, "description": loose, "parameters": loose, "input_schema": loose, "strict": loose,
    "serverId": loose, "serverName": loose, "toolName": loose, "source": loose}) | loose, max_size=3)
chat_exports = st.fixed_dictionaries({"messages": messages}, optional={
    "system": loose | st.lists(block(), max_size=2), "tools": tools | loose, "model": loose, "title": loose}) | messages

param_spec = st.recursive(st.fixed_dictionaries({}, optional={
    "Type": st.integers(0, 7) | loose, "Description": loose, "Title": loose, "Format": loose, "Enum": loose,
    "Default": loose, "Minimum": st.sampled_from(["1", "1.5", "x", "nan", "inf"]) | loose, "IsRequired": loose}),
    lambda c: st.fixed_dictionaries({"Type": st.sampled_from([4, 5])}, optional={
        "Items": st.dictionaries(st.text(max_size=4), c, max_size=3) | st.fixed_dictionaries({"item": c}) | loose}), max_leaves=6)
aurora_exports = st.fixed_dictionaries({
    "Messages": st.lists(st.fixed_dictionaries({
        "Role": mostly(st.sampled_from(["System", "user", "ASSISTANT", "Tool", "other"])),
        "Content": mostly(st.fixed_dictionaries({"StringValue": mostly(st.text(min_size=1, max_size=10))}, optional={"ToolCalls": st.lists(
            st.fixed_dictionaries({}, optional={"ID": st.sampled_from(["c1", ""]) | loose, "FunctionCall": st.fixed_dictionaries(
                {}, optional={"Name": st.sampled_from(["s", ""]) | loose, "Arguments": arguments}) | loose}), max_size=2) | loose}))},
        optional={"ToolCallID": st.sampled_from(["c1"]) | loose}) | loose, min_size=1, max_size=5),
    "Tools": st.lists(st.fixed_dictionaries({}, optional={
        "Name": st.sampled_from(["s", ""]) | loose, "Description": loose, "Strict": loose,
        "ToolParameters": st.dictionaries(st.text(max_size=4), param_spec, max_size=3) | loose}) | loose, max_size=2)})


def check(value_bytes: bytes, name: str = "x.json") -> None:
    result = parse_import(value_bytes, name)
    if isinstance(result, str):
        assert result
        return
    assert isinstance(result, list) and result
    for thread in result:
        assert isinstance(thread, Thread)
        raw = serialize_thread(thread)
        assert serialize_thread(parse_thread(raw)) == raw


def encode(value) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


@settings(max_examples=1000, **SETTINGS)
@given(json_values)
def test_any_json_value_gives_threads_or_a_skip_reason(value):
    check(encode(value))


@settings(max_examples=600, **SETTINGS)
@given(chat_exports)
def test_any_chat_shaped_export_gives_threads_or_a_skip_reason(value):
    check(encode(value))


@settings(max_examples=350, **SETTINGS)
@given(aurora_exports)
def test_any_aurora_shaped_export_gives_threads_or_a_skip_reason(value):
    check(encode(value))


@settings(max_examples=150, **SETTINGS)
@given(st.lists(chat_exports | json_values, max_size=3))
def test_any_jsonl_file_gives_threads_or_a_skip_reason(lines):
    check(b"\n".join(encode(v) for v in lines), "x.jsonl")


@settings(max_examples=500, **SETTINGS)
@given(st.binary(max_size=200))
def test_any_bytes_give_threads_or_a_skip_reason(data):
    check(data)
    check(data, "x.jsonl")


nonblank = st.text(min_size=1, max_size=12)
good_block = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["text", "input_text", "output_text"]), "text": nonblank}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": nonblank}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": st.sampled_from(["a", "b"]), "name": nonblank, "input": json_values}),
    st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id": st.sampled_from(["a", "b", "c"]),
                           "content": nonblank | st.lists(good_text := st.fixed_dictionaries({"type": st.just("text"), "text": nonblank}), max_size=2),
                           }, optional={"is_error": st.booleans() | loose}),
    st.fixed_dictionaries({"type": st.just("image"), "source": st.fixed_dictionaries({
        "type": st.just("base64"), "media_type": st.sampled_from(["image/png", "image/svg+xml"]), "data": nonblank})}),
)
good_messages = st.lists(st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "developer", "user", "assistant", "tool"]),
     "content": st.one_of(nonblank, st.none(), st.lists(good_block, min_size=1, max_size=3))},
    optional={"tool_calls": st.lists(st.fixed_dictionaries({"id": st.sampled_from(["a", "b"]), "function": st.fixed_dictionaries(
        {"name": nonblank, "arguments": arguments})}), max_size=2), "tool_call_id": st.sampled_from(["a", "b"]),
        "reasoning_content": nonblank}), min_size=1, max_size=6)


@settings(max_examples=400, **SETTINGS)
@given(good_messages, st.booleans())
def test_mostly_well_formed_chats_import_and_round_trip(msgs, as_array):
    check(encode(msgs if as_array else {"messages": msgs}))
