"""Thread files: byte-identical round trips, blobs, validation errors with JSON paths."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from llmspace.core.synthetic import big_thread_data
from llmspace.core.threadio import BLOB_PREFIX, parse_thread, serialize_thread, thread_from_data
from llmspace.core.workspace import Workspace
from llmspace.errors import MalformedJsonError, ValidationFailed
from llmspace.jsonio import dumps_pretty

SPEC_EXAMPLE = Path(__file__).parents[1] / "fixtures" / "spec-example.json"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "w").mkdir()
    return Workspace(tmp_path / "w", use_os_trash=False)


def test_spec_example_loads_and_saves_to_identical_bytes(ws: Workspace):
    target = ws.root / "core-concepts.json"
    shutil.copyfile(SPEC_EXAMPLE, target)
    original = target.read_bytes()
    thread = ws.open("core-concepts.json")
    assert thread.title == "core-concepts" and thread.messages[1].toolCalls[0].output.text() == "Order A123 has shipped."
    ws.save("core-concepts.json", thread)
    assert target.read_bytes() == original
    # a second workspace (a fresh start) opening and saving it changes nothing either
    again = Workspace(ws.root, use_os_trash=False)
    again.save("core-concepts.json", again.open("core-concepts.json"))
    assert target.read_bytes() == original


def test_spec_example_edited_then_reverted_is_written_in_the_app_format(ws: Workspace):
    shutil.copyfile(SPEC_EXAMPLE, ws.root / "core-concepts.json")
    thread = ws.open("core-concepts.json")
    thread.context.systemPrompt = "changed"
    assert ws.save("core-concepts.json", thread)
    raw = (ws.root / "core-concepts.json").read_bytes()
    assert orjson.loads(raw)["context"]["systemPrompt"] == "changed"
    assert raw == dumps_pretty(orjson.loads(raw)) and not raw.endswith(b"\n")


def test_a_10_mb_thread_with_images_round_trips_byte_for_byte_with_blobs(ws: Workspace):
    data = big_thread_data()
    images = {p["data"] for m in data["context"]["messages"] for p in m["content"] if p["type"] == "image_data"}
    repeat = {"type": "image_data", "mimeType": "image/png", "data": sorted(images)[0]}
    data["context"]["messages"].append({"id": "again", "role": "user", "content": [repeat]})
    raw = serialize_thread(thread_from_data(orjson.loads(orjson.dumps(data))))
    assert len(raw) > 9_000_000
    stored = orjson.loads(raw)
    assert set(stored["blobs"].values()) == images  # each image stored once
    refs = [p["data"] for m in stored["context"]["messages"] for p in m["content"] if p["type"] == "image_data"]
    assert refs and all(r.startswith(BLOB_PREFIX) for r in refs) and len(refs) > len(images)
    (ws.root / "big.json").write_bytes(raw)
    thread = ws.open("big.json")
    restored = {p.data for m in thread.messages for p in m.content if p.type == "image_data"}
    assert restored == images  # blobs restored inline on read
    assert ws.save("big.json", thread) is False
    assert serialize_thread(thread) == raw
    thread.title = "other"
    ws.save("big.json", thread)
    assert (ws.root / "big.json").read_bytes() == raw


def test_unknown_keys_and_key_order_survive_at_every_level():
    raw = dumps_pretty({
        "zzz": 1, "context": {"messages": [{"content": [{"text": "hi", "type": "text", "extra": [1]}],
                                            "role": "user", "id": "m"}], "custom": {"b": 1, "a": 2}},
        "title": "t",
    })
    assert serialize_thread(parse_thread(raw)) == raw


def test_small_images_stay_inline_and_no_blobs_table_is_added():
    raw = dumps_pretty({"context": {"messages": [{"id": "m", "role": "user", "content": [
        {"type": "image_data", "mimeType": "image/png", "data": "A" * 1023}]}]}})
    assert serialize_thread(parse_thread(raw)) == raw and b"blobs" not in raw


def test_images_in_run_history_are_packed_too():
    img = "B" * 5000
    msg = {"id": "m", "role": "user", "content": [{"type": "image_data", "mimeType": "image/png", "data": img}]}
    data = {"context": {"messages": [msg]}, "runHistory": [{"timestamp": 1, "thread": {"context": {"messages": [msg]}}}]}
    raw = serialize_thread(thread_from_data(orjson.loads(orjson.dumps(data))))
    assert raw.count(img.encode()) == 1
    back = parse_thread(raw)
    assert back.runHistory[0].thread.context.messages[0].content[0].data == img


@pytest.mark.parametrize("data, path", [
    ({"context": {"messages": [{"id": "a", "role": "user", "content": [{"type": "text", "text": 5}]}]}},
     "context.messages[0].content[0].text"),
    ({"model": {"provider": "x", "id": "y", "params": {"temperature": 9}}}, "model.params.temperature"),
    ({"context": {"tools": [{"type": "builtin"}]}}, "context.tools[0].name"),
    ({"evaluations": [{"id": "e", "leftRunId": "a", "rightRunId": "b", "verdict": "meh"}]}, "evaluations[0].verdict"),
    ({"context": {"messages": [{"id": "a", "role": "assistant", "content": [],
                                "usage": {"input": -1}}]}}, "context.messages[0].usage.input"),
])
def test_validation_errors_name_the_json_path(data, path):
    with pytest.raises(ValidationFailed) as info:
        thread_from_data(data, "t.json")
    assert path in [p for p, _ in info.value.problems]
    assert path in str(info.value) and "t.json" in str(info.value)


def test_malformed_thread_files_name_line_and_column(ws: Workspace):
    (ws.root / "bad.json").write_bytes(b'{\n  "title": "x",\n  oops\n}')
    with pytest.raises(MalformedJsonError) as info:
        ws.open("bad.json")
    assert (info.value.line, info.value.column) == (3, 3)
    assert (ws.root / "bad.json").read_bytes() == b'{\n  "title": "x",\n  oops\n}'


def test_a_variable_of_an_unknown_kind_loads_and_round_trips_unchanged() -> None:
    from llmspace.core.templating.render import render_thread
    from llmspace.core.threadio import parse_thread, serialize_thread

    raw = (b'{\n  "context": {\n    "systemPrompt": "Hi {{future}}",\n    "variables": {\n'
           b'      "future": {\n        "type": "vectorStore",\n        "value": "x",\n        "k": 3\n      }\n'
           b'    }\n  }\n}')
    thread = parse_thread(raw)
    assert serialize_thread(thread) == raw
    assert render_thread(thread).system_prompt == "Hi {{future}}"


def test_a_wrong_type_in_a_number_field_names_the_field_once_without_union_members():
    data = {"runHistory": [{"id": "r", "timestamp": "yesterday", "thread": {"context": {"messages": []}}}]}
    with pytest.raises(ValidationFailed) as info:
        thread_from_data(data, "t.json")
    assert [p for p, _ in info.value.problems] == ["runHistory[0].timestamp"]
    assert ".int" not in str(info.value) and ".float" not in str(info.value)


def test_every_thread_the_workspace_writes_goes_through_the_one_thread_writer(ws: Workspace, monkeypatch):
    """`threadio.write_thread_file` is the one writer of thread files: creating, saving,
    renaming (retitle), duplicating and forking all write through it, and an unchanged save
    writes nothing."""
    from llmspace.core import threadio
    from llmspace.core.history import append_run

    written: list[str] = []
    real = threadio.write_bytes_atomic

    def recording(path: Path, data: bytes, **kwargs: object) -> None:
        written.append(Path(path).name)
        real(path, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(threadio, "write_bytes_atomic", recording)
    rel = ws.create_thread("", "demo", thread_from_data({"title": "x", "context": {"messages": [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}]}]}}))
    thread = ws.open(rel)
    assert ws.save(rel, thread) is False
    append_run(thread, None, timestamp_ms=1, run_id="r1")
    assert ws.save(rel, thread) is True
    renamed = ws.rename(rel, "other")
    ws.duplicate(renamed)
    ws.fork_run(renamed, "r1", "u1")
    assert written == ["demo.json", "demo.json", "other.json", "other_copy.json", "other-fork.json"]
