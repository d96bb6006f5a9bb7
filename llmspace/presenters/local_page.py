"""Settings › Local models logic (no Tk): the catalog rows (size, licence, tool calls, whether
installed or part-downloaded — a download stopped in an earlier session resumes), the installed
models (size, where they live, how they came), and the engine's status line (running, port,
model loaded, memory). The widgets are `ui/local_page.py`; the download's progress text is
`presenters/first_run.progress_text`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..local.catalog import CatalogEntry
from ..local.engine import EngineStatus
from ..local.models import InstalledModel, human_size

ORIGINS = {"downloaded": "downloaded", "copied": "copied in", "in-place": "in place (kept)"}


@dataclass(frozen=True)
class CatalogRow:
    name: str
    size: str
    licence: str
    tool_calls: str
    state: str  # "installed", "partly downloaded: 12.0 MB of 491.4 MB", "not downloaded"
    action: str  # the download button's text: "Download", "Resume", "" (installed)


@dataclass(frozen=True)
class InstalledRow:
    name: str
    size: str
    origin: str
    path: str


def catalog_rows(entries: Sequence[CatalogEntry], installed: Sequence[InstalledModel],
                 partial: Sequence[tuple[str, Path, int]]) -> list[CatalogRow]:
    """One row per catalog entry; a partial download of its repository makes it "Resume"."""
    rows = []
    have = {m.sha256 for m in installed} | {f"{m.repo}/{m.file}" for m in installed if m.repo}
    for e in entries:
        size = human_size(e.size) if e.size else "?"
        if (e.sha256 and e.sha256 in have) or f"{e.repo}/{e.file}" in have:
            state, action = "installed", ""
        elif part := next((n for repo, _p, n in partial if repo == e.repo), None):
            state, action = f"partly downloaded: {human_size(part)} of {size}", "Resume"
        else:
            state, action = "not downloaded", "Download"
        rows.append(CatalogRow(e.name, size, e.licence, e.tool_calls, state, action))
    return rows


def installed_rows(installed: Sequence[InstalledModel]) -> list[InstalledRow]:
    return [InstalledRow(m.name, human_size(m.size), ORIGINS.get(m.origin, m.origin), str(m.path)) for m in installed]


def engine_text(status: EngineStatus | None, now: float | None = None) -> str:
    """`Running on port 41234 · model qwen2.5-coder-0.5b · 612.0 MB memory · idle 2 min`."""
    if status is None:
        return "Not running: it starts on the first run of a local model."
    parts = [f"Running on port {status.port}", f"model {status.model_name or '?'}"]
    if status.rss_bytes is not None:
        parts.append(f"{human_size(status.rss_bytes)} memory")
    if status.last_used is not None:
        idle = max(0.0, (now if now is not None else time.time()) - status.last_used)
        parts.append(f"idle {int(idle // 60)} min" if idle >= 60 else f"idle {int(idle)} s")
    return " · ".join(parts)
