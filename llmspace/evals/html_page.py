"""Self-contained HTML pages of evaluations (`report.html`, `eval compare --format html`).

    page(title, body_html, script=SCRIPT) -> str     # a whole document, nothing loaded from outside
    esc(text)                                       # every text from a file or a model goes through it

The content security policy allows nothing but the page's own inline styles and scripts and
`data:` images (`CSP`), so a page cannot fetch anything, and model outputs (hostile text)
are escaped wherever they appear: element text and attribute values alike. Scripts take
their data from escaped `data-` attributes, never from text pasted into a script.
"""

from __future__ import annotations

import html

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

STYLE = """
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #656d76; --line: #d0d7de;
  --pass: #1a7f37; --fail: #cf222e; --error: #9a6700; --bar: #0969da; --panel: #f6f8fa; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #8d96a0; --line: #30363d;
  --pass: #3fb950; --fail: #f85149; --error: #d29922; --bar: #4493f8; --panel: #161b22; } }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg);
  margin: 0 auto; max-width: 1200px; padding: 16px 24px; }
h1 { font-size: 22px; margin: 8px 0; } h2 { font-size: 18px; margin: 24px 0 8px; border-bottom: 1px solid var(--line); }
.meta { color: var(--muted); } .meta span { margin-right: 16px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--panel); } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: var(--pass); font-weight: 600; } .fail { color: var(--fail); font-weight: 600; }
.error { color: var(--error); font-weight: 600; } .pending { color: var(--muted); }
pre { white-space: pre-wrap; word-break: break-word; background: var(--panel); padding: 6px 8px; margin: 4px 0;
  max-height: 240px; overflow: auto; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; } .chart { flex: 1 1 520px; }
.chart svg { width: 100%; height: auto; } .chart text { fill: var(--fg); font-size: 12px; }
.chart .axis { stroke: var(--line); } .chart .bar { fill: var(--bar); } .chart .whisker { stroke: var(--fg); }
.chart .p95 { fill: var(--fail); }
.filters { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; margin: 8px 0; padding: 8px;
  background: var(--panel); } .filters label { display: flex; gap: 4px; align-items: center; }
.hidden { display: none; } .reasons { margin: 0; padding-left: 18px; } .count { color: var(--muted); }
"""


def esc(text: object) -> str:
    """`text` as HTML text or a quoted attribute value."""
    return html.escape("" if text is None else str(text), quote=True)


def page(title: str, body: str, script: str = "") -> str:
    """A whole HTML document with the CSP, the style and `script` (static code, no data in it)."""
    parts = ["<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
             f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">\n',
             '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
             f"<title>{esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n", body]
    if script:
        parts.append(f"\n<script>{script}</script>")
    parts.append("\n</body>\n</html>\n")
    return "".join(parts)
