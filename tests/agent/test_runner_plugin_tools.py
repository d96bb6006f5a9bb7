"""A run whose model calls a plugin tool: the executor registered under the entry's
`toolId` runs, its text and image result goes back to the model in each API's shape, and
the saved thread keeps the image once in `blobs` (working messages and run history alike).
A plugin tool without an executor answers the model with the "unavailable" error."""

from __future__ import annotations

import base64

import orjson
import pytest

from llmspace.agent.run_types import RunOptions
from llmspace.core.threadio import BLOB_PREFIX
from llmspace.registry import plugin_source
from llmspace.tools.base import rich_output
from llmspace.tools.plugin_tools import plugin_tool_entry
from tests.support.llm_server import ToolCallSpec, Turn, configure_provider

from .conftest import make_thread, save_thread, user

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8).decode()  # > 1,024 characters


def _diagram_tool() -> dict:
    tool = plugin_tool_entry("kit", "diagram", "draw_diagram", "Draw a diagram.",
                             {"type": "object", "properties": {"topic": {"type": "string"}}}, None)
    return tool.model_dump(exclude_unset=True, by_alias=True)


@pytest.mark.parametrize("api, image_in_request", [
    ("anthropic-messages", {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}),
    ("openai-responses", {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"}),
    ("openai-completions", {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}),
])
def test_a_plugin_tools_image_result_reaches_the_model_and_is_saved_in_blobs(app, home, srv, api, image_in_request):
    configure_provider(home, srv, api=api)
    seen: list[dict] = []

    def execute(tool, arguments, ctx, cancel, timeout):
        seen.append(arguments)
        return rich_output([{"type": "text", "text": "Here it is."}, {"type": "image", "mimeType": "image/png", "data": PNG}])

    app.tools.register_executor("plugin:kit:tool:diagram", execute, source=plugin_source("kit"))
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_d", name="draw_diagram", arguments={"topic": "llamas"})]),
             Turn(text="A fine diagram."))
    thread = make_thread([user("Draw llamas")], context={"tools": [_diagram_tool()]})

    result = app.runner.run(thread, RunOptions(react=True))

    assert result.status == "completed", result.error
    assert seen == [{"topic": "llamas"}]
    output = thread.messages[1].toolCalls[0].output
    assert output.text() == "Here it is." and output.images()[0].data == PNG
    assert image_in_request in _parts(srv.requests[-1].body_json)
    path = save_thread(app, "llamas.json", thread)
    stored = orjson.loads(path.read_bytes())
    assert list(stored["blobs"].values()) == [PNG] and path.read_bytes().count(PNG.encode()) == 1
    snapshot_part = stored["runHistory"][0]["thread"]["context"]["messages"][1]["toolCalls"][0]["output"]["content"][1]
    assert snapshot_part["data"].startswith(BLOB_PREFIX)
    again = app.workspace.open("llamas.json")
    assert again.runHistory[0].thread.context.messages[1].toolCalls[0].output.images()[0].data == PNG


def test_a_plugin_tool_without_an_executor_tells_the_model_it_is_unavailable(app, home, srv):
    configure_provider(home, srv, api="anthropic-messages")
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_d", name="draw_diagram", arguments={})]), Turn(text="Sorry."))
    thread = make_thread([user("Draw")], context={"tools": [_diagram_tool()]})

    result = app.runner.run(thread, RunOptions(react=True))

    assert result.status == "completed", result.error
    output = thread.messages[1].toolCalls[0].output
    assert output.isError is True
    assert output.text().startswith("draw_diagram is unavailable (")
    sent = [b for m in srv.requests[-1].body_json["messages"] for b in m["content"] if b.get("type") == "tool_result"]
    assert sent == [{"type": "tool_result", "tool_use_id": "call_d", "content": output.text(), "is_error": True}]


def _parts(body: dict) -> list[dict]:
    """Every content part anywhere in a request body (messages, input items, tool results)."""
    found: list[dict] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            found.append(value)
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(body)
    return found
