"""Trace projects on disk in the original app's layout (llmspace/traces/store.py, §14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.errors import UserFacingError
from llmspace.traces.store import TraceStore
from llmspace.traces.workbench import pseudo_path

from . import shapes

ORIGINAL_PROJECT = "proj_0123456789"
ORIGINAL_KEY = "weather-agent-" + "a" * 10


def write_original_project(root: Path) -> Path:
    """A manual Langfuse project as the original app writes it: project.json, trace.json and
    raw.json, no workbench yet (it is made on first open)."""
    project = root / ORIGINAL_PROJECT
    folder = project / "traces" / ORIGINAL_KEY
    folder.mkdir(parents=True)
    (project / "project.json").write_text(json.dumps({
        "id": ORIGINAL_PROJECT, "name": "Production", "createdAt": 1767225600000, "updatedAt": 1767225600000,
        "source": {"type": "langfuse", "mode": "manual", "langfuseProjectId": "lf-proj-1"}}, indent=2))
    source = {"type": "langfuse", "mode": "manual", "traceId": shapes.TRACE_ID, "fileName": "export.json",
              "projectId": "lf-proj-1"}
    (folder / "trace.json").write_text(json.dumps({
        "id": shapes.TRACE_ID, "key": ORIGINAL_KEY, "projectId": ORIGINAL_PROJECT, "title": "weather agent",
        "observationCount": 6, "importedAt": 1767225700000, "updatedAt": 1767225700000,
        "startedAt": shapes.iso(shapes.T0), "endedAt": shapes.iso(shapes.T0 + 5000), "latencyMs": 5000,
        "model": shapes.MODEL, "status": "ok", "source": source}, indent=2))
    (folder / "raw.json").write_text(json.dumps({"source": source, "importedAt": 1767225700000,
                                                 "rows": shapes.langfuse_rows()}, indent=2))
    return folder


@pytest.fixture
def store(tmp_path, home):  # `home` keeps removals out of the real user's trash (LLM_SPACE_NO_OS_TRASH)
    return TraceStore(tmp_path / "traces" / "projects", trash_dir=tmp_path / "trash")


def _export(tmp_path: Path, name: str, value) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value))
    return path


def test_a_project_written_by_the_original_lists_opens_and_keeps_workbench_edits(store, app):
    folder = write_original_project(app.trace_projects.root)
    store = app.trace_projects
    assert [p["id"] for p in store.projects()] == [ORIGINAL_PROJECT]
    assert [r["key"] for r in store.traces(ORIGINAL_PROJECT)] == [ORIGINAL_KEY]
    rel = pseudo_path(ORIGINAL_PROJECT, ORIGINAL_KEY)
    thread = app.workspace.open(rel)  # made from raw.json on first open
    assert (folder / "workbench.json").is_file()
    assert thread.title == "weather agent"
    assert thread.context.systemPrompt == shapes.SYSTEM
    thread.context.systemPrompt = "You are a careful weather agent."
    app.workspace.save(rel, thread)
    raw_before = (folder / "raw.json").read_bytes()
    again = app.workspace.open(rel)
    assert again.context.systemPrompt == "You are a careful weather agent."
    assert again.title == "weather agent"
    assert (folder / "raw.json").read_bytes() == raw_before


def test_what_we_write_has_every_field_the_original_reads(store, tmp_path):
    project = store.create_project("Production")
    assert set(project) == {"id", "name", "source", "createdAt", "updatedAt"}
    assert project["id"].startswith("proj_") and len(project["id"]) == 15
    assert project["source"] == {"type": "langfuse", "mode": "manual"}
    report = store.import_files(project["id"], [_export(tmp_path, "export.json", {"data": shapes.langfuse_rows()})])
    assert report.refused == []
    [record] = report.imported
    folder = store.trace_dir(project["id"], record["key"])
    trace = json.loads((folder / "trace.json").read_text())
    assert {"id", "key", "projectId", "title", "observationCount", "importedAt", "updatedAt", "startedAt", "endedAt",
            "latencyMs", "model", "status", "usage", "source"} <= set(trace)
    assert trace["id"] == shapes.TRACE_ID and trace["title"] == "weather agent" and trace["observationCount"] == 6
    assert trace["key"] == "weather-agent-" + __import__("hashlib").sha256(shapes.TRACE_ID.encode()).hexdigest()[:10]
    assert trace["startedAt"] == shapes.iso(shapes.T0) and trace["endedAt"] == shapes.iso(shapes.T0 + 5000)
    assert trace["latencyMs"] == 5000 and trace["model"] == shapes.MODEL and trace["status"] == "ok"
    assert trace["usage"]["input"] == 170 and trace["usage"]["totalTokens"] == 205
    assert trace["source"] == {"type": "langfuse", "mode": "manual", "traceId": shapes.TRACE_ID, "fileName": "export.json",
                               "projectId": "lf-proj-1"}
    raw = json.loads((folder / "raw.json").read_text())
    assert set(raw) == {"source", "importedAt", "rows"} and raw["rows"] == shapes.langfuse_rows()
    workbench = json.loads((folder / "workbench.json").read_text())
    assert workbench["title"] == "weather agent" and len(workbench["runHistory"]) == 1
    assert store._read_project(project["id"])["source"]["langfuseProjectId"] == "lf-proj-1"


def test_importing_a_trace_again_makes_a_second_folder_with_dash_2(store, tmp_path):
    project = store.create_project("p")
    export = _export(tmp_path, "export.json", shapes.langfuse_rows())
    first = store.import_files(project["id"], [export]).imported[0]["key"]
    second = store.import_files(project["id"], [export]).imported[0]["key"]
    assert second == f"{first}-2"


def test_one_langfuse_project_per_local_project_and_a_refused_batch_writes_nothing(store, tmp_path):
    project = store.create_project("p")
    store.import_files(project["id"], [_export(tmp_path, "a.json", shapes.langfuse_rows())])
    other = _export(tmp_path, "b.json", shapes.langfuse_rows(trace_id="t2", project_id="lf-other"))
    with pytest.raises(UserFacingError, match='linked to Langfuse project "lf-proj-1", but the files hold "lf-other"'):
        store.import_files(project["id"], [other])
    assert len(store.traces(project["id"])) == 1
    mixed = _export(tmp_path, "c.json", shapes.langfuse_rows(trace_id="t3", project_id="x") + shapes.langfuse_rows(trace_id="t4", project_id="y"))
    with pytest.raises(UserFacingError, match="hold 2 Langfuse project ids"):
        store.import_files(store.create_project("q")["id"], [mixed])


def test_several_files_at_once_each_refused_file_named_with_its_reason_and_the_others_imported(store, tmp_path):
    project = store.create_project("p")
    good = _export(tmp_path, "good.json", shapes.langfuse_rows())
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    otlp = _export(tmp_path, "otlp.json", shapes.otlp_document(shapes.otlp_spans()))
    report = store.import_files(project["id"], [good, bad, otlp])
    assert len(report.imported) == 1
    assert report.refused[0][0] == "notes.txt" and "malformed JSON" in report.refused[0][1]
    assert report.refused[1][0] == "otlp.json" and "holds OpenTelemetry traces" in report.refused[1][1]


def test_an_empty_project_takes_the_source_type_of_the_first_file(store, tmp_path):
    project = store.create_project("otel")
    report = store.import_files(project["id"], [_export(tmp_path, "o.json", shapes.otlp_document(shapes.otlp_spans()))])
    assert len(report.imported) == 1
    assert store._read_project(project["id"])["source"] == {"type": "otlp", "mode": "manual"}
    record = report.imported[0]
    assert record["source"]["type"] == "otlp" and record["title"] == "invoke_agent Weather agent"
    assert record["usage"]["input"] == 170 and record["model"] == shapes.MODEL


def test_removing_a_trace_and_a_project_moves_them_to_the_trash(store, tmp_path):
    project = store.create_project("p")
    key = store.import_files(project["id"], [_export(tmp_path, "a.json", shapes.langfuse_rows())]).imported[0]["key"]
    store.remove_trace(project["id"], key)
    assert store.traces(project["id"]) == []
    store.remove_project(project["id"])
    assert store.projects() == []
    assert len(list((tmp_path / "trash").iterdir())) == 2


@pytest.mark.parametrize("bad", ["..", "a/b", "a\\b", ""])
def test_path_segments_with_slashes_or_dot_dot_are_refused(store, bad):
    with pytest.raises(UserFacingError):
        store.trace_dir("proj_x", bad)


def test_a_codex_model_in_a_root_rows_metadata_is_the_traces_and_the_workbenchs_model_as_the_original_maps_it(store, tmp_path):
    rows = shapes.langfuse_rows()
    rows[0]["metadata"] = json.dumps({"codex": {"model": "gpt-5-codex"}})  # the AGENT row: the root
    project = store.create_project("codex")
    [record] = store.import_files(project["id"], [_export(tmp_path, "codex.json", rows)]).imported
    assert record["model"] == "gpt-5-codex"
    workbench = json.loads(store.workbench_path(project["id"], record["key"]).read_text())
    assert workbench["model"] == {"provider": "openai-codex", "id": "gpt-5-codex"}


def test_a_trace_with_an_error_row_has_status_error_and_a_status_message_at_default_level_alone_keeps_it_ok(store, tmp_path):
    project = store.create_project("p")
    informational = shapes.langfuse_rows()
    informational[1]["statusMessage"] = "finish_reason=tool_calls"  # DEFAULT level
    failed = shapes.langfuse_rows(trace_id="t-failed")
    failed[2].update(level="ERROR", statusMessage="weather service timed out", output=None)
    report = store.import_files(project["id"], [_export(tmp_path, "ok.json", informational),
                                                _export(tmp_path, "failed.json", failed)])
    assert {r["id"]: r["status"] for r in report.imported} == {shapes.TRACE_ID: "ok", "t-failed": "error"}
