"""The trace view of one recorded run (History › Trace): the run's steps in order — each model
call and each tool call with its start, its timing, and what was sent and answered, as text
and as folded JSON — read from the trace files the run-history entry lists
(`core/history.run_traces`, written by `providers/traces.py` under `traces/calls/`). A trace
pruned since (the folder is kept under a size cap, oldest first) is a step shown as removed.
Secrets were removed when the traces were written; nothing here reads anything else.

    view = trace_view(run, load)      # load(name) -> the trace's dict, None when it is gone
    view.steps[0].title               # "1 · Model loop/loopback-model"
    view.steps[0].request             # JsonNode tree of the request body, folded below its top level

No Tk; the Tk view (`ui/editor/trace_view.py`) reads the files on a worker through `load`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

import orjson

from ..core.history import run_traces
from ..core.model import RunSnapshot

LABEL_CHARS = 120  # of a scalar shown in a folded JSON row (the whole value is the row's `text`)
REMOVED = "removed"
NO_TRACES = ("This run lists no traces: it was recorded before runs kept their traces, "
             "by another app, or with a model API that is not traced.")

StepKind = Literal["model", "tool", "removed"]


@dataclass(frozen=True)
class JsonNode:
    """One row of folded JSON: `label` is "key: value" for a scalar (cut at LABEL_CHARS;
    `text` is the whole value) or "key {3 keys}" / "key [5 items]" for a container, whose
    members are `children`."""

    label: str
    children: tuple[JsonNode, ...] = ()
    text: str = ""


@dataclass(frozen=True)
class TraceStep:
    name: str  # the trace file name
    kind: StepKind
    title: str  # "2 · Tool read" / "3 · removed"
    started: str = ""  # local HH:MM:SS.mmm
    offset: str = ""  # since the run's first step: "+1.25 s"
    timing: str = ""  # "first token 120 ms · 900 ms"
    duration: str = ""  # "900 ms"
    first_token: str = ""  # "120 ms" (model calls that streamed a token)
    duration_ms: float | None = None
    request_text: str = ""
    response_text: str = ""
    request: JsonNode | None = None
    response: JsonNode | None = None
    error: str | None = None


@dataclass(frozen=True)
class TraceView:
    run_id: str
    summary: str  # "3 steps · 1.2 s in steps · 1 removed"
    steps: tuple[TraceStep, ...] = field(default_factory=tuple)
    note: str | None = None  # why there is nothing to show


def fold_json(value: Any, key: str = "") -> JsonNode:
    """`value` as a tree of rows (see `JsonNode`); `key` names the row ("" at the top)."""
    prefix = f"{key} " if key else ""
    if isinstance(value, Mapping):
        n = len(value)
        return JsonNode(f"{prefix}{{{n} key{'s' if n != 1 else ''}}}",
                        tuple(fold_json(v, str(k)) for k, v in value.items()))
    if isinstance(value, list):
        n = len(value)
        return JsonNode(f"{prefix}[{n} item{'s' if n != 1 else ''}]",
                        tuple(fold_json(v, f"[{i}]") for i, v in enumerate(value)))
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    shown = orjson.dumps(value).decode() if isinstance(value, str) else text
    one_line = shown.replace("\\n", " ⏎ ")
    if len(one_line) > LABEL_CHARS:
        one_line = one_line[: LABEL_CHARS - 1] + "…"
    return JsonNode(f"{key}: {one_line}" if key else one_line, (), text)


def pretty(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() if value is not None else ""


def ms_label(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def _started(doc: Mapping[str, Any]) -> datetime | None:
    value = doc.get("startedAt")
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _reply_text(events: Any) -> str:
    """What the model answered, from a model trace's (merged) events: thinking, text, tool
    calls with their arguments, the finish reason and any error."""
    parts: list[str] = []
    for e in events if isinstance(events, list) else []:
        if not isinstance(e, Mapping):
            continue
        kind = e.get("type")
        if kind == "ThinkingDelta":
            parts.append(f"[thinking]\n{e.get('text', '')}")
        elif kind == "TextDelta":
            parts.append(str(e.get("text", "")))
        elif kind == "ToolCallStart":
            parts.append(f"[tool call {e.get('name', '')} {e.get('id', '') or ''}]".replace(" ]", "]"))
        elif kind == "ToolCallArgsDelta":
            parts.append(str(e.get("text", "")))
        elif kind == "ErrorEvent":
            parts.append(f"[error] {e.get('message', '')}")
        elif kind == "UsageEvent":
            parts.append(f"[usage: {e.get('input', 0)} in, {e.get('output', 0)} out]")
        elif kind == "Finish" and e.get("reason"):
            parts.append(f"[finished: {e.get('reason')}]")
    return "\n".join(p for p in parts if p)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _model_step(name: str, doc: Mapping[str, Any], label: str) -> TraceStep:
    timing = _mapping(doc.get("timing"))
    first, total = _number(timing.get("firstTokenMs")), _number(timing.get("durationMs"))
    shown = " · ".join(x for x in (f"first token {ms_label(first)}" if first is not None else "",
                                   ms_label(total) if total is not None else "") if x)
    request = {k: doc.get(k) for k in ("provider", "api", "model", "baseUrl", "headers") if k in doc}
    request["body"] = doc.get("request")
    response: dict[str, Any] = {"events": doc.get("events", [])}
    if "eventsDropped" in doc:
        response["eventsDropped"] = doc["eventsDropped"]
    where = f"{doc.get('provider', '?')}/{doc.get('model', '?')}"
    error = doc.get("error") if isinstance(doc.get("error"), str) else None
    return TraceStep(name, "model", f"{label} · Model {where}", timing=shown, duration_ms=total,
                     duration=ms_label(total) if total is not None else "",
                     first_token=ms_label(first) if first is not None else "",
                     request_text=pretty(request), response_text=_reply_text(doc.get("events")),
                     request=fold_json(request), response=fold_json(response), error=error)


def _tool_step(name: str, doc: Mapping[str, Any], label: str) -> TraceStep:
    timing = _mapping(doc.get("timing"))
    total = _number(timing.get("durationMs"))
    result = _mapping(doc.get("result"))
    text = str(result.get("text", ""))
    if result.get("truncated"):
        text += f"\n[{result.get('chars')} characters in all; the trace keeps the first part]"
    error = "The tool reported an error." if result.get("isError") is True else None
    duration = ms_label(total) if total is not None else ""
    return TraceStep(name, "tool", f"{label} · Tool {doc.get('tool', '?')}", timing=duration, duration=duration,
                     duration_ms=total, request_text=pretty(doc.get("arguments")), response_text=text,
                     request=fold_json({"tool": doc.get("tool"), "callId": doc.get("callId"), "arguments": doc.get("arguments")}),
                     response=fold_json(dict(result)), error=error)


def trace_view(run: RunSnapshot, load: Callable[[str], Mapping[str, Any] | None]) -> TraceView:
    """The steps of `run` from its listed traces, in step order; `load(name)` gives a
    trace's content or None when it was pruned."""
    names = run_traces(run)
    run_id = run.id or ""
    if not names:
        return TraceView(run_id, "No traces", (), NO_TRACES)
    loaded = [(name, load(name)) for name in names]
    starts = [s for _, doc in loaded if doc is not None and (s := _started(doc)) is not None]
    first = min(starts) if starts else None
    steps: list[TraceStep] = []
    for position, (name, doc) in enumerate(loaded, start=1):
        if doc is None:
            steps.append(TraceStep(name, "removed", f"{position} · {REMOVED}",
                                   response_text=f"The trace {name} was removed: the traces folder is kept "
                                                 "under its size cap, oldest first."))
            continue
        step = doc.get("step")
        label = str(step) if isinstance(step, int) else str(position)
        built = _tool_step(name, doc, label) if doc.get("kind") == "tool" else _model_step(name, doc, label)
        began = _started(doc)
        if began is not None:
            local = began.astimezone()
            offset = f"+{(began - first).total_seconds():.2f} s" if first is not None else ""
            built = replace(built, started=local.strftime("%H:%M:%S.") + f"{local.microsecond // 1000:03d}", offset=offset)
        steps.append(built)
    removed = sum(1 for s in steps if s.kind == "removed")
    spent = sum(s.duration_ms or 0.0 for s in steps)
    parts = [f"{len(steps)} step{'s' if len(steps) != 1 else ''}", f"{ms_label(spent)} in steps"]
    if removed:
        parts.append(f"{removed} {REMOVED}")
    return TraceView(run_id, " · ".join(parts), tuple(steps))
