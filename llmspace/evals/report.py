"""`report.html` of an evaluation results folder: one self-contained page that opens offline.

    html = render_report(summary, rows)      # summary.json's dict, results.jsonl's rows -> str
    write_report(folder, summary, rows)      # folder/report.html, written atomically
    rewrite_report(folder)                   # from the folder's summary.json and results.jsonl

The page has the run's facts, a summary table per model/variant, bar charts of pass rate
(with its 95 % interval), mean score, cost and latency (p50 bars, p95 marks) drawn as inline
SVG, and the failing cells (failed or errored repeats) with their output and the assertions
or judge reasons that failed (then, for conversations, every transcript: `evals/conversation_report.py`), with filters by model/variant, status, assertion and text (also
preset from the address: `report.html#group=g1&status=fail&assertion=…&q=text`).
Nothing is loaded from outside (`html_page.CSP`); every text from the files or a model is
escaped. At most `MAX_FAILURES` cells are listed and each output is cut at `MAX_OUTPUT`
characters (results.jsonl has them all).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from ..jsonio import write_bytes_atomic
from .compare import group_label, read_rows, read_summary
from .conversation_report import conversations_html
from .html_page import esc, page
from .records import ResultRow

NAME = "report.html"
MAX_FAILURES = 5000
MAX_OUTPUT = 4000

SCRIPT = """
(function () {
  var table = document.getElementById('failures');
  if (table) {
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var group = document.getElementById('f-group'), status = document.getElementById('f-status');
    var assertion = document.getElementById('f-assertion'), text = document.getElementById('f-text');
    var count = document.getElementById('f-count');
    var apply = function () {
      var q = text.value.toLowerCase(), shown = 0;
      rows.forEach(function (r) {
        var ok = (!group.value || r.getAttribute('data-group') === group.value) &&
          (!status.value || r.getAttribute('data-status') === status.value) &&
          (!assertion.value || JSON.parse(r.getAttribute('data-failed')).indexOf(assertion.value) >= 0) &&
          (!q || r.textContent.toLowerCase().indexOf(q) >= 0);
        r.classList.toggle('hidden', !ok);
        if (ok) { shown += 1; }
      });
      count.textContent = shown + ' of ' + rows.length + ' shown';
    };
    [group, status, assertion].forEach(function (e) { e.addEventListener('change', apply); });
    text.addEventListener('input', apply);
    // report.html#group=g0&status=fail&assertion=…&q=… opens with those filters set
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var i = kv.indexOf('='), name, value;
      if (i <= 0) { return; }
      try { name = decodeURIComponent(kv.slice(0, i)); value = decodeURIComponent(kv.slice(i + 1)); } catch (e) { return; }
      var control = {group: group, status: status, assertion: assertion, q: text}[name];
      if (control) { control.value = value; }
    });
    apply();
  }
  document.documentElement.setAttribute('data-ready', '1');
})();
"""


# -- numbers -------------------------------------------------------------------------------


def _pct(value: Any) -> str:
    return "–" if value is None else f"{float(value):.1%}"


def _usd(value: Any) -> str:
    return "–" if value is None else f"${float(value):.4f}"


def _ms(value: Any) -> str:
    return "–" if value is None else f"{float(value):.0f} ms"


def _num(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{float(value):.{digits}f}"


# -- charts --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bar:
    label: str
    value: float | None
    low: float | None = None  # an interval drawn as a whisker
    high: float | None = None
    mark: float | None = None  # a second value drawn as a tick (p95)


WIDTH, LABEL_W, VALUE_W, ROW_H, TOP = 560, 200, 90, 26, 30


def bar_chart(title: str, bars: list[Bar], fmt: Callable[[float | None], str], scale_max: float | None = None,
              css_id: str = "") -> str:
    """A horizontal bar chart as inline SVG; labels and titles escaped."""
    values = [x for b in bars for x in (b.value, b.high, b.mark) if x is not None]
    top = scale_max if scale_max is not None else max(values, default=0.0)
    top = top if top > 0 else 1.0
    span = WIDTH - LABEL_W - VALUE_W - 10
    height = TOP + ROW_H * len(bars) + 12

    def x(v: float) -> float:
        return LABEL_W + 10 + span * max(0.0, min(v, top)) / top

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" role="img" '
             f'aria-label="{esc(title)}"' + (f' id="{esc(css_id)}"' if css_id else "") + ">",
             f'<text x="0" y="18" font-weight="600">{esc(title)}</text>',
             f'<line class="axis" x1="{LABEL_W + 10}" y1="{TOP - 4}" x2="{LABEL_W + 10}" y2="{height - 8}"/>']
    for i, b in enumerate(bars):
        y = TOP + i * ROW_H
        label = b.label if len(b.label) <= 30 else b.label[:29] + "…"
        tip = f"{b.label}: {fmt(b.value)}" + (f" (95% CI {fmt(b.low)}–{fmt(b.high)})" if b.low is not None else "") + (
            f", p95 {fmt(b.mark)}" if b.mark is not None else "")
        parts.append(f"<g><title>{esc(tip)}</title>")
        parts.append(f'<text x="{LABEL_W}" y="{y + 16}" text-anchor="end">{esc(label)}</text>')
        if b.value is not None:
            parts.append(f'<rect class="bar" x="{LABEL_W + 10}" y="{y + 4}" width="{x(b.value) - LABEL_W - 10:.1f}" height="{ROW_H - 8}"/>')
        if b.low is not None and b.high is not None:
            parts.append(f'<line class="whisker" x1="{x(b.low):.1f}" y1="{y + 13}" x2="{x(b.high):.1f}" y2="{y + 13}"/>')
        if b.mark is not None:
            parts.append(f'<rect class="p95" x="{x(b.mark) - 1.5:.1f}" y="{y + 2}" width="3" height="{ROW_H - 4}"/>')
        parts.append(f'<text x="{WIDTH - VALUE_W + 6}" y="{y + 16}">{esc(fmt(b.value))}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _charts(groups: list[dict[str, Any]]) -> str:
    def ci(g: dict[str, Any], i: int) -> float | None:
        c = g.get("passRateCI95")
        return float(c[i]) if c else None

    def f(v: Any) -> float | None:
        return None if v is None else float(v)

    charts = [
        bar_chart("Pass rate (95% interval)", [Bar(g["label"], f(g.get("passRate")), ci(g, 0), ci(g, 1)) for g in groups],
                  _pct, 1.0, "chart-pass-rate"),
        bar_chart("Mean score (weighted assertions)", [Bar(g["label"], f(g.get("meanScore"))) for g in groups],
                  lambda v: _num(v, 3), 1.0, "chart-score"),
        bar_chart("Cost (judges included)", [Bar(g["label"], f(g.get("cost"))) for g in groups], _usd, None, "chart-cost"),
        bar_chart("Latency p50 (p95 marked)", [Bar(g["label"], f((g.get("latencyMs") or {}).get("p50")), mark=f(
            (g.get("latencyMs") or {}).get("p95"))) for g in groups], _ms, None, "chart-latency"),
    ]
    return '<div class="charts">' + "".join(f'<div class="chart">{c}</div>' for c in charts) + "</div>"


# -- tables --------------------------------------------------------------------------------


def _status_cell(status: str) -> str:
    return f'<td class="{esc(status)}">{esc(status)}</td>'


def _summary_table(summary: dict[str, Any]) -> str:
    head = ("Model / variant", "Cases", "Passed", "Failed", "Errors", "Not run", "Pass rate", "95% interval", "pass^k",
            "Mean score", "Cost", "Tokens in / out", "p50", "p95", "Threshold")
    out = ["<table id=\"summary\"><thead><tr>"]
    out += [(f"<th>{esc(h)}</th>" if i == 0 else f'<th class="num">{esc(h)}</th>') for i, h in enumerate(head)]
    out.append("</tr></thead><tbody>")
    threshold = summary.get("threshold")
    for g in summary.get("groups") or []:
        ci = g.get("passRateCI95")
        tokens = g.get("tokens") or {}
        lat = g.get("latencyMs") or {}
        met = "pass" if g.get("thresholdMet") else "fail"
        cells = [str(g.get("cases", "")), str(g.get("passed", "")), str(g.get("failed", "")), str(g.get("errors", "")),
                 str(g.get("pending", "")), _pct(g.get("passRate")), f"{_pct(ci[0])}–{_pct(ci[1])}" if ci else "–",
                 _pct(g.get("passHatK")), _num(g.get("meanScore")), _usd(g.get("cost")),
                 f"{tokens.get('input', 0)} / {tokens.get('output', 0)}", _ms(lat.get("p50")), _ms(lat.get("p95"))]
        out.append(f"<tr><td>{esc(g.get('label', ''))}</td>" + "".join(f'<td class="num">{esc(c)}</td>' for c in cells)
                   + f'<td class="num {met}">{"met" if met == "pass" else "below"} ({esc(_pct(threshold))})</td></tr>')
    out.append("</tbody></table>")
    rubrics = [(g["label"], crit, r) for g in summary.get("groups") or [] for crit, r in (g.get("rubricScores") or {}).items()]
    if rubrics:
        out.append("<h3>Judge scores (1–5)</h3><table id=\"rubrics\"><thead><tr><th>Model / variant</th><th>Criterion</th>"
                   '<th class="num">Mean</th><th class="num">95% interval</th><th class="num">Scores</th></tr></thead><tbody>')
        for label, crit, r in rubrics:
            ci = r.get("ci95")
            out.append(f"<tr><td>{esc(label)}</td><td>{esc(crit)}</td><td class=\"num\">{esc(_num(r.get('mean'), 2))}</td>"
                       f"<td class=\"num\">{esc(f'{ci[0]:.2f}–{ci[1]:.2f}' if ci else '–')}</td><td class=\"num\">{esc(r.get('n'))}</td></tr>")
        out.append("</tbody></table>")
    return "".join(out)


def _reasons(row: ResultRow) -> list[tuple[str, str]]:
    """(assertion, reason) of what failed in a cell: its failed checks, then judges' reasons and errors."""
    out = [(c.assertion, c.reason) for c in row.checks if not c.passed]
    for j in row.judges:
        if j.error:
            out.append(("judge " + j.judge_model, j.error))
    if row.error and not any(r == row.error for _a, r in out):
        out.append(("error", row.error))
    return out


