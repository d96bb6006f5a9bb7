"""Results of an evaluation run, computed from its plan and journal records.

    views = cell_views(plan, records)                     # each cell that ran (and its repeats) with its judges, checks and status
    outcome = summarise(plan, views, spec, meta)          # -> dict (summary.json)
    rows = cell_rows(views)                               # one row per cell (results.jsonl, the live grid)
    write_results(folder, plan, records, spec, meta)      # summary.json, junit.xml, results.csv, results.jsonl, report.html

A cell passes when its weighted assertion score reaches its case's threshold (default: every
assertion passes; judges' checks included, and those of `select-best` and `max-score`,
journaled as judge records by the pass over a case's outputs, `evals/compare_outputs.py`). A
case passes for a model/variant when it passed in at least `passK` of its repeats (default:
all); a case with an errored repeat (a failed call or an unreadable judge answer) is an error,
and one with a cell not yet run is pending. Per model/variant: pass rate over the decided cases
with its Wilson 95 % interval, pass^k, cell pass rate, mean judge scores per criterion with
bootstrap 95 % intervals, cost (judges included; cached answers are counted and also shown
apart), tokens and latency p50/p95. `thresholdMet` compares the pass rate with the file's
`threshold`.

`junit.xml` has one test suite per model/variant and one test case per case, named with
the case id and the model; a failure names the assertions that failed. In `results.csv` a
text that a spreadsheet would run as a formula is written as text (`csv_cell`). Every file is
written through `jsonio`.

The files hold the cells that ran: a case × model × variant with a cell journaled is
listed with all its repeats (those not run as pending), and one that never ran is only
counted (`pending` in the summary, a line in the JUnit suite's system-out), so a run that the
budget stopped after one cell of a million-row dataset writes a few rows, not a million; the
plan is streamed (`Plan.iter_cells`), so memory follows the cells that ran.
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

from ..agent.matrix_spec import DEFAULT_VARIANT
from ..jsonio import write_bytes_atomic, write_json_atomic
from .assertions import COMPARE, JUDGED, Check, case_passes, case_score
from .records import CellRecord, End, Header, JournalRecord, JudgeRecord, JudgeSeen, ResultRow, TurnRecord, row_data
from .report import write_report
from .stats import bootstrap_ci, pass_hat_k, percentile, wilson

if TYPE_CHECKING:
    from .plan import Cell, Plan
    from .spec import EvalSpec

_FORMULA_FIRST = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_XML_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


class CellView:
    """One cell's outcome: its record, its judges' records, its checks and status."""

    def __init__(self, cell: Cell, record: CellRecord | None, judges: dict[int, JudgeRecord]) -> None:
        self.cell = cell
        self.record = record
        self.judges = judges
        self.checks: list[Check] = []
        self.error: str | None = None
        if record is None:
            self.status = "pending"
            return
        if record.error:
            self.status, self.error = "error", record.error
            return
        self.checks = list(record.checks)
        for index, a in enumerate(cell.assertions):
            if (a.type != JUDGED and a.type not in COMPARE) or record.reply.conversation is not None:  # a conversation's: in its checks
                continue
            j = judges.get(index)
            if j is None:
                self.status = "pending"
                return
            if j.error or j.check is None:
                self.status, self.error = "error", j.error or "the judge record has no check"
                return
            self.checks.append(j.check)
        self.status = "pass" if case_passes(self.checks, cell.threshold) else "fail"

    @property
    def cost(self) -> float:
        own = self.record.cost if self.record is not None else 0.0
        return own + self.judge_cost

    @property
    def judge_cost(self) -> float:
        return sum(j.cost for j in self.judges.values())


def _repeats_of(key: str) -> str:
    """What the keys of one case × model × variant share (`case|model|variant`)."""
    return key.rsplit("|", 1)[0]


def cell_views(plan: Plan, records: list[JournalRecord]) -> list[CellView]:
    """The cells of every case × model × variant of which a cell was journaled, in plan order."""
    cells: dict[str, CellRecord] = {}
    judges: dict[str, dict[int, JudgeRecord]] = defaultdict(dict)
    for r in records:
        match r:
            case CellRecord():
                cells[r.key] = r
            case JudgeRecord():
                judges[r.cell][r.assertion] = r
            case Header() | End() | TurnRecord():
                pass
            case _:
                assert_never(r)
    started = {_repeats_of(k) for k in cells}
    views: list[CellView] = []
    if not started:
        return views
    for cell in plan.iter_cells(lambda key: _repeats_of(key) in started, render=False):
        rec = cells.get(cell.key)
        js = judges.get(cell.key, {})  # the last record per assertion wins
        views.append(CellView(cell, rec, js))
        if len(views) == len(started) * plan.repeat:  # all found: the rest of the dataset is not read
            break
    return views


def _group_label(model: str, variant: str) -> str:
    return model if variant == DEFAULT_VARIANT else f"{model} [{variant}]"


def _case_status(views: list[CellView], need: int) -> str:
    if any(v.status == "error" for v in views):
        return "error"
    if any(v.status == "pending" for v in views):
        return "pending"
    return "pass" if sum(v.status == "pass" for v in views) >= need else "fail"


def summarise(plan: Plan, views: list[CellView], spec: EvalSpec, meta: dict[str, Any]) -> dict[str, Any]:
    by_group: dict[tuple[str, str], dict[str, list[CellView]]] = defaultdict(lambda: defaultdict(list))
    for v in views:
        by_group[(v.cell.model, v.cell.variant)][v.cell.case_id].append(v)
    need = spec.pass_k or plan.repeat
    groups: list[dict[str, Any]] = []
    for model in plan.models:
        for variant in plan.variants:
            cases = by_group[(model, variant)]
            statuses = {cid: _case_status(vs, need) for cid, vs in cases.items()}
            decided = [s for s in statuses.values() if s in ("pass", "fail")]
            passed = sum(s == "pass" for s in decided)
            flat = [v for vs in cases.values() for v in vs]
            done = [v for v in flat if v.status in ("pass", "fail")]
            scores: dict[str, list[float]] = defaultdict(list)
            for v in flat:
                for j in v.judges.values():
                    for crit, s in (j.scores or {}).items():
                        scores[crit].append(s)
            replies = [v.record.reply for v in flat if v.record is not None]
            latencies = [r.latency_ms for r in replies if r.latency_ms is not None and not r.cached]
            tokens = {"input": 0, "output": 0, "total": 0}
            for u in (r.usage for r in replies):
                if u is not None:
                    tokens["input"] += u.input or 0
                    tokens["output"] += u.output or 0
                    tokens["total"] += u.total or 0
            rate = passed / len(decided) if decided else None
            low, high = wilson(passed, len(decided))
            not_run = plan.case_count - len(cases)  # cases of which no cell ran: not in `views`
            groups.append({
                "model": model, "variant": variant, "label": _group_label(model, variant),
                "cases": plan.case_count, "passed": passed, "failed": len(decided) - passed,
                "errors": sum(s == "error" for s in statuses.values()),
                "pending": sum(s == "pending" for s in statuses.values()) + not_run, "notRun": not_run,
                "passRate": rate, "passRateCI95": [round(low, 6), round(high, 6)] if decided else None,
                "passHatK": pass_hat_k([[v.status == "pass" for v in vs] for cid, vs in cases.items() if statuses[cid] in ("pass", "fail")]),
                "k": plan.repeat, "passK": need,
                "cells": plan.case_count * plan.repeat, "cellsPassed": sum(v.status == "pass" for v in flat),
                "cellPassRate": (sum(v.status == "pass" for v in done) / len(done)) if done else None,
                "meanScore": (sum(case_score(v.checks) for v in done) / len(done)) if done else None,
                "rubricScores": {c: {"mean": round(sum(vals) / len(vals), 4), "ci95": _rounded(bootstrap_ci(vals)), "n": len(vals)}
                                 for c, vals in sorted(scores.items())},
                "cost": round(sum(v.cost for v in flat), 8), "judgeCost": round(sum(v.judge_cost for v in flat), 8),
                "cachedCells": sum(1 for r in replies if r.cached),
                "tokens": tokens,
                "latencyMs": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
                "thresholdMet": rate is not None and rate >= spec.threshold - 1e-12,
            })
    complete = len(views) == plan.cell_count and all(v.status != "pending" for v in views)
    errors = sum(g["errors"] for g in groups)
    all_met = all(g["thresholdMet"] for g in groups)
    exit_code = 2 if (errors or not complete) else (0 if all_met else 1)
    return {"version": 1, **meta, "threshold": spec.threshold, "repeat": plan.repeat, "passK": need,
            "models": plan.models, "variants": plan.variants, "cases": plan.case_count, "cells": plan.cell_count,
            "complete": complete, "errors": errors, "cost": round(sum(g["cost"] for g in groups), 8),
            "groups": groups, "exitCode": exit_code}


def _rounded(ci: tuple[float, float] | None) -> list[float] | None:
    return [round(ci[0], 4), round(ci[1], 4)] if ci is not None else None


# -- files ---------------------------------------------------------------------------------


def _xml_text(text: str) -> str:
    return _XML_BAD.sub("\ufffd", text)


def csv_cell(value: Any) -> Any:
    """A text that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, TAB or CR first)
    written as text, with a `'` in front (OWASP's advice for CSV files); numbers as they are."""
    if isinstance(value, str) and value[:1] in _FORMULA_FIRST and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def junit_xml(plan: Plan, views: list[CellView], spec: EvalSpec, summary: dict[str, Any]) -> bytes:
    need = spec.pass_k or plan.repeat
    by_group: dict[tuple[str, str], dict[str, list[CellView]]] = defaultdict(lambda: defaultdict(list))
    for v in views:
        by_group[(v.cell.model, v.cell.variant)][v.cell.case_id].append(v)
    root = ET.Element("testsuites", {"name": _xml_text(spec.name)})
    totals = {"tests": 0, "failures": 0, "errors": 0}
    total_time = 0.0
    for group in summary["groups"]:
        cases = by_group[(group["model"], group["variant"])]
        suite = ET.SubElement(root, "testsuite", {"name": _xml_text(f"{spec.name}: {group['label']}")})
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        suite_time = 0.0
        for cid, vs in cases.items():
            status = _case_status(vs, need)
            seconds = sum(v.record.reply.latency_ms or 0.0 for v in vs if v.record is not None) / 1000
            suite_time += seconds
            tc = ET.SubElement(suite, "testcase", {"name": _xml_text(f"{cid} [{group['label']}]"),
                                                   "classname": _xml_text(spec.name), "time": f"{seconds:.3f}"})
            counts["tests"] += 1
            if status == "fail":
                counts["failures"] += 1
                failed: dict[str, int] = defaultdict(int)
                reasons: list[str] = []
                for v in vs:
                    for c in v.checks:
                        if not c.passed:
                            failed[c.assertion] += 1
                            reasons.append(f"repeat {v.cell.repeat}: {c.assertion}: {c.reason}")
                message = "; ".join(f"{a} failed in {n} of {len(vs)} repeats" for a, n in failed.items()) or "the weighted score is below the threshold"
                first = next((v for v in vs if v.status == "fail"), None)
                output = first.record.reply.output if first is not None and first.record is not None else ""
                body = "\n".join(reasons) + (f"\n\noutput (repeat {first.cell.repeat}):\n{output}" if first else "")
                el = ET.SubElement(tc, "failure", {"type": "assertion", "message": _xml_text(message)})
                el.text = _xml_text(body)
            elif status == "error":
                counts["errors"] += 1
                err = next(v.error for v in vs if v.status == "error")
                el = ET.SubElement(tc, "error", {"type": "error", "message": _xml_text(err or "error")})
                el.text = _xml_text(err or "")
            elif status == "pending":
                counts["skipped"] += 1
                ET.SubElement(tc, "skipped", {"message": "not run (stopped by the budget or interrupted)"})
        if group.get("notRun"):
            out = ET.SubElement(suite, "system-out")
            out.text = f"{group['notRun']} of {group['cases']} cases not run (stopped by the budget or interrupted); they are not listed."
        suite.set("tests", str(counts["tests"]))
        suite.set("failures", str(counts["failures"]))
        suite.set("errors", str(counts["errors"]))
        suite.set("skipped", str(counts["skipped"]))
        suite.set("time", f"{suite_time:.3f}")
        for k in totals:
            totals[k] += counts[k]
        total_time += suite_time
    for name, count in totals.items():
        root.set(name, str(count))
    root.set("time", f"{total_time:.3f}")
    ET.indent(root)
    xml: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=False)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + xml + b"\n"


