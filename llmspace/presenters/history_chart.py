"""The data of the run-history chart, without Tk: per run across the history (oldest left),
the score averages (one series per rubric), the latency (duration and first token) and the
cost, as three panels that share the run axis, each with its own value axis, tick labels,
legend entries and a text per point. `ui/editor/history_chart.py` only draws what this says.

- `chart_data(thread, now)` → `ChartData`; `ChartData.empty` holds the message shown instead
  of the chart while the history has fewer than two runs.
- `nice_axis(values, unit)` → an `Axis` from 0 to a round top with 3–5 round ticks.
- Colours are ttkbootstrap colour names ("primary", "info", …); the view looks them up in
  the current theme.

Pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.model import Thread
from ..core.timing import duration_label
from .history_rows import HistoryRow, cost_text, mean, run_rows, score_entries

MIN_RUNS = 2
RUBRIC_COLOURS = ("primary", "success", "danger", "dark", "secondary")
SCORE_AXIS_TICKS = (1.0, 2.0, 3.0, 4.0, 5.0)


@dataclass(frozen=True)
class Axis:
    """A value axis: `lo`..`hi`, with labelled ticks."""

    lo: float
    hi: float
    ticks: tuple[float, ...]
    labels: tuple[str, ...]

    def fraction(self, value: float) -> float:
        """Where `value` sits between `lo` (0.0) and `hi` (1.0), clamped."""
        span = self.hi - self.lo
        return 0.0 if span <= 0 else min(1.0, max(0.0, (value - self.lo) / span))


@dataclass(frozen=True)
class Point:
    index: int  # the run's position on the run axis (0 = oldest)
    value: float
    text: str  # what hovering the point shows


@dataclass(frozen=True)
class Series:
    name: str
    colour: str
    points: tuple[Point, ...]


@dataclass(frozen=True)
class ChartPanel:
    title: str
    axis: Axis
    series: tuple[Series, ...]
    note: str  # shown in the panel when no series has a point

    @property
    def point_count(self) -> int:
        return sum(len(s.points) for s in self.series)


@dataclass(frozen=True)
class ChartRun:
    id: str
    label: str  # the run's time, as the history list shows it
    model: str


@dataclass(frozen=True)
class ChartData:
    runs: tuple[ChartRun, ...]
    panels: tuple[ChartPanel, ...]
    empty: str  # not "": show this instead of the chart

    @property
    def point_count(self) -> int:
        return sum(p.point_count for p in self.panels)


# -- axes ------------------------------------------------------------------------------------


def nice_step(raw: float) -> float:
    """The round step (1, 2, 2.5 or 5 × 10ⁿ) at or above `raw`."""
    if raw <= 0 or not math.isfinite(raw):
        return 1.0
    exp = math.floor(math.log10(raw))
    base = 10.0**exp
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if raw <= m * base * (1 + 1e-9):
            return m * base
    return 10.0 * base


def decimals_for(step: float) -> int:
    """Decimal places that show every multiple of `step` exactly (0.025 → 3, 2.5 → 1)."""
    places = max(0, -math.floor(math.log10(step)))
    while places < 12 and abs(round(step * 10**places) - step * 10**places) > 1e-6:
        places += 1
    return places


def nice_axis(values: Sequence[float], unit: str, count: int = 4) -> Axis:
    """An axis from 0 to a round top covering `values`; tick labels with `unit` ("s", "$")."""
    top = max((v for v in values if math.isfinite(v)), default=0.0)
    step = nice_step(top / count) if top > 0 else 1.0
    n = max(1, math.ceil(top / step - 1e-9))
    ticks = tuple(round(i * step, 12) for i in range(n + 1))
    places = decimals_for(step)

    def label(v: float) -> str:
        text = f"{v:.{places}f}"
        return f"${text}" if unit == "$" else f"{text} {unit}".rstrip()

    return Axis(0.0, ticks[-1], ticks, tuple(label(t) for t in ticks))


SCORE_AXIS = Axis(1.0, 5.0, SCORE_AXIS_TICKS, tuple(f"{t:g}" for t in SCORE_AXIS_TICKS))


# -- panels ----------------------------------------------------------------------------------


def _point_text(run: HistoryRow, series: str, value: str) -> str:
    return f"{run.name} · {series}: {value}"


def _score_panel(thread: Thread, rows: list[HistoryRow]) -> ChartPanel:
    index = {r.id: i for i, r in enumerate(rows)}
    by_rubric: dict[str, dict[str, list[float]]] = {}
    names: dict[str, tuple[float, str]] = {}  # rubric id → (updated, latest name)
    for e in score_entries(thread):
        if e.run_id not in index:
            continue
        by_rubric.setdefault(e.rubric_id, {}).setdefault(e.run_id, []).append(e.value)
        if e.rubric_id not in names or e.updated >= names[e.rubric_id][0]:
            names[e.rubric_id] = (e.updated, e.rubric_name)
    current = {r.id: r.name for r in thread.evaluationRubrics or []}
    series = []
    for k, (rid, per_run) in enumerate(sorted(by_rubric.items(), key=lambda kv: current.get(kv[0], names[kv[0]][1]).casefold())):
        name = current.get(rid, names[rid][1])
        points = []
        for run_id in sorted(per_run, key=lambda r: index[r]):
            value = mean(per_run[run_id]) or 0.0
            points.append(Point(index[run_id], value, _point_text(rows[index[run_id]], name, f"{value:.2f}")))
        series.append(Series(name, RUBRIC_COLOURS[k % len(RUBRIC_COLOURS)], tuple(points)))
    return ChartPanel("Score (1–5)", SCORE_AXIS, tuple(series), "No scored evaluations yet")


def _latency_panel(rows: list[HistoryRow]) -> ChartPanel:
    series = []
    values: list[float] = []
    for name, colour, attr in (("Duration", "info", "latency_ms"), ("First token", "warning", "first_token_ms")):
        points = []
        for i, row in enumerate(rows):
            ms = getattr(row, attr)
            if ms is None:
                continue
            values.append(ms / 1000)
            points.append(Point(i, ms / 1000, _point_text(row, name, duration_label(ms))))
        if points:
            series.append(Series(name, colour, tuple(points)))
    return ChartPanel("Latency", nice_axis(values, "s"), tuple(series), "No timing recorded")


def _cost_panel(rows: list[HistoryRow]) -> ChartPanel:
    points = tuple(Point(i, row.cost, _point_text(row, "Cost", cost_text(row.cost)))
                   for i, row in enumerate(rows) if row.cost is not None)
    series = (Series("Cost", "success", points),) if points else ()
    return ChartPanel("Cost (USD)", nice_axis([p.value for p in points], "$"), series, "No usage recorded")


def chart_data(thread: Thread, now: float | None = None) -> ChartData:
    """The chart of the thread's run history (see the module docstring)."""
    rows = run_rows(thread, now)
    runs = tuple(ChartRun(r.id, r.when, r.model) for r in rows)
    if len(rows) < MIN_RUNS:
        have = "no runs yet" if not rows else "one run"
        return ChartData(runs, (), f"The chart compares runs: this thread has {have}. Run it again to see "
                                   "scores, latency and cost side by side.")
    return ChartData(runs, (_score_panel(thread, rows), _latency_panel(rows), _cost_panel(rows)), "")