def _label(model: Any, variant: Any) -> str:
    return group_label(str(model), str(variant))


def _failures(summary: dict[str, Any], rows: list[ResultRow]) -> str:
    failing = [r for r in rows if r.status in ("fail", "error")]
    if not failing:
        return '<p id="no-failures">No failing cases: every cell that ran passed.</p>'
    groups = [(i, g.get("label", "")) for i, g in enumerate(summary.get("groups") or [])]
    group_of = {(g.get("model"), g.get("variant")): i for i, g in enumerate(summary.get("groups") or [])}
    shown = failing[:MAX_FAILURES]
    assertions = sorted({a for r in shown for a, _ in _reasons(r)})
    opts = "".join(f'<option value="g{i}">{esc(label)}</option>' for i, label in groups)
    out = ['<div class="filters">',
           f'<label>Model / variant <select id="f-group"><option value="">all</option>{opts}</select></label>',
           ('<label>Status <select id="f-status"><option value="">fail and error</option><option value="fail">fail</option>'
           '<option value="error">error</option></select></label>'),
           '<label>Assertion <select id="f-assertion"><option value="">any</option>'
           + "".join(f'<option value="{esc(a)}">{esc(a if len(a) <= 80 else a[:79] + "…")}</option>' for a in assertions)
           + "</select></label>",
           '<label>Text <input id="f-text" type="search" placeholder="case, output, reason"></label>',
           f'<span id="f-count" class="count">{len(shown)} of {len(shown)} shown</span></div>']
    out.append('<table id="failures"><thead><tr><th>Case</th><th>Model / variant</th><th class="num">Repeat</th>'
               "<th>Status</th><th>What failed</th><th>Output</th></tr></thead><tbody>")
    for r in shown:
        reasons = _reasons(r)
        gid = group_of.get((r.model, r.variant))
        output = r.output
        text = "" if output is None else output
        cut = text[:MAX_OUTPUT]
        more = f"\n… ({len(text) - MAX_OUTPUT} more characters in results.jsonl)" if len(text) > MAX_OUTPUT else ""
        status = r.status
        shown_output = f"<pre>{esc(cut + more)}</pre>" if output is not None else '<span class="pending">no output</span>'
        items = "".join(f"<li><b>{esc(a)}</b>{': ' + esc(why) if why else ''}</li>" for a, why in reasons)
        out.append(f'<tr data-group="{"" if gid is None else f"g{gid}"}" data-status="{esc(status)}" '
                   f'data-failed="{esc(json.dumps([a for a, _ in reasons], ensure_ascii=False))}">'
                   f"<td>{esc(r.case)}</td><td>{esc(_label(r.model, r.variant))}</td>"
                   f'<td class="num">{esc(r.repeat)}</td>{_status_cell(status)}'
                   f'<td><ul class="reasons">{items}</ul></td>'
                   f"<td>{shown_output}</td></tr>")
    out.append("</tbody></table>")
    if len(failing) > len(shown):
        out.append(f"<p>… and {len(failing) - len(shown)} more failing cells (results.jsonl has them all).</p>")
    return "".join(out)


