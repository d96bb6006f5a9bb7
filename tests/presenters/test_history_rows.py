"""What the run-history panel shows, without a display: short times that tell runs apart,
the first line of each reply, tokens / cost / latency / score per run, sorting by a column,
the selected run's detail lines, and evaluations named by run time and model."""

from __future__ import annotations

import time

import pytest

from llmspace.core import run_verdicts as E
from llmspace.core.threadio import thread_from_data
from llmspace.presenters.history_rows import (
    HistorySort,
    evaluation_rows,
    reply_summary,
    run_latencies,
    run_names,
    run_rows,
    time_labels,
)

DAY = 86_400_000


def local_ms(*parts: int) -> int:
    """Epoch ms of a local date and time (so the expected labels do not depend on the zone)."""
    year, month, day, hour, minute, second = (*parts, 0, 0, 0, 0, 0)[:6]
    return int(time.mktime((year, month, day, hour, minute, second, 0, 0, -1)) * 1000)


NOW = local_ms(2026, 12, 1, 15, 0)


def usage(i: int, o: int, cost: float) -> dict:
    return {"input": i, "output": o, "cacheRead": 0, "cacheWrite": 0, "totalTokens": i + o,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}}


def run(rid: str, ts: int, model: str | None, messages: list[dict], use: dict | None = None) -> dict:
    snap: dict = {"title": "t", "context": {"messages": messages}}
    if model:
        snap["model"] = {"provider": "openai", "id": model}
    out: dict = {"id": rid, "timestamp": ts, "thread": snap}
    if use is not None:
        out["usage"] = use
    return out


def user(mid: str, text: str) -> dict:
    return {"id": mid, "role": "user", "content": [{"type": "text", "text": text}]}


def reply(mid: str, text: str, first: int | None = None, dur: int | None = None, **extra) -> dict:
    msg = {"id": mid, "role": "assistant", "content": [{"type": "text", "text": text}], **extra}
    if dur is not None:
        msg["timing"] = {"firstTokenMs": first, "durationMs": dur}
    return msg


def thread():
    long_first = "Recursion is when a function calls itself until it reaches a base case, " + "x" * 40
    return thread_from_data({"title": "t", "runHistory": [
        run("r1", local_ms(2026, 10, 9, 8, 53), "gpt-4.1",
            [user("u", "Explain"), reply("a1", long_first + "\nSecond line", 400, 1800)], usage(300, 80, 0.0123)),
        run("r2", local_ms(2026, 10, 9, 9, 53), "gpt-4.1-mini",
            [user("u", "Explain"), reply("a2", "\n\n  A recursive function…  \nmore", 200, 900)], usage(340, 110, 0.0031)),
        # continues r2's conversation: only its own new reply counts for latency
        run("r3", local_ms(2026, 12, 1, 14, 5), "o3",
            [user("u", "Explain"), reply("a2", "A recursive function…", 200, 900), user("u2", "Shorter"),
             reply("a3", "", 1000, 5200, toolCalls=[{"id": "c", "input": {"name": "read", "arguments": {}}}])]),
    ]})


def test_time_labels_are_short_and_tell_runs_apart():
    ts = [local_ms(2026, 12, 1, 9, 5), local_ms(2026, 10, 9, 8, 53), local_ms(2025, 10, 9, 8, 53),
          local_ms(2026, 12, 1, 14, 5, 1), local_ms(2026, 12, 1, 14, 5, 40)]
    assert time_labels(ts, NOW) == ["09:05", "Oct 9 08:53", "2025-10-09 08:53", "14:05:01", "14:05:40"]


def test_the_summary_is_the_first_line_of_the_reply_not_a_cut():
    t = thread()
    rows = {r.id: r for r in run_rows(t, NOW)}
    assert rows["r1"].summary.startswith("Recursion is when a function calls itself until it reaches a base case")
    assert len(rows["r1"].summary) > 100 and "Second line" not in rows["r1"].summary
    assert rows["r2"].summary == "A recursive function…"
    assert rows["r3"].summary == "Tool calls: read()"
    no_reply = thread_from_data({"title": "t", "runHistory": [run("x", 1, None, [user("u", "Only a question")])]})
    assert reply_summary(no_reply.runHistory[0].thread) == "No reply · Only a question"


def test_a_run_recorded_as_error_or_empty_says_so_in_its_summary_and_detail():
    failed = run("e", local_ms(2026, 12, 1, 9, 0), "gpt-4.1", [user("u", "Explain"), reply("a", "Partial ans")])
    failed["status"] = "error"
    empty = run("m", local_ms(2026, 12, 1, 9, 1), "gpt-4.1", [user("u", "Explain"), reply("b", "")])
    empty["status"] = "empty"
    t = thread_from_data({"title": "t", "runHistory": [failed, empty]})
    rows = {r.id: r for r in run_rows(t, NOW)}
    assert rows["e"].summary == "Failed · Partial ans" and rows["e"].status == "error"
    assert rows["m"].summary == "Empty reply" and rows["m"].status == "empty"  # not "Empty reply · Empty reply"
    assert rows["e"].detail(NOW).split("\n")[0] == "Failed · Partial ans"
    assert all(r.status is None for r in run_rows(thread(), NOW))  # completed runs record no status


