"""The workbench as a thread: its workspace path, and "copy to workspace".

A trace's workbench is addressed as the original app addresses it,
`trace/<projectId>/<traceKey>/workbench.json`; `TraceMount` resolves that path to the trace
folder for `core/workspace.py` (`Workspace.mount("trace", …)`), so run, history, compare,
fork and `eval new`/`eval run` take it like any thread path. `copy_to_workspace` writes the
workbench as a normal thread (the imported texts' `literal` marks dropped, so its templates
render like any thread's) and returns the warning `llmspace import` gives about the local
files it would read when run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..core.templating.file_reads import local_file_reads
from ..core.threadio import parse_thread, thread_from_data, thread_to_data
from ..core.workspace import Workspace
from ..jsonio import read_file_bytes
from .store import WORKBENCH, TraceStore

PREFIX = "trace"


def pseudo_path(project_id: str, key: str) -> str:
    return f"{PREFIX}/{project_id}/{key}/{WORKBENCH}"


class TraceMount:
    """`trace/<projectId>/<traceKey>/workbench.json` -> the trace folder's workbench (made on first use)."""

    def __init__(self, store: TraceStore) -> None:
        self.store = store

    def resolve(self, parts: tuple[str, ...]) -> Path | None:
        if len(parts) != 3 or parts[2] != WORKBENCH:
            return None
        project_id, key = parts[0], parts[1]
        if any(p in ("", ".", "..") or "\\" in p for p in (project_id, key)):
            return None
        if not (self.store.root / project_id / "traces" / key / "trace.json").is_file():
            return None
        return self.store.workbench_path(project_id, key)

    def pseudo_path(self, real: Path) -> str | None:
        root = Path(os.path.realpath(self.store.root))
        try:
            parts = Path(os.path.realpath(real)).relative_to(root).parts
        except ValueError:
            return None
        if len(parts) == 4 and parts[1] == "traces" and parts[3] == WORKBENCH:
            return pseudo_path(parts[0], parts[2])
        return None


def mount_traces(workspace: Workspace, store: TraceStore) -> None:
    workspace.mount(PREFIX, TraceMount(store))


def _drop_literal(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _drop_literal(v) for k, v in data.items() if k != "literal"}
    if isinstance(data, list):
        return [_drop_literal(v) for v in data]
    return data


def copy_to_workspace(store: TraceStore, workspace: Workspace, project_id: str, key: str,
                      folder: str = "") -> tuple[str, str | None]:
    """Write the trace's workbench into the workspace as a normal thread named after the trace;
    returns (its path, the warning about local files it would read, or None)."""
    path = store.workbench_path(project_id, key)
    thread = parse_thread(read_file_bytes(path, shown=pseudo_path(project_id, key)), pseudo_path(project_id, key))
    data = _drop_literal(thread_to_data(thread))
    data.pop("importNotes", None)
    copy = thread_from_data(data, "the workbench")
    stem = _stem(thread.title or key, key)
    rel = workspace.create_thread(folder, stem, copy)
    reads = local_file_reads(copy)
    return rel, (reads.describe(rel) if reads else None)


def _stem(title: str, key: str) -> str:
    from ..core.importers import target_stem

    stem = target_stem(Path(title.replace("/", "-").replace("\\", "-") + ".json"))
    return stem if stem != "untitled" else key
