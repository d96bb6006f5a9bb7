"""The "Sync…" dialog of a connected trace project: the original's filters (time range, name,
user, session, environment, free text; Phoenix's filter expression), sort and limit, the
search results as rows to pick from, the question before a re-sync rebuilds an edited
workbench, the sync itself with progress and Cancel, and the project's last sync.

    sync = TraceSync(store, project_id)
    rows = sync.search_work(SyncForm(text="paris", sort="Oldest", limit=50))   # on a worker
    edited = sync.edited([r.id for r in chosen])     # titles whose workbench was edited
    report = sync.sync_work(ids, rebuild=False, cancel=token, progress=fn)      # on a worker
    sync.outcome(report); sync.last_sync()

Searching and syncing block on the network (`traces/connect.py`, bounded in time); the view
runs them on the worker pool and hands results back through the pump. Cancel cancels the
token: the HTTP call in flight is cut off at once and the sync stops (a trace is never stored in
part). No Tk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ..cancel import CancelToken
from ..core.names import shown_name
from ..errors import UserFacingError
from ..traces.connect import SyncReport, search, sync
from ..traces.langfuse_api import SearchFilters
from ..traces.spans import iso_ms
from ..traces.store import WORKBENCH, TraceStore
from .traces_panel import local_time

SORTS = ("Newest", "Oldest", "Name", "User", "Session", "ID")
LIMITS = (25, 50, 100)
DEFAULT_DAYS = 7
SyncOutcome = SyncReport  # what a sync did: (record, workbench state) per trace, skipped ids with why
STATE_WORDS = {"built": "new", "rebuilt": "workbench rebuilt", "kept": "your edited workbench kept"}


@dataclass
class SyncForm:
    """The filters as typed. Times are local ISO-8601 text (`2026-12-01 09:30`, or a date)."""

    text: str = ""
    start: str = ""  # empty: DEFAULT_DAYS before `end` (or now)
    end: str = ""
    name: str = ""
    user: str = ""
    session: str = ""
    environment: str = ""
    expression: str = ""  # Phoenix's filter expression
    sort: str = "Newest"
    limit: int = 25


@dataclass(frozen=True)
class ResultRow:
    """One trace the server found."""

    id: str
    timestamp: str  # as the server gave it
    name: str
    user: str
    session: str
    observations: int | None

    @property
    def label(self) -> str:
        parts = [local_time(self.timestamp) or "-", shown_name(self.name) or "(no name)"]
        if self.user:
            parts.append(f"user {shown_name(self.user)}")
        if self.session:
            parts.append(f"session {shown_name(self.session)}")
        if self.observations is not None:
            parts.append(f"{self.observations} obs")
        return " · ".join(parts) + f" · {self.id}"


def parse_time(text: str, label: str) -> datetime | None:
    """A typed time as an aware datetime (no zone: local time); None when empty."""
    value = text.strip()
    if not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UserFacingError(f"{label} {value!r} is not a date and time.",
                              hint="Write it like 2026-12-01 09:30 or 2026-12-01.") from None
    return when.astimezone() if when.tzinfo is None else when


def _utc(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def filters_of(form: SyncForm, now: datetime | None = None) -> SearchFilters:
    """The search the form asks for (the default range: the last `DEFAULT_DAYS` days)."""
    end = parse_time(form.end, "To")
    start = parse_time(form.start, "From")
    if start is None:
        start = (end or now or datetime.now(UTC)) - timedelta(days=DEFAULT_DAYS)
    if end is not None and end <= start:
        raise UserFacingError("The time range is empty: To is not after From.", hint="Put From before To.")
    if form.limit not in LIMITS:
        raise UserFacingError(f"Limit {form.limit} is not one of {', '.join(map(str, LIMITS))}.")
    return SearchFilters(start=_utc(start), end=_utc(end) if end else None, text=form.text.strip(),
                         name=form.name.strip(), user=form.user.strip(), session=form.session.strip(),
                         environment=form.environment.strip(), limit=form.limit, expression=form.expression.strip())


def sort_rows(rows: list[ResultRow], sort: str) -> list[ResultRow]:
    """Rows in the order asked (dates as dates, text ignoring case, ties by id)."""
    if sort in ("Newest", "Oldest"):
        ordered = sorted(rows, key=lambda r: ((iso_ms(r.timestamp) or 0), r.id))
        return ordered[::-1] if sort == "Newest" else ordered
    field = {"Name": "name", "User": "user", "Session": "session", "ID": "id"}.get(sort)
    if field is None:
        raise UserFacingError(f"Unknown sort {sort!r}; choose one of {', '.join(SORTS)}.")
    return sorted(rows, key=lambda r: (str(getattr(r, field)).casefold(), r.id))


def result_row(found: dict[str, Any]) -> ResultRow:
    count = found.get("observationCount")
    return ResultRow(str(found["id"]), str(found.get("timestamp") or ""), str(found.get("name") or ""),
                     str(found.get("userId") or ""), str(found.get("sessionId") or ""),
                     count if isinstance(count, int) and not isinstance(count, bool) else None)


class TraceSync:
    """Search and sync of one connected project."""

    def __init__(self, store: TraceStore, project_id: str, *, timeout: tuple[float, float] | None = None) -> None:
        self.store = store
        self.project_id = project_id
        self.timeout = timeout
        self.project = store.read_project(project_id)
        source = self.project.get("source") or {}
        if source.get("mode") != "connected":
            raise UserFacingError(f"Trace project {self.project.get('name')!r} is not connected to a trace server.",
                                  hint="Connect one with “Connect Langfuse…” or “Connect Phoenix…”; import files into this one.")
        self.kind = str(source.get("type") or "")

    @property
    def name(self) -> str:
        return str(self.project.get("name") or self.project_id)

    @property
    def has_expression(self) -> bool:
        """Phoenix takes a filter expression; Langfuse has none."""
        return self.kind == "phoenix"

    def last_sync(self) -> str:
        """The project's last sync, as the dialog and the panel say it."""
        source = self.store.read_project(self.project_id).get("source") or {}
        at = source.get("lastSyncAt")
        if not isinstance(at, int | float) or isinstance(at, bool):
            return "Never synced."
        when = datetime.fromtimestamp(at / 1000).strftime("%Y-%m-%d %H:%M")
        if source.get("lastSyncStatus") == "error":
            return f"Last sync {when} failed: {source.get('lastSyncError') or 'unknown error'}"
        return f"Last sync {when}: success."

    # -- worker side ------------------------------------------------------------------------
    def search_work(self, form: SyncForm) -> list[ResultRow]:
        filters = filters_of(form)
        found = search(self.store, self.store.read_project(self.project_id), filters, timeout=self.timeout)
        return sort_rows([result_row(f) for f in found], form.sort)

    def edited(self, trace_ids: list[str]) -> list[str]:
        """The titles of the chosen traces already here whose workbench was edited since it
        was built (a sync keeps those unless told to rebuild them)."""
        out = []
        for trace_id in dict.fromkeys(trace_ids):
            record = self.store.find_trace_by_id(self.project_id, trace_id)
            if record is None:
                continue
            path = self.store.trace_dir(self.project_id, str(record["key"])) / WORKBENCH
            built = record.get("workbenchSha256")
            if path.exists() and built != hashlib.sha256(path.read_bytes()).hexdigest():
                out.append(str(record.get("title") or record["key"]))
        return out

    def sync_work(self, trace_ids: list[str], *, rebuild: bool, cancel: CancelToken,
                  progress: Callable[[int, int], None] | None = None) -> SyncReport:
        return sync(self.store, self.store.read_project(self.project_id), trace_ids, rebuild=rebuild,
                    timeout=self.timeout, progress=progress, cancel=cancel)

    # -- results ----------------------------------------------------------------------------
    @staticmethod
    def outcome(report: SyncReport) -> str:
        lines = [f"Synced {len(report.synced)} trace(s)."]
        lines += [f"• {shown_name(str(r.get('title') or r['key']))}: {STATE_WORDS.get(state, state)}"
                  for r, state in report.synced]
        lines += [f"• skipped {tid}: {why}" for tid, why in report.skipped]
        return "\n".join(lines)


def rebuild_question(titles: list[str]) -> str:
    shown = "\n".join(f"• {shown_name(t)}" for t in titles[:10]) + ("\n…" if len(titles) > 10 else "")
    return (f"You edited the workbench of {len(titles)} of these traces:\n{shown}\n\n"
            "Keep your edits (the trace data is updated, the workbench stays as you left it), or rebuild "
            "the workbench from the new data (your edits are lost)?")
