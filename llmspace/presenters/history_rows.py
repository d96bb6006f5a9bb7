"""What the run-history panel shows, without Tk: one row per run (the first line of the
reply, time, model, tokens, cost, latency, score), sorting by a clicked column heading, the
detail lines of the selected run, and one row per evaluation (runs named by time and model,
verdict, rubric, score averages and the B − A delta).

- `time_labels(timestamps, now)` gives short local times that tell runs apart ("14:05" today,
  "Oct 9 14:05" this year, "2024-10-09 14:05" before; seconds added where two would read alike).
- `run_rows(thread, now)` builds `HistoryRow`s (chronological); `HistorySort` holds the
  sort column and direction and orders rows (`HistorySort.apply`).
- A run's latency counts the assistant messages it produced: those whose id no older run of
  the history has (all of its assistant messages when none is new), as `core/compare.py`
  counts a pair.
- A run recorded as failed, empty or stopped (`status`) says so before its summary
  ("Stopped · …"); a stopped run without usage says its tokens were not reported.
- A run's score is the mean of its rubric averages over the evaluations that scored it
  (`core.run_verdicts.averages`).

Pure; reads the thread, changes nothing.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..core.history import now_ms, relative_time, run_status, run_summary
from ..core.model import AssistantMessage, RunSnapshot, Thread, ThreadSnapshot
from ..core.run_verdicts import averages
from ..core.timing import duration_label, run_latency_ms
from ..core.usage import format_compact, format_cost, format_int, in_out_label, side_total, snapshot_usage
from .markdown import plain_lines

# (column id, heading); the Treeview's "#0" column is "summary"
COLUMNS = (("summary", "Summary"), ("when", "When"), ("model", "Model"), ("tokens", "Tokens"),
           ("cost", "Cost"), ("latency", "Latency"), ("score", "Score"))
NUMERIC = frozenset({"tokens", "cost", "latency", "score"})
# columns whose first click sorts from the largest value (newest, best) down
DESCENDING_FIRST = frozenset({"when", "score"})
VERDICTS = {"leftBetter": "A better", "rightBetter": "B better", "tie": "Tie", "pass": "Pass", "fail": "Fail"}
SUMMARY_MAX = 300
SUMMARY_SOURCE = 4000  # characters of a reply parsed for its first line (a long reply is not parsed whole)
# a run recorded with a `status` (agent/loop: an error frame, a dropped stream, an empty reply)
STATUS_LABELS = {"error": "Failed", "empty": "Empty reply", "stopped": "Stopped"}


# -- labels ----------------------------------------------------------------------------------


def _time_label(ts: float, now: time.struct_time, seconds: bool) -> str:
    t = time.localtime(ts / 1000)
    clock = time.strftime("%H:%M:%S" if seconds else "%H:%M", t)
    if (t.tm_year, t.tm_yday) == (now.tm_year, now.tm_yday):
        return clock
    if t.tm_year == now.tm_year:
        return f"{time.strftime('%b', t)} {t.tm_mday} {clock}"
    return f"{time.strftime('%Y-%m-%d', t)} {clock}"


def time_labels(timestamps: Sequence[float], now: float | None = None) -> list[str]:
    """Short local times for `timestamps` (ms), with seconds where minutes would collide."""
    ref = time.localtime((now_ms() if now is None else now) / 1000)
    short = [_time_label(ts, ref, False) for ts in timestamps]
    counts = Counter(short)
    return [_time_label(ts, ref, True) if counts[s] > 1 else s for ts, s in zip(timestamps, short, strict=True)]


def model_id(snapshot: ThreadSnapshot | Thread) -> str:
    """The model id alone ("gpt-4.1"); the provider is in the detail lines."""
    m = snapshot.model
    return m.id if m is not None and m.id else "No model"


def model_full(snapshot: ThreadSnapshot | Thread) -> str:
    m = snapshot.model
    return f"{m.provider}/{m.id}" if m is not None else "No model"


def run_names(thread: Thread, now: float | None = None) -> dict[str, str]:
    """Run id → "<time> · <model>" for every run of the history (times told apart)."""
    runs = [r for r in thread.runHistory or [] if r.id]
    labels = time_labels([r.timestamp for r in runs], now)
    return {r.id or "": f"{label} · {model_id(r.thread)}" for r, label in zip(runs, labels, strict=True)}


def _one_line(text: str, limit: int = SUMMARY_MAX) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def reply_summary(snapshot: ThreadSnapshot | Thread) -> str:
    """The first non-blank line of the run's reply (its last assistant message) as its
    Markdown shows it (no `**`, `#`, backticks); its tool
    calls or images when it has no text; "No reply · …" when the run has no assistant message."""
    ctx = snapshot.context
    msgs = list(ctx.messages or []) if ctx is not None else []
    replies = [m for m in msgs if isinstance(m, AssistantMessage)]
    if not replies:
        return f"No reply · {run_summary(snapshot)}"
    last = replies[-1]
    for line in plain_lines(last.text()[:SUMMARY_SOURCE]):  # as the reply shows, without its Markdown syntax
        if line.strip():
            return _one_line(line)
    if last.toolCalls:
        return _one_line("Tool calls: " + ", ".join(f"{c.input.name}()" for c in last.toolCalls))
    images = sum(1 for c in last.content if getattr(c, "type", None) == "image_data")
    if images:
        return f"[{images} image{'s' if images != 1 else ''}]"
    return "Empty reply"


# -- figures ---------------------------------------------------------------------------------


def chronological(thread: Thread) -> list[RunSnapshot]:
    """The runs with an id, oldest first (stable for equal timestamps)."""
    return sorted((r for r in thread.runHistory or [] if r.id), key=lambda r: r.timestamp)


def run_latencies(thread: Thread) -> dict[str, tuple[float | None, float | None]]:
    """Run id → (first-token ms, duration ms) of the assistant messages the run produced."""
    seen: set[str] = set()
    out: dict[str, tuple[float | None, float | None]] = {}
    for run in chronological(thread):
        ctx = run.thread.context
        msgs = list(ctx.messages or []) if ctx is not None else []
        replies = [m for m in msgs if isinstance(m, AssistantMessage)]
        own = [m for m in replies if m.id not in seen] or replies
        out[run.id or ""] = run_latency_ms(own)
        seen.update(m.id for m in msgs)
    return out


@dataclass(frozen=True)
class ScoreEntry:
    """One run's rubric average in one evaluation."""

    run_id: str
    rubric_id: str
    rubric_name: str
    value: float
    updated: float