def _facts(summary: dict[str, Any]) -> str:
    finished = summary.get("finishedAt")
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(finished / 1000)) if isinstance(finished, (int, float)) else "–"
    state = "complete" if summary.get("complete") else (
        "interrupted" if summary.get("interrupted") else "stopped by the budget" if summary.get("stoppedForBudget") else "not complete")
    facts = [("Thread", summary.get("thread")), ("Dataset", summary.get("dataset")), ("Finished", when), ("State", state),
             ("Cases", summary.get("cases")), ("Cells", summary.get("cells")),
             ("Repeats", f"{summary.get('repeat')} (pass when {summary.get('passK')} pass)"),
             ("Threshold", _pct(summary.get("threshold"))), ("Cost", _usd(summary.get("cost"))),
             ("Exit code", summary.get("exitCode"))]
    return '<p class="meta">' + "".join(f"<span>{esc(k)}: <b>{esc(v)}</b></span>" for k, v in facts) + "</p>"


def _skipped(summary: dict[str, Any]) -> str:
    """The assertions `--skip-unsupported` left out, each with why and its cases."""
    items = [f"<li><b>{esc(entry['assertion'])}</b> ({esc(len(entry['cases']))} cases): {esc(entry['reason'])}</li>"
             for entry in summary.get("skipped") or []]
    return f'<h2>Skipped assertions</h2><ul class="skipped">{"".join(items)}</ul>' if items else ""


