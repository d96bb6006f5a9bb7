"""The Traces panel in a real window (llmspace/ui/traces_panel.py): trace files imported by the
picker and by a drop delivered through tkdnd's own XDND handlers (as tests/ui/test_plugin_drop.py
does), a trace opened by a double click into a tab that shows its source, edited, run against
the loopback model and copied to the workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.presenters.traces_panel import NO_PROJECTS
from tests.support.llm_server import LoopbackLLM, Turn, configure_provider
from tests.traces import shapes

from .conftest import pump_until

SECOND_TRACE = "0af7651916cd43dd8448eb211c80319c"


@pytest.fixture
def srv(home):
    with LoopbackLLM() as s:
        configure_provider(home, s, model_id=shapes.MODEL)
        yield s


def _file(tmp_path: Path, name: str, data: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), "utf-8")
    return str(path)


def _show_panel(window):
    panel = window.traces_panel
    window.sidebar.select(panel)
    pump_until(window.root, panel.winfo_ismapped, timeout=10)
    return panel


def _import(window, panel, count: int = 1) -> list[str]:
    """Import the picker's files and wait for them: the workbench paths of the first project."""
    assert panel.import_files()
    project = pump_until(window.root, lambda: next(iter(panel.tree.get_children()), None), timeout=30)
    return list(pump_until(window.root, lambda: (rows := panel.tree.get_children(project)) and len(rows) >= count
                           and not rows[0].startswith("empty:") and rows, timeout=30))


def _drop(window, target, path: str, x: int, y: int) -> None:
    """Offer `path` on the XdndSelection and deliver enter, position and drop to `target`."""
    root = window.root
    tk = root.tk
    uri = Path(path).as_uri() + "\r\n"
    provide = root.register(lambda offset, maxchars: uri[int(offset):int(offset) + int(maxchars)])
    tk.call("selection", "handle", "-selection", "XdndSelection", "-type", "text/uri-list", str(root), provide)
    tk.call("selection", "own", "-selection", "XdndSelection", str(root))
    source = root.winfo_id()
    root.update()
    tk.call("::tkdnd::xdnd::HandleXdndEnter", str(target), source, ("text/uri-list",), 0)
    tk.call("::tkdnd::xdnd::HandleXdndPosition", str(target), x, y, 0, source)
    root.update()
    tk.call("::tkdnd::xdnd::HandleXdndDrop", 0)
    root.update()


def test_the_traces_panel_sits_beside_the_files_and_says_what_a_trace_file_is_when_empty(window):
    assert [window.sidebar.tab(t, "text") for t in window.sidebar.tabs()] == ["Files", "Traces"]
    panel = _show_panel(window)
    assert panel.empty.winfo_ismapped() and not panel.body.winfo_ismapped()
    assert panel.empty.full_text == NO_PROJECTS


def test_new_trace_project_from_the_button_is_listed_with_its_badge_and_an_empty_row(window):
    panel = _show_panel(window)
    window.dialogs.strings.append("Checkout agent")
    panel.new_btn.invoke()
    (project,) = panel.tree.get_children()
    assert panel.tree.item(project, "text") == "Checkout agent  [Langfuse · manual]"
    (row,) = panel.tree.get_children(project)
    assert "No traces yet" in panel.tree.item(row, "text")


