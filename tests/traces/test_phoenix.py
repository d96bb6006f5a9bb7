"""Connected Phoenix projects against a real Phoenix (tests/traces/conftest.py): traces sent with
the OpenTelemetry SDK are listed, searched and synced, and the thread is the one the same trace
gives from a file."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from llmspace.core.threadio import parse_thread
from llmspace.jsonio import read_file_bytes
from llmspace.traces.connect import connect_phoenix, search, sync
from llmspace.traces.langfuse_api import SearchFilters, TooLong
from llmspace.traces.phoenix_api import PhoenixClient
from llmspace.traces.remote import RemoteError

from . import shapes

HERE = Path(__file__).resolve().parent


def _send(phoenix: Any, project: str, trace_id: str, spans: list[dict[str, Any]]) -> None:
    """Send OTLP-shaped spans (shapes.otlp_spans) through the OpenTelemetry SDK in Phoenix's venv."""
    spec = {"endpoint": f"{phoenix.url}/v1/traces", "project": project, "trace_id": trace_id, "spans": [
        {"span_id": s["spanId"], "parent": s.get("parentSpanId"), "name": s["name"],
         "start_ns": int(s["startTimeUnixNano"]), "end_ns": int(s["endTimeUnixNano"]),
         "attributes": {a["key"]: next(iter(a["value"].values())) for a in s["attributes"]},
         "error": (s.get("status") or {}).get("message")} for s in spans]}
    for entry in spec["spans"]:  # intValue is text in OTLP JSON; the SDK takes a number
        entry["attributes"] = {k: int(v) if k.startswith("gen_ai.usage.") else v for k, v in entry["attributes"].items()}
    subprocess.run([str(phoenix.python), str(HERE / "phoenix_send.py")], input=json.dumps(spec), text=True,
                   check=True, timeout=180)


def _wait_for_trace(store, project, trace_id: str, filters: SearchFilters) -> list[dict[str, Any]]:
    import time

    deadline = time.monotonic() + 120
    while True:
        found = search(store, project, filters)
        if any(t["id"] == trace_id for t in found) or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def _thread(store, project_id: str, key: str):
    path = store.workbench_path(project_id, key)
    return parse_thread(read_file_bytes(path), str(path))


@pytest.fixture(scope="module")
def sent(phoenix) -> dict[str, str]:
    """One agent trace (two tool calls under an AGENT span) in a Phoenix project of its own."""
    project = f"weather-{uuid.uuid4().hex[:8]}"
    trace_id = uuid.uuid4().hex
    _send(phoenix, project, trace_id, shapes.otlp_spans(trace_id))
    _wait_for_project(phoenix, project)
    return {"project": project, "trace_id": trace_id}


def _wait_for_project(phoenix: Any, project: str) -> None:
    """Phoenix makes a project when it ingests the project's first span, which is queued after the
    OTLP request returns: on a loaded machine the project can be missing for a while."""
    import time

    deadline = time.monotonic() + 120
    client = PhoenixClient(phoenix.url, project)
    try:
        while True:
            try:
                client.check()
                return
            except RemoteError:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.5)
    finally:
        client.close()


def test_a_trace_sent_to_phoenix_is_listed_searched_and_synced_into_the_same_thread_as_from_a_file(
        app, phoenix, sent, tmp_path: Path) -> None:
    store = app.trace_projects
    project = connect_phoenix(store, "phoenix prod", phoenix.url, sent["project"])
    assert project["source"]["mode"] == "connected" and project["source"]["phoenixProject"] == sent["project"]
    window = SearchFilters(start="2025-12-31T00:00:00Z", end="2026-01-02T00:00:00Z", limit=10)
    listed = _wait_for_trace(store, project, sent["trace_id"], window)
    assert [t["id"] for t in listed] == [sent["trace_id"]]
    assert listed[0]["name"] == "invoke_agent Weather agent"
    assert search(store, project, SearchFilters(start=window.start, end=window.end, text="weather agent"))[0]["id"] \
        == sent["trace_id"]
    assert search(store, project, SearchFilters(start=window.start, end=window.end, text="no such words")) == []
    tool_traces = SearchFilters(start=window.start, end=window.end,
                                expression="any(span.span_kind == 'TOOL' for span in spans)")
    assert [t["id"] for t in search(store, project, tool_traces)] == [sent["trace_id"]]

    report = sync(store, project, [sent["trace_id"]])
    assert report.skipped == []
    (record, state), = report.synced
    assert state == "built" and record["observationCount"] == 6

    manual = store.create_project("from a file", "otlp")
    export = tmp_path / "trace.json"
    export.write_text(json.dumps(shapes.otlp_document(shapes.otlp_spans(sent["trace_id"]))))
    imported = store.import_files(manual["id"], [export]).imported[0]
    expected = shapes.shape_of(_thread(store, manual["id"], imported["key"]))
    assert shapes.shape_of(_thread(store, project["id"], record["key"])) == expected
    assert [len(m["calls"]) for m in expected["messages"] if m["role"] == "assistant"] == [2, 0]
    assert store.read_project(project["id"])["source"]["lastSyncStatus"] == "success"


def test_an_unknown_phoenix_project_is_named_with_the_ones_there_are_and_nothing_is_made(app, phoenix, sent) -> None:
    with pytest.raises(RemoteError) as err:
        connect_phoenix(app.trace_projects, "x", phoenix.url, "no-such-project")
    assert err.value.what == "project" and sent["project"] in err.value.message
    assert app.trace_projects.projects() == []


def test_spans_are_read_page_by_page_and_a_trace_longer_than_five_pages_is_refused_whole(phoenix, sent) -> None:
    client = PhoenixClient(phoenix.url, sent["project"], page_size=2)  # 6 spans: 3 pages
    try:
        spans = client.spans(sent["trace_id"])
        assert len({s["context"]["span_id"] for s in spans}) == 6
        assert [s["name"] for s in spans][:2] == ["invoke_agent Weather agent", "chat gpt-4o-mini"]
        client.page_size = 1  # 6 pages
        with pytest.raises(TooLong):
            client.spans(sent["trace_id"])
    finally:
        client.close()
