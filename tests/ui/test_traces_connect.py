"""The Traces panel's "Connect Langfuse…", "Connect Phoenix…" and "Sync…" dialogs in a real window
(llmspace/ui/trace_connect.py, llmspace/ui/trace_sync.py) against the Langfuse loopback server of
tests/traces/langfuse_server.py and a loopback Phoenix project list: the keys checked before a project
is made, errors naming the wrong key, project, URL or network in the form with what was typed kept,
the secret key only in the secret store, a search with filters, several traces picked and synced with
progress, Cancel, and a re-sync of an edited workbench that asks before rebuilding."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.traces import shapes
from tests.traces.langfuse_server import PUBLIC_KEY, SECRET_KEY, HeldLangfuse

from .conftest import pump_until

HOUR = 3_600_000
TRACES = ("a1" * 16, "b2" * 16, "c3" * 16)


@pytest.fixture(autouse=True)
def _no_keyring(monkeypatch):
    """Keys go to the temporary data root's secret file, never to this machine's keyring."""
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")


@pytest.fixture
def server() -> Iterator[HeldLangfuse]:
    s = HeldLangfuse()
    thread = threading.Thread(target=s.httpd.serve_forever, daemon=True)
    thread.start()
    now = datetime.now(UTC).timestamp() * 1000
    for i, (trace_id, user) in enumerate(zip(TRACES, ("u-anna", "u-ben", "u-anna"), strict=True)):
        s.rows.extend(_rows(trace_id, now - (i + 1) * HOUR, user, f"agent {i}"))
    try:
        yield s
    finally:
        s.gate.set()
        s.released.set()
        s.httpd.shutdown()
        s.httpd.server_close()
        thread.join(30)


def _rows(trace_id: str, start_ms: float, user: str, name: str) -> list[dict[str, Any]]:
    rows = shapes.langfuse_rows(trace_id)
    for row in rows:
        for key in ("startTime", "endTime", "completionStartTime"):
            if row.get(key):
                moved = datetime.fromisoformat(row[key].replace("Z", "+00:00")).timestamp() * 1000 - shapes.T0 + start_ms
                row[key] = datetime.fromtimestamp(moved / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        row.update({"userId": user, "sessionId": "s-1", "traceName": name, "environment": "production",
                    "statusMessage": None, "metadata": None})
    return rows


@pytest.fixture
def panel(window):
    panel = window.traces_panel
    window.sidebar.select(panel)
    pump_until(window.root, panel.winfo_ismapped, timeout=10)
    return panel


def _fill(dialog, **values: str) -> None:
    for name, value in values.items():
        entry = dialog.entries[name]
        entry.delete(0, "end")
        entry.insert(0, value)


def _key(window, widget, sequence: str) -> None:
    """A key pressed in `widget` (Tk delivers key events to the focused window)."""
    widget.focus_force()
    window.root.update()
    widget.event_generate(sequence)
    window.root.update()


def _files_text(path: Path) -> str:
    return "\n".join(p.read_text("utf-8", "replace") for p in path.rglob("*") if p.is_file())


def _wait_idle(window, dialog, timeout: float = 90) -> None:
    pump_until(window.root, lambda: not dialog.winfo_exists() or not dialog.working, timeout=timeout)


def _connect(window, panel, server) -> str:
    dialog = panel.connect("langfuse")
    _fill(dialog, name="prod", url=server.url, public_key=PUBLIC_KEY, secret_key=SECRET_KEY)
    dialog.connect_btn.invoke()
    pump_until(window.root, lambda: not dialog.winfo_exists(), timeout=90)
    (project,) = panel.tree.get_children()
    return str(project).removeprefix("project:")


def test_connect_langfuse_checks_the_keys_with_the_server_then_lists_the_project_and_keeps_the_secret_key_out_of_traces(
        window, panel, server, home):
    dialog = panel.connect("langfuse")
    assert str(dialog.entries["secret_key"].cget("show")) == "•"  # masked
    _fill(dialog, name="prod", url=server.url + "/", public_key=PUBLIC_KEY, secret_key=SECRET_KEY)
    _key(window, dialog.entries["secret_key"], "<Return>")  # Enter connects
    pump_until(window.root, lambda: not dialog.winfo_exists(), timeout=90)
    assert ("/api/public/projects", {}) in server.requests
    (project,) = panel.tree.get_children()
    assert panel.tree.item(project, "text") == "prod  [Langfuse · connected · never synced]"
    assert SECRET_KEY not in _files_text(home / "traces")
    data = json.loads((home / "traces" / "projects" / project.removeprefix("project:") / "project.json").read_text())
    assert data["source"]["baseUrl"] == server.url and "secretKey" not in data["source"]
    assert "Connected prod to Langfuse (project Weather production)" in str(window.status.msg.cget("text"))


def test_a_failed_connection_says_which_of_key_project_url_or_network_is_wrong_keeps_the_typing_and_makes_nothing(
        window, panel, server, home):
    dialog = panel.connect("langfuse")
    _fill(dialog, url=server.url, public_key=PUBLIC_KEY, secret_key="sk-lf-wrong")
    assert dialog.submit()
    pump_until(window.root, lambda: not dialog.working and dialog.message.full_text, timeout=90)
    assert dialog.message.full_text.startswith("The key is wrong.") and "401" in dialog.message.full_text
    assert "danger" in str(dialog.entries["secret_key"].cget("style")).lower()
    assert dialog.entries["secret_key"].get() == "sk-lf-wrong" and dialog.entries["url"].get() == server.url

    server.forbidden = True
    _fill(dialog, secret_key=SECRET_KEY)
    dialog.connect_btn.invoke()
    pump_until(window.root, lambda: not dialog.working and "403" in dialog.message.full_text, timeout=90)
    assert dialog.message.full_text.startswith("The project is wrong.")
    server.forbidden = False

    _fill(dialog, url=server.url + "/not-langfuse")
    dialog.connect_btn.invoke()
    pump_until(window.root, lambda: not dialog.working and "404" in dialog.message.full_text, timeout=90)
    assert dialog.message.full_text.startswith("The URL is wrong.")
    assert "danger" in str(dialog.entries["url"].cget("style")).lower()
    assert "danger" not in str(dialog.entries["secret_key"].cget("style")).lower()

    closed = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = closed.server_address[1]
    closed.server_close()  # nothing listens there now
    _fill(dialog, url=f"http://127.0.0.1:{port}")
    dialog.connect_btn.invoke()
    pump_until(window.root, lambda: not dialog.working and "Could not reach" in dialog.message.full_text, timeout=90)
    assert dialog.message.full_text.startswith("The network failed")

    _fill(dialog, url="")
    assert dialog.submit() is False  # checked before anything is sent
    assert dialog.message.full_text.startswith("The URL is wrong.")
    assert panel.tree.get_children() == ()
    projects = home / "traces" / "projects"
    assert not projects.exists() or not any(projects.iterdir())  # nothing was made
    assert SECRET_KEY not in _files_text(home)
    _key(window, dialog, "<Escape>")
    window.root.update()
    assert not dialog.winfo_exists()


class _Phoenix(BaseHTTPRequestHandler):
    """`GET /v1/projects` of Phoenix with auth on: the Bearer key `px-key` or 401."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        ok = self.headers.get("Authorization") == "Bearer px-key"
        body = json.dumps({"data": [{"id": "UHJvamVjdDox", "name": "default"}, {"id": "UHJvamVjdDoy", "name": "agents"}]}
                          if ok else {"detail": "Invalid token"}).encode()
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_connect_phoenix_names_a_missing_project_and_a_missing_key_then_connects_with_the_key_in_the_secret_store(
        window, panel, home):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Phoenix)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        dialog = panel.connect("phoenix")
        assert dialog.entries["project"].get() == "default"
        assert str(dialog.entries["api_key"].cget("show")) == "•"
        _fill(dialog, url=f"http://127.0.0.1:{httpd.server_address[1]}", project="nightly")
        dialog.connect_btn.invoke()
        pump_until(window.root, lambda: not dialog.working and dialog.message.full_text, timeout=90)
        assert dialog.message.full_text.startswith("The key is wrong.")
        _fill(dialog, api_key="px-key")
        dialog.connect_btn.invoke()
        pump_until(window.root, lambda: not dialog.working and "nightly" in dialog.message.full_text, timeout=90)
        assert dialog.message.full_text.startswith("The project is wrong.") and "agents" in dialog.message.full_text
        assert "--phoenix-project" not in dialog.message.full_text  # no command-line advice in a form
        assert "danger" in str(dialog.entries["project"].cget("style")).lower()
        _fill(dialog, project="agents")
        dialog.connect_btn.invoke()
        pump_until(window.root, lambda: not dialog.winfo_exists(), timeout=90)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(30)
    (project,) = panel.tree.get_children()
    assert panel.tree.item(project, "text") == "agents  [Phoenix · connected · never synced]"
    assert "px-key" not in _files_text(home / "traces")
    assert "px-key" in _files_text(home / "settings")  # the secret store's file (no keyring here)