def render_report(summary: dict[str, Any], rows: list[ResultRow]) -> str:
    name = str(summary.get("name") or "Evaluation")
    groups = list(summary.get("groups") or [])
    failing = sum(1 for r in rows if r.status in ("fail", "error"))
    body = "".join([
        f"<h1>{esc(name)}</h1>", _facts(summary), _skipped(summary),
        "<h2>Summary</h2>", _summary_table(summary),
        "<h2>Charts</h2>", _charts(groups) if groups else "<p>No models.</p>",
        f'<h2>Failing cells <span class="count">({failing})</span></h2>', _failures(summary, rows),
        conversations_html(rows),  # mode: conversation: every transcript
    ])
    return page(f"{name} — evaluation report", body, SCRIPT)


def write_report(folder: Path, summary: dict[str, Any], rows: list[ResultRow]) -> Path:
    path = folder / NAME
    write_bytes_atomic(path, render_report(summary, rows).encode("utf-8"))
    return path


def rewrite_report(folder: Path) -> Path:
    """report.html again from a results folder's summary.json and results.jsonl."""
    if not (folder / "summary.json").is_file():
        raise UserFacingError(f"{folder} is not an evaluation results folder (it has no summary.json).",
                              hint="`llmspace eval list` shows the results folders.")
    return write_report(folder, read_summary(folder), read_rows(folder / "results.jsonl"))
