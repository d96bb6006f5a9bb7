"""Run history rules: append, cap, back-fill, restore, remove, fork."""

from __future__ import annotations

import math

import pytest

from llmspace.core.history import (
    MAX_RUNS,
    append_run,
    find_run,
    fork_thread,
    inspect_run,
    last_user_excerpt,
    list_runs,
    normalize_history,
    remove_run,
    restore_run,
    result_excerpt,
    run_summary,
    snapshot_of,
)
from llmspace.core.threadio import serialize_thread, thread_from_data
from llmspace.core.usage import make_usage
from llmspace.errors import UserFacingError


def _thread(text: str = "hello", answer: str = "hi there") -> dict:
    return {
        "title": "demo",
        "model": {"provider": "openai", "id": "gpt-4.1"},
        "context": {
            "systemPrompt": "Be brief.",
            "messages": [
                {"id": "u1", "role": "user", "content": [{"type": "text", "text": text}]},
                {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": answer}]},
            ],
        },
    }


def _with_runs(n: int) -> dict:
    data = _thread()
    data["runHistory"] = [{"thread": _thread(f"q{i}"), "timestamp": i} for i in range(n)]
    return data


def test_snapshot_holds_title_model_context_only_and_is_independent():
    t = thread_from_data(_with_runs(2))
    snap = snapshot_of(t)
    assert set(snap.model_fields_set) == {"title", "model", "context"}
    assert "runHistory" not in snap.model_dump(exclude_unset=True)
    snap.context.messages[0].content[0].text = "changed"
    assert t.messages[0].text() == "hello"


def test_append_records_usage_timestamp_and_id_without_nesting_history():
    t = thread_from_data(_with_runs(1))
    run = append_run(t, make_usage(10, 2), timestamp_ms=1234, run_id="r-new")
    assert t.runHistory[-1] is run
    dumped = run.model_dump(exclude_unset=True)
    assert dumped["id"] == "r-new" and dumped["timestamp"] == 1234
    assert dumped["usage"]["totalTokens"] == 12
    assert set(dumped["thread"]) == {"title", "model", "context"}


def test_append_beyond_the_cap_drops_the_oldest():
    t = thread_from_data(_thread())
    for i in range(MAX_RUNS + 3):
        append_run(t, None, timestamp_ms=i, run_id=f"r{i}")
    assert len(t.runHistory) == MAX_RUNS
    assert [r.id for r in t.runHistory][:2] == ["r3", "r4"]
    assert "usage" not in t.runHistory[0].model_fields_set


def test_append_prunes_evaluations_whose_runs_fell_off():
    t = thread_from_data(_thread())
    append_run(t, None, timestamp_ms=0, run_id="old")
    append_run(t, None, timestamp_ms=1, run_id="keep")
    t.evaluations = []
    from llmspace.core.model import Evaluation

    t.evaluations = [Evaluation(id="e", leftRunId="old", rightRunId="keep", verdict="tie")]
    for i in range(MAX_RUNS - 1):
        append_run(t, None, timestamp_ms=10 + i)
    assert t.evaluations == []


def test_load_normalisation_backfills_ids_and_caps_at_twenty():
    t = thread_from_data(_with_runs(22))
    normalize_history(t)
    ids = [r.id for r in t.runHistory]
    assert len(ids) == MAX_RUNS
    assert ids[0] == "run-2-2" and ids[-1] == "run-21-21"


def test_load_normalisation_drops_non_finite_timestamps_and_keeps_the_last_duplicate():
    data = _thread()
    data["runHistory"] = [
        {"id": "dup", "thread": _thread("first"), "timestamp": 1},
        {"thread": _thread(), "timestamp": math.inf},
        {"id": "other", "thread": _thread(), "timestamp": 2},
        {"id": "dup", "thread": _thread("last"), "timestamp": 3},
    ]
    t = thread_from_data(data)
    normalize_history(t)
    assert [r.id for r in t.runHistory] == ["other", "dup"]
    assert t.runHistory[-1].thread.context.messages[0].text() == "last"


def test_load_normalisation_drops_invalid_usage():
    data = _thread()
    data["runHistory"] = [{"id": "x", "thread": _thread(), "timestamp": 1, "usage": {"input": math.inf}}]
    t = thread_from_data(data)
    normalize_history(t)
    assert "usage" not in t.runHistory[0].model_fields_set


def test_restore_replaces_the_working_thread_and_keeps_history():
    t = thread_from_data(_thread("before"))
    append_run(t, None, timestamp_ms=1, run_id="r1")
    t.messages[0].content[0].text = "edited"
    t.model = None
    restore_run(t, "r1")
    assert t.messages[0].text() == "before"
    assert t.model.id == "gpt-4.1"
    assert [r.id for r in t.runHistory] == ["r1"]
    t.messages[0].content[0].text = "again"
    assert find_run(t, "r1").thread.context.messages[0].text() == "before"


def test_restore_of_a_snapshot_without_model_clears_the_model():
    data = _thread()
    snap = _thread()
    del snap["model"]
    data["runHistory"] = [{"id": "nomodel", "thread": snap, "timestamp": 1}]
    t = thread_from_data(data)
    restore_run(t, "nomodel")
    assert t.model is None
    assert "model" not in t.model_dump(exclude_unset=True, include={"model"})


def test_remove_run_also_removes_its_evaluations():
    from llmspace.core.model import Evaluation

    t = thread_from_data(_thread())
    for rid in ("a", "b", "c"):
        append_run(t, None, timestamp_ms=1, run_id=rid)
    t.evaluations = [
        Evaluation(id="e1", leftRunId="a", rightRunId="b", verdict="tie"),
        Evaluation(id="e2", leftRunId="b", rightRunId="c", verdict="pass"),
    ]
    assert remove_run(t, "a") == 1
    assert [e.id for e in t.evaluations] == ["e2"]
    with pytest.raises(UserFacingError, match="No run 'zzz'"):
        remove_run(t, "zzz")


def test_fork_keeps_messages_up_to_and_including_the_chosen_one():
    t = thread_from_data(_thread())
    append_run(t, None, timestamp_ms=1, run_id="r1")
    new = fork_thread(t, "r1", "u1")
    assert [m.id for m in new.messages] == ["u1"]
    assert new.runHistory is None
    with pytest.raises(UserFacingError, match="no message 'nope'"):
        fork_thread(t, "r1", "nope")


def test_fork_writes_a_new_thread_file_beside_the_original(app):
    ws = app.workspace
    rel = ws.create_thread("", "demo", thread_from_data(_thread()))
    t = ws.open(rel)
    append_run(t, None, timestamp_ms=1, run_id="r1")
    ws.save(rel, t)
    new_rel = ws.fork_run(rel, "r1", "a1")
    assert new_rel == "demo-fork.json"
    forked = ws.open(new_rel)
    assert [m.id for m in forked.messages] == ["u1", "a1"]
    assert forked.title == "demo-fork"
    assert ws.fork_run(rel, "r1", "u1") == "demo-fork-1.json"


def test_summaries_describe_the_last_message():
    t = thread_from_data(_thread())
    assert run_summary(t) == "hi there"
    t.messages[-1].toolCalls = []
    from llmspace.core.model import ToolCall, ToolCallInput

    t.messages[-1].toolCalls = [ToolCall(id="c", input=ToolCallInput(name="read", arguments={"path": "/x"}))]
    assert run_summary(t) == "read()"
    assert result_excerpt(t) == 'hi there\nread({"path":"/x"})'
    assert last_user_excerpt(t) == "hello"
    empty = thread_from_data({"context": {"messages": []}})
    assert run_summary(empty) == "Empty thread"
    assert last_user_excerpt(empty) == "No user message"
    assert result_excerpt(empty) == "No assistant result"


def test_inspect_and_list_give_read_only_views_newest_first():
    t = thread_from_data(_thread())
    append_run(t, make_usage(1200, 30), timestamp_ms=1, run_id="r1")
    append_run(t, None, timestamp_ms=2, run_id="r2")
    rows = list_runs(t)
    assert [r.id for r in rows] == ["r2", "r1"]
    view = inspect_run(t, "r1")
    assert view.model == "openai/gpt-4.1" and view.messages_label == "2 messages"
    assert view.usage_label == "1.2K in / 30 out"


def test_snapshots_keep_the_key_order_of_the_source_file():
    import orjson

    from llmspace.core.threadio import parse_thread

    raw = orjson.dumps({"context": {"messages": [{"role": "user", "id": "u", "content": [{"text": "hi", "type": "text"}]}],
                                    "systemPrompt": "x"}, "title": "t"}, option=orjson.OPT_INDENT_2)
    t = parse_thread(raw)
    append_run(t, None, timestamp_ms=1, run_id="r")
    snap = orjson.loads(serialize_thread(t))["runHistory"][0]["thread"]
    assert list(snap) == ["context", "title"]
    assert list(snap["context"]) == ["messages", "systemPrompt"]
    assert list(snap["context"]["messages"][0]) == ["role", "id", "content"]
    back = parse_thread(serialize_thread(t))
    restore_run(back, "r")
    assert list(orjson.loads(serialize_thread(back))["context"]) == ["messages", "systemPrompt"]
