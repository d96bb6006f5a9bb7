"""Langfuse's public API for a connected trace project: check, search and fetch one trace.

- **Check**: `GET /api/public/projects`; `data[0]` (else `data`, else the root) gives the
  Langfuse project's id and name.
- **Search**: `GET /api/public/v2/observations` (fields `core,basic,time,trace_context`), rows
  grouped by `traceId`, newest first. Sent to the server: the time range (`fromStartTime`,
  `toStartTime`), `userId` and `environment`. Applied here on the rows: the trace name
  (`traceName`), the session id and the free text (a substring, ignoring case, of the trace id,
  name, user id or session id). At most `MAX_PAGES` pages of `SEARCH_PAGE` rows are read.
  Where v2 is missing (HTTP 404) the deprecated `GET /api/public/traces` (`fromTimestamp`,
  `toTimestamp`, `userId`, `sessionId`, `name`, `environment`, `orderBy=timestamp.desc`).
- **Fetch**: `GET /api/public/v2/observations?fields=core,basic,time,io,model,usage,trace_context,
  metrics&limit=1000&traceId=…&cursor=…`, the next cursor from `meta.nextCursor`, `meta.cursor`
  or a top-level `nextCursor`; at most `MAX_PAGES` pages — a trace with more is refused whole
  (`TooLong`), never stored in part (the original's rule). Where v2 is missing,
  `GET /api/public/traces/{id}` (its `observations`).

Auth: `Authorization: Basic base64(publicKey:secretKey)`, both keys registered with the redactor.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ..redact import KNOWN
from .remote import JsonClient, RemoteError
from .spans import first_string, iso_ms

MAX_PAGES = 5
PAGE_SIZE = 1000
SEARCH_PAGE = 1000
SYNC_FIELDS = "core,basic,time,io,model,usage,trace_context,metrics"
SEARCH_FIELDS = "core,basic,time,trace_context"
LABEL = "Langfuse"


@dataclass
class SearchFilters:
    """What a search asks for; times are ISO-8601 text."""

    start: str | None = None
    end: str | None = None
    text: str = ""
    name: str = ""
    user: str = ""
    session: str = ""
    environment: str = ""
    limit: int = 50
    expression: str = ""  # Phoenix's filter expression (Langfuse has none)

    def matches(self, summary: dict[str, Any]) -> bool:
        """Whether a trace summary (id, name, userId, sessionId) passes the name, user, session and text filters."""
        if self.name and summary.get("name") != self.name:
            return False
        if self.session and summary.get("sessionId") != self.session:
            return False
        if self.user and summary.get("userId") != self.user:
            return False
        if self.text:
            needle = self.text.lower()
            return any(needle in str(summary.get(k) or "").lower() for k in ("id", "name", "userId", "sessionId"))
        return True


class TooLong(Exception):
    """A trace with more rows than `MAX_PAGES` pages hold."""


def _cursor(page: Any) -> str | None:
    if not isinstance(page, dict):
        return None
    meta = page.get("meta")
    if not isinstance(meta, dict):
        meta = {}
    return first_string(meta.get("nextCursor"), meta.get("cursor"), page.get("nextCursor"))


def _rows(page: Any) -> list[dict[str, Any]]:
    data = page.get("data") if isinstance(page, dict) else page
    return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []


class LangfuseClient:
    def __init__(self, base_url: str, public_key: str, secret_key: str, *,
                 timeout: tuple[float, float] | None = None) -> None:
        pair = f"{public_key}:{secret_key}"
        token = base64.b64encode(pair.encode("utf-8")).decode("ascii")
        KNOWN.add([secret_key, pair, token])
        kwargs: dict[str, Any] = {"timeout": timeout} if timeout else {}
        self.http = JsonClient(base_url, LABEL, {"Authorization": f"Basic {token}"}, **kwargs)

    def close(self) -> None:
        self.http.close()

    def project(self) -> tuple[str | None, str | None]:
        """(id, name) of the Langfuse project the keys belong to."""
        root = self.http.get("/api/public/projects")
        data = root.get("data") if isinstance(root, dict) else None
        first = data[0] if isinstance(data, list) and data else data if isinstance(data, dict) else root
        if not isinstance(first, dict):
            return None, None
        return first_string(first.get("id")), first_string(first.get("name"))

    # -- search ---------------------------------------------------------------------------
    def search(self, filters: SearchFilters) -> list[dict[str, Any]]:
        try:
            return self._search_v2(filters)
        except RemoteError as exc:
            if exc.status != 404:
                raise
        return self._search_v1(filters)

    def _search_v2(self, f: SearchFilters) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"fields": SEARCH_FIELDS, "limit": SEARCH_PAGE, "fromStartTime": f.start,
                                  "toStartTime": f.end, "userId": f.user or None, "environment": f.environment or None}
        found: dict[str, dict[str, Any]] = {}
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = self.http.get("/api/public/v2/observations", {**params, "cursor": cursor})
            for row in _rows(page):
                _add_row(found, row)
            cursor = _cursor(page)
            if not cursor or len([s for s in found.values() if f.matches(s)]) >= f.limit:
                break
        return _pick(found.values(), f)

    def _search_v1(self, f: SearchFilters) -> list[dict[str, Any]]:
        params = {"fields": "core,metrics", "limit": max(1, min(100, f.limit)), "orderBy": "timestamp.desc",
                  "fromTimestamp": f.start, "toTimestamp": f.end, "userId": f.user or None,
                  "sessionId": f.session or None, "name": f.name or None, "environment": f.environment or None}
        page = self.http.get("/api/public/traces", params)
        out = []
        for row in _rows(page):
            tid = first_string(row.get("id"))
            if not tid:
                continue
            observations = row.get("observations")
            count = len(observations) if isinstance(observations, list) else row.get("observationCount")
            out.append({"id": tid, "name": first_string(row.get("name")) or "",
                        "timestamp": first_string(row.get("timestamp"), row.get("createdAt")),
                        "userId": row.get("userId"), "sessionId": row.get("sessionId"),
                        "environment": row.get("environment"), "observationCount": count})
        return _pick(out, f)

    # -- fetch ----------------------------------------------------------------------------
    def observations(self, trace_id: str) -> list[dict[str, Any]]:
        """Every observation of one trace, or `TooLong`."""
        rows: list[dict[str, Any]] = []
        cursor: str | None = None
        params = {"fields": SYNC_FIELDS, "limit": PAGE_SIZE, "traceId": trace_id}
        for _ in range(MAX_PAGES):
            try:
                page = self.http.get("/api/public/v2/observations", {**params, "cursor": cursor})
            except RemoteError as exc:
                if exc.status == 404 and not rows:
                    return self._observations_v1(trace_id)
                raise
            rows.extend(_rows(page))
            cursor = _cursor(page)
            if not cursor:
                return rows
        raise TooLong(trace_id)

    def _observations_v1(self, trace_id: str) -> list[dict[str, Any]]:
        page = self.http.get(f"/api/public/traces/{quote(trace_id, safe='')}",
                             not_found=f"Langfuse has no trace {trace_id!r} (HTTP 404).")
        observations = page.get("observations") if isinstance(page, dict) else None
        rows = [r for r in observations if isinstance(r, dict)] if isinstance(observations, list) else []
        name = first_string(page.get("name")) if isinstance(page, dict) else None
        for row in rows:
            row.setdefault("traceId", trace_id)
            if name:
                row.setdefault("traceName", name)
        return rows


def _add_row(found: dict[str, dict[str, Any]], row: dict[str, Any]) -> None:
    tid = first_string(row.get("traceId"), row.get("trace_id"))
    if not tid:
        return
    start = first_string(row.get("startTime"), row.get("createdAt"))
    summary = found.setdefault(tid, {"id": tid, "name": "", "timestamp": start, "userId": None, "sessionId": None,
                                     "environment": None, "observationCount": 0})
    summary["observationCount"] += 1
    summary["name"] = summary["name"] or first_string(row.get("traceName")) or ""
    for key in ("userId", "sessionId", "environment"):
        summary[key] = summary[key] or first_string(row.get(key))
    if start and (not summary["timestamp"] or (iso_ms(start) or 0) < (iso_ms(summary["timestamp"]) or 0)):
        summary["timestamp"] = start


def _pick(rows: Any, f: SearchFilters) -> list[dict[str, Any]]:
    """Matching summaries, newest first (ties by id), cut to the limit."""
    chosen = [s for s in rows if f.matches(s)]
    chosen.sort(key=lambda s: (-(iso_ms(s.get("timestamp")) or 0), str(s["id"])))
    return chosen[: max(1, f.limit)]
