"""The conversations of a results folder as HTML, for `report.html` (`evals/report.py`): one
collapsible block per conversation cell, every message in order — the user's turns (the
opening and the simulator's, the stop marker noted), the agent's replies with their tool calls,
and each tool result marked when it was simulated (fixed, table or model). Every text is
escaped (`html_page.esc`); each message is cut at `MAX_TEXT` characters (results.jsonl has it all).
"""

from __future__ import annotations

import json
from typing import Any

from .html_page import esc
from .records import ResultRow

MAX_TEXT = 4000
MAX_SHOWN = 2000  # conversations on the page


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"\n… ({len(text) - MAX_TEXT} more characters in results.jsonl)"


def _args(value: Any) -> str:
    return json.dumps(value or {}, ensure_ascii=False, sort_keys=True)


def entry_html(e: dict[str, Any]) -> str:
    role = e.get("role")
    if role == "user":
        note = " (ended the conversation)" if e.get("stop") else (" (opening)" if e.get("by") == "opening" else "")
        text = str(e.get("text") or "")
        return f'<div class="turn user"><b>User{esc(note)}</b>' + (f"<pre>{esc(_cut(text))}</pre>" if text else "") + "</div>"
    if role == "assistant":
        parts = [f"<pre>{esc(_cut(str(e.get('text') or '')))}</pre>"] if e.get("text") else []
        parts += [f"<div>calls <code>{esc(c.get('name'))}</code> <code>{esc(_args(c.get('arguments')))}</code></div>"
                  for c in e.get("toolCalls") or []]
        return '<div class="turn agent"><b>Agent</b>' + "".join(parts) + "</div>"
    if role == "tool":
        how = f" — simulated ({e['simulated']})" if e.get("simulated") else ""
        err = " — error" if e.get("isError") else ""
        return (f'<div class="turn tool"><b>Tool {esc(e.get("name"))}{esc(how + err)}</b>'
                f"<pre>{esc(_cut(str(e.get('result') or '')))}</pre></div>")
    return ""


def conversations_html(rows: list[ResultRow]) -> str:
    """The section of the report with every conversation ("" when the run had none)."""
    convs = [r for r in rows if r.conversation is not None]
    if not convs:
        return ""
    out = [f'<h2>Conversations <span class="count">({len(convs)})</span></h2>']
    for r in convs[:MAX_SHOWN]:
        variant = "" if r.variant == "default" else f" [{r.variant}]"
        head = f"{r.case} · {r.model}{variant} · #{r.repeat} · {r.status}"
        out.append(f'<details class="conversation" data-status="{esc(r.status)}"><summary>{esc(head)}</summary>'
                   + "".join(entry_html(e) for e in r.conversation or ()) + "</details>")
    if len(convs) > MAX_SHOWN:
        out.append(f"<p>… and {len(convs) - MAX_SHOWN} more conversations (results.jsonl has them all).</p>")
    return "".join(out)