def test_sync_searches_with_the_filters_lists_traces_to_pick_and_syncs_the_chosen_ones_then_shows_the_last_sync(
        window, panel, server):
    project_id = _connect(window, panel, server)
    dialog = panel.sync_project()
    assert dialog.last.cget("text") == "Never synced."
    dialog.filters["user"].insert(0, "u-anna")
    dialog.sort.set("Oldest")
    _key(window, dialog.text, "<Return>")  # Enter searches
    pump_until(window.root, lambda: not dialog.working and dialog.results.get_children(), timeout=90)
    observations = [q for p, q in server.requests if p == "/api/public/v2/observations"]
    assert observations[-1]["userId"] == "u-anna" and "fromStartTime" in observations[-1]  # the last 7 days
    assert dialog.results.get_children() == (TRACES[2], TRACES[0])  # oldest first, only Anna's
    assert "agent 0" in dialog.results.item(TRACES[0], "text")
    assert str(dialog.sync_btn.cget("state")) == "disabled"
    dialog.select_all()
    window.root.update()
    assert dialog.sync_btn.cget("text") == "Sync 2 selected"
    dialog.sync_btn.invoke()
    pump_until(window.root, lambda: not dialog.working, timeout=120)
    assert dialog.message.full_text.startswith("Synced 2 trace(s).")
    assert dialog.last.cget("text").startswith("Last sync ") and dialog.last.cget("text").endswith("success.")
    project = f"project:{project_id}"
    assert len(panel.tree.get_children(project)) == 2
    assert " · connected · synced " in panel.tree.item(project, "text")
    _key(window, dialog, "<Escape>")  # idle: Escape closes
    window.root.update()
    assert not dialog.winfo_exists()


