"""Connected trace projects: connect to Langfuse or Phoenix, search, sync chosen traces.

    project = connect_langfuse(store, "prod", "https://cloud.langfuse.com", pk, sk)
    found = search(store, project, SearchFilters(text="paris"))         # summaries, newest first
    report = sync(store, project, [t["id"] for t in found])              # SyncReport

- A project is made only after the back-end answered (Langfuse: `/api/public/projects`;
  Phoenix: the project is among `/v1/projects`); nothing is written when the check fails.
- The secret key (Langfuse) or API key (Phoenix) goes to the store's secret store; project.json
  keeps the base URL, the public key and previews.
- A sync fetches each trace whole (`TooLong`: skipped with a warning, never stored in part;
  no rows: skipped with a warning), upserts it by its remote id (`TraceStore.upsert_synced`:
  an edited workbench is kept unless `rebuild`), then records lastSyncAt and lastSyncStatus
  (`error` with the first warning as lastSyncError, else `success`). A key, project, URL or
  network error stops the sync, is recorded as its status and raised. Its `cancel` (a
  `CancelToken`) stops it at once, also in the middle of an HTTP call (the connection is shut,
  `remote.Cancelled`): the trace being fetched and the ones after it are skipped as cancelled.

The same mapping as files: synced rows are stored in raw.json as received and go through
`files.spans_of` and `mapping.map_spans` like an imported file's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..cancel import CancelToken
from ..errors import UserFacingError
from .langfuse_api import LangfuseClient, SearchFilters, TooLong
from .phoenix_api import PhoenixClient
from .remote import Cancelled, RemoteError, normalise_base_url
from .store import TraceStore, key_preview

Client = LangfuseClient | PhoenixClient
DEFAULT_PHOENIX_PROJECT = "default"


@dataclass
class SyncReport:
    synced: list[tuple[dict[str, Any], str]] = field(default_factory=list)  # (trace.json record, workbench state)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (trace id, why)


def connect_langfuse(store: TraceStore, name: str, base_url: str, public_key: str, secret_key: str, *,
                     timeout: tuple[float, float] | None = None) -> dict[str, Any]:
    url = normalise_base_url(base_url, "Langfuse")
    public_key, secret_key = public_key.strip(), secret_key.strip()
    if not public_key or not secret_key:
        raise RemoteError("Langfuse needs both the public key (pk-lf-…) and the secret key (sk-lf-…).", "key")
    client = LangfuseClient(url, public_key, secret_key, timeout=timeout)
    try:
        remote_id, remote_name = client.project()
    finally:
        client.close()
    source: dict[str, Any] = {"type": "langfuse", "baseUrl": url, "publicKey": public_key,
                              "publicKeyPreview": key_preview(public_key), "secretKeyPreview": key_preview(secret_key)}
    if remote_id:
        source["langfuseProjectId"] = remote_id
    if remote_name:
        source["langfuseProjectName"] = remote_name
    shown = name.strip() or remote_name or urlsplit(url).hostname or "Langfuse"
    return store.create_connected_project(shown, source, {"secret-key": secret_key})


def connect_phoenix(store: TraceStore, name: str, base_url: str, project: str = DEFAULT_PHOENIX_PROJECT,
                    api_key: str | None = None, *, timeout: tuple[float, float] | None = None) -> dict[str, Any]:
    url = normalise_base_url(base_url, "Phoenix")
    remote = (project or DEFAULT_PHOENIX_PROJECT).strip()
    client = PhoenixClient(url, remote, api_key, timeout=timeout)
    try:
        found = client.check()
    finally:
        client.close()
    source: dict[str, Any] = {"type": "phoenix", "baseUrl": url, "phoenixProject": str(found.get("name") or remote)}
    if found.get("id"):
        source["phoenixProjectId"] = found["id"]
    if api_key:
        source["apiKeyPreview"] = key_preview(api_key)
    shown = name.strip() or source["phoenixProject"]
    return store.create_connected_project(shown, source, {"api-key": api_key} if api_key else {})


def client_for(store: TraceStore, project: dict[str, Any], *, timeout: tuple[float, float] | None = None) -> Client:
    """The client of a connected project, with its key from the secret store."""
    source = project.get("source") or {}
    if source.get("mode") != "connected":
        raise UserFacingError(f"Trace project {project.get('name')!r} is not connected to a trace server.",
                              hint="Make a connected one with `llmspace traces new NAME --langfuse URL` or `--phoenix URL`.")
    kind = source.get("type")
    url = normalise_base_url(str(source.get("baseUrl") or ""), "Langfuse" if kind == "langfuse" else "Phoenix")
    if kind == "langfuse":
        secret = store.secret(project["id"], "secret-key")
        public = str(source.get("publicKey") or "")
        if not secret or not public:
            raise RemoteError(f"Trace project {project.get('name')!r} has no Langfuse keys in the secret store.", "key",
                              hint="Connect it again with `llmspace traces new NAME --langfuse URL`.")
        return LangfuseClient(url, public, secret, timeout=timeout)
    if kind == "phoenix":
        return PhoenixClient(url, str(source.get("phoenixProject") or DEFAULT_PHOENIX_PROJECT),
                             store.secret(project["id"], "api-key"), timeout=timeout)
    raise UserFacingError(f"Trace project {project.get('name')!r} has an unknown source {kind!r}.")


def search(store: TraceStore, project: dict[str, Any], filters: SearchFilters, *,
           timeout: tuple[float, float] | None = None) -> list[dict[str, Any]]:
    client = client_for(store, project, timeout=timeout)
    try:
        return client.search(filters)
    finally:
        client.close()


def sync(store: TraceStore, project: dict[str, Any], trace_ids: list[str], *, rebuild: bool = False,
         timeout: tuple[float, float] | None = None, progress: Callable[[int, int], None] | None = None,
         cancel: CancelToken | None = None) -> SyncReport:
    ids = list(dict.fromkeys(t.strip() for t in trace_ids if t.strip()))
    report = SyncReport()
    client = client_for(store, project, timeout=timeout)
    client.http.cancel = cancel
    try:
        for done, trace_id in enumerate(ids):
            if cancel is not None and cancel.cancelled:
                report.skipped.extend((t, "cancelled before it was fetched") for t in ids[done:])
                break
            if progress:
                progress(done, len(ids))
            try:
                rows = client.observations(trace_id) if isinstance(client, LangfuseClient) else client.spans(trace_id)
            except Cancelled:
                report.skipped.extend((t, "cancelled while it was being fetched" if t == trace_id else
                                       "cancelled before it was fetched") for t in ids[done:])
                break
            except TooLong:
                report.skipped.append((trace_id, "it has more rows than 5 pages hold; not synced (never a partial trace)"))
                continue
            except RemoteError as exc:
                if exc.status == 404 and exc.what == "url" and "no trace" in exc.message:
                    report.skipped.append((trace_id, exc.message))
                    continue
                store.set_sync_status(project["id"], exc.message)
                raise
            if not rows:
                report.skipped.append((trace_id, "the server has no rows for this trace id"))
                continue
            report.synced.append(store.upsert_synced(project["id"], trace_id, rows, rebuild=rebuild))
        if progress:
            progress(len(ids), len(ids))
    finally:
        client.close()
    first = report.skipped[0] if report.skipped else None
    store.set_sync_status(project["id"], f"{first[0]}: {first[1]}" if first else None)
    return report
