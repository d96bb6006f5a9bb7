"""The run-history chart's data, without a display: an empty state under two runs, three
panels over the runs (oldest first) — scores per rubric, latency, cost — with round axes,
legend names, colours and a hover text per point."""

from __future__ import annotations

import pytest

from llmspace.core import run_verdicts as E
from llmspace.core.threadio import thread_from_data
from llmspace.presenters.history_chart import SCORE_AXIS, chart_data, decimals_for, nice_axis, nice_step

from .test_history_rows import NOW, local_ms, reply, run, usage, user


def three_runs():
    return thread_from_data({"title": "t", "runHistory": [
        # stored out of order: the chart goes by time
        run("r2", local_ms(2026, 12, 1, 10, 0), "mini", [user("u", "q"), reply("a2", "two", 300, 900)], usage(10, 5, 0.003)),
        run("r1", local_ms(2026, 12, 1, 9, 0), "big", [user("u", "q"), reply("a1", "one", 500, 1800)], usage(20, 5, 0.0123)),
        run("r3", local_ms(2026, 12, 1, 11, 0), "o3", [user("u", "q"), reply("a3", "three")]),
    ]})


def test_fewer_than_two_runs_give_the_empty_state():
    none = chart_data(thread_from_data({"title": "t"}), NOW)
    assert none.panels == () and "no runs yet" in none.empty and none.point_count == 0
    one = chart_data(thread_from_data({"title": "t", "runHistory": [run("r", 1, "m", [])]}), NOW)
    assert one.panels == () and "one run" in one.empty and [r.id for r in one.runs] == ["r"]


def test_three_panels_over_the_runs_oldest_first():
    data = chart_data(three_runs(), NOW)
    assert data.empty == "" and [r.id for r in data.runs] == ["r1", "r2", "r3"]
    assert [r.label for r in data.runs] == ["09:00", "10:00", "11:00"]
    score, latency, cost = data.panels
    assert score.title == "Score (1–5)" and score.series == () and score.note == "No scored evaluations yet"
    assert score.axis == SCORE_AXIS and score.axis.labels == ("1", "2", "3", "4", "5")
    assert [s.name for s in latency.series] == ["Duration", "First token"]
    assert [(p.index, p.value) for p in latency.series[0].points] == [(0, 1.8), (1, 0.9)]  # r3 has no timing
    assert latency.series[0].points[0].text == "09:00 · big · Duration: 1.80 s"
    assert latency.axis.ticks == (0.0, 0.5, 1.0, 1.5, 2.0) and latency.axis.labels[-1] == "2.0 s"
    assert [(p.index, p.value) for p in cost.series[0].points] == [(0, 0.0123), (1, 0.003)]
    assert cost.axis.labels == ("$0.000", "$0.005", "$0.010", "$0.015")
    assert cost.series[0].points[1].text == "10:00 · mini · Cost: $0.003000"
    assert data.point_count == 6


def test_scores_are_one_series_per_rubric_averaged_per_run():
    t = three_runs()
    q = E.create_rubric(t, "Quality", [{"name": "A"}, {"name": "B"}], now=1)
    s = E.create_rubric(t, "Style", [{"name": "C"}, {"name": "D"}], now=2)
    qa, qb = (c.id for c in q.criteria)
    sc, sd = (c.id for c in s.criteria)
    E.save_evaluation(t, "r1", "r2", "tie", rubric_id=q.id, scores={"r1": {qa: 3, qb: 4}, "r2": {qa: 5, qb: 5}})
    E.save_evaluation(t, "r2", "r3", "tie", rubric_id=q.id, scores={"r2": {qa: 4, qb: 4}, "r3": {qa: 2, qb: 2}})
    E.save_evaluation(t, "r1", "r3", "tie", rubric_id=s.id, scores={"r1": {sc: 1, sd: 2}, "r3": {sc: 5, sd: 5}})
    score = chart_data(t, NOW).panels[0]
    quality, style = score.series
    assert (quality.name, quality.colour, style.name, style.colour) == ("Quality", "primary", "Style", "success")
    assert [(p.index, p.value) for p in quality.points] == [(0, 3.5), (1, 4.5), (2, 2.0)]  # r2: (5 + 4) / 2
    assert [(p.index, p.value) for p in style.points] == [(0, 1.5), (2, 5.0)]
    assert quality.points[1].text == "10:00 · mini · Quality: 4.50"
    assert score.point_count == 5


@pytest.mark.parametrize(("raw", "step"), [(0.3, 0.5), (1.3, 2.0), (2.2, 2.5), (0.0031, 0.005), (7, 10), (1, 1)])
def test_nice_steps(raw, step):
    assert nice_step(raw) == pytest.approx(step)


def test_nice_axes_start_at_zero_and_label_every_tick_exactly():
    assert decimals_for(0.025) == 3 and decimals_for(2.5) == 1 and decimals_for(2) == 0
    axis = nice_axis([5.2, 1.0], "s")
    assert axis.ticks == (0.0, 2.0, 4.0, 6.0) and axis.labels == ("0 s", "2 s", "4 s", "6 s")
    assert axis.fraction(3.0) == 0.5 and axis.fraction(99) == 1.0
    empty = nice_axis([], "$")
    assert empty.ticks == (0.0, 1.0) and empty.labels == ("$0", "$1")
