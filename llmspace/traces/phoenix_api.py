"""Arize Phoenix's REST API for a connected trace project: check, search and fetch one trace.

- **Check**: `GET /v1/projects` (paged by `next_cursor`) must list the project, by name or id.
- **Search**: `GET /v1/projects/{p}/traces?start_time=&end_time=&sort=start_time&order=desc&limit=
  &filter=` — the time range and Phoenix's own filter expression (`--filter`, e.g.
  `any(span.span_kind == 'TOOL' for span in spans)`) go to the server; the name, user, session
  and free text are applied here on each trace's root span (`GET …/spans?trace_id=`, its
  `name`, `user.id`, `session.id`), which Phoenix's trace rows do not carry.
- **Fetch**: `GET /v1/projects/{p}/spans?trace_id=…&sort=start_time&order=asc&limit=1000&cursor=`,
  at most `MAX_PAGES` pages; a trace with more is refused whole (`TooLong`).

Auth: `Authorization: Bearer <key>` when the project has an API key (Phoenix with auth on).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ..redact import KNOWN
from .langfuse_api import MAX_PAGES, SearchFilters, TooLong
from .otel import flatten
from .remote import JsonClient, RemoteError
from .spans import first_string, iso_ms

PAGE_SIZE = 1000
LABEL = "Phoenix"


def _rows(page: Any) -> list[dict[str, Any]]:
    data = page.get("data") if isinstance(page, dict) else None
    return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []


def _next(page: Any) -> str | None:
    return first_string(page.get("next_cursor")) if isinstance(page, dict) else None


class PhoenixClient:
    def __init__(self, base_url: str, project: str, api_key: str | None = None, *,
                 timeout: tuple[float, float] | None = None, page_size: int = PAGE_SIZE) -> None:
        headers = {}
        if api_key:
            KNOWN.add([api_key])
            headers["Authorization"] = f"Bearer {api_key}"
        kwargs: dict[str, Any] = {"timeout": timeout} if timeout else {}
        self.http = JsonClient(base_url, LABEL, headers, **kwargs)
        self.project = project
        self.page_size = page_size
        self._path = f"/v1/projects/{quote(project, safe='')}"

    def close(self) -> None:
        self.http.close()

    def check(self) -> dict[str, Any]:
        """The project's record; a missing project is an error naming the ones there are."""
        names: list[str] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = self.http.get("/v1/projects", {"cursor": cursor})
            for row in _rows(page):
                if self.project in (row.get("name"), row.get("id")):
                    return row
                names.append(str(row.get("name")))
            cursor = _next(page)
            if not cursor:
                break
        shown = ", ".join(names[:10]) or "none"
        raise RemoteError(f"Phoenix has no project {self.project!r} (its projects: {shown}).", "project",
                          hint="Give one of them with --phoenix-project.")

    def _missing_project(self) -> str:
        return f"Phoenix has no project {self.project!r} (HTTP 404)."

    def search(self, f: SearchFilters) -> list[dict[str, Any]]:
        local = bool(f.text or f.name or f.user or f.session)
        params = {"start_time": f.start, "end_time": f.end, "sort": "start_time", "order": "desc",
                  "limit": max(1, min(1000, f.limit * 4 if local else f.limit)), "filter": f.expression or None}
        page = self.http.get(f"{self._path}/traces", params, not_found=self._missing_project())
        out: list[dict[str, Any]] = []
        for row in _rows(page):
            tid = first_string(row.get("trace_id"))
            if not tid:
                continue
            summary = {"id": tid, "name": "", "timestamp": first_string(row.get("start_time")), "userId": None,
                       "sessionId": None, "environment": None, "observationCount": None}
            root = self._root_span(tid)
            if root:
                given = root.get("attributes")
                attrs = flatten(given) if isinstance(given, dict) else {}
                summary["name"] = str(root.get("name") or "")
                summary["userId"] = first_string(attrs.get("user.id"))
                summary["sessionId"] = first_string(attrs.get("session.id"), attrs.get("gen_ai.conversation.id"))
            if f.matches(summary):
                out.append(summary)
            if len(out) >= f.limit:
                break
        out.sort(key=lambda s: (-(iso_ms(s.get("timestamp")) or 0), s["id"]))
        return out

    def _root_span(self, trace_id: str) -> dict[str, Any] | None:
        page = self.http.get(f"{self._path}/spans", {"trace_id": trace_id, "sort": "start_time", "order": "asc",
                                                     "limit": 100}, not_found=self._missing_project())
        rows = _rows(page)
        ids = {(r.get("context") or {}).get("span_id") for r in rows}
        return next((r for r in rows if not r.get("parent_id") or r.get("parent_id") not in ids), None)

    def spans(self, trace_id: str) -> list[dict[str, Any]]:
        """Every span of one trace, or `TooLong`."""
        rows: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = self.http.get(f"{self._path}/spans", {"trace_id": trace_id, "sort": "start_time", "order": "asc",
                                                         "limit": self.page_size, "cursor": cursor},
                                 not_found=self._missing_project())
            rows.extend(_rows(page))
            cursor = _next(page)
            if not cursor:
                return rows
        raise TooLong(trace_id)
