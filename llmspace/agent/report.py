"""Matrix reports: Markdown and HTML, outputs, usage, latency and cost side by side.

`render_markdown(result)` and `render_html(result)` take a `MatrixResult` (`agent/matrix_spec.py`)
and return text. Layout: a per-model summary (cells ok/failed, tokens, cost, mean latency),
then one section per variant and repeat with a column per model (status, output, tokens,
cost, first token, duration), then failures. HTML goes through Jinja2 with autoescaping, so
model output can never inject markup; Markdown escapes `|`, `<`, `>` and `&` in cells.

Pure (no I/O).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jinja2

from ..core.history import absolute_time
from ..core.timing import duration_label, tokens_per_second
from ..core.usage import format_cost, format_int
from .matrix_spec import MatrixCell, MatrixResult


@dataclass
class ModelSummary:
    model: str
    ok: int
    failed: int
    skipped: int
    input: int
    output: int
    cost: float
    mean_duration_ms: float | None
    mean_first_token_ms: float | None


def _tokens(cell: MatrixCell, key: str) -> int:
    return int((cell.usage or {}).get(key) or 0)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(result: MatrixResult) -> list[ModelSummary]:
    out = []
    for provider, model in result.spec.models:
        label = f"{provider}/{model}"
        cells = [c for c in result.cells if c.model == label]
        done = [c for c in cells if c.status in ("completed", "stopped", "paused")]
        out.append(ModelSummary(
            model=label, ok=len(done), failed=sum(c.status == "failed" for c in cells),
            skipped=sum(c.status in ("skipped", "pending") for c in cells),
            input=sum(_tokens(c, "input") for c in cells), output=sum(_tokens(c, "output") for c in cells),
            cost=sum(c.cost for c in cells),
            mean_duration_ms=_mean([c.duration_ms for c in done if c.duration_ms is not None]),
            mean_first_token_ms=_mean([c.first_token_ms for c in done if c.first_token_ms is not None]),
        ))
    return out


def groups(result: MatrixResult) -> list[tuple[str, int, list[MatrixCell | None]]]:
    """(variant, repeat, [cell per model in spec order]) rows for the side-by-side tables."""
    index = {(c.model, c.variant, c.repeat): c for c in result.cells}
    models = [f"{p}/{m}" for p, m in result.spec.models]
    return [(v, r, [index.get((m, v, r)) for m in models])
            for v in result.spec.variants for r in range(1, result.spec.repeat + 1)]


def cell_stats(cell: MatrixCell | None) -> dict[str, str]:
    if cell is None:
        return {"status": "—", "tokens": "", "cost": "", "first": "", "duration": "", "speed": ""}
    speed = tokens_per_second(_tokens(cell, "output"), cell.first_token_ms, cell.duration_ms)
    return {
        "status": cell.status,
        "tokens": f"{format_int(_tokens(cell, 'input'))} in / {format_int(_tokens(cell, 'output'))} out" if cell.usage else "",
        "cost": format_cost(cell.cost) or ("$0" if cell.usage else ""),
        "first": duration_label(cell.first_token_ms),
        "duration": duration_label(cell.duration_ms),
        "speed": f"{speed:.1f} tok/s" if speed else "",
    }


def _header(result: MatrixResult) -> dict[str, Any]:
    spec = result.spec
    return {
        "thread": result.thread,
        "updated": absolute_time(result.updated_at or result.created_at),
        "models": [f"{p}/{m}" for p, m in spec.models],
        "variants": spec.variants,
        "repeat": spec.repeat,
        "budget": format_cost(spec.budget) if spec.budget else ("$0" if spec.budget == 0 else "none"),
        "spent": format_cost(result.spent) or "$0",
        "total": format_cost(sum(c.cost for c in result.cells)) or "$0",
        "stopped": result.stopped_for_budget,
        "counts": {s: sum(c.status == s for c in result.cells) for s in ("completed", "failed", "skipped", "stopped", "paused")},
    }


# -- Markdown -------------------------------------------------------------------------------------


def md_cell(text: str) -> str:
    """Text made safe for one Markdown table cell."""
    safe = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
    return "<br>".join(safe.splitlines()) if safe else " "


def render_markdown(result: MatrixResult) -> str:
    h = _header(result)
    lines = [f"# Matrix run of {md_cell(h['thread'])}", "",
             (f"Updated {h['updated']} · models: {', '.join(md_cell(m) for m in h['models'])} · "
              f"variants: {len(h['variants'])} · repeats: {h['repeat']} · budget: {h['budget']} · "
              f"spent this run: {h['spent']} · total cost: {h['total']}"), ""]
    counts = ", ".join(f"{n} {s}" for s, n in h["counts"].items() if n)
    lines.append(f"Cells: {counts or 'none'}.")
    if h["stopped"]:
        lines.append("")
        lines.append("**Stopped early: launching more cells would have exceeded the budget.**")
    lines += ["", "## Per model", "", "| Model | OK | Failed | Skipped | Tokens in | Tokens out | Cost | Mean first token | Mean duration |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in summarize(result):
        lines.append(f"| {md_cell(s.model)} | {s.ok} | {s.failed} | {s.skipped} | {format_int(s.input)} | {format_int(s.output)} | "
                     f"{format_cost(s.cost) or '$0'} | {duration_label(s.mean_first_token_ms) or '—'} | {duration_label(s.mean_duration_ms) or '—'} |")
    for variant, repeat, cells in groups(result):
        values = h["variants"].get(variant) or {}
        title = f"## {md_cell(variant)}" + (f" · repeat {repeat}" if result.spec.repeat > 1 else "")
        lines += ["", title, ""]
        if values:
            lines.append("Variables: " + ", ".join(f"`{md_cell(k)}` = {md_cell(v)}" for k, v in values.items()))
            lines.append("")
        lines.append("| | " + " | ".join(md_cell(m) for m in h["models"]) + " |")
        lines.append("| --- |" + " --- |" * len(cells))
        stats = [cell_stats(c) for c in cells]
        for key, label in (("status", "Status"), ("tokens", "Tokens"), ("cost", "Cost"), ("first", "First token"),
                           ("duration", "Duration"), ("speed", "Speed")):
            lines.append(f"| {label} | " + " | ".join(md_cell(s[key]) for s in stats) + " |")
        lines.append("| Output | " + " | ".join(md_cell(_output(c)) for c in cells) + " |")
        if any(c is not None and c.run_id for c in cells):
            lines.append("| Run | " + " | ".join(md_cell(c.run_id or "") if c else " " for c in cells) + " |")
    failures = [c for c in result.cells if c.status in ("failed", "skipped") and c.error]
    if failures:
        lines += ["", "## Failed or skipped cells", ""]
        lines += [f"- {md_cell(c.key)}: {md_cell(c.error or '')}" for c in failures]
    return "\n".join(lines) + "\n"


def _output(cell: MatrixCell | None) -> str:
    if cell is None:
        return ""
    if cell.status in ("failed", "skipped") and not cell.output:
        return f"({cell.error})" if cell.error else ""
    return cell.output


# -- HTML -----------------------------------------------------------------------------------------

_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Matrix run of {{ h.thread }}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;width:100%}
th,td{border:1px solid #ccc;padding:.35rem .5rem;vertical-align:top;text-align:left}
th{background:#f3f3f3}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font-size:.9em}
.failed{background:#fdecea}.skipped{background:#f5f5f5;color:#777}.completed{}
.warn{color:#a40000;font-weight:bold}
</style></head><body>
<h1>Matrix run of {{ h.thread }}</h1>
<p>Updated {{ h.updated }} · variants: {{ h.variants|length }} · repeats: {{ h.repeat }} · budget: {{ h.budget }} ·
spent this run: {{ h.spent }} · total cost: {{ h.total }}</p>
{% if h.stopped %}<p class="warn">Stopped early: launching more cells would have exceeded the budget.</p>{% endif %}
<h2>Per model</h2>
<table><tr><th>Model</th><th>OK</th><th>Failed</th><th>Skipped</th><th>Tokens in</th><th>Tokens out</th><th>Cost</th><th>Mean first token</th><th>Mean duration</th></tr>
{% for s in summary %}<tr><td>{{ s.model }}</td><td>{{ s.ok }}</td><td>{{ s.failed }}</td><td>{{ s.skipped }}</td>
<td>{{ fi(s.input) }}</td><td>{{ fi(s.output) }}</td><td>{{ fc(s.cost) or "$0" }}</td>
<td>{{ dl(s.mean_first_token_ms) or "—" }}</td><td>{{ dl(s.mean_duration_ms) or "—" }}</td></tr>
{% endfor %}</table>
{% for variant, repeat, cells in rows %}
<h2>{{ variant }}{% if many %} · repeat {{ repeat }}{% endif %}</h2>
{% set values = h.variants.get(variant) or {} %}
{% if values %}<p>Variables: {% for k, v in values.items() %}<code>{{ k }}</code> = {{ v }}{% if not loop.last %}, {% endif %}{% endfor %}</p>{% endif %}
<table><tr><th></th>{% for m in h.models %}<th>{{ m }}</th>{% endfor %}</tr>
{% for key, label in stat_rows %}<tr><th>{{ label }}</th>{% for c in cells %}<td>{{ stats(c)[key] }}</td>{% endfor %}</tr>
{% endfor %}<tr><th>Output</th>{% for c in cells %}<td class="{{ c.status if c else '' }}"><pre>{{ out(c) }}</pre></td>{% endfor %}</tr>
<tr><th>Run</th>{% for c in cells %}<td><code>{{ c.run_id or "" if c else "" }}</code></td>{% endfor %}</tr>
</table>
{% endfor %}
</body></html>
"""

_ENV = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
_TEMPLATE = _ENV.from_string(_HTML)


def render_html(result: MatrixResult) -> str:
    return _TEMPLATE.render(
        h=_header(result), summary=summarize(result), rows=groups(result), many=result.spec.repeat > 1,
        stat_rows=(("status", "Status"), ("tokens", "Tokens"), ("cost", "Cost"), ("first", "First token"),
                   ("duration", "Duration"), ("speed", "Speed")),
        stats=cell_stats, out=_output, fi=format_int, fc=format_cost, dl=duration_label,
    )
