"""A `Comparison` (`evals/compare.py`) as text for a terminal, Markdown or HTML for a pull request.

    format_text(c) / format_markdown(c) / format_html(c) -> str
    p_text(p), verdict(p)                    # "p = 0.0312", "likely real (p < 0.05)"

Every form has the same order: the two results, the cases that flipped pass → fail, then
fail → pass, then the per-case score changes (largest drop first), the tests (exact McNemar
for pass/fail, paired bootstrap for scores) overall and per model/variant, what was not
paired or not compared, and the conclusion (the exit code). Model outputs are hostile text:
HTML escapes them, Markdown puts them on one line in code spans fenced by more backticks than
they hold, with `|` escaped. Text and Markdown list at most `MAX_LISTED` score changes.
"""

from __future__ import annotations

import re
from typing import Any

from .compare import ALPHA, CaseResult, Comparison, Key, Pair, ResultSet, Stats, group_label
from .html_page import esc, page
from .stats import PairedBootstrap

MAX_LISTED = 200
JUDGE_SCORES = "judge scores (1–5)"
SNIPPET = 120


def p_text(p: float) -> str:
    return f"p = {p:.4f}" if p >= 0.001 else f"p = {p:.2g}"


def verdict(p: float) -> str:
    return f"likely real (p < {ALPHA:g})" if p < ALPHA else f"could be chance (p ≥ {ALPHA:g})"


def _score(v: float | None) -> str:
    return "–" if v is None else f"{v:.3f}"


def _signed(v: float | None) -> str:
    return "–" if v is None else f"{v:+.3f}"


def _rate(passed: int, n: int) -> str:
    return f"{passed}/{n} ({passed / n:.1%})" if n else "–"


def _one_line(text: str | None, n: int = SNIPPET) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def _what_failed(c: CaseResult) -> str:
    if c.error:
        return f"error: {c.error}"
    return "; ".join(c.failed) or ("score below the case threshold" if c.status == "fail" else "")


def _set_line(r: ResultSet) -> str:
    s = r.summary
    groups = ", ".join(f"{g.get('label')} {g['passRate']:.1%}" if g.get("passRate") is not None else f"{g.get('label')} –"
                       for g in s.get("groups") or [])
    return f"{r.folder} ({r.name}, {s.get('cases', '?')} cases; {groups})"


def _mcnemar_line(s: Stats) -> str:
    return (f"pass/fail, exact McNemar over {s.worse + s.better} discordant pairs ({s.worse} pass → fail, "
            f"{s.better} fail → pass): {p_text(s.mcnemar_p)}, {verdict(s.mcnemar_p)}")


def _bootstrap_line(b: PairedBootstrap | None, what: str = "scores") -> str:
    if b is None:
        return f"{what}, paired bootstrap: no pair scored on both sides"
    return (f"{what}, paired bootstrap over {b.n} pairs ({b.resamples:,} resamples): mean change {_signed(b.mean)} "
            f"(95% interval {_signed(b.low)} to {_signed(b.high)}), {p_text(b.p)}, {verdict(b.p)}")


def _test_lines(s: Stats) -> list[str]:
    lines = [_mcnemar_line(s), _bootstrap_line(s.bootstrap)]
    if s.judge_bootstrap is not None:
        lines.append(_bootstrap_line(s.judge_bootstrap, JUDGE_SCORES))
    return lines


def _key_text(k: Key) -> str:
    return f"{k[0]} [{group_label(k[1], k[2])}]"


def _conclusion(c: Comparison) -> str:
    if c.worse:
        return f"{len(c.worse)} case(s) flipped to fail (exit 1)."
    return "Nothing got worse: no case flipped to fail (exit 0)."


def _keys_listed(keys: list[Key], n: int = 10) -> str:
    shown = ", ".join(_key_text(k) for k in keys[:n])
    return shown + (f", … and {len(keys) - n} more" if len(keys) > n else "")


# -- text ----------------------------------------------------------------------------------


