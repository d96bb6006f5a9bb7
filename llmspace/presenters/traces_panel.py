"""The Traces panel (the sidebar's "Traces" beside "Files"): state and intents, no Tk.

It lists the trace projects of `traces/TraceStore` with their badge (the source — Langfuse,
OpenTelemetry or Phoenix — and manual import or connected, with a connected one's last sync) and each project's traces with
start time, model, observation count and status, newest first (the store's order). Intents:
new project, import files (each refused file named with its reason, the others imported;
the warning `llmspace import` gives about local files a workbench would read), rename a
project or a trace (`traces/titles.py`), remove either (to the trash), and copy a trace's
workbench to the workspace as a normal thread. `source_of(rel)` says what a workbench tab
shows of its source: the trace id and, when known, the link to the trace in its web app.

A trace opens as the thread `trace/<projectId>/<traceKey>/workbench.json`
(`traces/workbench.pseudo_path`), which the workspace resolves to the trace folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core.names import shown_name
from ..core.templating.file_reads import local_file_reads
from ..core.threadio import parse_thread
from ..core.workspace import Workspace
from ..errors import UserFacingError
from ..jsonio import read_file_bytes
from ..traces.files import SOURCE_LABELS
from ..traces.spans import iso_ms
from ..traces.store import WORKBENCH, TraceStore
from ..traces.titles import rename_project, rename_trace
from ..traces.workbench import PREFIX, copy_to_workspace, pseudo_path

NO_PROJECTS = (
    "No trace projects yet.\n\n"
    "A trace file is what an observability tool writes about one run of an LLM app: every model call "
    "and tool call with its input, output, timing and usage. Imported here, a trace opens as a thread "
    "you can edit and run again.\n\n"
    "Where to get one: Langfuse (a trace's ⋯ › Download, or the public API's observations), an "
    "OpenTelemetry collector's file exporter (OTLP JSON, one request per line), or Phoenix "
    "(GET /v1/projects/<project>/spans).\n\n"
    "Make a project with “New trace project…”, then “Import…” files or drop them here.")

NO_TRACES = "No traces yet: “Import…” a Langfuse export, an OTLP JSON file or a Phoenix span listing, or drop one here."


@dataclass(frozen=True)
class TraceRow:
    """One trace as the panel lists it."""

    project_id: str
    key: str
    title: str
    started: str  # local time, "" when unknown
    model: str
    observations: int
    status: str  # ok | error

    @property
    def path(self) -> str:
        return pseudo_path(self.project_id, self.key)

    @property
    def detail(self) -> str:
        """Start time · model · N obs (· error), as the original's rows read."""
        parts = [p for p in (self.started, self.model) if p]
        parts.append(f"{self.observations} obs")
        if self.status == "error":
            parts.append("error")
        return " · ".join(parts)

    @property
    def label(self) -> str:
        return f"{shown_name(self.title)} — {self.detail}"


@dataclass(frozen=True)
class ProjectRow:
    id: str
    name: str
    badge: str
    source_type: str
    traces: tuple[TraceRow, ...] = ()
    connected: bool = False  # to a Langfuse or Phoenix server ("Sync…")

    @property
    def label(self) -> str:
        return f"{shown_name(self.name)}  [{self.badge}]"


@dataclass(frozen=True)
class TraceSource:
    """What a workbench tab shows of where its thread came from."""

    badge: str  # "Langfuse trace", "OpenTelemetry trace", "Phoenix trace"
    title: str
    trace_id: str
    url: str | None  # the trace in its web app, when known (a connected project)
    project_name: str


@dataclass
class ImportOutcome:
    imported: list[TraceRow] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (file name, reason)
    notes: list[str] = field(default_factory=list)  # what the mapping could not map, per trace
    warnings: list[str] = field(default_factory=list)  # local files a workbench would read

    @property
    def message(self) -> str:
        text = f"Imported {len(self.imported)} trace(s)."
        if self.refused:
            text += " Skipped: " + "; ".join(f"{shown_name(n)} ({why})" for n, why in self.refused)
        return text


def badge(project: dict[str, Any]) -> str:
    """The source and mode; a connected project adds its last sync (when and whether it failed)."""
    source = project.get("source") or {}
    kind = str(source.get("type") or "")
    label = SOURCE_LABELS.get(kind, kind or "unknown")
    if source.get("mode") != "connected":
        return f"{label} · manual"
    at = source.get("lastSyncAt")
    if not isinstance(at, int | float) or isinstance(at, bool):
        return f"{label} · connected · never synced"
    failed = " failed" if source.get("lastSyncStatus") == "error" else ""
    return f"{label} · connected · synced {datetime.fromtimestamp(at / 1000).strftime('%Y-%m-%d %H:%M')}{failed}"


def local_time(value: Any) -> str:
    ms = iso_ms(value)
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M") if ms else ""


def trace_row(project_id: str, record: dict[str, Any]) -> TraceRow:
    count = record.get("observationCount")
    return TraceRow(project_id, str(record.get("key")), str(record.get("title") or record.get("key")),
                    local_time(record.get("startedAt")), str(record.get("model") or ""),
                    count if isinstance(count, int) and not isinstance(count, bool) else 0,
                    "error" if record.get("status") == "error" else "ok")


def web_link(project: dict[str, Any], trace_id: str) -> str | None:
    """The trace in its web app: known for a connected Langfuse or Phoenix project."""
    source = project.get("source") or {}
    base = str(source.get("baseUrl") or "").rstrip("/")
    if not base or not trace_id or not base.startswith(("http://", "https://")):
        return None
    if source.get("type") == "langfuse" and source.get("langfuseProjectId"):
        return f"{base}/project/{source['langfuseProjectId']}/traces/{trace_id}"
    if source.get("type") == "phoenix" and source.get("phoenixProjectId"):
        return f"{base}/projects/{source['phoenixProjectId']}/traces/{trace_id}"
    return None