def test_rows_show_time_model_tokens_cost_latency_and_score():
    t = thread()
    rubric = E.create_rubric(t, "Quality", [{"name": "Accuracy"}, {"name": "Clarity"}], now=1)
    ids = [c.id for c in rubric.criteria]
    E.save_evaluation(t, "r1", "r2", "rightBetter", rubric_id=rubric.id,
                      scores={"r1": {ids[0]: 3, ids[1]: 4}, "r2": {ids[0]: 5, ids[1]: 4}}, now=2)
    E.save_evaluation(t, "r2", "r3", "leftBetter", rubric_id=rubric.id,
                      scores={"r2": {ids[0]: 4, ids[1]: 4}, "r3": {ids[0]: 2, ids[1]: 3}}, now=3)
    rows = {r.id: r for r in run_rows(t, NOW)}
    assert rows["r1"].cells == {"summary": rows["r1"].summary, "when": "Oct 9 08:53", "model": "gpt-4.1",
                                "tokens": "380", "cost": "$0.0123", "latency": "1.80 s", "score": "3.50"}
    assert rows["r2"].cells["score"] == "4.25" and rows["r2"].score_count == 2  # (4.5 + 4.0) / 2
    assert rows["r3"].cells == {"summary": "Tool calls: read()", "when": "14:05", "model": "o3", "tokens": "",
                                "cost": "", "latency": "5.20 s", "score": "2.50"}
    assert rows["r2"].name == "Oct 9 09:53 · gpt-4.1-mini"
    detail = rows["r1"].detail(NOW).split("\n")
    assert detail[0] == rows["r1"].summary and detail[1].startswith("openai/gpt-4.1 · Oct 9 08:53 (53 d ago)")  # the list's time format
    assert detail[2] == "380 tokens (300 in / 80 out) · $0.0123 · 1.80 s (first token 400 ms) · score 3.50 from 1 evaluation"
    assert rows["r3"].detail(NOW).split("\n")[2] == "5.20 s (first token 1.00 s) · score 2.50 from 1 evaluation"


def test_a_runs_latency_counts_only_the_replies_it_produced():
    lat = run_latencies(thread())
    assert lat == {"r1": (400.0, 1800.0), "r2": (200.0, 900.0), "r3": (1000.0, 5200.0)}


def test_sorting_by_a_clicked_column_with_missing_values_last():
    rows = run_rows(thread(), NOW)
    sort = HistorySort()
    assert [r.id for r in sort.apply(rows)] == ["r3", "r2", "r1"] and sort.heading("when") == "When ▼"
    sort.click("tokens")
    assert [r.id for r in sort.apply(rows)] == ["r1", "r2", "r3"] and sort.heading("tokens") == "Tokens ▲"
    assert sort.heading("when") == "When"
    sort.click("tokens")
    assert [r.id for r in sort.apply(rows)] == ["r2", "r1", "r3"]  # r3 has no usage: last either way
    sort.click("latency")
    assert [r.id for r in sort.apply(rows)] == ["r2", "r1", "r3"]
    sort.click("model")
    assert [r.id for r in sort.apply(rows)] == ["r1", "r2", "r3"]
    sort.click("cost")
    assert [r.id for r in sort.apply(rows)] == ["r2", "r1", "r3"]
    sort.click("when")
    assert [r.id for r in sort.apply(rows)] == ["r3", "r2", "r1"]
    sort.click("when")
    assert [r.id for r in sort.apply(rows)] == ["r1", "r2", "r3"]
    with pytest.raises(ValueError):
        sort.click("nope")


def test_score_sorts_best_first_and_unscored_runs_last():
    t = thread()
    rubric = E.create_rubric(t, "Q", [{"name": "A"}, {"name": "B"}], now=1)
    ids = [c.id for c in rubric.criteria]
    E.save_evaluation(t, "r1", "r3", "rightBetter", rubric_id=rubric.id,
                      scores={"r1": {ids[0]: 2, ids[1]: 2}, "r3": {ids[0]: 5, ids[1]: 4}})
    sort = HistorySort()
    sort.click("score")
    assert [r.id for r in sort.apply(run_rows(t, NOW))] == ["r3", "r1", "r2"] and sort.heading("score") == "Score ▼"


def test_evaluations_name_runs_by_time_and_model_with_verdict_rubric_averages_and_delta():
    t = thread()
    rubric = E.create_rubric(t, "Quality", [{"name": "Accuracy"}, {"name": "Clarity"}], now=1)
    ids = [c.id for c in rubric.criteria]
    E.save_evaluation(t, "r1", "r2", "rightBetter", note="  B is clearer ", rubric_id=rubric.id,
                      scores={"r1": {ids[0]: 3, ids[1]: 4}, "r2": {ids[0]: 5, ids[1]: 4}}, now=5)
    E.save_evaluation(t, "r2", "r3", "tie", now=9)
    newest, scored = evaluation_rows(t, NOW)
    assert (newest.runs, newest.verdict, newest.rubric, newest.score_a, newest.delta) == (
        "A Oct 9 09:53 · gpt-4.1-mini  vs  B 14:05 · o3", "Tie", "No rubric", "", "")
    assert (scored.runs, scored.verdict, scored.rubric, scored.score_a, scored.score_b, scored.delta, scored.note) == (
        "A Oct 9 08:53 · gpt-4.1  vs  B Oct 9 09:53 · gpt-4.1-mini", "B better", "Quality (rev 1)", "3.50", "4.50",
        "+1.00", "B is clearer")
    assert "r1" not in scored.runs and "r2" not in scored.runs


def test_run_names_add_seconds_when_two_runs_share_a_minute():
    t = thread_from_data({"title": "t", "runHistory": [
        run("a", local_ms(2026, 12, 1, 14, 5, 1), "m", []), run("b", local_ms(2026, 12, 1, 14, 5, 9), "m", []),
        run("c", NOW - 2 * DAY, None, [])]})
    assert run_names(t, NOW) == {"a": "14:05:01 · m", "b": "14:05:09 · m", "c": "Nov 29 15:00 · No model"}