def test_traces_imported_by_picker_and_by_drop_open_edit_run_and_copy_to_the_workspace(window, app, srv, tmp_path):
    panel = _show_panel(window)
    # Import… with the picker: two files, one refused and named with its reason
    window.dialogs.files = [_file(tmp_path, "export.json", {"data": shapes.langfuse_rows()}),
                            _file(tmp_path, "notes.json", {"hello": "world"})]
    panel.import_btn.invoke()
    project = pump_until(window.root, lambda: next(iter(panel.tree.get_children()), None), timeout=30)
    assert panel.tree.item(project, "text") == "Imported traces  [Langfuse · manual]"
    (first,) = panel.tree.get_children(project)
    assert panel.tree.item(first, "text").startswith("weather agent — ")
    assert panel.tree.item(first, "text").endswith(f" · {shapes.MODEL} · 6 obs")
    assert "Skipped: notes.json (" in window.status.msg.cget("text")
    assert any("notes.json:" in info for info in window.dialogs.infos)

    # a second export dropped on the project's row
    if not panel.enable_file_drops():
        pytest.skip("tkdnd cannot load here")
    second = _file(tmp_path, "second.json", shapes.langfuse_rows(trace_id=SECOND_TRACE))
    x, y, _w, h = pump_until(window.root, lambda: panel.tree.bbox(project), timeout=10)
    _drop(window, panel.tree, second, panel.tree.winfo_rootx() + x + 10, panel.tree.winfo_rooty() + y + h // 2)
    pump_until(window.root, lambda: len(panel.tree.get_children(project)) == 2, timeout=30)
    assert len(app.trace_projects.traces(project.removeprefix("project:"))) == 2

    # a double click opens the workbench in a tab named after the trace, its source in the header
    x, y, _w, h = pump_until(window.root, lambda: panel.tree.bbox(first), timeout=10)
    for _click in range(2):  # Tk makes the second press a <Double-Button-1>
        panel.tree.event_generate("<ButtonPress-1>", x=x + 20, y=y + h // 2)
        panel.tree.event_generate("<ButtonRelease-1>", x=x + 20, y=y + h // 2)
    ed = pump_until(window.root, lambda: window.editors.get(first), timeout=30)
    pump_until(window.root, lambda: ed.header.source_row is not None, timeout=10)
    row = ed.header.source_row
    assert row.id_label.cget("text") == shapes.TRACE_ID and row.link_btn is None
    assert window.notebook.tab(window.pages[first], "text").strip() == "weather agent"
    row.copy_btn.invoke()
    assert window.root.clipboard_get() == shapes.TRACE_ID
    assert app.workspace.is_mounted(first)

    # edit: a new user turn, typed and autosaved into the workbench
    ed.add_btn.invoke()
    window.root.update()
    card = ed.list.cards[ed.p.messages[-1].id]
    card.text.insert("1.0", "And in Berlin?")
    workbench = app.workspace.resolve(first)
    pump_until(window.root, lambda: "And in Berlin?" in workbench.read_text("utf-8"), timeout=30)

    # run against the loopback model: the reply lands in the workbench
    srv.push(Turn(text="Berlin is cloudy (12 C).", usage=(40, 8)))
    assert ed.run_controls.start_run()
    pump_until(window.root, lambda: not ed.p.read_only and "Berlin is cloudy" in workbench.read_text("utf-8"), timeout=60)
    sent = srv.requests[-1].body_json
    assert sent["model"] == shapes.MODEL
    texts = [json.dumps(m) for m in sent["messages"]]
    assert sum(shapes.SYSTEM in t for t in texts) == 1 and any("And in Berlin?" in t for t in texts)

    # copy to workspace: a normal thread, in the tree and open in a tab
    panel.tree.selection_set(first)
    rel = panel.copy_to_workspace()
    assert rel == "weather agent.json" and not app.workspace.is_mounted(rel)
    pump_until(window.root, lambda: window.tree_view.tree.exists(rel), timeout=10)
    assert window.tabs.active == rel
    copied = app.workspace.open(rel)
    assert copied.messages[-1].text() == "Berlin is cloudy (12 C)."


def test_renaming_and_removing_a_trace_from_the_panel(window, app, tmp_path):
    panel = _show_panel(window)
    window.dialogs.files = [_file(tmp_path, "export.json", shapes.langfuse_rows())]
    (first,) = _import(window, panel)
    (project,) = panel.tree.get_children()
    panel.open_trace(first)
    panel.tree.selection_set(first)
    window.dialogs.strings.append("Paris and Rome")
    assert panel.rename()
    assert panel.tree.item(first, "text").startswith("Paris and Rome — ")
    assert window.notebook.tab(window.pages[first], "text").strip() == "Paris and Rome"
    panel.tree.selection_set(first)
    assert panel.remove()
    assert first not in window.pages  # its tab closed
    (row,) = panel.tree.get_children(project)
    assert row.startswith("empty:")
    trashed = [p.name for p in (app.root.root / ".trash").rglob("trace.json")]
    assert trashed


def test_a_workbench_tab_shows_the_traces_title_and_renaming_it_there_renames_the_trace(window, app, tmp_path):
    panel = _show_panel(window)
    window.dialogs.files = [_file(tmp_path, "export.json", shapes.langfuse_rows())]
    (rel,) = _import(window, panel)
    ed = panel.open_trace(rel)
    pump_until(window.root, ed.winfo_ismapped, timeout=10)
    assert ed.header.title_var.get() == "weather agent"
    ed.header.title_var.set("Paris and Rome")
    ed.header.title.commit()
    window.root.update()
    assert window.dialogs.errors == []
    assert ed.p.rel == rel and ed.header.title_var.get() == "Paris and Rome"
    project_id, key = rel.split("/")[1:3]
    assert app.trace_projects.read_trace(project_id, key)["title"] == "Paris and Rome"
    assert window.notebook.tab(window.pages[rel], "text").strip() == "Paris and Rome"
    # a later edit autosaves without taking the old title back
    ed.add_btn.invoke()
    window.root.update()
    ed.list.cards[ed.p.messages[-1].id].text.insert("1.0", "One more question")
    workbench = app.workspace.resolve(rel)
    pump_until(window.root, lambda: "One more question" in workbench.read_text("utf-8"), timeout=30)
    assert json.loads(workbench.read_text("utf-8"))["title"] == "Paris and Rome"


def test_a_workbench_tab_restored_at_start_is_named_after_its_trace(make_window, app, tmp_path):
    window = make_window()
    panel = _show_panel(window)
    window.dialogs.files = [_file(tmp_path, "export.json", shapes.langfuse_rows())]
    (rel,) = _import(window, panel)
    panel.open_trace(rel)
    other = app.workspace.create_thread("", "notes")
    window.open_thread(other)  # the workbench's tab is restored but not shown
    window.root.update()
    again = make_window()
    assert rel in again.pages and again.tabs.active == other
    pump_until(again.root, lambda: again.notebook.tab(again.pages[rel], "text").strip() == "weather agent", timeout=10)


def test_a_project_folded_by_its_indicator_stays_folded_when_the_panel_redraws(window, tmp_path):
    panel = _show_panel(window)
    window.dialogs.files = [_file(tmp_path, "export.json", shapes.langfuse_rows())]
    _import(window, panel)
    (project,) = panel.tree.get_children()
    _x, y, _w, h = pump_until(window.root, lambda: panel.tree.bbox(project), timeout=10)
    y += h // 2
    x = next(x for x in range(60) if "indicator" in panel.tree.identify_element(x, y))
    panel.tree.event_generate("<ButtonPress-1>", x=x, y=y)
    panel.tree.event_generate("<ButtonRelease-1>", x=x, y=y)
    window.root.update()
    assert not panel.tree.item(project, "open")
    panel.refresh()
    assert not panel.tree.item(project, "open")


def test_files_are_imported_off_the_ui_thread_and_the_panel_says_so_meanwhile(window, tmp_path):
    panel = _show_panel(window)
    window.dialogs.files = [_file(tmp_path, "export.json", shapes.langfuse_rows())]
    panel.import_btn.invoke()
    # the work is on a worker; its result reaches the panel only through the pump
    assert window.status.msg.cget("text") == "Importing 1 trace file(s)…"
    assert str(panel.import_btn.cget("state")) == "disabled"
    pump_until(window.root, lambda: panel.tree.get_children(), timeout=30)
    assert window.status.msg.cget("text") == "Imported 1 trace(s)."
    assert str(panel.import_btn.cget("state")) == "normal"


def test_renaming_a_trace_while_its_workbench_runs_is_refused(window, app, srv, tmp_path):
    panel = _show_panel(window)
    window.dialogs.files = [_file(tmp_path, "export.json", shapes.langfuse_rows())]
    (rel,) = _import(window, panel)
    ed = panel.open_trace(rel)
    ed.add_btn.invoke()
    window.root.update()
    ed.list.cards[ed.p.messages[-1].id].text.insert("1.0", "And in Berlin?")
    srv.push_hang()
    assert ed.run_controls.start_run()
    pump_until(window.root, lambda: ed.p.read_only, timeout=10)
    panel.tree.selection_set(rel)
    window.dialogs.strings.append("Renamed mid-run")
    assert not panel.rename()
    assert window.dialogs.errors == ["Stop the run before renaming the trace."]
    ed.run_controls.stop_run()
    pump_until(window.root, lambda: not ed.p.read_only, timeout=30)
    project_id, key = rel.split("/")[1:3]
    assert app.trace_projects.read_trace(project_id, key)["title"] == "weather agent"


def test_a_trace_whose_status_is_error_reads_in_the_danger_colour_and_an_ok_one_does_not(window, app, tmp_path):
    panel = _show_panel(window)
    failed = shapes.langfuse_rows(trace_id=SECOND_TRACE)
    failed[2].update(level="ERROR", statusMessage="weather service timed out", output=None)
    window.dialogs.files = [_file(tmp_path, "ok.json", shapes.langfuse_rows()), _file(tmp_path, "failed.json", failed)]
    rows = _import(window, panel, count=2)
    project_id = rows[0].split("/")[1]
    status = {r["key"]: r["status"] for r in app.trace_projects.traces(project_id)}
    tags = {rel.split("/")[2]: tuple(panel.tree.item(rel, "tags")) for rel in rows}
    assert sorted(status.values()) == ["error", "ok"]
    assert {key: "error" in tags[key] for key in tags} == {key: s == "error" for key, s in status.items()}
    assert panel.tree.tag_configure("error", "foreground") not in ("", None)
