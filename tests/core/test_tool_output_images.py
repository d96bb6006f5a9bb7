"""Tool outputs with image parts: the model's accessors, labels, blob packing in the thread
and in its run history, and byte-identical round trips."""

from __future__ import annotations

import base64

import orjson
import pytest

from llmspace.core.model import TextContent, ToolCallOutput, ToolImageContent
from llmspace.core.threadio import BLOB_PREFIX, parse_thread, serialize_thread, thread_from_data
from llmspace.errors import ValidationFailed
from llmspace.jsonio import dumps_pretty

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40).decode()  # 13,664 chars
SMALL = base64.b64encode(b"tiny").decode()


def _thread_data(output: dict, history: bool = False) -> dict:
    msgs = [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "draw"}]},
            {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": ""}],
             "toolCalls": [{"id": "call_1", "input": {"name": "diagram", "arguments": {}}, "output": output}]}]
    data: dict = {"title": "t", "context": {"messages": msgs}}
    if history:
        data["runHistory"] = [{"id": "r1", "timestamp": 1, "thread": {"title": "t", "context": {"messages": msgs}}}]
    return orjson.loads(orjson.dumps(data))


def _image_output(data: str = PNG) -> dict:
    return {"content": [{"type": "text", "text": "Rendered."}, {"type": "image", "mimeType": "image/png", "data": data}],
            "isError": False}


def test_an_output_keeps_text_and_image_parts_in_order_and_text_is_only_the_text():
    out = ToolCallOutput.model_validate(_image_output())
    assert [type(c) for c in out.content] == [TextContent, ToolImageContent]
    assert out.text() == "Rendered."
    assert [c.text for c in out.text_parts()] == ["Rendered."]
    assert [(i.mimeType, i.data) for i in out.images()] == [("image/png", PNG)]


def test_text_views_show_an_image_as_its_type_and_size():
    out = ToolCallOutput.model_validate(_image_output())
    assert out.display_text() == "Rendered.\n[image image/png, 10 KB]"
    assert ToolImageContent(mimeType="image/gif", data=SMALL).label() == "[image image/gif, 4 bytes]"


def test_changing_the_texts_leaves_the_images_alone():
    out = ToolCallOutput.model_validate(_image_output())
    changed = out.with_texts(str.upper)
    assert changed.text() == "RENDERED." and changed.images()[0] is out.images()[0]
    assert out.with_texts(lambda t: t) is out


def test_a_large_tool_image_is_packed_into_blobs_and_restored_on_read():
    raw = serialize_thread(thread_from_data(_thread_data(_image_output())))
    stored = orjson.loads(raw)
    part = stored["context"]["messages"][1]["toolCalls"][0]["output"]["content"][1]
    assert part["data"].startswith(BLOB_PREFIX) and list(stored["blobs"].values()) == [PNG]
    back = parse_thread(raw)
    assert back.messages[1].toolCalls[0].output.images()[0].data == PNG
    assert serialize_thread(back) == raw


def test_tool_images_in_run_history_share_one_blob_with_the_thread():
    raw = serialize_thread(thread_from_data(_thread_data(_image_output(), history=True)))
    assert raw.count(PNG.encode()) == 1
    back = parse_thread(raw)
    snap_call = back.runHistory[0].thread.context.messages[1].toolCalls[0]
    assert snap_call.output.images()[0].data == PNG


def test_a_tool_image_and_a_message_image_with_the_same_data_are_stored_once():
    data = _thread_data(_image_output())
    data["context"]["messages"][0]["content"].append({"type": "image_data", "mimeType": "image/png", "data": PNG})
    stored = orjson.loads(serialize_thread(thread_from_data(data)))
    assert list(stored["blobs"].values()) == [PNG]


def test_small_tool_images_stay_inline_and_the_file_round_trips_byte_for_byte():
    raw = dumps_pretty(_thread_data({"content": [{"data": SMALL, "type": "image", "mimeType": "image/png"}]}))
    assert serialize_thread(parse_thread(raw)) == raw and b"blobs" not in raw


def test_a_tool_output_part_without_a_type_still_loads_as_text_and_round_trips():
    raw = dumps_pretty(_thread_data({"content": [{"text": "legacy"}]}))
    thread = parse_thread(raw)
    assert thread.messages[1].toolCalls[0].output.text() == "legacy"
    assert serialize_thread(thread) == raw


@pytest.mark.parametrize("part, path", [
    ({"type": "image", "mimeType": "text/plain", "data": SMALL}, "output.content[0].mimeType"),
    ({"type": "image", "mimeType": "image/png"}, "output.content[0].data"),
    ({"type": "audio", "data": SMALL}, "output.content[0]"),
])
def test_a_bad_tool_output_part_is_reported_with_its_json_path(part, path):
    with pytest.raises(ValidationFailed) as info:
        thread_from_data(_thread_data({"content": [part]}), "t.json")
    assert f"context.messages[1].toolCalls[0].{path}" in [p for p, _ in info.value.problems]
