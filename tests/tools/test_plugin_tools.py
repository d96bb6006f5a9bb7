"""Plugin tool entries in thread files and their calls through the router: the entry's
shape and byte-for-byte round trip, the canonical ID, the "unavailable" error, and rich
outputs (text and image parts) made from a plugin's `create_result` parts."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import orjson
import pytest

from llmspace.core.model import Tool, ToolCall
from llmspace.core.threadio import parse_thread, serialize_thread
from llmspace.jsonio import dumps_pretty
from llmspace.registry import plugin_source
from llmspace.tools.base import ToolContext, ToolError, rich_output
from llmspace.tools.plugin_tools import plugin_of, plugin_tool_entry, plugin_tool_id
from llmspace.tools.router import ToolRouter, tool_id

PARAMS = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": False}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64).decode()


def _entry(**kw: Any) -> Tool:
    args: dict[str, Any] = {"plugin": "@example/team-tools", "stem": "read-project-file", "name": "read_project_file",
                            "description": "Read a project file.", "parameters": PARAMS, "strict": True}
    args.update(kw)
    return plugin_tool_entry(**args)


def _call(name: str = "read_project_file", **arguments: Any) -> ToolCall:
    return ToolCall.model_validate({"id": "c1", "input": {"name": name, "arguments": arguments}})


def _ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(working_directory=str(tmp_path))


def test_a_plugin_tool_entry_has_the_documented_keys_in_order():
    data = _entry().model_dump(exclude_unset=True, by_alias=True)
    assert list(data) == ["type", "pluginId", "toolId", "name", "description", "parameters", "strict"]
    assert data["type"] == "plugin" and data["pluginId"] == "@example/team-tools"
    assert data["toolId"] == "plugin:@example/team-tools:tool:read-project-file" == plugin_tool_id("@example/team-tools", "read-project-file")
    assert "strict" not in _entry(strict=None).model_dump(exclude_unset=True)


def test_a_thread_with_a_plugin_tool_round_trips_byte_for_byte():
    entry = _entry().model_dump(exclude_unset=True, by_alias=True)
    raw = dumps_pretty({"title": "t", "context": {"tools": [entry], "messages": []}})
    thread = parse_thread(raw)
    [tool] = thread.context.tools
    assert tool.type == "plugin" and tool.toolId == entry["toolId"] and tool.is_executable()
    assert serialize_thread(thread) == raw


def test_a_plugin_tool_written_in_another_key_order_keeps_that_order():
    entry = {"name": "t", "strict": False, "toolId": "plugin:kit:tool:t", "type": "plugin", "pluginId": "kit",
             "description": "", "parameters": {"type": "object"}, "x-extra": [1]}
    raw = dumps_pretty({"context": {"tools": [entry]}})
    assert serialize_thread(parse_thread(raw)) == raw


def test_the_canonical_id_of_a_plugin_tool_is_its_tool_id():
    assert tool_id(_entry()) == "plugin:@example/team-tools:tool:read-project-file"
    bare = Tool.model_validate({"type": "plugin", "name": "x", "extensionId": "plugin:kit:tool:x"})
    assert tool_id(bare) == "plugin:kit:tool:x"  # no toolId: the extensionId fallback
    assert plugin_of(_entry()) == "@example/team-tools"
    assert plugin_of(Tool.model_validate({"type": "plugin", "name": "x", "toolId": "plugin:@a/b:tool:x"})) == "@a/b"
    assert plugin_of(Tool.model_validate({"type": "function", "name": "x"})) is None


def test_a_plugin_tool_runs_through_the_executor_registered_under_its_tool_id(tmp_path):
    router = ToolRouter()
    seen: list[tuple[str, dict]] = []

    def execute(tool, arguments, ctx, cancel, timeout):
        seen.append((tool.toolId, arguments))
        return rich_output([{"type": "text", "text": "Rendered."}, {"type": "image", "mimeType": "image/png", "data": PNG}])

    router.register_executor(plugin_tool_id("@example/team-tools", "read-project-file"), execute,
                             source=plugin_source("@example/team-tools"))
    out = router.execute(_entry(), _call(path="README.md"), _ctx(tmp_path))
    assert out.isError is False and out.text() == "Rendered." and out.images()[0].data == PNG
    assert seen == [("plugin:@example/team-tools:tool:read-project-file", {"path": "README.md"})]
    bad = router.execute(_entry(), _call(path=3), _ctx(tmp_path))
    assert bad.isError is True and "path: 3 is not of type 'string'" in bad.text()


def test_a_plugin_tool_without_an_executor_is_unavailable(tmp_path):
    out = ToolRouter().execute(_entry(), _call(path="a"), _ctx(tmp_path))
    assert out.isError is True
    assert out.text() == "read_project_file is unavailable (plugin @example/team-tools is disabled or removed)."


def test_explain_missing_says_why_a_plugin_tool_is_unavailable(tmp_path):
    router = ToolRouter()
    asked: list[str] = []

    def explain(canonical_id: str) -> str | None:
        asked.append(canonical_id)
        return "plugin @example/team-tools is disabled" if canonical_id.endswith("read-project-file") else None

    router.explain_missing = explain
    out = router.execute(_entry(), _call(path="a"), _ctx(tmp_path))
    assert out.text() == "read_project_file is unavailable (plugin @example/team-tools is disabled)."
    other = _entry(stem="other", name="other")
    assert router.execute(other, _call("other", path="a"), _ctx(tmp_path)).text() == \
        "other is unavailable (plugin @example/team-tools is disabled or removed)."
    assert asked == ["plugin:@example/team-tools:tool:read-project-file", "plugin:@example/team-tools:tool:other"]


def test_a_failing_explanation_falls_back_to_the_default_reason(tmp_path):
    router = ToolRouter()

    def broken(canonical_id: str) -> str | None:
        raise RuntimeError("boom")

    router.explain_missing = broken
    out = router.execute(_entry(), _call(path="a"), _ctx(tmp_path))
    assert out.text() == "read_project_file is unavailable (plugin @example/team-tools is disabled or removed)."


def test_plugin_tool_calls_never_pause_auto_run():
    assert ToolRouter(None).pause_for([_entry()], [_call(path="a")]) is None


def test_rich_output_keeps_text_and_image_parts_in_order():
    out = rich_output([{"type": "image", "mimeType": "image/png", "data": PNG[:20] + "\n" + PNG[20:]},
                       {"type": "text", "text": "caption", "annotations": {}}])
    dumped = orjson.loads(orjson.dumps(out.model_dump(exclude_unset=True)))
    assert dumped == {"content": [{"type": "image", "mimeType": "image/png", "data": PNG},
                                  {"type": "text", "text": "caption"}], "isError": False}


@pytest.mark.parametrize("parts, message", [
    ("text", "A tool result must be a list of text and image parts, not a string."),
    ([42], "Part 1 of the tool result must be an object with a type, not a number."),
    ([{"type": "text", "text": "ok"}, {"type": "video"}], "Part 2 of the tool result has type 'video'; use \"text\" or \"image\"."),
    ([{"type": "text"}], "Part 1 of the tool result (text) needs `text` as a string, not null."),
    ([{"type": "image", "mimeType": "text/plain", "data": PNG}], "Part 1 of the tool result (image) needs `mimeType` like \"image/png\", not 'text/plain'."),
    ([{"type": "image", "data": PNG}], "needs `mimeType` like \"image/png\", not None."),
    ([{"type": "image", "mimeType": "image/png", "data": b"raw"}], "(image) needs `data` as a base64 string, not a bytes."),
    ([{"type": "image", "mimeType": "image/png", "data": "not base64!"}], "(image) has `data` that is not valid base64"),
    ([{"type": "image", "mimeType": "image/png", "data": ""}], "(image) has `data` that is not valid base64"),
])
def test_rich_output_refuses_a_bad_part_with_a_message_naming_it(parts, message):
    with pytest.raises(ToolError) as info:
        rich_output(parts)
    assert message in str(info.value)