def parse_path(rel: str) -> tuple[str, str] | None:
    """(project id, trace key) of a workbench path `trace/<projectId>/<traceKey>/workbench.json`."""
    parts = rel.split("/")
    if len(parts) == 4 and parts[0] == PREFIX and parts[3] == WORKBENCH and all(parts[1:3]):
        return parts[1], parts[2]
    return None


class TracesPanelPresenter:
    """State and intents of the Traces panel."""

    def __init__(self, store: TraceStore, workspace: Workspace) -> None:
        self.store = store
        self.ws = workspace
        self.projects: list[ProjectRow] = []

    # -- listing -------------------------------------------------------------------------
    def refresh(self) -> list[ProjectRow]:
        rows = []
        for project in self.store.projects():
            try:
                records = self.store.traces(project["id"])
            except UserFacingError:
                records = []
            rows.append(ProjectRow(project["id"], str(project.get("name") or project["id"]), badge(project),
                                   str((project.get("source") or {}).get("type") or ""),
                                   tuple(trace_row(project["id"], r) for r in records),
                                   (project.get("source") or {}).get("mode") == "connected"))
        self.projects = rows
        return rows

    def take_notices(self) -> list[str]:
        """What reading the projects changed on disk, once (a project the original wrote with
        plain keys: the keys moved to the secret store, and the original can no longer sync it)."""
        notices = list(self.store.notices)
        self.store.notices.clear()
        return notices

    @property
    def empty_text(self) -> str | None:
        """What the panel says when there is nothing to list."""
        return NO_PROJECTS if not self.projects else None

    def project(self, project_id: str) -> ProjectRow | None:
        return next((p for p in self.projects if p.id == project_id), None)

    def import_target(self, selected_project: str | None) -> str | None:
        """The project files go into: the selected one, else the only one; None when it must be asked."""
        if selected_project is not None:
            return selected_project
        return self.projects[0].id if len(self.projects) == 1 else None

    # -- intents -------------------------------------------------------------------------
    def new_project(self, name: str) -> str:
        """A manual project; it takes the source type of the first file imported into it."""
        project = self.store.create_project(name)
        self.refresh()
        return str(project["id"])

    def import_files(self, project_id: str, paths: list[str]) -> ImportOutcome:
        """Import trace files and list them again."""
        outcome = self.import_work(project_id, paths)
        self.refresh()
        return outcome

    def import_work(self, project_id: str, paths: list[str]) -> ImportOutcome:
        """The import itself (files read, traces written), touching no state of the panel: a
        worker may run it; `refresh()` afterwards lists the result."""
        report = self.store.import_files(project_id, [Path(p).expanduser() for p in paths])
        outcome = ImportOutcome(refused=list(report.refused))
        for record in report.imported:
            row = trace_row(project_id, record)
            outcome.imported.append(row)
            outcome.notes.extend(f"{row.title}: {note}" for note in report.notes.get(row.key, []))
            path = self.store.workbench_path(project_id, row.key)
            reads = local_file_reads(parse_thread(read_file_bytes(path, shown=row.path), row.path))
            if reads:
                outcome.warnings.append(reads.describe(row.path))
        return outcome

    def rename_project(self, project_id: str, name: str) -> str:
        """Returns the name given (trimmed)."""
        written = rename_project(self.store, project_id, name)
        self.refresh()
        return str(written["name"])

    def rename_trace(self, project_id: str, key: str, title: str) -> str:
        """Returns the title given (trimmed)."""
        written = rename_trace(self.store, project_id, key, title)
        self.refresh()
        return str(written["title"])

    def remove_prompt(self, project_id: str, key: str | None = None) -> str:
        project = self.project(project_id)
        name = project.name if project else project_id
        if key is None:
            count = len(project.traces) if project else 0
            return f"Move trace project “{shown_name(name)}” and its {count} trace(s) to the trash?"
        row = next((t for t in (project.traces if project else ()) if t.key == key), None)
        return f"Move trace “{shown_name(row.title if row else key)}” to the trash?"

    def remove(self, project_id: str, key: str | None = None) -> str:
        """Move a project (or one trace) to the trash; returns the status line."""
        if key is None:
            name = (self.project(project_id) or ProjectRow(project_id, project_id, "", "")).name
            self.store.remove_project(project_id)
            text = f"Moved trace project {shown_name(name)} to the trash."
        else:
            self.store.remove_trace(project_id, key)
            text = f"Moved trace {key} to the trash."
        self.refresh()
        return text

    def copy_to_workspace(self, project_id: str, key: str, folder: str = "") -> tuple[str, str | None]:
        """The workbench as a normal thread in the workspace: (its path, the local-files warning or None)."""
        return copy_to_workspace(self.store, self.ws, project_id, key, folder)

    def source_of(self, rel: str) -> TraceSource | None:
        """What the tab of `rel` shows of its trace (None when `rel` is no trace workbench)."""
        found = parse_path(rel)
        if found is None:
            return None
        project_id, key = found
        try:
            project = self.store.find_project(project_id)
            record = self.store.read_trace(project_id, key)
        except UserFacingError:
            return None
        kind = str((record.get("source") or {}).get("type") or (project.get("source") or {}).get("type") or "")
        trace_id = str(record.get("id") or (record.get("source") or {}).get("traceId") or "")
        return TraceSource(f"{SOURCE_LABELS.get(kind, kind)} trace", str(record.get("title") or key), trace_id,
                           web_link(project, trace_id), str(project.get("name") or project_id))
