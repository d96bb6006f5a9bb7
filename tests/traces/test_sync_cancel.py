"""Cancelling a sync of a connected trace project cuts off the HTTP call in flight at once (the
project's cancel mechanism: a `CancelToken` whose cancel shuts the connection's socket), while
the server still holds its answer: the trace being fetched is never stored in part, the traces
before it are kept, and the ones after it are not fetched."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from llmspace.cancel import CancelToken
from llmspace.traces.connect import SyncReport, connect_langfuse, sync

from .langfuse_server import PUBLIC_KEY, SECRET_KEY, HeldLangfuse
from .test_langfuse_sync import HOUR, _rows

TRACES = ("a1" * 16, "b2" * 16, "c3" * 16)


@pytest.fixture
def server() -> Iterator[HeldLangfuse]:
    s = HeldLangfuse()
    thread = threading.Thread(target=s.httpd.serve_forever, daemon=True)
    thread.start()
    now = time.time() * 1000
    for i, trace_id in enumerate(TRACES):
        s.rows.extend(_rows(trace_id, now - (i + 1) * HOUR))
    try:
        yield s
    finally:
        s.gate.set()
        s.released.set()
        s.httpd.shutdown()
        s.httpd.server_close()
        thread.join(30)


def test_cancel_cuts_off_the_trace_being_fetched_at_once_keeps_the_ones_before_and_fetches_none_after(
        app, server: HeldLangfuse) -> None:
    store = app.trace_projects
    project = connect_langfuse(store, "prod", server.url, PUBLIC_KEY, SECRET_KEY)
    server.held = TRACES[1]
    cancel = CancelToken()
    done: list[SyncReport | BaseException] = []

    def work() -> None:
        try:
            done.append(sync(store, project, list(TRACES), cancel=cancel))
        except BaseException as exc:  # handed to the test's thread
            done.append(exc)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    assert server.asked.wait(120), "the sync never asked for the second trace"
    cancel.cancel()
    worker.join(60)  # the server still holds its answer: only the shut socket ends the call
    assert not worker.is_alive() and not server.gate.is_set()
    (report,) = done
    assert isinstance(report, SyncReport), report
    assert [record["id"] for record, _ in report.synced] == [TRACES[0]]
    assert report.skipped == [(TRACES[1], "cancelled while it was being fetched"),
                              (TRACES[2], "cancelled before it was fetched")]
    assert [t["id"] for t in store.traces(project["id"])] == [TRACES[0]]
    assert not [q for path, q in server.requests if q.get("traceId") == TRACES[2]]
    source = store.read_project(project["id"])["source"]
    assert source["lastSyncStatus"] == "error" and "cancelled while it was being fetched" in source["lastSyncError"]


def test_a_sync_cancelled_before_it_starts_sends_no_trace_request(app, server: HeldLangfuse) -> None:
    store = app.trace_projects
    project = connect_langfuse(store, "prod", server.url, PUBLIC_KEY, SECRET_KEY)
    cancel = CancelToken()
    cancel.cancel()
    report = sync(store, project, list(TRACES), cancel=cancel)
    assert report.synced == [] and [why for _, why in report.skipped] == ["cancelled before it was fetched"] * 3
    assert not [q for _, q in server.requests if q.get("traceId")]