def score_entries(thread: Thread) -> list[ScoreEntry]:
    """Every complete rubric average of every evaluation, two per scored evaluation."""
    out: list[ScoreEntry] = []
    for ev in thread.evaluations or []:
        avg = averages(ev)
        if avg is None or ev.rubric is None:
            continue
        for run_id, value in ((ev.leftRunId, avg.left), (ev.rightRunId, avg.right)):
            out.append(ScoreEntry(run_id, ev.rubric.id, ev.rubric.name, value, ev.updatedAt))
    return out


def mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return sum(items) / len(items) if items else None


# -- rows ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoryRow:
    """One run as the history list shows it: `cells` by column id, raw values for sorting."""

    id: str
    timestamp: float
    summary: str
    when: str
    model: str
    model_full: str
    message_count: int
    tokens: float | None
    input_tokens: float | None
    output_tokens: float | None
    cost: float | None
    first_token_ms: float | None
    latency_ms: float | None
    score: float | None
    score_count: int
    status: str | None = None  # "error" / "empty" / "stopped" when the run was recorded as such
    in_out: str = ""  # "29 in (28 cached) / 387 out"

    @property
    def name(self) -> str:
        """"<time> · <model>", how dialogs name the run."""
        return f"{self.when} · {self.model}"

    @property
    def cells(self) -> dict[str, str]:
        return {
            "summary": self.summary,
            "when": self.when,
            "model": self.model,
            "tokens": (format_compact(self.tokens) if self.tokens is not None
                       else "—" if self.status == "stopped" else ""),
            "cost": cost_text(self.cost),
            "latency": duration_label(self.latency_ms),
            "score": f"{self.score:.2f}" if self.score is not None else "",
        }

    def sort_value(self, column: str) -> float | str | None:
        if column == "when":
            return self.timestamp
        if column in ("summary", "model"):
            return str(self.cells[column]).casefold()
        value: float | None = {"tokens": self.tokens, "cost": self.cost, "latency": self.latency_ms,
                               "score": self.score}[column]
        return value

    def detail(self, now: float | None = None) -> str:
        """Three lines for the selected run: the reply's first line, where and when, the figures."""
        n = self.message_count
        # the time as the list and the chart show it (seconds only where two runs would read alike)
        where = (f"{self.model_full} · {self.when} ({relative_time(self.timestamp, now)}) · "
                 f"{n} message{'s' if n != 1 else ''}")
        figures: list[str] = []
        if self.tokens is not None:
            figures.append(f"{format_int(self.tokens)} tokens ({self.in_out})")
        elif self.status == "stopped":
            figures.append("tokens not reported (stopped before the model sent its counts)")
        if self.cost is not None:
            figures.append(cost_text(self.cost))
        if self.latency_ms is not None:
            lat = duration_label(self.latency_ms)
            if self.first_token_ms is not None:
                lat += f" (first token {duration_label(self.first_token_ms)})"
            figures.append(lat)
        if self.score is not None:
            k = self.score_count
            figures.append(f"score {self.score:.2f} from {k} evaluation{'s' if k != 1 else ''}")
        return "\n".join([self.summary, where, " · ".join(figures) or "No usage or timing recorded"])


