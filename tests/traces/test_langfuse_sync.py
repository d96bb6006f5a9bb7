"""Connected Langfuse projects against a loopback server speaking Langfuse's public API
(tests/traces/langfuse_server.py): connect, search on v2 observations, sync with cursor paging,
the deprecated traces list only where v2 is missing, errors naming key, project, URL or network,
keys only in the secret store, and re-syncs that keep an edited workbench."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from llmspace.core.threadio import parse_thread
from llmspace.jsonio import read_file_bytes, write_bytes_atomic
from llmspace.traces.connect import connect_langfuse, search, sync
from llmspace.traces.langfuse_api import SearchFilters
from llmspace.traces.remote import RemoteError

from . import shapes
from .langfuse_server import PUBLIC_KEY, SECRET_KEY, LangfuseServer, langfuse_server

HOUR = 3_600_000


def _iso(ms: float) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _rows(trace_id: str, start_ms: float, *, user: str = "u-anna", session: str = "s-1", name: str = "weather agent",
          environment: str = "production") -> list[dict[str, Any]]:
    """shapes.langfuse_rows moved to `start_ms`, with the trace context fields v2 observations carry."""
    rows = shapes.langfuse_rows(trace_id)
    for row in rows:
        for key in ("startTime", "endTime", "completionStartTime"):
            if row.get(key):
                moved = datetime.fromisoformat(row[key].replace("Z", "+00:00")).timestamp() * 1000 - shapes.T0 + start_ms
                row[key] = _iso(moved)
        row.update({"userId": user, "sessionId": session, "traceName": name, "environment": environment,
                    "statusMessage": None, "metadata": None})
    return rows


@pytest.fixture
def server() -> Iterator[LangfuseServer]:
    with langfuse_server() as s:
        yield s


@pytest.fixture
def connected(app, server):
    return connect_langfuse(app.trace_projects, "prod", server.url + "/", PUBLIC_KEY, SECRET_KEY)


def _files_under(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.is_file()]


def _thread(store, project_id: str, key: str):
    path = store.workbench_path(project_id, key)
    return parse_thread(read_file_bytes(path), str(path))


def test_connecting_checks_the_keys_and_keeps_the_secret_key_out_of_every_file_under_traces(app, server, home) -> None:
    project = connect_langfuse(app.trace_projects, "prod", server.url + "/", PUBLIC_KEY, SECRET_KEY)
    source = project["source"]
    assert source["mode"] == "connected" and source["baseUrl"] == server.url
    assert source["langfuseProjectId"] == "lf-proj-1" and source["langfuseProjectName"] == "Weather production"
    assert source["secretKeyPreview"] == "sk-lf...cret" and "secretKey" not in source
    assert server.requests[0][0] == "/api/public/projects"
    server.rows = _rows("t-1", time.time() * 1000 - HOUR)
    sync(app.trace_projects, project, ["t-1"])
    files = _files_under(home / "traces")
    assert len(files) >= 4
    assert not [p for p in files if SECRET_KEY in p.read_text()]
    assert app.secrets.get(f"trace-project:{project['id']}:secret-key") == SECRET_KEY


@pytest.mark.parametrize(("setup", "what", "words"), [
    (lambda s: None, "key", "rejected the key (HTTP 401)"),
    (lambda s: setattr(s, "forbidden", True), "project", "no access to this Langfuse project (HTTP 403)"),
])
def test_wrong_keys_and_a_project_without_access_are_named_and_nothing_is_made(app, server, setup, what, words) -> None:
    setup(server)
    secret = "sk-lf-wrong-secret-000" if what == "key" else SECRET_KEY
    with pytest.raises(RemoteError) as err:
        connect_langfuse(app.trace_projects, "prod", server.url, PUBLIC_KEY, secret)
    assert err.value.what == what and words in err.value.message
    assert secret not in str(err.value)
    assert app.trace_projects.projects() == []


def test_a_wrong_base_url_nothing_listening_a_stall_and_a_redirect_elsewhere_are_told_apart(app, server) -> None:
    store = app.trace_projects
    with pytest.raises(RemoteError) as err:
        connect_langfuse(store, "p", server.url + "/langfuse", PUBLIC_KEY, SECRET_KEY)
    assert err.value.what == "url" and "HTTP 404" in err.value.message and "base URL" in str(err.value)
    with pytest.raises(RemoteError) as err:
        connect_langfuse(store, "p", "ftp://example.com", PUBLIC_KEY, SECRET_KEY)
    assert err.value.what == "url"
    with langfuse_server() as gone:
        closed = gone.url
    with pytest.raises(RemoteError) as err:
        connect_langfuse(store, "p", closed, PUBLIC_KEY, SECRET_KEY)
    assert err.value.what == "network" and "Could not reach Langfuse" in err.value.message
    server.stall = True
    started = time.monotonic()
    with pytest.raises(RemoteError) as err:
        connect_langfuse(store, "p", server.url, PUBLIC_KEY, SECRET_KEY, timeout=(2, 2))
    assert err.value.what == "network" and "did not answer within 2 s" in err.value.message
    assert time.monotonic() - started < 60
    server.stall = False
    with langfuse_server() as elsewhere:
        server.redirect_to = elsewhere.url
        with pytest.raises(RemoteError) as err:
            connect_langfuse(store, "p", server.url, PUBLIC_KEY, SECRET_KEY)
        assert err.value.what == "url" and "redirected to another origin" in err.value.message
        assert elsewhere.requests == []
    assert store.projects() == []


def test_search_groups_v2_observations_by_trace_newest_first_sending_time_user_and_environment(app, server, connected) -> None:
    now = time.time() * 1000
    server.rows = [*_rows("t-new", now - HOUR, user="u-anna", session="s-9", name="weather agent"),
                   *_rows("t-old", now - 3 * 24 * HOUR, user="u-anna", session="s-1", name="weather agent"),
                   *_rows("t-bob", now - 2 * HOUR, user="u-bob", session="s-2", name="billing agent"),
                   *_rows("t-ancient", now - 30 * 24 * HOUR)]
    server.page_size = 4  # 18 rows in the last 7 days: several pages
    store = app.trace_projects
    found = search(store, connected, SearchFilters(start=_iso(now - 7 * 24 * HOUR), end=_iso(now)))
    assert [t["id"] for t in found] == ["t-new", "t-bob", "t-old"]
    assert found[0]["name"] == "weather agent" and found[0]["observationCount"] == 6
    path, query = server.requests[-1]
    assert path == "/api/public/v2/observations" and "fromStartTime" in query and "toStartTime" in query
    assert [t["id"] for t in search(store, connected, SearchFilters(user="u-anna", start=_iso(now - 7 * 24 * HOUR)))] \
        == ["t-new", "t-old"]
    assert server.requests[-1][1]["userId"] == "u-anna"
    assert [t["id"] for t in search(store, connected, SearchFilters(environment="production", session="s-9"))] == ["t-new"]
    assert server.requests[-1][1]["environment"] == "production" and "sessionId" not in server.requests[-1][1]
    assert [t["id"] for t in search(store, connected, SearchFilters(text="BILLING"))] == ["t-bob"]
    assert [t["id"] for t in search(store, connected, SearchFilters(name="weather agent", limit=1))] == ["t-new"]


def test_where_v2_is_missing_search_and_sync_use_the_deprecated_traces_endpoints(app, server, connected) -> None:
    now = time.time() * 1000
    server.rows = [*_rows("t-a", now - HOUR, session="s-a"), *_rows("t-b", now - 2 * HOUR, session="s-b")]
    server.v2 = False
    store = app.trace_projects
    found = search(store, connected, SearchFilters(session="s-b", start=_iso(now - 24 * HOUR)))
    assert [t["id"] for t in found] == ["t-b"]
    assert server.requests[-1][0] == "/api/public/traces" and server.requests[-1][1]["sessionId"] == "s-b"
    report = sync(store, connected, ["t-a"])
    assert [r["id"] for r, _ in report.synced] == ["t-a"]
    assert server.requests[-1][0] == "/api/public/traces/t-a"


def test_sync_reads_five_pages_but_skips_a_six_page_trace_whole_and_says_so(app, server, connected) -> None:
    now = time.time() * 1000
    five = [*_rows("t-five", now - HOUR)]
    five += [{**five[2], "id": f"extra-{i}", "name": "step", "type": "SPAN", "input": None, "output": None}
             for i in range(4)]  # 10 rows: 5 pages of 2
    six = _rows("t-six", now - HOUR) + [{**five[2], "traceId": "t-six", "id": f"more-{i}", "type": "EVENT"}
                                        for i in range(6)]  # 12 rows: 6 pages of 2
    server.rows = five + six
    server.page_size = 2
    store = app.trace_projects
    report = sync(store, connected, ["t-six", "t-five", "t-none", " t-five "])
    assert [(r["id"], r["observationCount"]) for r, _ in report.synced] == [("t-five", 10)]
    assert report.skipped == [("t-six", "it has more rows than 5 pages hold; not synced (never a partial trace)"),
                              ("t-none", "the server has no rows for this trace id")]
    pages = [q for p, q in server.requests if p == "/api/public/v2/observations" and q["traceId"] == "t-five"]
    assert len(pages) == 5 and pages[0]["fields"] == "core,basic,time,io,model,usage,trace_context,metrics"
    assert pages[0]["limit"] == "1000" and "cursor" not in pages[0] and pages[1]["cursor"]
    assert [r["id"] for r in store.traces(connected["id"])] == ["t-five"]
    source = store.read_project(connected["id"])["source"]
    assert source["lastSyncStatus"] == "error" and source["lastSyncError"].startswith("t-six: it has more rows")
    server.rows = five
    sync(store, connected, ["t-five"])
    source = store.read_project(connected["id"])["source"]
    assert source["lastSyncStatus"] == "success" and "lastSyncError" not in source


def test_a_synced_agent_trace_gives_the_same_thread_as_the_same_trace_from_a_file(app, server, connected, tmp_path) -> None:
    rows = _rows(shapes.TRACE_ID, time.time() * 1000 - HOUR)
    server.rows = rows
    store = app.trace_projects
    (record, state), = sync(store, connected, [shapes.TRACE_ID]).synced
    assert state == "built" and record["source"]["mode"] == "connected"
    manual = store.create_project("file")
    export = tmp_path / "export.json"
    export.write_text(json.dumps(rows))
    imported = store.import_files(manual["id"], [export]).imported[0]
    expected = shapes.shape_of(_thread(store, manual["id"], imported["key"]))
    assert shapes.shape_of(_thread(store, connected["id"], record["key"])) == expected
    assert [len(m["calls"]) for m in expected["messages"] if m["role"] == "assistant"] == [2, 0]


def test_re_syncing_keeps_an_edited_workbench_rebuilds_an_untouched_one_and_rebuild_replaces_the_edit(
        app, server, connected) -> None:
    now = time.time() * 1000
    server.rows = _rows("t-1", now - HOUR)
    store = app.trace_projects
    (first, _), = sync(store, connected, ["t-1"]).synced
    (again, state), = sync(store, connected, ["t-1"]).synced
    assert state == "rebuilt" and again["key"] == first["key"] and again["importedAt"] == first["importedAt"]
    path = store.workbench_path(connected["id"], first["key"])
    edited = read_file_bytes(path).replace(shapes.SYSTEM.encode(), b"You are a careful weather agent.")
    write_bytes_atomic(path, edited)
    server.rows = [*_rows("t-1", now - HOUR), {**server.rows[2], "id": "late-row", "type": "EVENT"}]
    (record, state), = sync(store, connected, ["t-1"]).synced
    assert state == "kept" and read_file_bytes(path) == edited and record["observationCount"] == 7
    assert len(store.traces(connected["id"])) == 1
    (record, state), = sync(store, connected, ["t-1"], rebuild=True).synced
    assert state == "rebuilt" and b"careful weather agent" not in read_file_bytes(path)


def test_a_project_the_original_wrote_with_plain_keys_opens_its_keys_move_to_the_store_and_it_syncs(
        app, server, home) -> None:
    folder = home / "traces" / "projects" / "proj_0a1b2c3d4e"
    folder.mkdir(parents=True)
    (folder / "project.json").write_text(json.dumps({
        "id": "proj_0a1b2c3d4e", "name": "Original prod", "createdAt": 1, "updatedAt": 2,
        "source": {"type": "langfuse", "mode": "connected", "baseUrl": server.url, "publicKey": PUBLIC_KEY,
                   "secretKey": SECRET_KEY, "publicKeyPreview": "pk-lf...cdef", "secretKeyPreview": "sk-lf...cret"}}))
    store = app.trace_projects
    project = store.find_project("Original prod")
    assert store.notices == [
        ("Trace project 'Original prod': its keys were in project.json in plain text and are now in settings/secrets.json "
         "(readable by you only). The original app can still open this project but can no longer sync it.")]
    assert SECRET_KEY not in (folder / "project.json").read_text()
    assert json.loads((folder / "project.json").read_text())["source"]["publicKey"] == PUBLIC_KEY
    server.rows = _rows("t-1", time.time() * 1000 - HOUR)
    assert [r["id"] for r, _ in sync(store, project, ["t-1"]).synced] == ["t-1"]
    assert not [p for p in _files_under(home / "traces") if SECRET_KEY in p.read_text()]