def test_a_search_error_is_shown_in_the_dialog_and_keeps_the_filters(window, panel, server):
    _connect(window, panel, server)
    dialog = panel.sync_project()
    dialog.filters["start"].insert(0, "yesterday")
    dialog.search_btn.invoke()
    pump_until(window.root, lambda: not dialog.working and "not a date" in dialog.message.full_text, timeout=90)
    assert dialog.filters["start"].get() == "yesterday"
    server.forbidden = True
    dialog.filters["start"].delete(0, "end")
    dialog.text.insert(0, "paris")
    dialog.search_btn.invoke()
    pump_until(window.root, lambda: not dialog.working and "403" in dialog.message.full_text, timeout=90)
    assert dialog.text.get() == "paris"
    dialog.close()


def test_cancel_cuts_off_the_trace_being_fetched_at_once_and_never_stores_part_of_one(window, panel, server, app):
    project_id = _connect(window, panel, server)
    dialog = panel.sync_project()
    dialog.search_btn.invoke()
    pump_until(window.root, lambda: len(dialog.results.get_children()) == 3, timeout=90)
    server.held = TRACES[0]  # the server holds its answer for the first trace
    dialog.select_all()
    window.root.update()
    dialog.sync_btn.invoke()
    assert pump_until(window.root, server.asked.is_set, timeout=90)
    assert str(dialog.cancel_btn.cget("state")) == "normal"
    dialog.focus_force()
    window.root.update()
    dialog.event_generate("<Escape>")  # busy: Escape cancels, the dialog stays
    # Read before the next update: the cut-off worker may finish within it and replace "Cancelling…".
    assert dialog.winfo_exists() and dialog.message.full_text.startswith("Cancelling")
    window.root.update()
    assert dialog.winfo_exists()
    pump_until(window.root, lambda: not dialog.working, timeout=120)  # while the server still holds the answer
    assert not server.gate.is_set()
    text = dialog.message.full_text
    assert "Synced 0 trace(s)." in text and "cancelled while it was being fetched" in text
    assert text.count("cancelled before it was fetched") == 2
    assert app.trace_projects.traces(project_id) == []
    dialog.close()