def format_text(c: Comparison) -> str:
    out = [f"A: {_set_line(c.a)}", f"B: {_set_line(c.b)}",
           (f"Paired {c.paired} case × model/variant outcomes; pass rate A {_rate(c.overall.passed_a, c.overall.pairs)} → "
           f"B {_rate(c.overall.passed_b, c.overall.pairs)} over the {c.overall.pairs} decided on both sides."), ""]

    def flips(title: str, pairs: list[Pair], side: str) -> None:
        out.append(f"{title} ({len(pairs)}):" if pairs else f"{title}: none")
        for p in pairs:
            shown = p.b if side == "b" else p.a
            out.append(f"  {p.a.case}  {p.a.label}  score {_score(p.a.score)} → {_score(p.b.score)}")
            out.append(f"      failed in {side.upper()}: {_one_line(_what_failed(shown))}")
            if shown.output is not None:
                out.append(f"      output in {side.upper()}: {_one_line(shown.output)}")
        out.append("")

    flips("Flipped pass → fail", c.worse, "b")
    flips("Flipped fail → pass", c.better, "a")
    out.append(f"Score changes ({len(c.score_changes)} of {c.scored} pairs scored on both sides changed; B − A, largest drop first):"
               if c.score_changes else f"Score changes: none of the {c.scored} pairs scored on both sides changed")
    for p in c.score_changes[:MAX_LISTED]:
        out.append(f"  {_signed(p.delta)}  {p.a.case}  {p.a.label}  {_score(p.a.score)} → {_score(p.b.score)}")
    if len(c.score_changes) > MAX_LISTED:
        out.append(f"  … and {len(c.score_changes) - MAX_LISTED} more")
    out += ["", "Tests (all pairs):", *(f"  {line}" for line in _test_lines(c.overall))]
    if len(c.groups) > 1:
        for label, s in c.groups.items():
            out += [f"  {label}:", *(f"    {line}" for line in _test_lines(s))]
    out.append("")
    if c.only_a or c.only_b:
        out.append(f"Unpaired: {len(c.only_a)} only in A" + (f" ({_keys_listed(c.only_a)})" if c.only_a else "")
                   + f", {len(c.only_b)} only in B" + (f" ({_keys_listed(c.only_b)})" if c.only_b else "") + ".")
    if c.not_compared:
        out.append(f"Not compared (an error or not run on a side): {len(c.not_compared)} "
                   f"({_keys_listed([p.key for p in c.not_compared])}).")
    out.append(f"Result: {_conclusion(c)}")
    return "\n".join(out) + "\n"


# -- Markdown ------------------------------------------------------------------------------


def _md(text: Any) -> str:
    """Plain Markdown table text: markup characters escaped, one line."""
    flat = " ".join(str(text if text is not None else "").split())
    for ch in "\\`*_[]<>|~":
        flat = flat.replace(ch, "\\" + ch)
    return flat


