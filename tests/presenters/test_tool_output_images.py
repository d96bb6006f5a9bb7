"""Tool outputs with images in the editor: "Call this tool" on a plugin tool keeps the image
the tool returned, typing the result text keeps it too, and a call answered by an image
alone counts as answered."""

from __future__ import annotations

import base64

import orjson

from llmspace.jsonio import write_bytes_atomic
from llmspace.presenters.editor import EditorPresenter
from llmspace.presenters.run import RunPresenter
from llmspace.registry import plugin_source
from llmspace.tools.base import rich_output
from llmspace.tools.plugin_tools import plugin_tool_entry
from tests.presenters.test_run import QueuePump

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x01" * 2000).decode()
IMAGE = {"type": "image", "mimeType": "image/png", "data": PNG}


def _thread(app, output: dict | None = None) -> RunPresenter:
    tool = plugin_tool_entry("kit", "snap", "snap", "Take a snapshot.", {"type": "object", "properties": {}}, None)
    call: dict = {"id": "c1", "input": {"name": "snap", "arguments": {}}}
    if output is not None:
        call["output"] = output
    write_bytes_atomic(app.workspace.root / "snap.json", orjson.dumps({"title": "snap", "context": {
        "tools": [tool.model_dump(exclude_unset=True, by_alias=True)],
        "messages": [{"id": "u", "role": "user", "content": [{"type": "text", "text": "go"}]},
                     {"id": "a", "role": "assistant", "content": [{"type": "text", "text": ""}], "toolCalls": [call]}]}}))
    return RunPresenter(EditorPresenter(app.workspace, "snap.json"), app)


def _output(run: RunPresenter):
    return run.editor.thread.messages[-1].toolCalls[0].output


def test_call_this_tool_on_a_plugin_tool_keeps_its_text_and_image(app):
    app.tools.register_executor("plugin:kit:tool:snap", lambda *a: rich_output([{"type": "text", "text": "Snap."}, IMAGE]),
                                source=plugin_source("kit"))
    run = _thread(app)
    assert run.callable_calls("a") == ["c1"]
    pump = QueuePump()
    run.call_tool("c1", pump.post)
    pump.drain_until(lambda: "c1" not in run.tool_calls)
    out = _output(run)
    assert run.tool_status["c1"] == "done" and out.text() == "Snap." and out.images()[0].data == PNG
    assert out.display_text() == "Snap.\n[image image/png, 2 KB]"
    assert run.callable_calls("a") == []  # answered now
    run.editor.undo()
    assert _output(run) is None


def test_typing_the_result_text_keeps_the_images_the_tool_returned(app):
    run = _thread(app, {"content": [{"type": "text", "text": "old"}, IMAGE], "isError": False})
    run.editor.message_intents.set_tool_result(1, "c1", "new caption", True)
    out = _output(run)
    assert out.text() == "new caption" and out.isError is True and [i.data for i in out.images()] == [PNG]


def test_a_call_answered_by_an_image_alone_is_not_pending(app):
    run = _thread(app, {"content": [IMAGE], "isError": False})
    assert run.callable_calls("a") == []
    assert run.editor.message_intents.pending_function_calls() == []