def cell_rows(views: list[CellView]) -> list[ResultRow]:
    """One row per cell, the rows of results.jsonl (the live grid shows the same rows)."""
    rows = []
    for v in views:
        reply = v.record.reply if v.record is not None else None
        usage = reply.usage if reply is not None else None
        rows.append(ResultRow(
            v.cell.key, v.cell.case_id, v.cell.model, v.cell.variant, v.cell.repeat, v.status,
            case_score(v.checks) if v.status in ("pass", "fail") else None,
            reply.output if reply is not None else None, reply.tool_calls if reply is not None else (),
            tuple(c.assertion for c in v.checks if not c.passed), tuple(v.checks),
            tuple(JudgeSeen(j.judge_model, j.prompt_hash, j.scores, j.reason, j.raw, j.error, j.cost) for j in v.judges.values()),
            v.cost, usage.input if usage is not None else None, usage.output if usage is not None else None,
            reply.latency_ms if reply is not None else None, reply.cached if reply is not None else None, v.error,
            reply.conversation if reply is not None else None))
    return rows


def write_results(folder: Path, plan: Plan, records: list[JournalRecord], spec: EvalSpec, meta: dict[str, Any]) -> dict[str, Any]:
    views = cell_views(plan, records)
    summary = summarise(plan, views, spec, meta)
    write_json_atomic(folder / "summary.json", summary, trailing_newline=True)
    write_bytes_atomic(folder / "junit.xml", junit_xml(plan, views, spec, summary))
    rows = cell_rows(views)
    del views
    jsonl = io.StringIO()
    for r in rows:
        jsonl.write(json.dumps(row_data(r), ensure_ascii=False))
        jsonl.write("\n")
    write_bytes_atomic(folder / "results.jsonl", jsonl.getvalue().encode("utf-8"))
    del jsonl
    buf = io.StringIO(newline="")
    columns = ["key", "case", "model", "variant", "repeat", "status", "score", "failed", "output", "cost",
               "inputTokens", "outputTokens", "latencyMs", "cached", "error"]
    writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    for r in rows:
        data = row_data(r)
        writer.writerow({k: csv_cell(v) for k, v in {**data, "failed": "; ".join(r.failed)}.items()})
    write_bytes_atomic(folder / "results.csv", buf.getvalue().encode("utf-8"))
    write_report(folder, summary, rows)
    return summary
