"""Trace projects on disk, in the original app's layout (its §14), so either app opens the other's.

    traces/projects/<projectId>/project.json
    traces/projects/<projectId>/traces/<traceKey>/raw.json        what came in (never rewritten)
    traces/projects/<projectId>/traces/<traceKey>/trace.json      the summary (TraceRecord)
    traces/projects/<projectId>/traces/<traceKey>/workbench.json  the editable thread

- projectId `proj_` + 10 hex of SHA-256(name:time:uuid); project.json `{id, name, source, createdAt,
  updatedAt}` (epoch ms). `source.type` is `langfuse` (`mode: "manual"`, the original's), or ours:
  `otlp` and `phoenix`. A project holds one source type: an empty project takes the type of the
  first file imported into it.
- traceKey: slug(title) cut to 48 + `-` + 10 hex of SHA-256(traceId); `-2`, `-3`, … when taken
  (importing a trace again makes a new folder, as the original does).
- trace.json: id, key, projectId, title, observationCount, importedAt, updatedAt, startedAt,
  endedAt (ISO text as the rows give it), latencyMs, model, status, usage (summed over all
  rows) and source `{type, mode, traceId, fileName?, projectId?, projectName?}`; ours besides:
  `notes`, what the mapping could not map.
- One Langfuse project per local project (the original's manual-import rule): a batch with
  more than one Langfuse project id, or another id than the linked one, is refused whole.
- The workbench is written at import and, for a folder written by the original, on first
  open (`workbench_path`); later reads never rebuild it, so edits are kept.
- Connected projects (`create_connected_project`, `upsert_synced`; the network is in
  `connect.py`): `source.mode` `connected` with `baseUrl`, key previews and no key — keys are in
  the app's secret store (`llmspace/secrets.py`) under `trace-project:<id>:<secret-key|api-key>`. A
  project the original wrote with `secretKey` in it has the key moved there on first read
  (`notices` says so). A sync upserts by remote trace id, keeping the key and `importedAt`; it
  rebuilds the workbench only when it is as the last build left it (`workbenchSha256` in
  trace.json), or when asked (`rebuild=True`): an edited workbench is kept.

All writes go through `jsonio`'s atomic writer; removal goes to the trash. No network.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.threadio import write_thread_file
from ..core.trash import Trash
from ..errors import UserFacingError
from ..jsonio import UnreadableFileError, read_file_bytes, read_json, write_json_atomic
from ..secrets import SecretStore
from . import langfuse
from .files import SOURCE_LABELS, TraceFile, TraceRows, read_trace_file, spans_of
from .mapping import ModelResolver, map_spans
from .records import root_title, trace_record
from .spans import iso_ms

KEY_SLUG_MAX = 48
SOURCE_TYPES = ("langfuse", "otlp", "phoenix")
WORKBENCH = "workbench.json"


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "trace"


def check_segment(segment: str, what: str = "path segment") -> str:
    """A project id or trace key as a folder name: refused with `/`, `\\`, `..`, empty or NUL (the original's rule, and more)."""
    if not segment or "/" in segment or "\\" in segment or segment in (".", "..") or "\x00" in segment:
        raise UserFacingError(f"{segment!r} is not a valid trace {what}.")
    return segment


@dataclass
class ImportReport:
    imported: list[dict[str, Any]] = field(default_factory=list)  # trace.json records written
    refused: list[tuple[str, str]] = field(default_factory=list)  # (file name, reason)
    notes: dict[str, list[str]] = field(default_factory=dict)  # trace key -> what was not mapped

    @property
    def warnings(self) -> list[str]:
        return [f"{name}: {reason}" for name, reason in self.refused]


class TraceStore:
    """The trace projects under `root` (the data root's `traces/projects`)."""

    def __init__(self, root: Path, *, trash_dir: Path | None = None, resolve_model: ModelResolver | None = None,
                 secrets: SecretStore | None = None) -> None:
        self.root = Path(root)
        self.trash = Trash(self.root, trash_dir)
        self.resolve_model = resolve_model
        self.secrets = secrets
        self.notices: list[str] = []  # what reading changed on disk (keys moved to the secret store)

    # -- paths ----------------------------------------------------------------------------
    def project_dir(self, project_id: str) -> Path:
        return self.root / check_segment(project_id, "project id")

    def trace_dir(self, project_id: str, key: str) -> Path:
        return self.project_dir(project_id) / "traces" / check_segment(key, "key")

    # -- projects -------------------------------------------------------------------------
    def projects(self) -> list[dict[str, Any]]:
        """Readable projects, newest `updatedAt` first, then by name (unreadable folders skipped)."""
        found = []
        for entry in _folders(self.root):
            try:
                found.append(self._read_project(entry))
            except UserFacingError:
                continue
        return sorted(found, key=lambda p: (-_num(p.get("updatedAt")), str(p.get("name", ""))))

    def read_project(self, project_id: str) -> dict[str, Any]:
        return self._read_project(project_id)

    def _read_project(self, project_id: str) -> dict[str, Any]:
        path = self.project_dir(project_id) / "project.json"
        try:
            data = read_json(path)
        except UnreadableFileError as exc:
            if exc.missing:
                raise UserFacingError(f"There is no trace project {project_id!r}.",
                                      hint="Run `llmspace traces projects` to see them.") from None
            raise
        if not isinstance(data, dict) or not isinstance(data.get("id"), str) or not isinstance(data.get("source"), dict):
            raise UserFacingError(f"{path} is not a trace project file.")
        project: dict[str, Any] = data
        if self.secrets is not None and any(k in project["source"] for k in PLAIN_KEYS):
            project = self._move_keys(project)
        return project

    def _move_keys(self, project: dict[str, Any]) -> dict[str, Any]:
        """A project the original wrote keeps its keys in plain text: the secret ones go to the
        secret store, project.json keeps previews only."""
        assert self.secrets is not None
        source = dict(project["source"])
        for field_name, secret in PLAIN_KEYS.items():
            value = source.pop(field_name, None)
            if isinstance(value, str) and value:
                self.secrets.set(secret_name(project["id"], secret), value)
                source.setdefault(f"{field_name}Preview", key_preview(value))
        project = {**project, "source": source}
        self._write_project(project)
        self.notices.append(
            f"Trace project {project.get('name')!r}: its keys were in project.json in plain text and are now in "
            f"{self.secrets.where}. The original app can still open this project but can no longer sync it.")
        return project

    def create_project(self, name: str, source_type: str = "langfuse") -> dict[str, Any]:
        trimmed = name.strip()
        if not trimmed:
            raise UserFacingError("Trace project name is required.")
        if any(ord(c) < 32 for c in trimmed):
            raise UserFacingError("A trace project name cannot hold control characters.")
        if source_type not in SOURCE_TYPES:
            raise UserFacingError(f"Unknown trace source {source_type!r}; use one of {', '.join(SOURCE_TYPES)}.")
        now = int(time.time() * 1000)
        project_id = f"proj_{short_hash(f'{trimmed}:{now}:{uuid.uuid4()}')}"
        project = {"id": project_id, "name": trimmed, "source": {"type": source_type, "mode": "manual"},
                   "createdAt": now, "updatedAt": now}
        self._write_project(project)
        return project

    def create_connected_project(self, name: str, source: dict[str, Any], secrets: dict[str, str]) -> dict[str, Any]:
        """A connected project: `source` holds `type`, `baseUrl` and what the check found;
        `secrets` ({"secret-key"|"api-key": value}) go to the secret store, never to a file here."""
        trimmed = name.strip()
        if not trimmed or any(ord(c) < 32 for c in trimmed):
            raise UserFacingError("A trace project needs a name without control characters.")
        if any(k in source for k in PLAIN_KEYS):
            raise UserFacingError("A connected project's keys go to the secret store, not to project.json.")
        if secrets and self.secrets is None:
            raise UserFacingError("No secret store to keep the keys in.")
        now = int(time.time() * 1000)
        base_url = source.get("baseUrl")
        project_id = f"proj_{short_hash(f'{trimmed}:{base_url}:{now}:{uuid.uuid4()}')}"
        for secret, value in secrets.items():
            assert self.secrets is not None
            self.secrets.set(secret_name(project_id, secret), value)
        project = {"id": project_id, "name": trimmed, "source": {**source, "mode": "connected"},
                   "createdAt": now, "updatedAt": now}
        self._write_project(project)
        return project

    def secret(self, project_id: str, secret: str) -> str | None:
        return self.secrets.get(secret_name(project_id, secret)) if self.secrets is not None else None

    def set_sync_status(self, project_id: str, error: str | None) -> dict[str, Any]:
        """lastSyncAt now; lastSyncStatus `success` (an old error cleared) or `error` with lastSyncError."""
        project = self._read_project(project_id)
        source = dict(project["source"])
        now = int(time.time() * 1000)
        source["lastSyncAt"] = now
        source["lastSyncStatus"] = "error" if error else "success"
        if error:
            source["lastSyncError"] = error
        else:
            source.pop("lastSyncError", None)
        project = {**project, "source": source, "updatedAt": now}
        self._write_project(project)
        return project

    def _write_project(self, project: dict[str, Any]) -> None:
        write_json_atomic(self.project_dir(project["id"]) / "project.json", project)

    def find_project(self, given: str) -> dict[str, Any]:
        """A project by id, else by name (exactly one must have it)."""
        given = given.strip()
        if given and "/" not in given and "\\" not in given and given not in (".", "..") \
                and (self.root / given / "project.json").is_file():
            return self._read_project(given)
        named = [p for p in self.projects() if p.get("name") == given]
        if len(named) == 1:
            return named[0]
        if len(named) > 1:
            ids = ", ".join(p["id"] for p in named)
            raise UserFacingError(f"{len(named)} trace projects are named {given!r} ({ids}).", hint="Give the project's id.")
        raise UserFacingError(f"There is no trace project {given!r}.", hint="Run `llmspace traces projects` to see them.")

    # -- traces ---------------------------------------------------------------------------
    def traces(self, project_id: str) -> list[dict[str, Any]]:
        """The project's trace records, newest `startedAt` first (unreadable folders skipped)."""
        self._read_project(project_id)
        records = []
        for key in _folders(self.project_dir(project_id) / "traces"):
            try:
                records.append(self.read_trace(project_id, key))
            except UserFacingError:
                continue
        return sorted(records, key=lambda r: -(iso_ms(r.get("startedAt")) or 0))

    def read_trace(self, project_id: str, key: str) -> dict[str, Any]:
        path = self.trace_dir(project_id, key) / "trace.json"
        try:
            data = read_json(path)
        except UnreadableFileError as exc:
            if exc.missing:
                raise UserFacingError(f"There is no trace {key!r} in trace project {project_id}.",
                                      hint=f"Run `llmspace traces list {project_id}` to see them.") from None
            raise
        if not isinstance(data, dict):
            raise UserFacingError(f"{path} is not a trace record.")
        return data

    def read_raw(self, project_id: str, key: str) -> dict[str, Any]:
        path = self.trace_dir(project_id, key) / "raw.json"
        data = read_json(path)
        if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
            raise UserFacingError(f"{path} holds no rows.", hint="Import the trace again.")
        return data

    def workbench_path(self, project_id: str, key: str) -> Path:
        """The trace's workbench file, built from raw.json when it does not exist yet."""
        path = self.trace_dir(project_id, key) / WORKBENCH
        if not path.exists():
            record = self.read_trace(project_id, key)
            self._write_workbench(path, record, self.read_raw(project_id, key))
        return path

    def _write_workbench(self, path: Path, record: dict[str, Any], raw: dict[str, Any]) -> list[str]:
        source = (raw.get("source") or {}).get("type") or (record.get("source") or {}).get("type") or "langfuse"
        rows = [r for r in raw["rows"] if isinstance(r, dict)]
        spans = spans_of(str(source), rows)
        trace_id = str(record.get("id") or (record.get("source") or {}).get("traceId") or "")
        model = None
        if source == "langfuse" and (codex := langfuse.codex_model(rows)):
            model = {"provider": "openai-codex", "id": codex}
        started = iso_ms(record.get("startedAt"))
        mapped = map_spans(spans, title=str(record.get("title") or f"Trace {trace_id[:8]}"), trace_id=trace_id,
                           timestamp=started if started is not None else _num(record.get("importedAt")),
                           model=model, resolve_model=self.resolve_model, source=f"{SOURCE_LABELS.get(str(source), source)} trace")
        write_thread_file(path, mapped.thread, shown=str(path))
        return mapped.notes

    def import_files(self, project_id: str, paths: list[Path]) -> ImportReport:
        """Import trace files into a project; each refused file is named with its reason and the
        others are imported. A batch that breaks the one-Langfuse-project rule raises, writing nothing."""
        project = self._read_project(project_id)
        report = ImportReport()
        accepted: list[TraceFile] = []
        kind = str(project["source"].get("type"))
        empty = not self.traces(project_id)
        if project["source"].get("mode") == "connected":
            raise UserFacingError("Manual import is only available for manual projects.",
                                  hint="This project syncs from Langfuse; make another project for files.")
        for path in paths:
            parsed = read_trace_file(Path(path))
            if parsed.refused:
                report.refused.append((parsed.name, parsed.refused))
                continue
            if parsed.source != kind:
                if empty and not accepted and not project["source"].get("langfuseProjectId"):
                    kind = parsed.source
                else:
                    report.refused.append((parsed.name, (f"it holds {SOURCE_LABELS[parsed.source]} traces and trace project "
                                                        f"{project['name']!r} holds {SOURCE_LABELS.get(kind, kind)} traces; "
                                                        "import it into another project")))
                    continue
            accepted.append(parsed)
        if kind == "langfuse":
            self._check_one_langfuse_project(project, accepted)
        for parsed in accepted:
            for group in parsed.traces:
                record, notes = self._write_trace(project, kind, parsed.name, group)
                report.imported.append(record)
                if notes:
                    report.notes[record["key"]] = notes
        if report.imported:
            fresh = self._read_project(project_id)
            source = dict(fresh["source"])
            if source.get("type") != kind:
                source = {"type": kind, "mode": "manual"}
            if kind == "langfuse":
                source.update(self._langfuse_link(source, accepted))
            fresh["source"] = source
            fresh["updatedAt"] = int(time.time() * 1000)
            self._write_project(fresh)
        return report

    def _existing_langfuse_ids(self, project: dict[str, Any]) -> set[str]:
        ids = {str(project["source"]["langfuseProjectId"])} if project["source"].get("langfuseProjectId") else set()
        for record in self.traces(project["id"]):
            pid = (record.get("source") or {}).get("projectId")
            if pid:
                ids.add(str(pid))
        return ids

    def _check_one_langfuse_project(self, project: dict[str, Any], files: list[TraceFile]) -> None:
        batch = set().union(*(f.project_ids for f in files)) if files else set()
        existing = self._existing_langfuse_ids(project)
        name = project["name"]
        if len(batch) > 1:
            raise UserFacingError(f"The files hold {len(batch)} Langfuse project ids ({_ids(batch)}). "
                                  f"Import one Langfuse project into {name!r} at a time; nothing was imported.")
        if len(existing) > 1:
            raise UserFacingError(f"Trace project {name!r} already holds {len(existing)} Langfuse project ids and "
                                  "cannot take more imports; nothing was imported.")
        unexpected = batch - existing
        if existing and unexpected:
            raise UserFacingError(f"Trace project {name!r} is linked to Langfuse project {_ids(existing)}, but the files "
                                  f"hold {_ids(unexpected)}; nothing was imported.", hint="Make another trace project for them.")

    def _langfuse_link(self, source: dict[str, Any], files: list[TraceFile]) -> dict[str, Any]:
        batch = set().union(*(f.project_ids for f in files)) if files else set()
        names = set().union(*(f.project_names for f in files)) if files else set()
        out: dict[str, Any] = {}
        linked = source.get("langfuseProjectId") or (next(iter(batch)) if len(batch) == 1 else None)
        if linked:
            out["langfuseProjectId"] = linked
            if not source.get("langfuseProjectName") and len(names) == 1 and batch == {linked}:
                out["langfuseProjectName"] = next(iter(names))
        return out

    def _unique_key(self, project_id: str, title: str, trace_id: str) -> str:
        base = f"{slug(title or trace_id)[:KEY_SLUG_MAX]}-{short_hash(trace_id)}"
        candidate, index = base, 2
        while os.path.lexists(self.trace_dir(project_id, candidate)):
            candidate, index = f"{base}-{index}", index + 1
        return candidate

    def _write_trace(self, project: dict[str, Any], kind: str, file_name: str,
                     group: TraceRows) -> tuple[dict[str, Any], list[str]]:
        now = int(time.time() * 1000)
        spans = spans_of(kind, group.rows)
        if kind == "langfuse":
            title = langfuse.title_of(group.trace_id, group.rows, group.trace)
        else:
            title = root_title(spans, group.trace_id)
        key = self._unique_key(project["id"], title, group.trace_id)
        record = trace_record(project["id"], key, kind, group, title, file_name, now, spans)
        folder = self.trace_dir(project["id"], key)
        raw: dict[str, Any] = {"source": record["source"], "importedAt": now, "rows": group.rows}
        if group.trace is not None:
            raw["trace"] = group.trace
        write_json_atomic(folder / "raw.json", raw)
        notes = self._write_workbench(folder / WORKBENCH, record, raw)
        if notes:
            record["notes"] = notes
        write_json_atomic(folder / "trace.json", record)
        return record, notes

    # -- sync -----------------------------------------------------------------------------
    def find_trace_by_id(self, project_id: str, trace_id: str) -> dict[str, Any] | None:
        return next((r for r in self.traces(project_id)
                     if trace_id in (r.get("id"), (r.get("source") or {}).get("traceId"))), None)

    def upsert_synced(self, project_id: str, trace_id: str, rows: list[dict[str, Any]], *,
                      rebuild: bool = False) -> tuple[dict[str, Any], str]:
        """Store one synced trace (all its rows), keyed by its remote id. Returns the record and
        what became of the workbench: `built`, `rebuilt` or `kept` (edited since it was built)."""
        project = self._read_project(project_id)
        kind = str(project["source"].get("type"))
        now = int(time.time() * 1000)
        existing = self.find_trace_by_id(project_id, trace_id)
        group = TraceRows(trace_id, rows)
        spans = spans_of(kind, rows)
        title = langfuse.title_of(trace_id, rows) if kind == "langfuse" else root_title(spans, trace_id)
        key = str(existing["key"]) if existing else self._unique_key(project_id, title, trace_id)
        record = trace_record(project_id, key, kind, group, title, "", now, spans)
        record["source"].pop("fileName", None)
        record["source"]["mode"] = "connected"
        if existing:
            record["importedAt"] = existing.get("importedAt", now)
            if existing.get("title"):
                record["title"] = existing["title"]  # a rename is the user's
        folder = self.trace_dir(project_id, key)
        raw: dict[str, Any] = {"source": record["source"], "importedAt": record["importedAt"], "syncedAt": now,
                               "rows": rows}
        write_json_atomic(folder / "raw.json", raw)
        path = folder / WORKBENCH
        built = (existing or {}).get("workbenchSha256")
        if not path.exists():
            state = "built"
        elif rebuild or (built and _sha256(path) == built):
            state = "rebuilt"
        else:
            state = "kept"
        if state == "kept":
            if built:
                record["workbenchSha256"] = built
        else:
            notes = self._write_workbench(path, record, raw)
            if notes:
                record["notes"] = notes
            record["workbenchSha256"] = _sha256(path)
        write_json_atomic(folder / "trace.json", record)
        return record, state

    # -- removal --------------------------------------------------------------------------
    def remove_project(self, project_id: str) -> str:
        self._read_project(project_id)
        return self.trash.send(self.project_dir(project_id), project_id)

    def remove_trace(self, project_id: str, key: str) -> str:
        self.read_trace(project_id, key)
        return self.trash.send(self.trace_dir(project_id, key), key)


PLAIN_KEYS = {"secretKey": "secret-key", "apiKey": "api-key"}  # project.json field -> secret store name


def secret_name(project_id: str, secret: str) -> str:
    return f"trace-project:{project_id}:{secret}"


def key_preview(key: str) -> str:
    """The original's preview: first 5 + "..." + last 4; 10 characters or fewer: first 2 + "..."."""
    return f"{key[:2]}..." if len(key) <= 10 else f"{key[:5]}...{key[-4:]}"


def _sha256(path: Path) -> str:
    return hashlib.sha256(read_file_bytes(path, shown=path.name)).hexdigest()


def _ids(ids: set[str]) -> str:
    values = sorted(ids)
    shown = " and ".join(f'"{v}"' for v in values[:2])
    return shown if len(values) <= 2 else f"{shown} and {len(values) - 2} more"


def _num(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _folders(path: Path) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(path) if e.is_dir(follow_symlinks=False) and not e.name.startswith("."))
    except OSError:
        return []