def test_re_syncing_an_edited_workbench_asks_first_and_keeps_the_edit_unless_rebuild_is_chosen(window, panel, server, app):
    project_id = _connect(window, panel, server)
    dialog = panel.sync_project()
    dialog.search_btn.invoke()
    pump_until(window.root, lambda: dialog.results.get_children(), timeout=90)
    dialog.results.selection_set(TRACES[0])
    window.root.update()
    dialog.sync_btn.invoke()
    pump_until(window.root, lambda: not dialog.working, timeout=120)
    assert window.dialogs.confirms == []  # nothing edited: no question
    (record,) = app.trace_projects.traces(project_id)
    path = app.trace_projects.trace_dir(project_id, record["key"]) / "workbench.json"
    edited = json.loads(path.read_text("utf-8"))
    edited["context"]["systemPrompt"] = "My own prompt."
    path.write_text(json.dumps(edited), "utf-8")

    window.dialogs.answer = False  # "Keep my edits"
    dialog.sync_btn.invoke()
    pump_until(window.root, lambda: not dialog.working and dialog.message.full_text.startswith("Synced"), timeout=120)
    assert len(window.dialogs.confirms) == 1 and window.dialogs.actions == ["Rebuild from the new data"]
    assert window.dialogs.confirms[0].startswith("You edited the workbench of 1 of these traces")
    assert "your edited workbench kept" in dialog.message.full_text
    assert json.loads(path.read_text("utf-8"))["context"]["systemPrompt"] == "My own prompt."

    window.dialogs.answer = True  # "Rebuild from the new data"
    dialog.sync_btn.invoke()
    pump_until(window.root, lambda: not dialog.working and "workbench rebuilt" in dialog.message.full_text, timeout=120)
    assert len(window.dialogs.confirms) == 2
    assert json.loads(path.read_text("utf-8"))["context"]["systemPrompt"] != "My own prompt."
    dialog.close()


def test_a_project_the_original_wrote_with_plain_keys_is_fixed_and_the_app_says_the_original_can_no_longer_sync_it(
        window, panel, server, app, home):
    folder = home / "traces" / "projects" / "proj_0a1b2c3d4e"
    folder.mkdir(parents=True)
    (folder / "project.json").write_text(json.dumps({
        "id": "proj_0a1b2c3d4e", "name": "Original prod", "createdAt": 1, "updatedAt": 2,
        "source": {"type": "langfuse", "mode": "connected", "baseUrl": server.url, "publicKey": PUBLIC_KEY,
                   "secretKey": SECRET_KEY}}))
    panel.refresh()  # as when the panel is shown again
    assert pump_until(window.root, lambda: window.dialogs.infos, timeout=30)
    (told,) = window.dialogs.infos
    assert "'Original prod': its keys were in project.json in plain text" in told
    assert "The original app can still open this project but can no longer sync it." in told
    assert SECRET_KEY not in (folder / "project.json").read_text() and SECRET_KEY not in _files_text(home / "traces")
    assert [str(i) for i in panel.tree.get_children()] == ["project:proj_0a1b2c3d4e"]
    panel.refresh()
    window.root.update()
    assert len(window.dialogs.infos) == 1  # said once
    dialog = panel.sync_project("proj_0a1b2c3d4e")
    dialog.search_btn.invoke()  # the key from the secret store works
    pump_until(window.root, lambda: len(dialog.results.get_children()) == 3, timeout=90)
    dialog.close()


def test_every_control_of_the_connect_and_sync_dialogs_is_reached_by_tab(window, panel, server):
    dialog = panel.connect("langfuse")
    window.root.update()
    order, widget = [], dialog.entries["name"]
    for _ in range(12):
        order.append(widget)
        widget = widget.tk_focusNext()
    for control in (*dialog.entries.values(), dialog.connect_btn, dialog.cancel_btn):
        assert control in order
    dialog.close()
    _connect(window, panel, server)
    sync = panel.sync_project()
    window.root.update()
    order, widget = [], sync.text
    for _ in range(30):
        order.append(widget)
        widget = widget.tk_focusNext()
    for control in (sync.text, sync.sort, sync.limit, sync.search_btn, *sync.filters.values(), sync.results,
                    sync.all_btn, sync.close_btn):
        assert control in order
    sync.close()
