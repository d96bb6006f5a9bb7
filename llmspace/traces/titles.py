"""Renaming trace projects and traces, as the original app does (its §14 "Rename").

- A project's name is written to project.json (with `updatedAt`).
- A trace's title must not be empty or hold control characters; it is written to trace.json
  (with `updatedAt`), to the workbench's `title` and to the `thread.title` of every run-history
  snapshot in it. raw.json is never touched.

Writes go through `jsonio`'s atomic writer. Kept apart from `store.py` (the store reads and
imports; these are the two edits the Traces panel makes to what it lists).
"""

from __future__ import annotations

import time
from typing import Any

from ..errors import UserFacingError
from ..jsonio import UnreadableFileError, read_json, write_json_atomic
from .store import WORKBENCH, TraceStore


def check_title(title: str, what: str = "trace title") -> str:
    trimmed = title.strip()
    if not trimmed:
        raise UserFacingError(f"A {what} cannot be empty.")
    if any(ord(c) < 32 or ord(c) == 127 for c in trimmed):
        raise UserFacingError(f"A {what} cannot hold control characters.")
    return trimmed


def rename_project(store: TraceStore, project_id: str, name: str) -> dict[str, Any]:
    """Give a trace project a new name; returns the project record written."""
    trimmed = check_title(name, "trace project name")
    project = store.find_project(project_id)
    if project["id"] != project_id:
        raise UserFacingError(f"There is no trace project {project_id!r}.")
    project = {**project, "name": trimmed, "updatedAt": int(time.time() * 1000)}
    write_json_atomic(store.project_dir(project_id) / "project.json", project)
    return project


def rename_trace(store: TraceStore, project_id: str, key: str, title: str) -> dict[str, Any]:
    """Give a trace a new title (trace.json, the workbench and its run snapshots); the key and
    folder stay. Returns the trace record written."""
    trimmed = check_title(title)
    record = store.read_trace(project_id, key)
    now = int(time.time() * 1000)
    record = {**record, "title": trimmed, "updatedAt": now}
    folder = store.trace_dir(project_id, key)
    workbench = folder / WORKBENCH
    try:
        data = read_json(workbench)
    except UnreadableFileError as exc:
        if not exc.missing:
            raise
        data = None  # not opened yet: it is built from raw.json with the new title
    if isinstance(data, dict):
        data["title"] = trimmed
        for run in data.get("runHistory") or []:
            snapshot = run.get("thread") if isinstance(run, dict) else None
            if isinstance(snapshot, dict):
                snapshot["title"] = trimmed
        write_json_atomic(workbench, data)
    write_json_atomic(folder / "trace.json", record)
    return record