def _md_code(text: str | None, n: int = SNIPPET) -> str:
    """Untrusted text as an inline code span (no Markdown or HTML inside): fenced by more backticks
    than its longest run, `|` escaped for the table cell (GFM unescapes it inside code)."""
    flat = _one_line(text, n).replace("|", "\\|")
    if not flat:
        return ""
    fence = "`" * (max((len(r) for r in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def format_markdown(c: Comparison) -> str:
    out = ["## Evaluation comparison", "",
           f"- **A:** {_md(_set_line(c.a))}", f"- **B:** {_md(_set_line(c.b))}",
           (f"- **Pass rate** over the {c.overall.pairs} pairs decided on both sides: "
           f"{_md(_rate(c.overall.passed_a, c.overall.pairs))} → {_md(_rate(c.overall.passed_b, c.overall.pairs))}"),
           f"- **Result:** {_md(_conclusion(c))}", ""]

    def flips(title: str, pairs: list[Pair], side: str) -> None:
        out.append(f"### {title} ({len(pairs)})")
        out.append("")
        if not pairs:
            out.extend(["None.", ""])
            return
        out.extend([f"| Case | Model / variant | Score A → B | Failed in {side.upper()} | Output in {side.upper()} |",
                "| --- | --- | --- | --- | --- |"])
        for p in pairs:
            shown = p.b if side == "b" else p.a
            out.append(f"| {_md(p.a.case)} | {_md(p.a.label)} | {_score(p.a.score)} → {_score(p.b.score)} | "
                       f"{_md_code(_what_failed(shown))} | {_md_code(shown.output)} |")
        out.append("")

    flips("Flipped pass → fail", c.worse, "b")
    flips("Flipped fail → pass", c.better, "a")
    out += [f"### Score changes ({len(c.score_changes)} of {c.scored})", ""]
    if c.score_changes:
        out += ["| Change | Case | Model / variant | A → B |", "| ---: | --- | --- | --- |"]
        out += [f"| {_signed(p.delta)} | {_md(p.a.case)} | {_md(p.a.label)} | {_score(p.a.score)} → {_score(p.b.score)} |"
                for p in c.score_changes[:MAX_LISTED]]
        if len(c.score_changes) > MAX_LISTED:
            out.append(f"\n… and {len(c.score_changes) - MAX_LISTED} more.")
    else:
        out.append("None.")
    out += ["", "### Tests", "", "| Pairs | Pass/fail: exact McNemar | Scores: paired bootstrap |", "| --- | --- | --- |"]
    rows = [("all", c.overall)] + (list(c.groups.items()) if len(c.groups) > 1 else [])
    for label, s in rows:
        scores = "<br>".join(_md(line) for line in _test_lines(s)[1:])
        out.append(f"| {_md(label)} | {_md(_mcnemar_line(s))} | {scores} |")
    out.append("")
    if c.only_a or c.only_b:
        out += [f"Unpaired: {len(c.only_a)} only in A, {len(c.only_b)} only in B"
                + (f" ({_md(_keys_listed(c.only_a + c.only_b))})" if c.only_a or c.only_b else "") + ".", ""]
    if c.not_compared:
        out += [(f"Not compared (an error or not run on a side): {len(c.not_compared)} "
                f"({_md(_keys_listed([p.key for p in c.not_compared]))})."), ""]
    return "\n".join(out)


# -- HTML ----------------------------------------------------------------------------------


def _html_flips(title: str, pairs: list[Pair], side: str, css_id: str) -> str:
    out = [f"<h2>{esc(title)} <span class=\"count\">({len(pairs)})</span></h2>"]
    if not pairs:
        return out[0] + "<p>None.</p>"
    out.append(f'<table id="{css_id}"><thead><tr><th>Case</th><th>Model / variant</th><th>Score A → B</th>'
               f"<th>Failed in {side.upper()}</th><th>Output in {side.upper()}</th></tr></thead><tbody>")
    for p in pairs:
        shown = p.b if side == "b" else p.a
        output = "" if shown.output is None else f"<pre>{esc(shown.output[:4000])}</pre>"
        reasons = "".join(f"<li>{esc(r)}</li>" for r in ([f"error: {shown.error}"] if shown.error else list(shown.failed)))
        out.append(f"<tr><td>{esc(p.a.case)}</td><td>{esc(p.a.label)}</td><td>{_score(p.a.score)} → {_score(p.b.score)}</td>"
                   f'<td><ul class="reasons">{reasons}</ul></td><td>{output}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def format_html(c: Comparison) -> str:
    worse = f'<b class="fail">{esc(_conclusion(c))}</b>' if c.worse else f'<b class="pass">{esc(_conclusion(c))}</b>'
    body = [f"<h1>Evaluation comparison: {esc(c.a.name)}</h1>",
            f'<p class="meta"><span>A: <b>{esc(_set_line(c.a))}</b></span><br><span>B: <b>{esc(_set_line(c.b))}</b></span></p>',
            (f"<p>Pass rate over the {c.overall.pairs} pairs decided on both sides: "
            f"{esc(_rate(c.overall.passed_a, c.overall.pairs))} → {esc(_rate(c.overall.passed_b, c.overall.pairs))}. {worse}</p>"),
            _html_flips("Flipped pass → fail", c.worse, "b", "worse"),
            _html_flips("Flipped fail → pass", c.better, "a", "better"),
            f'<h2>Score changes <span class="count">({len(c.score_changes)} of {c.scored})</span></h2>']
    if c.score_changes:
        body.append('<table id="scores"><thead><tr><th class="num">Change</th><th>Case</th><th>Model / variant</th>'
                    "<th>A → B</th></tr></thead><tbody>")
        body += [f'<tr><td class="num">{_signed(p.delta)}</td><td>{esc(p.a.case)}</td><td>{esc(p.a.label)}</td>'
                 f"<td>{_score(p.a.score)} → {_score(p.b.score)}</td></tr>" for p in c.score_changes]
        body.append("</tbody></table>")
    else:
        body.append("<p>None.</p>")
    body.append('<h2>Tests</h2><table id="tests"><thead><tr><th>Pairs</th><th>Pass/fail: exact McNemar</th>'
                "<th>Scores: paired bootstrap</th></tr></thead><tbody>")
    rows = [("all", c.overall)] + (list(c.groups.items()) if len(c.groups) > 1 else [])
    body += [f"<tr><td>{esc(label)}</td><td>{esc(_mcnemar_line(s))}</td><td>"
             + "<br>".join(esc(line) for line in _test_lines(s)[1:]) + "</td></tr>" for label, s in rows]
    body.append("</tbody></table>")
    if c.only_a or c.only_b:
        body.append(f"<p>Unpaired: {len(c.only_a)} only in A, {len(c.only_b)} only in B"
                    f" ({esc(_keys_listed(c.only_a + c.only_b))}).</p>")
    if c.not_compared:
        body.append(f"<p>Not compared (an error or not run on a side): {len(c.not_compared)} "
                    f"({esc(_keys_listed([p.key for p in c.not_compared]))}).</p>")
    return page(f"Evaluation comparison: {c.a.name}", "".join(body))


FORMATS = {"text": format_text, "markdown": format_markdown, "html": format_html}
