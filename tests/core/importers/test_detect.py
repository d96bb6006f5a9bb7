"""Importers against fixtures written from each API's documented shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.core.importers import import_files, parse_import, target_stem
from llmspace.core.model import AssistantMessage, ImageDataContent, TextContent, Thread
from llmspace.core.threadio import serialize_thread
from llmspace.core.workspace import Workspace

FIXTURES = Path(__file__).parent.parent / "fixtures" / "import"


def load(name: str, resolve_model=None) -> Thread:
    result = parse_import((FIXTURES / name).read_bytes(), name) if resolve_model is None else \
        parse_import((FIXTURES / name).read_bytes(), name, resolve_model)
    assert isinstance(result, list) and len(result) == 1, result
    serialize_thread(result[0])  # every imported thread can be written
    return result[0]


def texts(msg) -> list[str]:
    return [c.text for c in msg.content if isinstance(c, TextContent)]


def test_openai_export_maps_system_messages_tool_calls_and_results():
    t = load("openai_chat.json")
    assert t.context.systemPrompt == "You are terse.\n\nAnswer in metric units."
    roles = [m.role for m in t.messages]
    assert roles == ["user", "assistant", "assistant"]
    user, call_msg, answer = t.messages
    assert texts(user) == ["Weather in Paris?"]
    images = [c for c in user.content if isinstance(c, ImageDataContent)]
    assert [(i.mimeType, i.data) for i in images] == [("image/png", "iVBORw0KGgo=")]  # remote URL and svg dropped
    assert isinstance(call_msg, AssistantMessage) and call_msg.content == [] and call_msg.thinking == "Need the tool."
    calls = {c.id: c for c in call_msg.toolCalls}
    assert calls["call_1"].input.arguments == {"city": "Paris"}
    assert calls["call_1"].output.text() == "18°C, cloudy"
    assert calls["call_1"].output.isError is None  # OpenAI has no error flag
    assert calls["call_2"].input.arguments == {} and calls["call_2"].input.partialArguments is None
    assert calls["call_2"].output.text() == "14:05"
    assert calls["call_3"].input.arguments == {"city": "Lyo"}  # truncated JSON parsed leniently
    assert calls["call_4"].input.arguments == {} and calls["call_4"].input.partialArguments == "not json at all"
    assert calls["call_4"].output is None
    assert texts(answer) == ["18°C and cloudy."] and answer.thinking == "Summarise."
    assert [(x.type, x.name) for x in t.context.tools] == [("function", "get_weather"), ("function", "get_time")]
    assert t.context.tools[0].strict is True and t.context.tools[1].parameters == {} and t.context.tools[1].description == ""
    assert t.model is None  # no resolver knows gpt-4.1


def test_foreign_model_string_is_kept_only_when_a_configured_provider_knows_it():
    known = {"gpt-4.1": {"provider": "openai", "id": "gpt-4.1"}}
    t = load("openai_chat.json", known.get)
    assert (t.model.provider, t.model.id) == ("openai", "gpt-4.1") and t.model.params is None


def test_anthropic_export_keeps_thinking_tool_use_results_and_error_flags():
    t = load("anthropic_messages.json")
    assert t.context.systemPrompt == "You are terse.\nUse tools when needed."
    assert [m.role for m in t.messages] == ["user", "assistant", "user", "assistant"]
    first, calls_msg, photo, answer = t.messages
    assert texts(first) == ["Weather in Paris?"]
    assert calls_msg.thinking == "Use tool." and calls_msg.content == []
    ok, failed = calls_msg.toolCalls
    assert (ok.id, ok.input.name, ok.input.arguments) == ("toolu_1", "get_weather", {"city": "Paris"})
    assert ok.output.text() == "18°C" and ok.output.isError is None
    assert failed.input.arguments == {} and failed.output.isError is True and failed.output.text() == "city is required"
    # the tool_result-only user message produced no message; text comes before images
    assert [c.type for c in photo.content] == ["text", "image_data"]
    assert photo.content[1].mimeType == "image/jpeg"
    assert texts(answer) == ["18°C.", "A street in the rain."]
    tools = t.context.tools
    assert [(x.type, x.name) for x in tools] == [("function", "get_weather"), ("mcp", "mcp__files__read"), ("function", "bash")]
    assert tools[0].parameters["required"] == ["city"]
    assert (tools[1].serverId, tools[1].serverName, tools[1].toolName) == ("s1", "files", "read")


def test_aurora_export_maps_pascal_case_messages_and_typed_parameters():
    t = load("aurora.json")
    assert t.context.systemPrompt == "You are a planner."
    assert [m.role for m in t.messages] == ["user", "assistant", "assistant"]
    calls = t.messages[1].toolCalls
    assert t.messages[1].content == []
    assert calls[0].id == "c1" and calls[0].input.arguments == {"q": "Kyoto", "limit": 3}
    assert calls[0].output.text() == "[…results…]"
    assert calls[1].id and calls[1].input.arguments == {"q": "Osaka"} and calls[1].output is None
    assert calls[2].input.arguments == {"q": "Na"}
    (tool,) = t.context.tools
    assert (tool.type, tool.name, tool.description, tool.strict) == ("function", "search", "Web search", False)
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "q": {"type": "string", "description": "query"},
            "limit": {"type": "number", "default": 5, "minimum": 1},
            "tags": {"type": "array", "items": {"type": "string"}},
            "filters": {"type": "object", "properties": {"lang": {"type": "string", "enum": ["en", "ja"]}}},
            "odd": {"type": "string"},
        },
        "required": ["q"],
    }


def test_bare_array_of_messages_is_imported():
    t = load("bare_array.json")
    assert t.context.systemPrompt == "Be brief."
    assert [(m.role, texts(m)) for m in t.messages] == [("user", ["Hello"]), ("assistant", ["Hi!"])]


def test_native_thread_is_taken_as_it_is_with_unknown_keys():
    t = load("native.json")
    assert t.model.params.reasoning == "low" and t.context.tools[0].type == "builtin"
    assert t.extras() == {"customKey": {"kept": True}}


def test_jsonl_gives_one_thread_per_line_and_reports_bad_lines():
    result = parse_import((FIXTURES / "exports.jsonl").read_bytes(), "exports.jsonl")
    assert isinstance(result, list) and len(result) == 3
    assert texts(result[1].messages[0]) == ["second"] and result[1].context.systemPrompt == "second system"
    assert texts(result[2].messages[0]) == ["fourth"]


@pytest.mark.parametrize(
    "name, reason",
    [
        ("langfuse.json", "Langfuse"),
        ("nothing.json", "no messages, system prompt, tools or model"),
        ("malformed.json", "malformed JSON at line 4, column 3"),
        ("invalid_native.json", "context.messages[0].content[0].mimeType"),
    ],
)
def test_files_without_a_thread_are_skipped_with_a_reason(name, reason):
    result = parse_import((FIXTURES / name).read_bytes(), name)
    assert isinstance(result, str) and reason in result


@pytest.mark.parametrize("data", [b"", b"   ", b"42", b'"text"', b"null", b"\xff\xfe", b"[]", b"[1, 2]"])
def test_odd_bytes_are_skipped_not_raised(data):
    assert isinstance(parse_import(data, "odd.json"), str)



def test_import_files_names_after_the_source_and_one_bad_file_does_not_stop_the_others(tmp_path: Path):
    ws = Workspace(tmp_path / "ws", use_os_trash=False)
    ws.root.mkdir()
    sources = [FIXTURES / "openai_chat.json", FIXTURES / "malformed.json", tmp_path / "missing.json",
               FIXTURES / "openai_chat.json", FIXTURES / "exports.jsonl", tmp_path]
    outcomes = import_files(sources, ws, into="imports")
    assert outcomes[0].created == ["imports/openai_chat.json"]
    assert "line 4, column 3" in outcomes[1].skipped and not outcomes[1].created
    assert "could not read" in outcomes[2].skipped
    assert outcomes[3].created == ["imports/openai_chat-1.json"]
    assert outcomes[4].created == ["imports/exports.json", "imports/exports-1.json", "imports/exports-2.json"]
    assert len(outcomes[4].problems) == 1 and outcomes[4].problems[0].startswith("line 4:")
    assert "folder" in outcomes[5].skipped
    opened = ws.open("imports/openai_chat-1.json")
    assert opened.title == "openai_chat-1"
    raw = (ws.root / "imports/openai_chat.json").read_bytes()
    assert b'"title": "openai_chat"' in raw and not raw.endswith(b"\n")


def test_invalid_source_stems_become_untitled():
    assert target_stem(Path("con.json")) == "untitled"
    assert target_stem(Path("trailing..json")) == "untitled"
    assert target_stem(Path("chat.export.json")) == "chat.export"
    assert target_stem(Path("log.JSONL")) == "log"


def test_a_json_lines_export_saved_as_json_is_still_imported():
    data = b'{"messages": [{"role": "user", "content": "a"}]}\n{"messages": [{"role": "user", "content": "b"}]}\n'
    result = parse_import(data, "export.json")
    assert isinstance(result, list) and [texts(t.messages[0]) for t in result] == [["a"], ["b"]]
    assert "malformed JSON at line 2" in parse_import(data + b"{oops\n", "export.json")


@pytest.mark.parametrize("data", [b"{}", b'{"name": "my-package", "version": "1.0.0"}', b'{"id": "msg_1", "type": "message"}'])
def test_objects_without_any_thread_field_are_skipped(data):
    result = parse_import(data, "x.json")
    assert isinstance(result, str) and "no thread fields" in result


def test_import_outcomes_list_every_created_path(tmp_path: Path):
    ws = Workspace(tmp_path / "ws", use_os_trash=False)
    outcomes = import_files([FIXTURES / "bare_array.json", FIXTURES / "nothing.json", FIXTURES / "exports.jsonl"], ws)
    assert outcomes.created == ["bare_array.json", "exports.json", "exports-1.json", "exports-2.json"]
    assert [o.source.name for o in outcomes.skipped] == ["nothing.json"]


def test_bidi_controls_are_removed_from_imported_file_names(tmp_path: Path):
    assert target_stem(Path("invoice\u202egpj.json")) == "invoicegpj"
    assert target_stem(Path("\u2066\u200f\u061c.json")) == "untitled"
    source = tmp_path / "report\u202e\u2067fdp.json"
    source.write_bytes((FIXTURES / "openai_chat.json").read_bytes())
    ws = Workspace(tmp_path / "ws", use_os_trash=False)
    assert import_files([source], ws).created == ["reportfdp.json"]
    assert ws.open("reportfdp.json").title == "reportfdp"