def cost_text(cost: float | None) -> str:
    if cost is None:
        return ""
    return format_cost(cost) or "$0"


def run_rows(thread: Thread, now: float | None = None) -> list[HistoryRow]:
    """One row per run, oldest first."""
    runs = chronological(thread)
    labels = time_labels([r.timestamp for r in runs], now)
    latencies = run_latencies(thread)
    scores: dict[str, list[float]] = {}
    for entry in score_entries(thread):
        scores.setdefault(entry.run_id, []).append(entry.value)
    rows = []
    for run, label in zip(runs, labels, strict=True):
        rid = run.id or ""
        usage = snapshot_usage(run)
        ctx = run.thread.context
        first, duration = latencies.get(rid, (None, None))
        status = run_status(run)
        summary = reply_summary(run.thread)
        if status is not None and summary != STATUS_LABELS.get(status):
            summary = f"{STATUS_LABELS.get(status, status.capitalize())} · {summary}"
        rows.append(HistoryRow(
            id=rid, timestamp=run.timestamp, summary=summary, when=label, status=status,
            model=model_id(run.thread), model_full=model_full(run.thread),
            message_count=len(ctx.messages or []) if ctx is not None else 0,
            tokens=float(side_total(usage)) if usage is not None else None,
            input_tokens=float(usage.input) if usage is not None else None,
            output_tokens=float(usage.output) if usage is not None else None,
            cost=float(usage.cost.total) if usage is not None else None,
            first_token_ms=first, latency_ms=duration, in_out=in_out_label(usage),
            score=mean(scores.get(rid, [])), score_count=len(scores.get(rid, []))))
    return rows


class HistorySort:
    """The sort column and direction of the history list: newest first until a heading is
    clicked; clicking the sorted column again reverses it. Runs without a value in the sort
    column (no usage, no timing, no score) always come last."""

    def __init__(self) -> None:
        self.column = "when"
        self.descending = True

    def click(self, column: str) -> None:
        if column not in dict(COLUMNS):
            raise ValueError(f"unknown column {column!r}")
        if column == self.column:
            self.descending = not self.descending
        else:
            self.column, self.descending = column, column in DESCENDING_FIRST

    def heading(self, column: str) -> str:
        """The heading text, with ▼ or ▲ on the sorted column."""
        label = dict(COLUMNS)[column]
        if column != self.column:
            return label
        return f"{label} {'▼' if self.descending else '▲'}"

    def apply(self, rows: Iterable[HistoryRow]) -> list[HistoryRow]:
        items = list(rows)
        have = [r for r in items if r.sort_value(self.column) is not None]
        missing = [r for r in items if r.sort_value(self.column) is None]
        have.sort(key=lambda r: (r.sort_value(self.column), r.timestamp), reverse=self.descending)
        missing.sort(key=lambda r: r.timestamp, reverse=True)
        return have + missing


# -- evaluations -----------------------------------------------------------------------------


@dataclass(frozen=True)
class EvaluationRow:
    """One evaluation as the panel lists it (runs by name, never by id)."""

    id: str
    runs: str
    verdict: str
    rubric: str
    score_a: str
    score_b: str
    delta: str
    note: str


def evaluation_rows(thread: Thread, now: float | None = None) -> list[EvaluationRow]:
    """The thread's evaluations, most recently updated first."""
    names = run_names(thread, now)
    rows = []
    for ev in sorted(thread.evaluations or [], key=lambda e: e.updatedAt, reverse=True):
        avg = averages(ev)
        rubric = f"{ev.rubric.name} (rev {ev.rubric.revision})" if ev.rubric is not None else "No rubric"
        rows.append(EvaluationRow(
            id=ev.id,
            runs=f"A {names.get(ev.leftRunId, ev.leftRunId)}  vs  B {names.get(ev.rightRunId, ev.rightRunId)}",
            verdict=VERDICTS.get(ev.verdict, ev.verdict), rubric=rubric,
            score_a=f"{avg.left:.2f}" if avg is not None else "",
            score_b=f"{avg.right:.2f}" if avg is not None else "",
            delta=f"{avg.delta:+.2f}" if avg is not None else "",
            note=_one_line(ev.note or "", 120)))
    return rows
