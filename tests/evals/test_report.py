"""`report.html` of a results folder: written by every `eval run` (a real run against a loopback
server), self-contained (the CSP allows nothing from outside), model outputs escaped (a
`<script>` in an output stays text), and opened offline in headless Chromium (`unshare -n`)
with its charts drawn and no console message; filters preset from the address."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from llmspace.cli import main
from llmspace.evals.html_page import CSP
from llmspace.evals.report import NAME, rewrite_report
from tests.evals.support import Oracle, arithmetic_and_extraction, write_eval
from tests.support.chromium import open_offline
from tests.support.llm_server import LoopbackLLM

HOSTILE = ("<script>document.title='pwned'</script><img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"
           '"></td></tr></table><script>document.body.setAttribute(\'data-pwned\',\'2\')</script>')


class HostileOracle(Oracle):
    """`bad` answers the arithmetic cases whose sum is a multiple of 4 with markup and script."""

    def answer(self, model: str, prompt: str) -> str:
        text = super().answer(model, prompt)
        good = super().answer("good", prompt)
        return HOSTILE if model == "bad" and text != good else text


@pytest.fixture
def srv():
    with LoopbackLLM() as server:
        server.responder = HostileOracle()
        yield server


class Elements(HTMLParser):
    """Start tags with their attributes, and the text, of an HTML document."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag]


def _run_eval(home: Path, srv: LoopbackLLM, n: int = 8) -> Path:
    path = write_eval(home, srv, arithmetic_and_extraction(n), models=("loop/good", "loop/bad"))
    assert main(["eval", "run", str(path)]) == 1  # `bad` is below the threshold
    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    return folder


def _wrong_cases(n: int) -> list[str]:
    return [r["id"] for r in arithmetic_and_extraction(n) if r["kind"] == "arithmetic" and int(r["expected"]) % 4 == 0]


def test_every_run_writes_a_report_with_the_summary_four_charts_and_the_failing_cells(home, srv):
    folder = _run_eval(home, srv)

    html = (folder / NAME).read_text("utf-8")
    doc = Elements(html)
    (csp,) = [m for m in doc.named("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    assert csp["content"] == CSP == "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
    assert [a.get("id") for a in doc.named("svg")] == ["chart-pass-rate", "chart-score", "chart-cost", "chart-latency"]
    summary_rows = html.split('<table id="summary">')[1].split("</table>")[0]
    assert "loop/good" in summary_rows and "loop/bad" in summary_rows
    failing = [a for a in doc.named("tr") if a.get("data-status")]
    wrong = _wrong_cases(8)
    assert len(failing) == len(wrong) > 0
    assert {a["data-group"] for a in failing} == {"g1"}  # the second model, `bad`
    assert all(json.loads(a["data-failed"] or "[]") == ["contains"] for a in failing)
    text = "".join(doc.text)
    assert all(case in text for case in wrong) and "does not contain" in text.lower()
    # nothing is loaded from outside: no src or href but data: and in-page anchors
    for _tag, attrs in doc.tags:
        for name in ("src", "href"):
            value = attrs.get(name)
            assert value is None or value.startswith(("data:", "#")), (name, value)


def test_model_output_stays_text_a_script_or_tag_in_it_never_becomes_markup(home, srv):
    folder = _run_eval(home, srv)

    html = (folder / NAME).read_text("utf-8")
    doc = Elements(html)
    assert len(doc.named("script")) == 1  # the report's own
    assert doc.named("img") == []
    assert HOSTILE in "".join(doc.text)  # shown as it is, as text
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in html


def test_the_report_opens_offline_in_headless_chromium_with_its_charts_and_no_console_message(home, srv, tmp_path):
    folder = _run_eval(home, srv)

    page = open_offline(folder / NAME, tmp_path)

    assert page.console == []
    assert page.dom.count("<svg") == 4 and 'id="chart-pass-rate"' in page.dom and "<rect" in page.dom
    assert 'data-ready="1"' in page.dom  # the page's script ran to its end
    assert re.search(r"<body[^>]*data-pwned", page.dom) is None  # the output's script and onerror never ran
    assert "<title>pwned</title>" not in page.dom
    n = len(_wrong_cases(8))
    assert f"{n} of {n} shown" in page.dom


def test_the_reports_own_policy_blocks_an_image_and_a_stylesheet_from_an_address(home, srv, tmp_path):
    folder = _run_eval(home, srv)
    probe = tmp_path / "probe.html"
    html = (folder / NAME).read_text("utf-8")
    probe.write_text(html.replace("</body>", '<img src="http://127.0.0.1:9/x.png"><link rel="stylesheet" '
                                  'href="http://127.0.0.1:9/s.css"></body>'), encoding="utf-8")

    page = open_offline(probe, tmp_path)

    blocked = [m for m in page.console if "Content Security Policy" in m]
    assert any("127.0.0.1:9/x.png" in m for m in blocked) and any("127.0.0.1:9/s.css" in m for m in blocked), page.console


def test_filters_set_in_the_address_hide_the_other_failing_cells(home, srv, tmp_path):
    folder = _run_eval(home, srv, n=20)
    wrong = _wrong_cases(20)
    assert len(wrong) >= 2

    page = open_offline(folder / NAME, tmp_path, fragment=f"group=g1&status=fail&q={wrong[1]}")

    assert page.console == []
    assert f"1 of {len(wrong)} shown" in page.dom
    rows = [r for r in page.dom.split("<tr ")[1:] if "data-status" in r.split(">")[0]]
    visible = [r for r in rows if 'class="hidden"' not in r.split(">")[0]]
    assert len(visible) == 1 and f"<td>{wrong[1]}</td>" in visible[0]


def test_the_offline_check_sees_a_script_error_and_a_request_the_policy_blocked(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text(f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="{CSP}"></head>'
                   '<body><img src="http://127.0.0.1:9/x.png"><script>throw new Error("boom")</script></body></html>',
                   encoding="utf-8")

    page = open_offline(bad, tmp_path)

    assert any("Uncaught Error: boom" in m for m in page.console), page.console
    assert any("Content Security Policy" in m and "127.0.0.1:9" in m for m in page.console), page.console


def test_eval_report_writes_report_html_again_from_the_folder(home, srv, capsys):
    folder = _run_eval(home, srv)
    before = (folder / NAME).read_bytes()
    (folder / NAME).unlink()

    assert main(["eval", "report", f"quiz/{folder.name}"]) == 0  # NAME/STAMP under the data root

    assert (folder / NAME).read_bytes() == before
    (folder / NAME).unlink()
    assert rewrite_report(folder) == folder / NAME and (folder / NAME).read_bytes() == before
    assert main(["eval", "report", str(folder.parent)]) == 2
    assert "is not an evaluation results folder" in capsys.readouterr().err


def _report_for(rows: list[dict[str, Any]], groups: list[dict[str, Any]]) -> str:
    from llmspace.evals.records import parse_row
    from llmspace.evals.report import render_report

    return render_report({"name": "n", "groups": groups, "threshold": 1.0}, [parse_row(r) for r in rows])


def test_a_long_output_is_cut_and_says_where_the_rest_is():
    row = {"case": "c1", "model": "p/m", "variant": "default", "repeat": 1, "status": "fail", "output": "x" * 5000,
           "checks": [{"assertion": "contains", "pass": False, "reason": "no"}]}
    html = _report_for([row], [{"model": "p/m", "variant": "default", "label": "p/m"}])
    assert "x" * 4000 + "\n… (1000 more characters in results.jsonl)" in html
    assert "x" * 4001 not in html
