"""trace.json, the summary record of one trace: the original app's fields, by its rules for
Langfuse rows and from the spans for the other sources (`store.py` writes it).

Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from . import langfuse
from .files import TraceRows
from .spans import SpanUsage, first_string, iso_ms, iso_text


def root_title(spans: list[Any], trace_id: str) -> str:
    roots = [s for s in spans if not s.parent_id or s.parent_id not in {x.id for x in spans}]
    return first_string(*(s.name for s in sorted(roots, key=lambda s: (s.start_ms or 0, s.order)))) \
        or f"Trace {trace_id[:8]}"


def trace_record(project_id: str, key: str, kind: str, group: TraceRows, title: str, file_name: str,
                 now: int, spans: list[Any]) -> dict[str, Any]:
    """trace.json for one trace: the original's fields (its rules for Langfuse rows)."""
    rows = group.rows
    if kind == "langfuse":
        starts = [t for r in rows if (t := langfuse.row_start(r))]
        ends = [t for r in rows if (t := langfuse.row_end(r))]
        started = min(starts, key=lambda t: iso_ms(t) or 0) if starts else None
        ended = max(ends, key=lambda t: iso_ms(t) or 0) if ends else None
        model = langfuse.model_of(rows)
        usages = [u for r in rows if (u := langfuse.usage_of(r)) is not None]
        status = "error" if any(langfuse.row_error(r)[0] for r in rows) else "ok"
    else:
        start_ms = [s.start_ms for s in spans if s.start_ms]
        end_ms = [s.end_ms for s in spans if s.end_ms]
        started = iso_text(min(start_ms)) if start_ms else None
        ended = iso_text(max(end_ms)) if end_ms else None
        model = next((s.model for s in spans if s.kind == "generation" and s.model), None) or \
            next((s.model for s in spans if s.model), None)
        usages = [s.usage for s in spans if s.usage is not None]
        status = "error" if any(s.is_error for s in spans) else "ok"
    record: dict[str, Any] = {"id": group.trace_id, "key": key, "projectId": project_id, "title": title,
                              "observationCount": len(rows), "importedAt": now, "updatedAt": now}
    if started:
        record["startedAt"] = started
    if ended:
        record["endedAt"] = ended
    if started and ended:
        record["latencyMs"] = max(0, round((iso_ms(ended) or 0) - (iso_ms(started) or 0)))
    if model:
        record["model"] = model
    record["status"] = status
    if usages:
        record["usage"] = usage_sum(usages)
    source: dict[str, Any] = {"type": kind, "mode": "manual", "traceId": group.trace_id, "fileName": file_name}
    if kind == "langfuse":
        pid = first_string(*(r.get("projectId") for r in rows), *(r.get("project_id") for r in rows))
        pname = first_string(*(r.get("projectName") for r in rows), *(r.get("project_name") for r in rows))
        if pid:
            source["projectId"] = pid
        if pname:
            source["projectName"] = pname
    record["source"] = source
    return record


def usage_sum(usages: list[SpanUsage]) -> dict[str, Any]:
    def total(attr: str) -> float:
        value = sum(getattr(u, attr) for u in usages)
        return int(value) if float(value).is_integer() else value

    return {"input": total("input"), "output": total("output"), "cacheRead": total("cache_read"),
            "cacheWrite": total("cache_write"), "totalTokens": total("total_tokens"),
            "cost": {"input": total("cost_input"), "output": total("cost_output"), "cacheRead": 0, "cacheWrite": 0,
                     "total": total("cost_total")}}
