"""The Traces panel's presenter (llmspace/presenters/traces_panel.py), without a display: real
trace files (tests/traces/shapes.py) imported into a real store on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.core.workspace import Workspace
from llmspace.errors import UserFacingError
from llmspace.presenters.traces_panel import NO_PROJECTS, TracesPanelPresenter, parse_path
from llmspace.traces.store import TraceStore
from llmspace.traces.workbench import mount_traces
from tests.traces import shapes


@pytest.fixture
def panel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TracesPanelPresenter:
    monkeypatch.setenv("LLM_SPACE_NO_OS_TRASH", "1")  # the data root's .trash, not the user's
    store = TraceStore(tmp_path / "traces" / "projects", trash_dir=tmp_path / ".trash")
    ws = Workspace(tmp_path / "ws", trash_dir=tmp_path / ".trash")
    mount_traces(ws, store)
    return TracesPanelPresenter(store, ws)


def write(tmp_path: Path, name: str, data: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), "utf-8")
    return str(path)


def test_with_no_projects_the_panel_says_what_a_trace_file_is_and_where_to_get_one(panel):
    assert panel.refresh() == []
    text = panel.empty_text
    assert text == NO_PROJECTS
    for words in ("A trace file is", "Langfuse", "OpenTelemetry", "Phoenix", "New trace project", "Import"):
        assert words in text


def test_projects_show_their_badge_and_traces_their_start_time_model_observation_count_and_status(panel, tmp_path):
    lf = panel.new_project("Production")
    otlp = panel.new_project("Collector")
    ph = panel.new_project("Phoenix dev")
    panel.import_files(lf, [write(tmp_path, "export.json", shapes.langfuse_rows())])
    panel.import_files(otlp, [write(tmp_path, "otlp.json", shapes.otlp_document(shapes.otlp_spans()))])
    panel.import_files(ph, [write(tmp_path, "spans.json", shapes.phoenix_listing())])
    rows = {p.name: p for p in panel.refresh()}
    assert rows["Production"].badge == "Langfuse · manual"
    assert rows["Collector"].badge == "OpenTelemetry · manual"
    assert rows["Phoenix dev"].badge == "Phoenix · manual"
    assert panel.empty_text is None
    (trace,) = rows["Production"].traces
    assert trace.title == "weather agent" and trace.model == shapes.MODEL and trace.observations == 6
    assert trace.status == "ok" and len(trace.started) == len("2026-01-01 00:00")
    assert trace.detail == f"{trace.started} · {shapes.MODEL} · 6 obs"
    assert trace.path == f"trace/{lf}/{trace.key}/workbench.json" and parse_path(trace.path) == (lf, trace.key)


def test_an_import_names_each_refused_file_with_its_reason_and_imports_the_others(panel, tmp_path):
    project = panel.new_project("Production")
    good = write(tmp_path, "export.json", {"data": shapes.langfuse_rows()})
    bad = write(tmp_path, "notes.json", {"hello": "world"})
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", "utf-8")
    outcome = panel.import_files(project, [good, bad, str(broken)])
    assert [t.title for t in outcome.imported] == ["weather agent"]
    assert [name for name, _ in outcome.refused] == ["notes.json", "broken.json"]
    assert all(reason for _, reason in outcome.refused)
    assert outcome.message.startswith("Imported 1 trace(s). Skipped: notes.json (")
    assert "broken.json (" in outcome.message


def test_a_user_turn_that_would_read_a_local_file_is_warned_about_at_import(panel, tmp_path):
    rows = shapes.langfuse_rows()
    history = json.loads(rows[1]["input"])
    history[1]["content"] = "{{@include('~/.ssh/id_rsa')}}"
    rows[1]["input"] = json.dumps(history)
    project = panel.new_project("Production")
    outcome = panel.import_files(project, [write(tmp_path, "export.json", rows)])
    assert len(outcome.imported) == 1
    # imported user turns stay literal: the workbench itself reads nothing
    assert outcome.warnings == []


def test_renaming_a_trace_writes_its_record_its_workbench_and_its_run_snapshots(panel, tmp_path):
    project = panel.new_project("Production")
    (row,) = panel.import_files(project, [write(tmp_path, "export.json", shapes.langfuse_rows())]).imported
    panel.rename_trace(project, row.key, "  Paris and Rome  ")
    assert panel.project(project).traces[0].title == "Paris and Rome"
    folder = panel.store.trace_dir(project, row.key)
    workbench = json.loads((folder / "workbench.json").read_text("utf-8"))
    assert workbench["title"] == "Paris and Rome"
    assert [r["thread"]["title"] for r in workbench["runHistory"]] == ["Paris and Rome"]
    assert json.loads((folder / "trace.json").read_text("utf-8"))["title"] == "Paris and Rome"
    assert panel.source_of(row.path).title == "Paris and Rome"
    with pytest.raises(UserFacingError, match="cannot be empty"):
        panel.rename_trace(project, row.key, "   ")
    with pytest.raises(UserFacingError, match="control characters"):
        panel.rename_trace(project, row.key, "a\x07b")


def test_renaming_a_project_keeps_its_id_and_traces(panel, tmp_path):
    project = panel.new_project("Production")
    panel.import_files(project, [write(tmp_path, "export.json", shapes.langfuse_rows())])
    panel.rename_project(project, "Prod EU")
    (row,) = panel.projects
    assert (row.id, row.name, len(row.traces)) == (project, "Prod EU", 1)


def test_removing_a_trace_and_then_its_project_moves_them_to_the_trash(panel, tmp_path):
    project = panel.new_project("Production")
    (row,) = panel.import_files(project, [write(tmp_path, "export.json", shapes.langfuse_rows())]).imported
    assert "weather agent" in panel.remove_prompt(project, row.key)
    panel.remove(project, row.key)
    assert panel.project(project).traces == ()
    assert "0 trace(s)" in panel.remove_prompt(project)
    assert panel.remove(project) == "Moved trace project Production to the trash."
    assert panel.projects == [] and not panel.store.project_dir(project).exists()
    trashed = list((tmp_path / ".trash").rglob("*"))
    assert any(p.name == "trace.json" for p in trashed) and any(p.name == "project.json" for p in trashed)


def test_the_source_of_a_workbench_names_the_trace_id_and_links_a_connected_project_to_its_web_app(panel, tmp_path):
    project = panel.new_project("Production")
    (row,) = panel.import_files(project, [write(tmp_path, "export.json", shapes.langfuse_rows())]).imported
    source = panel.source_of(row.path)
    assert (source.badge, source.trace_id, source.url) == ("Langfuse trace", shapes.TRACE_ID, None)
    assert panel.source_of("chats/hello.json") is None
    # a connected project (as a sync writes it) knows where its traces live
    path = panel.store.project_dir(project) / "project.json"
    data = json.loads(path.read_text("utf-8"))
    data["source"].update({"mode": "connected", "baseUrl": "https://cloud.langfuse.com/", "langfuseProjectId": "lf-proj-1"})
    path.write_text(json.dumps(data), "utf-8")
    assert panel.source_of(row.path).url == f"https://cloud.langfuse.com/project/lf-proj-1/traces/{shapes.TRACE_ID}"


def test_copy_to_workspace_makes_a_normal_thread_named_after_the_trace(panel, tmp_path):
    project = panel.new_project("Production")
    (row,) = panel.import_files(project, [write(tmp_path, "export.json", shapes.langfuse_rows())]).imported
    rel, warning = panel.copy_to_workspace(project, row.key)
    assert rel == "weather agent.json" and warning is None
    thread = panel.ws.open(rel)
    assert thread.context.systemPrompt == shapes.SYSTEM
    assert not panel.ws.is_mounted(rel)


def test_files_go_to_the_selected_project_else_the_only_one(panel):
    assert panel.import_target(None) is None
    only = panel.new_project("One")
    assert panel.import_target(None) == only
    other = panel.new_project("Two")
    assert panel.import_target(None) is None and panel.import_target(other) == other


def test_copy_to_workspace_of_a_trace_whose_user_turn_would_read_a_local_file_gives_the_import_warning(panel, tmp_path):
    rows = [{"id": "g1", "traceId": "t-copy", "type": "GENERATION", "startTime": shapes.iso(shapes.T0),
             "input": [{"role": "user", "content": "read {{@include('/etc/hostname')}}"}], "output": "ok"}]
    project = panel.new_project("Production")
    (row,) = panel.import_files(project, [write(tmp_path, "export.json", rows)]).imported
    rel, warning = panel.copy_to_workspace(project, row.key)
    assert warning is not None and "/etc/hostname" in warning
    assert "literal" not in panel.ws.open(rel).messages[0].extras()  # a normal thread: its text is the person's now
